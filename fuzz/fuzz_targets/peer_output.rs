//! The parsers of other tools' output and records: peer manifests (`bench --compare`),
//! xattr timestamps (cshatag's `user.shatag.ts`), and size/duration options. No panic on
//! any input; a timestamp that parses formats back to a value that parses the same.
#![no_main]

use fixity::bench::peers::parse_output;
use fixity::catalog::xattr::{format_ts, parse_ts};
use fixity::units::{parse_duration, parse_size};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = parse_output(data, std::path::Path::new("/tmp"));
    if let Some((ns, _)) = parse_ts(data) {
        assert_eq!(parse_ts(format_ts(ns).as_bytes()).map(|(n, _)| n), Some(ns));
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = parse_size(text);
        let _ = parse_duration(text);
    }
});
