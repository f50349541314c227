//! The shape of the code base, checked (docs/architecture.md): the library decides and
//! never prints; modules do not import each other in a cycle; no source file is too long
//! to read (data tables and tests aside).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Files of the binary crate (src/main.rs and the modules it declares): they render.
const BINARY: &[&str] = &["main.rs", "cli.rs", "ui.rs", "cmd/", "dropin/", "serve/"];

/// Longest a source file may be, its unit tests left out.
const MAX_LINES: usize = 600;

/// Files allowed to be longer, and why.
const LONG_FILES: &[(&str, &str)] = &[("algo/snefru.rs", "the S-box tables of the specification")];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under src/, as a path relative to src/ with its text.
fn sources() -> Vec<(String, String)> {
    fn visit(dir: &Path, base: &Path, out: &mut Vec<(String, String)>) {
        let mut entries: Vec<_> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                visit(&p, base, out);
            } else if p.extension().is_some_and(|e| e == "rs") {
                let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
                out.push((rel, std::fs::read_to_string(&p).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    visit(&src(), &src(), &mut out);
    assert!(out.len() > 20, "src/ has the crate's files");
    out
}

fn in_binary(rel: &str) -> bool {
    BINARY.iter().any(|b| if b.ends_with('/') { rel.starts_with(b) } else { rel == *b })
}

/// Whether the whole file is tests (a `tests.rs` or a file under a `tests/` folder).
fn is_test_file(rel: &str) -> bool {
    rel.ends_with("/tests.rs") || rel.contains("/tests/") || rel == "tests.rs"
}

/// The file's text without its unit tests: everything from the first `#[cfg(test)]` on.
fn code_of(text: &str) -> &str {
    text.find("#[cfg(test)]").map_or(text, |i| &text[..i])
}

/// The lines that are code: comments left out, so prose about printing does not count.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    code_of(text)
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim_start()))
        .filter(|(_, l)| !l.starts_with("//"))
}

