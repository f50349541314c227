//! The plan directory's parsers on arbitrary bytes: list entries (`F`, and `P` for a
//! piece of a file split across parts) and part records (`H`, `U`, `S`, `E`, and `R`,
//! `X`, `C` for pieces) parse or are refused, never panic, and what parses writes back to
//! a line that parses to the same thing; whole plan, list and part files read from disk
//! likewise. A piece line made from the input's numbers parses exactly when it keeps the
//! list's rules (a unit that is a power of two of at least 1 KiB, cuts at its multiples,
//! a file larger than the unit).
#![no_main]

use fixity::shard::part::{PartFile, Record};
use fixity::shard::{Entry, Plan};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (flags, text) = data.split_first().unwrap_or((&0, &[]));
    let algos = &fixity::algo::ALGORITHMS;
    let chosen = vec![&algos[*flags as usize % algos.len()], &algos[(*flags as usize / 7) % algos.len()]];
    if let Ok(s) = std::str::from_utf8(text) {
        for line in s.lines() {
            if let Some(e) = Entry::parse(line) {
                let again = e.to_line();
                let back = Entry::parse(again.trim_end_matches('\n')).expect("written lines parse");
                assert_eq!(back, e);
            }
            if let Some(r) = Record::parse(line, &chosen) {
                let again = r.to_line();
                let back = Record::parse(again.trim_end_matches('\n'), &chosen).expect("written lines parse");
                assert_eq!(back.to_line(), again);
            }
        }
    }
    if let Some(n) = text.get(..24) {
        let num = |i: usize| u64::from_le_bytes(n[i..i + 8].try_into().expect("8 bytes"));
        let (start, end, unit) = (num(0) % (1 << 40), num(8) % (1 << 40), 1u64 << (num(16) % 41));
        let size = end + (num(16) >> 8) % 5000;
        let line = format!("P W {size} 7 {start} {end} {unit} a%20b");
        let keeps = unit >= 1024
            && start < end
            && size > unit
            && start % unit == 0
            && (end % unit == 0 || end == size);
        match Entry::parse(&line) {
            Some(e) => {
                assert!(keeps, "{line}");
                assert_eq!(e.to_line(), format!("{line}\n"));
            }
            None => assert!(!keeps, "{line}"),
        }
    }
    let dir = std::env::temp_dir().join(format!("fixity-fuzz-shard-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    for name in ["plan", "list-0", "part-0"] {
        let _ = std::fs::write(dir.join(name), text);
    }
    if let Ok(plan) = Plan::read(&dir) {
        if !plan.parts.is_empty() {
            if let Ok(list) = plan.list(0) {
                list.for_each(drop);
            }
        }
    }
    if let Ok(mut part) = PartFile::open(&dir.join("part-0")) {
        while let Ok(Some(_)) = part.next_record() {}
    }
});
