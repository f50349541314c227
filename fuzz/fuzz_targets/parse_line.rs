//! Every manifest line parser on arbitrary bytes: never panics, and whatever parses as a
//! record re-parses to the same record after being written back in its own format.
#![no_main]

use fixity::digest::Encoding;
use fixity::formats::{
    FileEntry, Format, LineKind, Manifest, OutputFormat, WriteOptions, decode_for,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (flags, text) = data.split_first().unwrap_or((&0, &[]));
    let mut m = Manifest::new(flags & 1 == 1);
    for line in text.split(|&b| b == b'\n') {
        let LineKind::Record(r) = m.parse_line(line) else { continue };
        let hex_len = r.digest.decode_as(Encoding::Hex).map_or(0, |d| d.as_bytes().len());
        let Some(algo) = r.algo.or_else(|| fixity::algo::by_len(hex_len).next()) else {
            continue;
        };
        let Some(digest) = decode_for(&r.digest, algo) else { continue };
        // Lines with a size or several digests (hashdeep, cfv .csv, links, rhash's
        // several-digest lines) have round-trip tests of their own.
        if !matches!(r.format, Format::Gnu | Format::Bsd | Format::Sfv)
            || r.name.contains(&b'\n') && r.format == Format::Sfv
        {
            continue;
        }
        let format = match r.format {
            Format::Gnu => OutputFormat::Gnu,
            Format::Bsd => OutputFormat::Bsd,
            _ => OutputFormat::Sfv,
        };
        // A format refuses algorithms it cannot hold (SFV: CRC32 only).
        let Ok(mut writer) = format.writer(vec![algo], WriteOptions::default()) else { continue };
        let digests = [digest];
        let file = FileEntry { name: &r.name, size: 0, mtime: None, digests: &digests };
        let mut out = Vec::new();
        if writer.record(&file, &mut out).is_err() {
            continue;
        }
        out.pop();
        let mut fresh = Manifest::new(r.format == Format::Sfv);
        if let LineKind::Record(again) = fresh.parse_line(&out) {
            assert_eq!(decode_for(&again.digest, algo).map(|d| d.to_hex()), Some(digest.to_hex()));
            // SFV cannot keep leading/trailing blanks; GNU and BSD keep names exactly.
            if r.format != Format::Sfv {
                assert_eq!(again.name, r.name);
            }
        } else if r.format != Format::Sfv {
            panic!("written line does not parse: {:?}", String::from_utf8_lossy(&out));
        }
    }
});