#[test]
fn the_library_never_prints() {
    let mut found = Vec::new();
    for (rel, text) in sources() {
        if in_binary(&rel) || is_test_file(&rel) {
            continue;
        }
        for (n, line) in code_lines(&text) {
            for mac in ["print!(", "println!(", "eprint!(", "eprintln!(", "dbg!("] {
                let at = line.find(mac);
                // `eprint!(` is inside `eprintln!(`'s name only when it is a real call.
                if at.is_some_and(|i| i == 0 || !line.as_bytes()[i - 1].is_ascii_alphanumeric()) {
                    found.push(format!("src/{rel}:{n}: {line}"));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "library modules print (emit an event instead):\n{}",
        found.join("\n")
    );
}

#[test]
fn no_source_file_is_too_long() {
    let mut long = Vec::new();
    for (rel, text) in sources() {
        if is_test_file(&rel) || LONG_FILES.iter().any(|(f, _)| *f == rel) {
            continue;
        }
        let n = code_of(&text).lines().count();
        if n > MAX_LINES {
            long.push(format!("src/{rel}: {n} lines"));
        }
    }
    assert!(long.is_empty(), "over {MAX_LINES} lines without tests:\n{}", long.join("\n"));
}

/// The module a file belongs to for the import graph: in the library the top-level
/// module (`catalog/sqlite.rs` is `catalog`); in the binary each file of `cmd/`,
/// `dropin/` and `serve/` is a module of its own (`cmd/check.rs` is `cmd::check`).
fn module_of(rel: &str) -> String {
    let stem = rel.trim_end_matches(".rs");
    let parts: Vec<&str> = stem.split('/').collect();
    match parts.as_slice() {
        [one] => one.to_string(),
        [top @ ("cmd" | "dropin" | "serve"), "mod"] => top.to_string(),
        [top @ ("cmd" | "dropin" | "serve"), file, ..] => format!("{top}::{file}"),
        [top, ..] => top.to_string(),
        [] => unreachable!(),
    }
}

/// The modules a file's code names: `crate::x`, and in the binary `super::x` from a file
/// of `cmd/`, `dropin/` or `serve/` (its siblings) and `fixity::` is the library, not a module here.
fn imports(rel: &str, text: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let me = module_of(rel);
    let folder = me.split("::").next().unwrap().to_string();
    for (_, line) in code_lines(text) {
        for (prefix, base) in [("crate::", None), ("super::", Some(&folder))] {
            let mut rest = line;
            while let Some(i) = rest.find(prefix) {
                let after = &rest[i + prefix.len()..];
                let name: String =
                    after.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                // `use crate::{a, b}` names several.
                let names: Vec<String> = if name.is_empty() && after.starts_with('{') {
                    let inner = &after[1..after.find('}').unwrap_or(after.len())];
                    inner
                        .split(',')
                        .map(|s| s.trim().split("::").next().unwrap_or("").to_string())
                        .collect()
                } else {
                    vec![name]
                };
                for n in names {
                    let target = match base {
                        // `super::` from a file directly under cmd/, dropin/ or serve/ is a
                        // sibling.
                        Some(f) if me.contains("::") => format!("{f}::{n}"),
                        Some(_) => continue,
                        None if n == "cmd" || n == "dropin" || n == "serve" => {
                            let sub: String = after[n.len()..]
                                .trim_start_matches("::")
                                .chars()
                                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                                .collect();
                            format!("{n}::{sub}")
                        }
                        None => n,
                    };
                    if known.contains(&target) && target != me {
                        out.insert(target);
                    }
                }
                rest = &rest[i + prefix.len()..];
            }
        }
    }
    out
}

#[test]
fn modules_do_not_import_each_other_in_a_cycle() {
    let files = sources();
    let known: BTreeSet<String> = files.iter().map(|(rel, _)| module_of(rel)).collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (rel, text) in &files {
        if is_test_file(rel) {
            continue;
        }
        let me = module_of(rel);
        let deps = imports(rel, text, &known);
        let entry = graph.entry(me.clone()).or_default();
        for d in deps {
            // A folder's mod.rs (the dispatch) and its files: the files may use what the
            // folder shares (`super::Status`); that is not a cycle between commands.
            let parent_child = d.split("::").next() == me.split("::").next()
                && (!d.contains("::") || !me.contains("::"));
            if !parent_child {
                entry.insert(d);
            }
        }
    }
    // Depth-first search for a back edge; report the cycle it closes.
    fn visit(
        m: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        stack: &mut Vec<String>,
        cycles: &mut Vec<String>,
    ) {
        state.insert(m.to_string(), 1);
        stack.push(m.to_string());
        for d in graph.get(m).into_iter().flatten() {
            match state.get(d.as_str()).copied().unwrap_or(0) {
                0 => visit(d, graph, state, stack, cycles),
                1 => {
                    let from = stack.iter().position(|s| s == d).unwrap();
                    let mut cycle = stack[from..].to_vec();
                    cycle.push(d.clone());
                    cycles.push(cycle.join(" -> "));
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(m.to_string(), 2);
    }
    let mut state = BTreeMap::new();
    let mut cycles = Vec::new();
    for m in graph.keys() {
        if state.get(m.as_str()).copied().unwrap_or(0) == 0 {
            visit(m, &graph, &mut state, &mut Vec::new(), &mut cycles);
        }
    }
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

#[test]
fn the_library_example_runs_every_job() {
    // examples/library.rs: hash a tree, check the manifest, scan, flip a byte, verify.
    let bin = crate::util::example("library").expect("build examples/library.rs");
    let out = std::process::Command::new(bin).output().expect("run the example");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03  "));
    assert!(stdout.contains("check: 2 files OK\n"), "{stdout}");
    assert!(
        stdout.contains("scan: 2 files new; verify: 0 corrupt, 1 changed with the mtime kept\n"),
        "{stdout}"
    );
}

#[test]
fn the_checks_above_see_what_they_look_for() {
    // The import scanner finds a cycle when there is one, and the print scanner a print.
    let known: BTreeSet<String> = ["a", "b", "cmd::x", "cmd::y"].map(String::from).into();
    assert_eq!(imports("a.rs", "use crate::{b, c};\n", &known), ["b".to_string()].into());
    assert_eq!(imports("cmd/x.rs", "super::y::run();\n", &known), ["cmd::y".to_string()].into());
    assert_eq!(
        imports("b.rs", "// crate::a in a comment\nfn f() { crate::a::g() }\n", &known),
        ["a".to_string()].into()
    );
    assert!(
        code_lines("let x = 1;\n#[cfg(test)]\nmod tests { println!() }")
            .all(|(_, l)| !l.contains("print"))
    );
    assert_eq!(module_of("catalog/sqlite.rs"), "catalog");
    assert_eq!(module_of("cmd/mod.rs"), "cmd");
    assert_eq!(module_of("dropin/sum.rs"), "dropin::sum");
}
