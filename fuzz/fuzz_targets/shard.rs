//! The plan directory's parsers on arbitrary bytes: list entries and part records parse
//! or are refused, never panic, and what parses writes back to a line that parses to
//! the same thing; whole plan, list and part files read from disk likewise.
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
