//! `fixity plan`, `hash --plan` and `merge`: a tree split into parts, hashed in any
//! order, merges into exactly what one `fixity hash` writes; the merge refuses what it
//! must and names it.

use crate::util::{fixity, run, tempdir, write};
use proptest::prelude::*;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::Output;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A tree with the hard cases: an empty file, a space, a newline and a non-UTF-8 byte in
/// names, a larger file, a symlink (left out by the walk), a subdirectory.
fn hard_tree(d: &Path) {
    for i in 0..40u32 {
        let data: Vec<u8> = (0..i * 97).map(|j| (j * 31 + i) as u8).collect();
        write(d, format!("t/d{}/f{i}", i % 3), &data);
    }
    write(d, "t/empty", b"");
    write(d, "t/with space", b"space");
    write(d, "t/new\nline", b"newline");
    write(d, OsStr::from_bytes(b"t/bad\xffname"), b"latin1");
    write(d, "t/big", &vec![7u8; 200_000]);
    std::os::unix::fs::symlink("big", d.join("t/link")).unwrap();
}

fn part(d: &Path, plan: &str, i: usize, alg: &str) -> Output {
    run(d, ["hash", "--plan", plan, "--part", &i.to_string(), "-a", alg])
}

fn one_run(d: &Path, args: &[&str]) -> Output {
    let out = run(d, args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    out
}

#[test]
fn parts_in_any_order_merge_into_one_runs_manifest_in_every_format() {
    let d = tempdir();
    hard_tree(d.path());
    let mut roots = Vec::new();
    for n in [1usize, 3, 7] {
        let plan = format!("plan{n}");
        let out = run(d.path(), ["plan", "t", "--parts", &n.to_string(), "-o", &plan]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert!(text(&out.stdout).contains(&format!("{n} part")), "{}", text(&out.stdout));
        // The walk's note on the symlink comes at plan time.
        assert!(
            text(&out.stderr).contains("t/link: symbolic link not followed"),
            "{}",
            text(&out.stderr)
        );
        for i in (0..n).rev() {
            let p = part(d.path(), &plan, i, "sha256,md5");
            assert_eq!(p.status.code(), Some(0), "{}", text(&p.stderr));
        }
        for format in ["gnu", "bsd", "json", "rhash"] {
            let merged = run(d.path(), ["merge", &plan, "--format", format]);
            let single = run(d.path(), ["hash", "-a", "sha256,md5", "--format", format, "t"]);
            assert_eq!(text(&merged.stdout), text(&single.stdout), "{format}, {n} parts");
            // rhash's lines cannot hold the newline name: both say so and exit 1.
            assert_eq!(merged.status.code(), single.status.code(), "{}", text(&merged.stderr));
            assert_eq!(merged.status.code(), Some(if format == "rhash" { 1 } else { 0 }));
            // The same messages, in the same place.
            let msgs = |o: &Output| {
                text(&o.stderr)
                    .lines()
                    .filter(|l| !l.contains(" root "))
                    .map(String::from)
                    .collect::<Vec<_>>()
            };
            assert_eq!(msgs(&merged), msgs(&single), "{format}, {n} parts");
        }
        let out = run(d.path(), ["merge", &plan, "-o", "m.sha256"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let root = text(&out.stdout);
        assert!(
            root.starts_with("root blake3:") && root.contains("over sha256,md5 of 45 files"),
            "{root}"
        );
        roots.push(root);
    }
    assert!(roots.windows(2).all(|w| w[0] == w[1]), "the root does not depend on N: {roots:?}");
    // A different tree has a different root.
    write(d.path(), "t/empty", b"not any more");
    let out = run(d.path(), ["plan", "t", "--parts", "2", "-o", "again"]);
    assert!(out.status.success());
    for i in 0..2 {
        assert!(part(d.path(), "again", i, "sha256,md5").status.success());
    }
    let out = run(d.path(), ["merge", "again", "-o", "m2"]);
    assert_ne!(text(&out.stdout), roots[0]);
}

#[test]
fn a_big_file_is_a_part_of_its_own_and_parts_are_balanced_by_bytes() {
    let d = tempdir();
    for i in 0..20 {
        write(d.path(), format!("t/a{i:02}"), &[1u8; 10_000]);
    }
    write(d.path(), "t/b-huge", &vec![2u8; 1_000_000]);
    for i in 0..20 {
        write(d.path(), format!("t/c{i:02}"), &[3u8; 10_000]);
    }
    let out = run(d.path(), ["plan", "t", "--parts", "3", "-o", "p"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let plan = std::fs::read_to_string(d.path().join("p/plan")).unwrap();
    let parts: Vec<Vec<u64>> = plan
        .lines()
        .filter_map(|l| l.strip_prefix("part "))
        .map(|l| l.split(' ').take(3).map(|x| x.parse().unwrap()).collect())
        .collect();
    assert_eq!(parts.len(), 3);
    assert_eq!(parts[1][1..], [1, 1_000_000], "the huge file alone: {plan}");
    assert_eq!((parts[0][1], parts[2][1]), (20, 20), "{plan}");
    let list1 = std::fs::read_to_string(d.path().join("p/list-1")).unwrap();
    assert!(list1.ends_with(" t/b-huge\n"), "{list1}");
    // Tiny files: the file bound cuts a part even below its share of bytes.
    let out = run(d.path(), ["plan", "t", "--parts", "4", "--files-bound", "1", "-o", "q"]);
    assert!(out.status.success());
    let plan = std::fs::read_to_string(d.path().join("q/plan")).unwrap();
    let most = plan
        .lines()
        .filter_map(|l| l.strip_prefix("part "))
        .map(|l| l.split(' ').nth(1).unwrap().parse::<u64>().unwrap())
        .max()
        .unwrap();
    assert!(most <= 11, "no part over 41 / 4 files: {plan}");
}

#[test]
fn the_merge_refuses_missing_foreign_overlapping_and_stray_parts_naming_them() {
    let d = tempdir();
    hard_tree(d.path());
    assert!(run(d.path(), ["plan", "t", "--parts", "3", "-o", "p"]).status.success());
    assert!(run(d.path(), ["plan", "t/d0", "--parts", "3", "-o", "other"]).status.success());
    for i in [0, 2] {
        assert!(part(d.path(), "p", i, "sha256").status.success());
    }
    let refused = |why: &str| {
        let out = run(d.path(), ["merge", "p"]);
        assert_eq!(out.status.code(), Some(2), "{why}");
        assert!(out.stdout.is_empty(), "nothing written when refused");
        let err = text(&out.stderr);
        assert!(err.contains(why), "{why}: {err}");
        let st = run(d.path(), ["merge", "p", "--status"]);
        assert_eq!(st.status.code(), Some(1));
        text(&st.stdout)
    };
    let st = refused("part-1 missing");
    assert!(st.contains("part-1: missing: not run") && st.contains("part-0: done"), "{st}");
    // A part of another plan copied in.
    assert!(part(d.path(), "other", 1, "sha256").status.success());
    std::fs::copy(d.path().join("other/part-1"), d.path().join("p/part-1")).unwrap();
    let st = refused("part-1 of another plan");
    assert!(st.contains("part-1: stale: made for plan"), "{st}");
    // This plan's part 0 under part 1's name.
    std::fs::copy(d.path().join("p/part-0"), d.path().join("p/part-1")).unwrap();
    refused("part-1 hashed other files than the plan's part 1 (it says part 0)");
    assert!(part(d.path(), "p", 1, "sha256").status.success());
    // Stray part files.
    std::fs::copy(d.path().join("p/part-1"), d.path().join("p/part-01")).unwrap();
    refused("part-01: a second file for part 1");
    std::fs::rename(d.path().join("p/part-01"), d.path().join("p/part-7")).unwrap();
    refused("part-7: part 7 is not in a plan of 3 parts");
    std::fs::remove_file(d.path().join("p/part-7")).unwrap();
    // A part cut short (killed while written by hand, or truncated).
    let full = std::fs::read(d.path().join("p/part-2")).unwrap();
    std::fs::write(d.path().join("p/part-2"), &full[..full.len() / 2]).unwrap();
    refused("part-2 unreadable");
    std::fs::write(d.path().join("p/part-2"), &full).unwrap();
    // Parts hashed with different algorithms.
    assert!(part(d.path(), "p", 2, "md5").status.success());
    refused("part-2 was hashed with md5, part-0 with sha256");
    assert!(part(d.path(), "p", 2, "sha256").status.success());
    let out = run(d.path(), ["merge", "p", "--status", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["complete"], true);
    assert_eq!(v["parts"][1]["state"], "done");
    assert_eq!(v["parts"][1]["algorithms"][0], "sha256");
    assert!(run(d.path(), ["merge", "p"]).status.success());
    // A list changed after planning.
    let list = d.path().join("p/list-0");
    let mut l = std::fs::read(&list).unwrap();
    l.extend_from_slice(b"F N 1 1 t/empty\n");
    std::fs::write(&list, l).unwrap();
    let out = part(d.path(), "p", 0, "sha256");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("the list was changed"), "{}", text(&out.stderr));
    // A plan is not made over a plan's results.
    let out = run(d.path(), ["plan", "t", "--parts", "2", "-o", "p"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("holds results of a plan already"), "{}", text(&out.stderr));
}

#[test]
fn a_file_changed_or_gone_since_the_plan_is_reported_never_merged_as_if_it_matched() {
    let d = tempdir();
    hard_tree(d.path());
    assert!(run(d.path(), ["plan", "t", "--parts", "2", "-o", "p"]).status.success());
    write(d.path(), "t/empty", b"grew");
    std::fs::remove_file(d.path().join("t/with space")).unwrap();
    let mut failed = Vec::new();
    for i in 0..2 {
        let out = part(d.path(), "p", i, "sha256");
        if out.status.code() == Some(1) {
            failed.push(text(&out.stderr));
        } else {
            assert_eq!(out.status.code(), Some(0));
        }
    }
    let err = failed.concat();
    assert!(err.contains("t/empty: changed since the plan"), "{err}");
    assert!(err.contains("with space': No such file or directory"), "{err}");
    let st = run(d.path(), ["merge", "p", "--status"]);
    assert_eq!(st.status.code(), Some(1));
    assert!(text(&st.stdout).contains(": failed: "), "{}", text(&st.stdout));
    let out = run(d.path(), ["merge", "p"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("t/empty: changed since the plan")
            && err.contains("with space': No such file"),
        "{err}"
    );
    // The changed file's line carries what it holds now, as a run now would write.
    let now = one_run(d.path(), &["hash", "-a", "sha256", "t/empty"]);
    assert!(out.stdout.windows(now.stdout.len()).any(|w| w == now.stdout.as_slice()));
}

#[test]
fn the_part_comes_from_the_scheduler_and_a_bad_index_is_a_usage_error() {
    let d = tempdir();
    hard_tree(d.path());
    assert!(run(d.path(), ["plan", "t", "--parts", "2", "-o", "p"]).status.success());
    let by_env = |vars: &[(&str, &str)]| {
        let mut c = fixity(d.path());
        c.args(["hash", "--plan", "p", "-a", "sha256"])
            .env_remove("SLURM_ARRAY_TASK_ID")
            .env_remove("JOB_COMPLETION_INDEX");
        for (k, v) in vars {
            c.env(k, v);
        }
        c.output().unwrap()
    };
    let out = by_env(&[]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("--part")
            && err.contains("SLURM_ARRAY_TASK_ID")
            && err.contains("JOB_COMPLETION_INDEX"),
        "{err}"
    );
    let out = by_env(&[("JOB_COMPLETION_INDEX", "2")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("part 2 is out of range: the plan in"),
        "{}",
        text(&out.stderr)
    );
    let out = by_env(&[("JOB_COMPLETION_INDEX", "x")]);
    assert_eq!(out.status.code(), Some(2));
    // Slurm's variable first, then Kubernetes'.
    let out = by_env(&[("SLURM_ARRAY_TASK_ID", "1"), ("JOB_COMPLETION_INDEX", "0")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(d.path().join("p/part-1").exists() && !d.path().join("p/part-0").exists());
    let out = by_env(&[("JOB_COMPLETION_INDEX", "0")]);
    assert!(out.status.success());
    // A part run from elsewhere finds the files where the plan was made.
    let elsewhere = tempdir();
    let plan = d.path().join("p");
    let out = run(
        elsewhere.path(),
        [
            OsStr::new("hash"),
            OsStr::new("--plan"),
            plan.as_os_str(),
            OsStr::new("--part"),
            OsStr::new("0"),
            OsStr::new("-a"),
            OsStr::new("sha256"),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let merged = run(d.path(), ["merge", "p"]);
    assert_eq!(
        text(&merged.stdout),
        text(&one_run(d.path(), &["hash", "-a", "sha256", "t"]).stdout)
    );
}

#[test]
fn a_plan_from_a_nul_separated_list_merges_into_the_run_over_the_same_operands() {
    let d = tempdir();
    hard_tree(d.path());
    let names: [&[u8]; 4] = [b"t/big", b"t/new\nline", b"t/d1", b"t/bad\xffname"];
    let list: Vec<u8> = names.iter().flat_map(|n| n.iter().copied().chain([0])).collect();
    std::fs::write(d.path().join("list"), &list).unwrap();
    let out = run(d.path(), ["plan", "--from-list", "list", "--parts", "3", "-o", "p"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for i in 0..3 {
        assert!(part(d.path(), "p", i, "blake3").status.success());
    }
    let merged = run(d.path(), ["merge", "p"]);
    let args: Vec<&OsStr> = [OsStr::new("hash"), OsStr::new("-a"), OsStr::new("blake3")]
        .into_iter()
        .chain(names.iter().map(|n| OsStr::from_bytes(n)))
        .collect();
    let single = run(d.path(), args);
    assert_eq!(text(&merged.stdout), text(&single.stdout));
    assert!(!merged.stdout.is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10, ..ProptestConfig::default() })]

    /// Random trees (some files large enough to be split across parts at a 1 KiB
    /// unit), N in 1..8, an algorithm that combines from ranges or one that does not,
    /// parts run in any order, one of them killed (its part file cut short) and run
    /// again: the merge is byte for byte one run's manifest.
    #[test]
    fn merge_equals_one_run_for_any_split_and_order(
        sizes in prop::collection::vec(prop_oneof![0usize..20_000, 20_000usize..200_000], 1..30),
        n in 1usize..8,
        order_seed in any::<u64>(),
        killed in any::<prop::sample::Index>(),
        alg in prop::sample::select(vec!["xxh128", "blake3", "crc32c,sha256", "crc64nvme,blake3"]),
    ) {
        let d = tempdir();
        for (i, s) in sizes.iter().enumerate() {
            let data: Vec<u8> = (0..*s).map(|j| ((j as u64 ^ order_seed) >> (j % 7)) as u8).collect();
            write(d.path(), format!("t/{}/f{i}", i % 4), &data);
        }
        let plan = ["plan", "t", "--parts", &n.to_string(), "--piece-size", "1024", "-o", "p"];
        prop_assert!(run(d.path(), plan).status.success());
        let mut order: Vec<usize> = (0..n).collect();
        let mut x = order_seed | 1;
        for i in (1..n).rev() {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            order.swap(i, (x % (i as u64 + 1)) as usize);
        }
        let k = killed.index(n);
        for &i in &order {
            prop_assert!(part(d.path(), "p", i, alg).status.success());
            if i == k {
                let f = d.path().join(format!("p/part-{i}"));
                let full = std::fs::read(&f).unwrap();
                std::fs::write(&f, &full[..full.len() * 2 / 3]).unwrap();
            }
        }
        prop_assert_eq!(run(d.path(), ["merge", "p"]).status.code(), Some(2));
        prop_assert!(part(d.path(), "p", k, alg).status.success());
        let merged = run(d.path(), ["merge", "p"]);
        prop_assert_eq!(merged.status.code(), Some(0));
        let single = run(d.path(), ["hash", "-a", alg, "t"]);
        prop_assert_eq!(text(&merged.stdout), text(&single.stdout));
    }
}
