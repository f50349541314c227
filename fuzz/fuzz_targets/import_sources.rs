//! The readers of other tools' state that `fixity import` parses as text: a chkbit index
//! (JSON, read by fixity's own reader) and a scorch database (CSV). On arbitrary bytes
//! they never panic, every chkbit entry stays below its directory, and scorch rows
//! written back as CSV (every field quoted) read back as the same rows.
#![no_main]

use fixity::import::{EntryPath, fuzz_chkbit_index, fuzz_scorch_rows};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for e in fuzz_chkbit_index(data, b"dir") {
        if let EntryPath::Relative(p) = &e.path {
            assert!(p.starts_with(b"dir"), "{:?}", String::from_utf8_lossy(p));
        }
    }
    let rows: Vec<Vec<Vec<u8>>> = fuzz_scorch_rows(data).into_iter().filter_map(Result::ok).collect();
    let mut csv = Vec::new();
    for row in &rows {
        for (i, field) in row.iter().enumerate() {
            if i > 0 {
                csv.push(b',');
            }
            csv.push(b'"');
            for &b in field {
                if b == b'"' {
                    csv.push(b'"');
                }
                csv.push(b);
            }
            csv.push(b'"');
        }
        csv.push(b'\n');
    }
    let again: Vec<Vec<Vec<u8>>> = fuzz_scorch_rows(&csv).into_iter().map(Result::unwrap).collect();
    assert_eq!(again, rows);
});
