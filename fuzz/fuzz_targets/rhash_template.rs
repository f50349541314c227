//! rhash printf templates on arbitrary bytes: parsing never panics, rendering never panics,
//! and text without `%` or `\` comes out unchanged.
#![no_main]

use fixity::digest::Digest;
use fixity::formats::rhash::FileInfo;
use fixity::formats::template::Template;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(t) = Template::parse(data) else { return };
    let algos = t.algorithms();
    let digests: Vec<(&'static fixity::algo::Algorithm, Digest)> =
        algos.iter().map(|a| (*a, a.digest(b"fuzz"))).collect();
    let file = FileInfo {
        path: b"dir/some file.txt",
        size: 4,
        mtime: Some(1_700_000_000),
        digests: &digests,
    };
    let mut out = Vec::new();
    t.render(&file, &mut out);
    if !data.contains(&b'%') && !data.contains(&b'\\') {
        assert_eq!(out, data);
    }
    // Rendering twice gives the same bytes.
    let mut again = Vec::new();
    t.render(&file, &mut again);
    assert_eq!(out, again);
});
