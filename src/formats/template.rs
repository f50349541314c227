//! rhash's `--printf` / `--template` language, as `man rhash` documents it and rhash 1.4.3
//! behaves:
//!
//! - escapes `\n \r \t \\ \0 \NNN` (octal) `\xNN` (hex); `\` before anything else is
//!   printed with that character;
//! - `%%`, `%p` path, `%f` file name, `%s` size, `%{mtime}` (local `YYYY-MM-DD HH:MM:SS`),
//!   `%l`/`%L` ed2k link, digest letters `%a %c %e %g %h %m %r %t %w` (uppercase letter:
//!   uppercase digest), `%{name}` for any of rhash's algorithm names (`%{Name}`: uppercase);
//! - prefixes: `%u`/`%U` percent-encode (lowercase/uppercase escapes) the path, name or
//!   digest that follows; `%x`, `%b`, `%B`, `%@` print the digest in hex, base32, base64
//!   or raw bytes.
//!
//! A `%` sequence that is not a directive is printed as it is, except that `%u` alone
//! stands for the percent-encoded file name (rhash's behaviour).

use super::rhash::{self, Enc, FileInfo};
use super::writer::{FileEntry, ManifestWriter, Stdin, Unwritable, WriteOptions};
use crate::algo::Algorithm;

/// One piece of a parsed template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    Literal(Vec<u8>),
    /// `%p`; `Some(upper)` when percent-encoded.
    Path(Option<bool>),
    /// `%f`.
    Name(Option<bool>),
    /// `%s`.
    Size,
    /// `%{mtime}`.
    Mtime,
    /// `%l` / `%L`.
    Ed2kLink {
        upper: bool,
    },
    /// A digest.
    Digest {
        algo: &'static Algorithm,
        enc: Enc,
        upper: bool,
        url: Option<bool>,
    },
}

/// A parsed template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    pub items: Vec<Item>,
}

impl Template {
    /// Parses a template. Fails only when it names an algorithm rhash has and fixity does
    /// not (yet) compute.
    pub fn parse(text: &[u8]) -> Result<Template, String> {
        let mut items: Vec<Item> = Vec::new();
        let mut lit: Vec<u8> = Vec::new();
        let mut i = 0;
        while i < text.len() {
            match text[i] {
                b'\\' => i = escape(text, i, &mut lit),
                b'%' => {
                    let (item, next) = directive(text, i)?;
                    i = next;
                    match item {
                        Item::Literal(bytes) => lit.extend_from_slice(&bytes),
                        item => {
                            if !lit.is_empty() {
                                items.push(Item::Literal(std::mem::take(&mut lit)));
                            }
                            items.push(item);
                        }
                    }
                }
                c => {
                    lit.push(c);
                    i += 1;
                }
            }
        }
        if !lit.is_empty() {
            items.push(Item::Literal(lit));
        }
        Ok(Template { items })
    }

    /// The algorithms the template prints, in rhash order, without repeats.
    pub fn algorithms(&self) -> Vec<&'static Algorithm> {
        let mut out: Vec<&'static Algorithm> = Vec::new();
        let mut add = |a: &'static Algorithm| {
            if !out.iter().any(|o| o.name == a.name) {
                out.push(a);
            }
        };
        for item in &self.items {
            match item {
                Item::Digest { algo, .. } => add(algo),
                Item::Ed2kLink { .. } => {
                    for name in ["ed2k", "aich"] {
                        add(rhash::algorithm(name).expect("registered"));
                    }
                }
                _ => {}
            }
        }
        rhash::sort_rhash_order(&mut out);
        out
    }

    /// Appends the template filled in for `file`.
    pub fn render(&self, file: &FileInfo, out: &mut Vec<u8>) {
        for item in &self.items {
            match item {
                Item::Literal(bytes) => out.extend_from_slice(bytes),
                Item::Path(url) => put(file.path, *url, out),
                Item::Name(url) => put(rhash::file_name(file.path), *url, out),
                Item::Size => out.extend_from_slice(file.size.to_string().as_bytes()),
                Item::Mtime => {
                    if let Some(t) = file.mtime {
                        out.extend_from_slice(rhash::local_time_text(t).as_bytes());
                    }
                }
                Item::Ed2kLink { upper } => rhash::ed2k_link(file, *upper, out),
                Item::Digest { algo, enc, upper, url } => {
                    if let Some(d) = file.digest(algo) {
                        let mut text = Vec::new();
                        rhash::digest_text(algo, d, *enc, *upper, false, &mut text);
                        put(&text, *url, out);
                    }
                }
            }
        }
    }
}

