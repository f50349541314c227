// Expected lines are what rhash 1.4.3 printed for a.txt = "hello\n" (see the commands in
// each comment).
use super::*;
use crate::algo::lookup;

fn digests(names: &[&str], data: &[u8]) -> Vec<(&'static Algorithm, Digest)> {
    let mut algos: Vec<&'static Algorithm> = names.iter().map(|n| algorithm(n).unwrap()).collect();
    sort_rhash_order(&mut algos);
    algos.into_iter().map(|a| (a, a.digest(data))).collect()
}

fn line(layout: Layout, style: Style, names: &[&str], path: &[u8], data: &[u8]) -> String {
    let d = digests(names, data);
    let file = FileInfo { path, size: data.len() as u64, mtime: None, digests: &d };
    let algos: Vec<_> = d.iter().map(|(a, _)| *a).collect();
    let mut out = Vec::new();
    write(layout.resolve(&algos), style, &file, &mut out);
    String::from_utf8(out).unwrap()
}

const MD5: &str = "b1946ac92492d2347c6235b4d2611184";
const SHA1: &str = "f572d396fae9206628714fb2ce00f72e94f2258f";

#[test]
fn default_and_simple_layouts() {
    let s = Style::default();
    // rhash a.txt (after the header)
    assert_eq!(line(Layout::Default, s, &["crc32"], b"a.txt", b"hello\n"), "a.txt 363A3020\n");
    // rhash --md5 a.txt
    assert_eq!(line(Layout::Default, s, &["md5"], b"a.txt", b"hello\n"), format!("{MD5}  a.txt\n"));
    // rhash --sha1 --md5 a.txt (rhash's order, not the order asked for)
    assert_eq!(
        line(Layout::Simple, s, &["sha1", "md5"], b"a.txt", b"hello\n"),
        format!("a.txt  {MD5}  {SHA1}\n")
    );
    // rhash --simple --crc32 a.txt
    assert_eq!(line(Layout::Simple, s, &["crc32"], b"a.txt", b"hello\n"), "363a3020  a.txt\n");
    // rhash --sfv --md5 --crc32 a.txt ; rhash --sfv --md5 --lowercase a.txt
    assert_eq!(
        line(Layout::Sfv, s, &["md5", "crc32"], b"a.txt", b"hello\n"),
        format!("a.txt 363A3020 {}\n", MD5.to_uppercase())
    );
    let lower = Style { case: Case::Lower, ..s };
    assert_eq!(line(Layout::Sfv, lower, &["md5"], b"a.txt", b"hello\n"), format!("a.txt {MD5}\n"));
}

#[test]
fn encodings_and_case() {
    // rhash --simple --sha1 --base32 a.txt
    let b32 = Style { enc: Enc::Base32, ..Style::default() };
    assert_eq!(
        line(Layout::Simple, b32, &["sha1"], b"a.txt", b"hello\n"),
        "6vznhfx25eqgmkdrj6zm4ahxf2kpejmp  a.txt\n"
    );
    // rhash --simple --base32 --uppercase --md5 a.txt
    let b32u = Style { enc: Enc::Base32, case: Case::Upper };
    assert_eq!(
        line(Layout::Simple, b32u, &["md5"], b"a.txt", b"hello\n"),
        "WGKGVSJESLJDI7DCGW2NEYIRQQ  a.txt\n"
    );
    // rhash --simple --base64 --uppercase --md5 --sha1 a.txt: base64 keeps its case
    let b64u = Style { enc: Enc::Base64, case: Case::Upper };
    assert_eq!(
        line(Layout::Simple, b64u, &["md5", "sha1"], b"a.txt", b"hello\n"),
        "a.txt  sZRqySSS0jR8YjW00mERhA==  9XLTlvrpIGYocU+yzgD3LpTyJY8=\n"
    );
}

#[test]
fn bsd_pads_tags_to_five() {
    // rhash --bsd --md5 --sha1 --crc32 a.txt ; rhash --bsd --sha256 --sha3-256 --blake2s
    let s = Style::default();
    assert_eq!(
        line(Layout::Bsd, s, &["sha1", "md5", "crc32"], b"a.txt", b"hello\n"),
        format!("CRC32 (a.txt) = 363a3020\nMD5   (a.txt) = {MD5}\nSHA1  (a.txt) = {SHA1}\n")
    );
    let out =
        line(Layout::Bsd, s, &["blake2s", "sha3-256", "sha256", "ripemd160"], b"a.txt", b"hello\n");
    let tags: Vec<&str> = out.lines().map(|l| l.split(" (").next().unwrap()).collect();
    assert_eq!(tags, ["RMD160", "SHA256", "SHA3-256", "BLAKE2s"]);
}

