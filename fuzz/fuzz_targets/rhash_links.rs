//! rhash line parsers on arbitrary bytes (magnet and ed2k links, --simple lines, CRC32s in
//! names): never panic; a parsed magnet link written back by fixity parses to the same
//! name, size and digests.
#![no_main]

use fixity::formats::rhash::{
    self, FileInfo, Layout, Style, embed_crc, embedded_crc, parse_ed2k_link, parse_magnet,
    parse_simple,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (&count, text) = data.split_first().unwrap_or((&1, &[]));
    for line in text.split(|&b| b == b'\n') {
        let _ = parse_ed2k_link(line);
        let _ = parse_simple(line, usize::from(count % 5));
        if let Some(crc) = embedded_crc(line) {
            let renamed = embed_crc(line, crc, b" ");
            assert!(renamed.is_none(), "a name with a CRC32 is not renamed");
        } else if let Some(new) = embed_crc(line, 0x1234_abcd, b" ") {
            assert_eq!(embedded_crc(&new), Some(0x1234_abcd));
        }
        let Some(link) = parse_magnet(line) else { continue };
        let Some(digests) = link
            .digests
            .iter()
            .map(|d| d.algo.filter(|a| a.len == d.digest.as_bytes().len()).map(|a| (a, d.digest)))
            .collect::<Option<Vec<_>>>()
        else {
            continue;
        };
        let mut algos: Vec<_> = digests.iter().map(|(a, _)| *a).collect();
        rhash::sort_rhash_order(&mut algos);
        let sorted: Vec<_> = algos
            .iter()
            .map(|a| *digests.iter().find(|(b, _)| b.name == a.name).expect("same algorithms"))
            .collect();
        if link.name.contains(&b'/') {
            continue; // dn= holds a file name; a '/' in it would be read as a directory
        }
        let file = FileInfo {
            path: &link.name,
            size: link.size.unwrap_or(0),
            mtime: None,
            digests: &sorted,
        };
        let mut out = Vec::new();
        rhash::write(Layout::Magnet, Style::default(), &file, &mut out);
        out.pop();
        let again = parse_magnet(&out).expect("fixity's magnet link parses");
        assert_eq!(again.name, link.name);
        assert_eq!(again.size, Some(link.size.unwrap_or(0)));
        let got: Vec<_> = again.digests.iter().map(|d| d.digest.to_hex()).collect();
        let want: Vec<_> = sorted.iter().map(|(_, d)| d.to_hex()).collect();
        assert_eq!(got, want);
    }
});