fn put(bytes: &[u8], url: Option<bool>, out: &mut Vec<u8>) {
    match url {
        Some(upper) => rhash::url_encode(bytes, upper, out),
        None => out.extend_from_slice(bytes),
    }
}

/// Handles the escape at `text[i] == '\\'`; returns where to go on.
fn escape(text: &[u8], i: usize, lit: &mut Vec<u8>) -> usize {
    let Some(&c) = text.get(i + 1) else {
        lit.push(b'\\');
        return i + 1;
    };
    match c {
        b'n' => lit.push(b'\n'),
        b'r' => lit.push(b'\r'),
        b't' => lit.push(b'\t'),
        b'\\' => lit.push(b'\\'),
        b'0'..=b'7' => {
            let digits =
                text[i + 1..].iter().take(3).take_while(|b| (b'0'..=b'7').contains(b)).count();
            let v =
                text[i + 1..i + 1 + digits].iter().fold(0u32, |v, &d| v * 8 + u32::from(d - b'0'));
            lit.push(v as u8);
            return i + 1 + digits;
        }
        b'x' => {
            let digits = text[i + 2..].iter().take(2).take_while(|b| b.is_ascii_hexdigit()).count();
            if digits == 0 {
                lit.extend_from_slice(b"\\x");
                return i + 2;
            }
            let hex = std::str::from_utf8(&text[i + 2..i + 2 + digits]).expect("ascii");
            lit.push(u8::from_str_radix(hex, 16).expect("hex digits"));
            return i + 2 + digits;
        }
        other => lit.extend_from_slice(&[b'\\', other]),
    }
    i + 2
}

/// Parses the directive at `text[i] == '%'`; returns it (a literal when it is none) and
/// where to go on.
fn directive(text: &[u8], i: usize) -> Result<(Item, usize), String> {
    let mut j = i + 1;
    if text.get(j) == Some(&b'%') {
        return Ok((Item::Literal(b"%".to_vec()), j + 1));
    }
    let url = match text.get(j) {
        Some(b'u') => Some(false),
        Some(b'U') => Some(true),
        _ => None,
    };
    if url.is_some() {
        j += 1;
    }
    let enc = match text.get(j) {
        Some(b'x') => Enc::Hex,
        Some(b'b') => Enc::Base32,
        Some(b'B') => Enc::Base64,
        Some(b'@') => Enc::Raw,
        _ => Enc::Default,
    };
    if enc != Enc::Default {
        j += 1;
    }
    let digest = |algo: &'static Algorithm, upper: bool| Item::Digest { algo, enc, upper, url };
    let found = match text.get(j) {
        Some(b'{') => {
            let close = text[j..].iter().position(|&b| b == b'}').map(|k| j + k);
            match close {
                Some(k) => {
                    let name = &text[j + 1..k];
                    let upper = name.first().is_some_and(u8::is_ascii_uppercase);
                    if name.eq_ignore_ascii_case(b"mtime") {
                        Some((Item::Mtime, k + 1))
                    } else {
                        rhash::by_name(name).map(|a| (digest(a, upper), k + 1))
                    }
                }
                None => None,
            }
        }
        Some(b'p') => Some((Item::Path(url), j + 1)),
        Some(b'f') => Some((Item::Name(url), j + 1)),
        Some(b's') => Some((Item::Size, j + 1)),
        Some(&c @ (b'l' | b'L')) => Some((Item::Ed2kLink { upper: c == b'L' }, j + 1)),
        Some(&c) => rhash::by_letter(c).map(|a| (digest(a, c.is_ascii_uppercase()), j + 1)),
        None => None,
    };
    Ok(match found {
        Some(hit) => hit,
        None if url.is_some() => (Item::Name(url), j),
        None => (Item::Literal(text[i..j].to_vec()), j),
    })
}