#[test]
fn magnet_like_rhash() {
    // rhash --magnet --md5 --sha1 --crc32 a.txt: sha1 in base32 in magnet links
    let s = Style::default();
    assert_eq!(
        line(Layout::Magnet, s, &["sha1", "md5", "crc32"], b"a.txt", b"hello\n"),
        format!(
            "magnet:?xl=6&dn=a.txt&xt=urn:crc32:363a3020&xt=urn:md5:{MD5}\
             &xt=urn:sha1:6vznhfx25eqgmkdrj6zm4ahxf2kpejmp\n"
        )
    );
    // rhash --magnet --sha1 --hex / --base64 a.txt
    let hex = Style { enc: Enc::Hex, ..s };
    assert_eq!(
        line(Layout::Magnet, hex, &["sha1"], b"a.txt", b"hello\n"),
        format!("magnet:?xl=6&dn=a.txt&xt=urn:sha1:{SHA1}\n")
    );
    let b64 = Style { enc: Enc::Base64, ..s };
    assert_eq!(
        line(Layout::Magnet, b64, &["md5"], b"a.txt", b"hello\n"),
        "magnet:?xl=6&dn=a.txt&xt=urn:md5:sZRqySSS0jR8YjW00mERhA==\n"
    );
    // rhash --magnet --md5 "we ird&=?#%+;,~é[1].txt" (the name only, percent-encoded)
    let out = line(Layout::Magnet, s, &["md5"], "d/we ird&=?#%+;,~\u{e9}[1].txt".as_bytes(), b"x");
    assert!(
        out.starts_with("magnet:?xl=1&dn=we%20ird%26%3d%3f%23%25%2b%3b%2c~%c3%a9%5b1%5d.txt&xt="),
        "{out}"
    );
    let out = line(Layout::Magnet, s, &["md5"], b"a-_.!*'()b", b"q");
    assert!(out.starts_with("magnet:?xl=1&dn=a-_.%21%2a%27%28%29b&"), "{out}");
}

#[test]
fn magnet_and_ed2k_with_p2p_algorithms() {
    if ["tth", "ed2k", "aich"].iter().any(|n| algorithm(n).is_none()) {
        eprintln!("skipped: fixity has no tth/ed2k/aich yet");
        return;
    }
    let s = Style::default();
    // rhash --magnet a.txt ; rhash --ed2k-link a.txt ; rhash --ed2k-link --uppercase a.txt
    assert_eq!(
        line(Layout::Magnet, s, &["tth", "ed2k", "aich"], b"a.txt", b"hello\n"),
        "magnet:?xl=6&dn=a.txt&xt=urn:tree:tiger:dctzg7v3jmt2jdj6vozu4yisnzvethe76v2goni\
         &xt=urn:ed2k:63481c78ae04c201fa01ea9d2b1db56d&xt=urn:aich:6vznhfx25eqgmkdrj6zm4ahxf2kpejmp\n"
    );
    assert_eq!(
        line(Layout::Ed2kLink, s, &["ed2k", "aich"], b"a.txt", b"hello\n"),
        "ed2k://|file|a.txt|6|63481c78ae04c201fa01ea9d2b1db56d|h=6vznhfx25eqgmkdrj6zm4ahxf2kpejmp|/\n"
    );
    let up = Style { case: Case::Upper, ..s };
    assert_eq!(
        line(Layout::Ed2kLink, up, &["ed2k", "aich"], b"a.txt", b"hello\n"),
        "ed2k://|file|a.txt|6|63481C78AE04C201FA01EA9D2B1DB56D|h=6VZNHFX25EQGMKDRJ6ZM4AHXF2KPEJMP|/\n"
    );
    // rhash --simple --md5 --tth a.txt: TTH in base32
    assert_eq!(
        line(Layout::Simple, s, &["tth", "md5"], b"a.txt", b"hello\n"),
        format!("a.txt  {MD5}  dctzg7v3jmt2jdj6vozu4yisnzvethe76v2goni\n")
    );
}

#[test]
fn header_lists_size_and_mtime() {
    let h = sfv_header(0, &[(b"a.txt".to_vec(), 6, Some(86_400 + 3661))]);
    let text = String::from_utf8(h).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("; Generated by fixity v"), "{text}");
    assert_eq!(lines[1], ";");
    // `;` then the size right-aligned in 13 columns, two spaces, HH:MM.SS YYYY-MM-DD name
    let off = local_offset(86_400 + 3661);
    let (d, t) = local_date_time(86_400 + 3661);
    assert_eq!(lines[2], format!(";            6  {} {d} a.txt", dotted(&t)));
    if off == 0 {
        assert_eq!(lines[2], ";            6  01:01.01 1970-01-02 a.txt");
    }
}

