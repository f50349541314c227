//! b3sum's `-c` line parser on arbitrary bytes: it never panics, and a line it reads,
//! written back with the b3sum writer, reads back to the same name and digest (and is
//! written the same way again).
#![no_main]

use fixity::formats::b3sum::{needs_escape, parse_check_line, write};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // b3sum reads its checkfiles as UTF-8 text.
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(l) = parse_check_line(text) else { return };
    let mut out = Vec::new();
    write(&l.expected, Some(l.path.as_bytes()), &mut out);
    assert_eq!(out.pop(), Some(b'\n'));
    let written = std::str::from_utf8(&out).expect("the writer writes UTF-8");
    let back = parse_check_line(written).expect("a written line parses");
    assert_eq!((&back.path, back.expected), (&l.path, l.expected), "{written:?}");
    assert_eq!(back.escaped, needs_escape(&l.path), "{written:?}");
    let mut again = Vec::new();
    write(&back.expected, Some(back.path.as_bytes()), &mut again);
    again.pop();
    assert_eq!(again, out);
});