impl Template {
    /// The writer that prints each file through this template: it computes the template's
    /// algorithms and `asked` (from `-a`), in rhash's order (CRC32 alone when there are
    /// none, since each file is read anyway, for its size).
    pub fn writer(
        self,
        asked: Vec<&'static Algorithm>,
        opts: &WriteOptions,
    ) -> Box<dyn ManifestWriter> {
        let mut shown = self.algorithms();
        for a in asked {
            if !shown.contains(&a) {
                shown.push(a);
            }
        }
        rhash::sort_rhash_order(&mut shown);
        let computed = if shown.is_empty() {
            vec![crate::algo::lookup("crc32").expect("registered")]
        } else {
            shown.clone()
        };
        Box::new(TemplateWriter { template: self, shown, computed, stdin: opts.stdin })
    }
}

/// The writer of `--printf` and `--template`.
struct TemplateWriter {
    template: Template,
    shown: Vec<&'static Algorithm>,
    computed: Vec<&'static Algorithm>,
    stdin: Stdin,
}

impl ManifestWriter for TemplateWriter {
    fn algorithms(&self) -> &[&'static Algorithm] {
        &self.computed
    }

    fn record(&mut self, file: &FileEntry, out: &mut Vec<u8>) -> Result<(), Unwritable> {
        let (_, name, digests) = rhash::rhash_file(file, &self.computed, &self.shown, self.stdin);
        let info = FileInfo { path: name, size: file.size, mtime: file.mtime, digests: &digests };
        self.template.render(&info, out);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::lookup;
    use crate::digest::Digest;

    fn render(template: &str, path: &[u8], data: &[u8]) -> Vec<u8> {
        let t = Template::parse(template.as_bytes()).unwrap();
        let digests: Vec<(&'static Algorithm, Digest)> =
            t.algorithms().into_iter().map(|a| (a, a.digest(data))).collect();
        let file = FileInfo { path, size: data.len() as u64, mtime: None, digests: &digests };
        let mut out = Vec::new();
        t.render(&file, &mut out);
        out
    }

    // Expected values printed by rhash 1.4.3 for a.txt = "hello\n".
    #[test]
    fn digests_like_rhash() {
        let out = render(
            "%c|%C|%m|%M|%h|%xh|%bh|%Bh|%bm|%BM|%{md5}|%{MD5}|%{Md5}\n",
            b"a.txt",
            b"hello\n",
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "363a3020|363A3020|b1946ac92492d2347c6235b4d2611184|B1946AC92492D2347C6235B4D2611184|\
             f572d396fae9206628714fb2ce00f72e94f2258f|f572d396fae9206628714fb2ce00f72e94f2258f|\
             6vznhfx25eqgmkdrj6zm4ahxf2kpejmp|9XLTlvrpIGYocU+yzgD3LpTyJY8=|wgkgvsjesljdi7dcgw2neyirqq|\
             sZRqySSS0jR8YjW00mERhA==|b1946ac92492d2347c6235b4d2611184|\
             B1946AC92492D2347C6235B4D2611184|B1946AC92492D2347C6235B4D2611184\n"
        );
        let out = render("%{sha-224}|%{SHA3-256}|%{crc32c}\n", b"a.txt", b"hello\n");
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "2d6d67d91d0badcdd06cbbba1fe11538a68a37ec9c2e26457ceff12b|\
             B314E28493EAE9DAB57AC4F0C6D887BDDBBEB810E900D818395ACE558E96516D|353dd8be\n"
        );
    }

    #[test]
    fn names_and_url_encoding_like_rhash() {
        let path = "d/we ird&=?#%+;,~\u{e9}[1].txt".as_bytes();
        let out = render("%p|%f|%s|%uf|%Uf|%up|%us|%u@m|%U@m|%uBm\n", path, b"x");
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "d/we ird&=?#%+;,~\u{e9}[1].txt|we ird&=?#%+;,~\u{e9}[1].txt|1|\
             we%20ird%26%3d%3f%23%25%2b%3b%2c~%c3%a9%5b1%5d.txt|\
             we%20ird%26%3D%3F%23%25%2B%3B%2C~%C3%A9%5B1%5D.txt|\
             d%2fwe%20ird%26%3d%3f%23%25%2b%3b%2c~%c3%a9%5b1%5d.txt|1|\
             %9d%d4%e4a%26%8c%804%f5%c8VN%15%5cg%a6|%9D%D4%E4a%26%8C%804%F5%C8VN%15%5Cg%A6|\
             ndTkYSaMgDT1yFZOFVxnpg%3d%3d\n"
        );
    }