#[test]
fn url_round_trip() {
    let all: Vec<u8> = (0..=255).collect();
    let mut enc = Vec::new();
    url_encode(&all, false, &mut enc);
    assert_eq!(url_decode(&enc).unwrap(), all);
    assert_eq!(url_decode(b"%zz"), None);
    assert_eq!(url_decode(b"%4"), None);
    assert_eq!(url_decode(b"%+1"), None);
}

#[test]
fn parses_magnet_links() {
    let l = parse_magnet(
        b"magnet:?xl=6&dn=b%20c.txt&xt=urn:crc32:363a3020&xt=urn:md5:b1946ac92492d2347c6235b4d2611184\
          &xt=urn:sha1:6vznhfx25eqgmkdrj6zm4ahxf2kpejmp\r",
    )
    .unwrap();
    assert_eq!(l.name, b"b c.txt");
    assert_eq!(l.size, Some(6));
    let names: Vec<_> =
        l.digests.iter().map(|d| (d.algo.map(|a| a.name), d.name.as_str())).collect();
    assert_eq!(names, [(Some("crc32"), "crc32"), (Some("md5"), "md5"), (Some("sha1"), "sha1")]);
    assert_eq!(l.digests[2].digest.to_hex(), SHA1);
    // base64 digests, as rhash --magnet --base64 writes them
    let l = parse_magnet(b"magnet:?xl=6&dn=a.txt&xt=urn:md5:sZRqySSS0jR8YjW00mERhA==").unwrap();
    assert_eq!(l.digests[0].digest.to_hex(), MD5);
    // an algorithm fixity may lack keeps its name and a digest decoded by shape
    let l = parse_magnet(
        b"magnet:?xl=0&dn=x&xt=urn:tree:tiger:lwpnacqdbzryxw3vhjvcj64qbznghohhhzwclnq",
    )
    .unwrap();
    assert_eq!(l.digests[0].name, "tree:tiger");
    assert_eq!(l.digests[0].digest.as_bytes().len(), 24);
    for bad in [
        &b"magnet:?xl=6&xt=urn:md5:b1946ac92492d2347c6235b4d2611184"[..],
        b"magnet:?dn=a",
        b"magnet:?dn=a&xt=urn:md5:zz",
        b"magnet:?dn=a&xt=urn:md5:b1946ac92492d2347c6235b4d26111",
        b"magnet:?dn=a&xl=x&xt=urn:md5:b1946ac92492d2347c6235b4d2611184",
        b"magnet:?dn=%g&xt=urn:md5:b1946ac92492d2347c6235b4d2611184",
        b"http://x",
    ] {
        assert_eq!(parse_magnet(bad), None, "{}", String::from_utf8_lossy(bad));
    }
}

#[test]
fn parses_ed2k_links() {
    let l = parse_ed2k_link(
        b"ed2k://|file|nl%0aname|1|ae445256230e78370383f09f290f9f4d|h=sxfqx7jjo7dwckmnsysojnguy4vdtf2k|/",
    )
    .unwrap();
    assert_eq!(l.name, b"nl\nname");
    assert_eq!(l.size, Some(1));
    assert_eq!(l.digests.len(), 2);
    assert_eq!(l.digests[0].name, "ed2k");
    assert_eq!(l.digests[0].digest.to_hex(), "ae445256230e78370383f09f290f9f4d");
    assert_eq!(l.digests[1].name, "aich");
    assert_eq!(l.digests[1].digest.as_bytes().len(), 20);
    let l = parse_ed2k_link(b"ed2k://|file|a|6|63481C78AE04C201FA01EA9D2B1DB56D|/").unwrap();
    assert_eq!(l.digests.len(), 1);
    for bad in [
        &b"ed2k://|file||6|63481c78ae04c201fa01ea9d2b1db56d|/"[..],
        b"ed2k://|file|a|x|63481c78ae04c201fa01ea9d2b1db56d|/",
        b"ed2k://|file|a|6|63481c78|/",
        b"ed2k://|file|a|6|63481c78ae04c201fa01ea9d2b1db56d|h=!!|/",
        b"ed2k://|file|a|6",
        b"ed2k://|server|1.2.3.4|4661|/",
    ] {
        assert_eq!(parse_ed2k_link(bad), None, "{}", String::from_utf8_lossy(bad));
    }
}

