//! What `verify --remote` reads from a server: the remote URL, ETags and checksum headers.
//! On arbitrary text none of them panics; a URL that parses prints as one that parses to
//! the same; an object's offers are judged with digests of arbitrary content without
//! panicking, and a match is only ever a proof the offers made.
#![no_main]

use fixity::remote::RemoteUrl;
use fixity::remote::object::{Head, Listed, Verdict, checksum_header, judge, offers};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.split('\n');
    let url = parts.next().unwrap_or_default();
    if let Ok(u) = RemoteUrl::parse(url) {
        assert_eq!(RemoteUrl::parse(&u.to_string()).as_ref(), Ok(&u));
    }
    let etag = parts.next().map(str::to_string);
    let size = data.len() as u64 * 1_048_576;
    let mut head = Head { etag: etag.clone(), size, ..Head::default() };
    for (algo, kind) in [("crc64nvme", None), ("crc32c", Some(true)), ("crc32", Some(false)), ("sha256", None), ("sha1", Some(true))] {
        if let Some(c) = checksum_header(algo, parts.next(), kind) {
            head.checksums.push(c);
        }
    }
    head.part1 = parts.next().and_then(|p| p.parse().ok());
    head.encryption = parts.next().map(str::to_string);
    let listed = Listed { key: "k".into(), size, etag, checksums: vec!["crc32".into()] };
    let mut notes = Vec::new();
    for h in [None, Some(&head)] {
        let o = offers(&listed, h, &mut notes);
        let known = |a: &'static fixity::algo::Algorithm| Some(a.digest(data).as_bytes().to_vec());
        if let Verdict::Same(p) = judge(&o, &known) {
            assert!(o.iter().any(|x| x.proof == p));
        }
    }
});