    #[test]
    fn raw_digest_bytes() {
        let md5 = lookup("md5").unwrap();
        assert_eq!(render("%@m", b"a", b"abc"), md5.digest(b"abc").as_bytes());
    }

    #[test]
    fn escapes_like_rhash() {
        // rhash -p 'a\tb\\c\0d\101\x41\q\r\n' prints 61 09 62 5c 63 00 64 41 41 5c 71 0d 0a.
        assert_eq!(render(r"a\tb\\c\0d\101\x41\q\r\n", b"f", b""), b"a\tb\\c\0dAA\\q\r\n");
        assert_eq!(render(r"\x\xZ\", b"f", b""), b"\\x\\xZ\\");
        assert_eq!(render(r"\1234", b"f", b""), b"S4");
    }

    #[test]
    fn non_directives_print_as_rhash_prints_them() {
        // rhash -p '[%z|%q|%1|%{|%{foo}|%x|%xz|%u|%uz|%U|%@|%' a.txt
        assert_eq!(
            render("[%z|%q|%1|%{|%{foo}|%x|%xz|%u|%uz|%U|%@|%", b"a.txt", b""),
            b"[%z|%q|%1|%{|%{foo}|%x|%xz|a.txt|a.txtz|a.txt|%@|%"
        );
        // rhash -p '1%ux|2%x{foo}|3%u{foo}|4%P|5%xs|6%bp|7%u@|8%@z|13%F|14%S|16%{tth|17%{}|20%u%|21%xf'
        assert_eq!(
            render("1%ux|2%x{foo}|3%u{foo}|4%P|5%xs|6%bp|7%u@|8%@z|13%F|14%S|16%{tth|17%{}|20%u%|21%xf", b"a.txt", b"hello\n"),
            b"1a.txt|2%x{foo}|3a.txt{foo}|4%P|56|6a.txt|7a.txt|8%@z|13%F|14%S|16%{tth|17%{}|20a.txt%|21a.txt"
        );
        assert_eq!(render("100%% %%s", b"a", b""), b"100% %s");
    }

    #[test]
    fn algorithms_in_rhash_order() {
        let t = Template::parse(b"%{sha-256} %m %c %{md5}").unwrap();
        let names: Vec<&str> = t.algorithms().iter().map(|a| a.name).collect();
        assert_eq!(names, ["crc32", "md5", "sha256"]);
    }

    #[test]
    fn every_rhash_algorithm_is_known_and_unknown_names_stay_literal() {
        // Every algorithm of rhash's is fixity's too.
        let t = Template::parse(b"%{has160} %{edon-r256} %{snefru128}").unwrap();
        let names: Vec<&str> = t.algorithms().iter().map(|a| a.name).collect();
        assert_eq!(names, ["has160", "edonr256", "snefru128"]);
        // rhash prints a directive it does not know as it is.
        let t = Template::parse(b"%{nosuch}").unwrap();
        assert!(t.algorithms().is_empty());
    }

    // rhash 1.4.3: %t|%T|%e|%a|%l for d/x.bin = "abc" (runs once fixity has tth, ed2k, aich).
    #[test]
    fn p2p_digests_like_rhash() {
        if ["tth", "ed2k", "aich"].iter().any(|n| rhash::algorithm(n).is_none()) {
            eprintln!("skipped: fixity has no tth/ed2k/aich yet");
            return;
        }
        let out = render("%t|%T|%e|%a|%xT|%l\n", b"d/x.bin", b"abc");
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "asd4ujseh5m47pdyb46kbtsqtsgdklbhyxomuia|ASD4UJSEH5M47PDYB46KBTSQTSGDKLBHYXOMUIA|\
             a448017aaf21d8525fc10ae87aa6729d|vgmt4nsha2awvor6evyxqugcnsonbwe5|\
             0487CA26443F59CFBC780F3CA0CE509C8C352C27C5DCCA20|\
             ed2k://|file|x.bin|3|a448017aaf21d8525fc10ae87aa6729d|h=vgmt4nsha2awvor6evyxqugcnsonbwe5|/\n"
        );
    }
}