#[test]
fn parses_simple_lines() {
    let two = format!("a b.txt  {MD5}  {SHA1}");
    let l = parse_simple(two.as_bytes(), 2).unwrap();
    assert_eq!(l.name, b"a b.txt");
    assert_eq!(l.digests, [MD5.as_bytes(), SHA1.as_bytes()]);
    let sfv = format!("a.txt 363A3020 {}", MD5.to_uppercase());
    let l = parse_simple(sfv.as_bytes(), 2).unwrap();
    assert_eq!(l.name, b"a.txt");
    let one = format!("{MD5}  a  b.txt");
    let l = parse_simple(one.as_bytes(), 1).unwrap();
    assert_eq!(l.name, b"a  b.txt");
    let l =
        parse_simple(b"a.txt  sZRqySSS0jR8YjW00mERhA==  9XLTlvrpIGYocU+yzgD3LpTyJY8=", 2).unwrap();
    assert_eq!(decode_digest(&l.digests[0], 16).unwrap().to_hex(), MD5);
    assert_eq!(decode_digest(&l.digests[1], 20).unwrap().to_hex(), SHA1);
    assert_eq!(decode_digest(b"6vznhfx25eqgmkdrj6zm4ahxf2kpejmp", 20).unwrap().to_hex(), SHA1);
    assert_eq!(parse_simple(two.as_bytes(), 3), None);
    assert_eq!(parse_simple(b"name  short", 1), None);
    assert_eq!(parse_simple(b"", 1), None);
}

#[test]
fn embedded_crc_like_rhash_k() {
    // rhash -k accepted or rejected these names (file content "hello\n", CRC32 363A3020).
    for (name, crc) in [
        ("a [363A3020].txt", Some(0x363A3020)),
        ("b (363A3020).txt", Some(0x363A3020)),
        ("d[363a3020].txt", Some(0x363A3020)),
        ("e [363A3020] x.txt", Some(0x363A3020)),
        ("[363A3020]g", Some(0x363A3020)),
        ("j [363A3020]", Some(0x363A3020)),
        ("h [11111111] [363A3020].txt", Some(0x363A3020)),
        ("i [363A3020] [11111111].txt", Some(0x11111111)),
        ("dir [363A3020]/plain.txt", None),
        ("c_363A3020.txt", None),
        ("g [363A302].txt", None),
        ("k[363A3020 ].txt", None),
        ("m [363A3020).txt", None),
    ] {
        assert_eq!(embedded_crc(name.as_bytes()), crc, "{name}");
    }
}

#[test]
fn embed_crc_like_rhash_e() {
    // rhash -e p2.txt -> "p2 [363A3020].txt"; --embed-crc-delimiter=_ -> "plain_[363A3020].txt"
    assert_eq!(embed_crc(b"d/p2.txt", 0x363A3020, b" ").unwrap(), b"d/p2 [363A3020].txt");
    assert_eq!(embed_crc(b"plain.txt", 0x363A3020, b"_").unwrap(), b"plain_[363A3020].txt");
    assert_eq!(embed_crc(b"a.b/noext", 0x1, b" ").unwrap(), b"a.b/noext [00000001]");
    assert_eq!(embed_crc(b".hidden", 0x1, b" ").unwrap(), b".hidden [00000001]");
    assert_eq!(embed_crc(b"a [363A3020].txt", 0x363A3020, b" "), None);
}

#[test]
fn rhash_table_matches_the_registry() {
    // rhash 1.4.3's 31 algorithms, each a registry row, in rhash's order (its
    // `--list-hashes`), each rank once.
    let found: Vec<&str> = algorithms().iter().map(|a| a.name).collect();
    assert_eq!(found.len(), 31, "{found:?}");
    assert_eq!(found[..6], ["crc32", "md4", "md5", "sha1", "tiger", "tth"]);
    assert_eq!(found[found.len() - 2..], ["blake2s", "blake2b"]);
    let ranks: Vec<u8> = algorithms().iter().map(|a| a.rhash.unwrap().rank).collect();
    assert_eq!(ranks, (0..31).collect::<Vec<u8>>());
    assert_eq!(lookup("sha256").unwrap().tag, "SHA256");
    assert_eq!(by_name(b"SHA-256").unwrap().name, "sha256");
    assert_eq!(by_urn(b"tree:tiger").unwrap().name, "tth");
    // The printf letters of `man rhash`.
    let letters: String = b"aceghmrtw"
        .iter()
        .map(|&c| format!("{}={} ", c as char, by_letter(c).unwrap().name))
        .collect();
    assert_eq!(
        letters,
        "a=aich c=crc32 e=ed2k g=gost12-256 h=sha1 m=md5 r=ripemd160 t=tth w=whirlpool "
    );
    assert_eq!(by_letter(b'H').unwrap().name, "sha1");
    assert!(by_letter(b'x').is_none());
}

#[test]
fn parse_link_takes_either_kind() {
    let m =
        parse_link(b"magnet:?xl=6&dn=a.txt&xt=urn:md5:b1946ac92492d2347c6235b4d2611184").unwrap();
    assert_eq!(m.digests[0].digest.to_hex(), MD5);
    let e = parse_link(b"ed2k://|file|a.txt|6|63481c78ae04c201fa01ea9d2b1db56d|/").unwrap();
    assert_eq!(e.name, b"a.txt");
    assert_eq!(parse_link(format!("{MD5}  a.txt").as_bytes()), None);
}
