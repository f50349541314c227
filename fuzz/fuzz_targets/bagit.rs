//! BagIt parsers on arbitrary bytes: manifest lines (re-written lines parse to the same
//! digest and path; a tolerant read gives a canonical path or refuses it), tag files
//! (bagit.txt, bag-info.txt) and their lines, fetch.txt, Payload-Oxum and path checks.
//! Never panics.
#![no_main]

use fixity::formats::bagit;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (flags, text) = data.split_first().unwrap_or((&0, &[]));
    let _ = bagit::parse_tags(text);
    for entry in bagit::parse_fetch(text, flags & 1 == 0).entries {
        assert!(entry.path.starts_with(b"data/") && bagit::unsafe_path(&entry.path).is_none());
    }
    if let Ok(s) = std::str::from_utf8(text) {
        let _ = bagit::parse_oxum(s);
        let _ = bagit::manifest_kind(text);
    }
    let algo = &fixity::algo::ALGORITHMS[*flags as usize % fixity::algo::ALGORITHMS.len()];
    for line in bagit::tag_lines(text) {
        let _ = bagit::element_form(line);
        if let Ok(p) = bagit::canonical_path(line) {
            // Canonical form is a fixed point, and safe.
            assert_eq!(bagit::canonical_path(&p).map(|q| q.into_owned()), Ok(p.to_vec()));
        }
        if let Ok(e) = bagit::parse_manifest_entry(line, algo, flags & 2 == 0) {
            assert!(bagit::unsafe_path(&e.path).is_none());
        }
        let decoded = bagit::decode_path(line);
        assert_eq!(bagit::decode_path(&bagit::encode_path(&decoded)), decoded);
        let Ok((digest, path)) = bagit::parse_manifest_line(line, algo) else { continue };
        // A path starting with a blank cannot be told from the separator (bag paths start
        // with `data/` or a tag file's name, so fixity never writes one).
        if path.starts_with(b" ") || path.starts_with(b"\t") {
            continue;
        }
        let mut out = Vec::new();
        bagit::write_manifest_line(&digest, &path, &mut out);
        out.pop();
        let again = bagit::parse_manifest_line(&out, algo).map(|(d, p)| (d.to_hex(), p));
        assert_eq!(again, Ok((digest.to_hex(), path)));
    }
});
