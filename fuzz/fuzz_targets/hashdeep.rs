//! The hashdeep parser on arbitrary bytes: never panics, and every file record written
//! back with the parsed columns parses to the same record.
#![no_main]

use fixity::formats::hashdeep::{self, Line, Parser};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = hashdeep::parse_header(data);
    let mut p = Parser::new();
    for line in data.split(|&b| b == b'\n') {
        let Ok(Line::File(r)) = p.line(line) else { continue };
        let cols = p.columns().expect("a file line needs the columns").to_vec();
        let digests: Vec<_> = r.digests.iter().map(|(_, d)| *d).collect();
        let mut out = Vec::new();
        hashdeep::write(r.size, &digests, &r.name, &mut out);
        out.pop();
        let again = hashdeep::parse_line(&cols, &out).expect("a written line parses");
        // Digests have no `==`: records compare by their Debug text (digests in hex).
        assert_eq!(format!("{again:?}"), format!("{r:?}"));
    }
});
