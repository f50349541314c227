//! The storage policy as the user sees it: `--verbose` says each device's decision and
//! its evidence on stderr, and changes nothing else; `--storage` overrides the probe.

use crate::util::{run, tempdir, write};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A small tree whose files are not in the page cache (on a file system that keeps pages
/// only as a cache), so that `auto` has something to time.
fn uncached_tree(d: &std::path::Path) {
    for i in 0..6 {
        let f = write(d, format!("t/f{i}"), &vec![i as u8; 64 << 10]);
        std::fs::File::open(&f).unwrap().sync_all().unwrap();
        // dd's nocache flag asks the kernel to drop the file's pages.
        let dropped = std::process::Command::new("dd")
            .args([format!("if={}", f.display()).as_str(), "iflag=nocache", "count=0"])
            .arg("status=none")
            .status()
            .unwrap();
        assert!(dropped.success());
    }
}

#[test]
fn verbose_says_the_storage_decision_and_changes_nothing_else() {
    let d = tempdir();
    uncached_tree(d.path());
    let plain = run(d.path(), ["hash", "-a", "md5", "t"]);
    assert!(plain.status.success() && plain.stderr.is_empty(), "{}", text(&plain.stderr));
    uncached_tree(d.path());
    let verbose = run(d.path(), ["hash", "-v", "-a", "md5", "t"]);
    assert!(verbose.status.success());
    assert_eq!(verbose.stdout, plain.stdout);
    let err = text(&verbose.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "one device, one line: {err}");
    let line = lines[0];
    assert!(line.starts_with("fixity: storage: "), "{line}");
    // Timed where the file system keeps pages only as a cache; known by type in memory.
    let timed = line.contains("(median random 4 KiB read ") && line.contains(" ms over ");
    let memory = line.ends_with("many reads in flight (file system tmpfs, in memory)");
    assert!(timed || memory, "{line}");
    let kinds = ["seeking: one reader at a time", "flash-like: many reads in flight"];
    assert!(kinds.iter().any(|k| line.contains(k)), "{line}");
}

#[test]
fn storage_overrides_the_probe_and_verbose_says_so() {
    let d = tempdir();
    write(d.path(), "t/a", b"alpha");
    for (flag, said) in [
        ("hdd", "seeking: one reader at a time, files in physical order (--storage hdd)"),
        ("ssd", "flash-like: many reads in flight (--storage ssd)"),
    ] {
        let out = run(d.path(), ["hash", "--verbose", "--storage", flag, "t"]);
        assert!(out.status.success());
        let err = text(&out.stderr);
        assert!(
            err.starts_with("fixity: storage: ") && err.ends_with(&format!("{said}\n")),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    // check -v says it too; the manifest's device is the one decided first.
    let m = run(d.path(), ["hash", "-a", "md5", "-o", "m.md5", "t"]);
    assert!(m.status.success());
    let out = run(d.path(), ["check", "-v", "--storage", "hdd", "m.md5"]);
    assert_eq!(text(&out.stdout), "t/a: OK\n");
    assert!(text(&out.stderr).ends_with("(--storage hdd)\n"), "{}", text(&out.stderr));
}

#[test]
fn fixity_storage_names_the_policy_where_no_option_does() {
    let d = tempdir();
    write(d.path(), "t/a", b"alpha");
    // The command line's option when it is given, else the environment's; `--verbose`
    // names which set it.
    let said = |env: &str, args: &[&str]| {
        let out = crate::util::fixity(d.path()).env("FIXITY_STORAGE", env).args(args).output();
        let out = out.unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stderr)
    };
    let verbose = ["hash", "--verbose", "t"];
    assert!(said("hdd", &verbose).ends_with("files in physical order (FIXITY_STORAGE=hdd)\n"));
    let both = ["hash", "--verbose", "--storage", "ssd", "t"];
    assert!(said("hdd", &both).ends_with("many reads in flight (--storage ssd)\n"));
    // A name that is no policy: refused, by the command line as a usage error and by the
    // drop-ins (which have no --storage) as coreutils refuses its own bad settings.
    let out = crate::util::fixity(d.path()).env("FIXITY_STORAGE", "tape").args(verbose).output();
    let out = out.unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("invalid value 'tape'"), "{}", text(&out.stderr));
    let bin = d.path().join("md5sum");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_fixity"), &bin).unwrap();
    let dropin = |env: &str| {
        let mut c = crate::util::as_tool(&bin, "md5sum", d.path(), &["t/a"]);
        c.env("FIXITY_STORAGE", env).output().unwrap()
    };
    let out = dropin("tape");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "");
    assert_eq!(
        text(&out.stderr),
        "md5sum: FIXITY_STORAGE: unknown storage policy \"tape\" (auto, ssd or hdd)\n"
    );
    for policy in ["auto", "ssd", "hdd"] {
        let out = dropin(policy);
        assert_eq!(out.status.code(), Some(0), "{policy}");
        assert_eq!(text(&out.stdout), "2c1743a391305fbf367df8e4f069f9f9  t/a\n", "{policy}");
    }
}
