//! What a new user reads first: every command's `--help` ends with its exit statuses; the
//! shell completion scripts parse in their shells and know the commands; the manual
//! pages, one per command, render with `man`.

use crate::util::{fixity, have, missing, tempdir};
use std::process::{Command, Stdio};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `man`'s output without its overstrikes (`N\x08N` for bold, `_\x08x` for underline).
fn plain(b: &[u8]) -> String {
    let mut s = String::new();
    for c in text(b).chars() {
        if c == '\u{8}' {
            s.pop();
        } else {
            s.push(c);
        }
    }
    s
}

fn out(args: &[&str]) -> String {
    let d = tempdir();
    let o = fixity(d.path()).args(args).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o.stderr));
    text(&o.stdout)
}

#[test]
fn every_command_that_judges_files_states_its_exit_statuses() {
    for cmd in [
        &["hash"][..],
        &["check"],
        &["scan"],
        &["verify"],
        &["status"],
        &["bag", "create"],
        &["bag", "check"],
        &["plan"],
        &["merge"],
    ] {
        let mut args = cmd.to_vec();
        args.push("--help");
        let help = out(&args);
        assert!(help.contains("Exit status: 0 "), "{cmd:?}:\n{help}");
        assert!(help.contains("; 2 "), "{cmd:?} names the could-not-run status:\n{help}");
    }
}

/// Checks `script` with `shell -n` (parse only), when the shell is here.
fn parses_in(shell: &str, script: &str) {
    if !have(shell) {
        return missing(shell, "cannot check its completion script");
    }
    let d = tempdir();
    let file = d.path().join("completion");
    std::fs::write(&file, script).unwrap();
    let o = Command::new(shell).arg("-n").arg(&file).stdin(Stdio::null()).output().unwrap();
    assert!(o.status.success(), "{shell} -n: {}", text(&o.stderr));
}

#[test]
fn completion_scripts_parse_and_know_the_commands_and_options() {
    let bash = out(&["completions", "bash"]);
    assert!(bash.contains("complete -F _fixity"), "{bash}");
    for word in ["hash", "verify", "merge", "--plan", "--max-duration", "--catalog"] {
        assert!(bash.contains(word), "bash completion lacks {word}");
    }
    parses_in("bash", &bash);
    let zsh = out(&["completions", "zsh"]);
    assert!(zsh.starts_with("#compdef fixity"), "{zsh}");
    assert!(zsh.contains("--max-duration"));
    parses_in("zsh", &zsh);
    let fish = out(&["completions", "fish"]);
    assert!(fish.contains("complete -c fixity"), "{fish}");
    assert!(fish.contains("max-duration"));
    parses_in("fish", &fish);
}

#[test]
fn manual_pages_cover_every_command_and_render() {
    let d = tempdir();
    let said = out(&["man", "--dir", d.path().to_str().unwrap()]);
    let mut pages: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    pages.sort();
    for want in [
        "fixity.1",
        "fixity-hash.1",
        "fixity-verify.1",
        "fixity-bench-tree.1",
        "fixity-bag-check.1",
        "fixity-catalog-init-roles.1",
        "fixity-man.1",
    ] {
        assert!(pages.iter().any(|p| p == want), "{want} in {pages:?}");
    }
    assert!(said.starts_with(&format!("{} manual pages written", pages.len())), "{said}");
    // One page printed is the same as the one written.
    let hash = out(&["man", "hash"]);
    assert_eq!(hash, std::fs::read_to_string(d.path().join("fixity-hash.1")).unwrap());
    assert!(hash.contains(".TH fixity-hash 1"), "{hash}");
    assert!(hash.contains(".SH \"EXIT STATUS\""), "{hash}");
    let o = fixity(d.path()).args(["man", "no-such-command"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("no command fixity no-such-command"), "{}", text(&o.stderr));
    if !have("man") {
        return missing("man", "cannot render the pages");
    }
    for page in &pages {
        let o = Command::new("man")
            .args(["--warnings", "-l"])
            .arg(d.path().join(page))
            .env("MANWIDTH", "80")
            .env("MAN_KEEP_FORMATTING", "0")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(o.status.success(), "man -l {page}: {}", text(&o.stderr));
        assert!(o.stderr.is_empty(), "man -l {page} warns: {}", text(&o.stderr));
        let shown = plain(&o.stdout);
        assert!(shown.contains("SYNOPSIS") && shown.contains("OPTIONS"), "{page}:\n{shown}");
    }
    let verify = plain(
        &Command::new("man")
            .arg("-l")
            .arg(d.path().join("fixity-verify.1"))
            .env("MANWIDTH", "80")
            .output()
            .unwrap()
            .stdout,
    );
    assert!(verify.contains("EXIT STATUS") && verify.contains("--max-duration"), "{verify}");
}

/// Writes the shipped units into `dir` with the tree `tree` as their instance, the
/// service's command pointing at the fixity under test; returns `dir` and the instance.
fn units_for(dir: &std::path::Path, tree: &std::path::Path) -> (std::path::PathBuf, String) {
    let escaped = Command::new("systemd-escape").arg("--path").arg(tree).output().unwrap();
    let instance = text(&escaped.stdout).trim().to_string();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("dist/systemd");
    let service = std::fs::read_to_string(root.join("fixity-verify@.service")).unwrap();
    let timer = std::fs::read_to_string(root.join("fixity-verify@.timer")).unwrap();
    assert!(service.contains("ExecStart=fixity "), "{service}");
    let exe = concat!("ExecStart=", env!("CARGO_BIN_EXE_fixity"), " ");
    let service = service.replace("ExecStart=fixity ", exe);
    std::fs::write(dir.join(format!("fixity-verify@{instance}.service")), &service).unwrap();
    std::fs::write(dir.join(format!("fixity-verify@{instance}.timer")), timer).unwrap();
    (dir.to_path_buf(), instance)
}

#[test]
fn the_systemd_units_verify_and_their_command_checks_the_tree() {
    if !have("systemd-analyze") || !have("systemd-escape") {
        return missing("systemd-analyze", "cannot check the shipped units");
    }
    let d = tempdir();
    let tree = d.path().join("srv data");
    std::fs::create_dir_all(&tree).unwrap();
    std::fs::write(tree.join("a"), b"alpha").unwrap();
    let units = d.path().join("units");
    std::fs::create_dir_all(&units).unwrap();
    let (dir, instance) = units_for(&units, &tree);
    // systemd-analyze checks the Documentation= pages exist: the ones `fixity man` writes.
    let man = d.path().join("man/man1");
    out(&["man", "--dir", man.to_str().unwrap()]);
    let service = dir.join(format!("fixity-verify@{instance}.service"));
    let timer = dir.join(format!("fixity-verify@{instance}.timer"));
    let o = Command::new("systemd-analyze")
        .arg("verify")
        .arg(&service)
        .arg(&timer)
        .env("MANPATH", d.path().join("man"))
        .output()
        .unwrap();
    assert!(o.status.success(), "systemd-analyze verify: {}", text(&o.stderr));
    assert_eq!(text(&o.stderr), "", "no warning about the units");
    let timer_text = std::fs::read_to_string(&timer).unwrap();
    assert!(timer_text.contains("Persistent=true"), "{timer_text}");
    // The service's command, with %f and %i as systemd fills them in, runs: clean, then
    // exit 1 once a file rots (the unit fails, `systemctl --failed` shows it).
    let text_of = std::fs::read_to_string(&service).unwrap();
    let exec = text_of.lines().find_map(|l| l.strip_prefix("ExecStart=")).unwrap();
    let log = d.path().join("fixity.log");
    let argv: Vec<String> = exec
        .split_whitespace()
        .map(|w| {
            w.replace("/var/log/fixity/%i.log", log.to_str().unwrap())
                .replace("%f", tree.to_str().unwrap())
        })
        .collect();
    // Rot stood for by an edit that puts the mtime back: ctimes not trusted (util::fixity).
    let run = |argv: &[String]| {
        let mut c = Command::new(&argv[0]);
        c.args(&argv[1..]).env("FIXITY_CTIME", crate::util::CTIME_IGNORED).output().unwrap()
    };
    let scan = Command::new(env!("CARGO_BIN_EXE_fixity")).args(["scan", "-q"]).arg(&tree).output();
    assert!(scan.unwrap().status.success());
    let o = run(&argv);
    assert_eq!(o.status.code(), Some(0), "{argv:?}: {}", text(&o.stderr));
    assert!(o.stdout.is_empty(), "a clean night is silent: {}", text(&o.stdout));
    let mtime = std::fs::metadata(tree.join("a")).unwrap().modified().unwrap();
    std::fs::write(tree.join("a"), b"alphA").unwrap();
    std::fs::File::options().write(true).open(tree.join("a")).unwrap().set_modified(mtime).unwrap();
    let o = run(&argv);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stdout));
    assert!(text(&o.stdout).contains("CORRUPT"), "{}", text(&o.stdout));
    assert!(std::fs::read_to_string(&log).unwrap().contains("corrupt=1"));
}

/// The command lines of the Windows Task Scheduler task and the launchd job that
/// dist/windows and dist/macos ship, as python3 parses the files (XML, a property
/// list), with their paths put here: each verifies a tree, silent when it is clean.
#[test]
fn the_task_scheduler_and_launchd_examples_parse_and_verify_the_tree() {
    if !have("python3") {
        return missing("python3", "cannot parse the scheduler examples");
    }
    let root = env!("CARGO_MANIFEST_DIR");
    let script = r#"
import plistlib, sys, xml.etree.ElementTree as ET
ns = {"t": "http://schemas.microsoft.com/windows/2004/02/mit/task"}
task = ET.parse(sys.argv[1]).getroot()
print(task.find("t:Actions/t:Exec/t:Arguments", ns).text)
with open(sys.argv[2], "rb") as f:
    job = plistlib.load(f)
print(" ".join(job["ProgramArguments"][1:]))
"#;
    let o = Command::new("python3")
        .args(["-c", script])
        .arg(format!("{root}/dist/windows/fixity-verify.xml"))
        .arg(format!("{root}/dist/macos/org.fixity.verify.plist"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let lines = text(&o.stdout);
    let d = tempdir();
    let tree = d.path().join("photos");
    std::fs::create_dir_all(&tree).unwrap();
    std::fs::write(tree.join("a.jpg"), b"picture").unwrap();
    assert!(fixity(d.path()).args(["scan", "-q", "photos"]).output().unwrap().status.success());
    let here = |w: &str| match w {
        r"D:\Photos" | "/Volumes/Archive/Photos" => tree.to_str().unwrap().to_string(),
        w if w.ends_with(".log") => d.path().join("verify.log").to_str().unwrap().to_string(),
        w => w.to_string(),
    };
    for line in lines.lines() {
        let argv: Vec<String> = line.split_whitespace().map(here).collect();
        assert_eq!(argv[0], "verify", "{line}");
        let o = fixity(d.path()).args(&argv).output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{argv:?}: {}", text(&o.stderr));
        assert!(o.stdout.is_empty(), "a clean night is silent: {}", text(&o.stdout));
    }
    assert_eq!(lines.lines().count(), 2);
}

/// The commit this test tree is at, as the build script reads it (None outside a git
/// checkout of this crate, e.g. the crate unpacked from the registry).
fn git_head() -> Option<(String, String)> {
    let dir = env!("CARGO_MANIFEST_DIR");
    let git = |args: &[&str]| {
        let o = Command::new("git").arg("-C").arg(dir).args(args).output().ok()?;
        o.status.success().then(|| text(&o.stdout).trim().to_string())
    };
    let top = git(&["rev-parse", "--show-toplevel"])?;
    if std::fs::canonicalize(top).ok()? != std::fs::canonicalize(dir).ok()? {
        return None;
    }
    let full = git(&["rev-parse", "HEAD"])?;
    let date = git(&["log", "-1", "--no-show-signature", "--format=%cd", "--date=short"])?;
    Some((full, date))
}

#[test]
fn version_says_the_version_and_the_commit_of_a_git_build() {
    let long = out(&["--version"]);
    assert_eq!(out(&["-V"]), long, "-V and --version say the same");
    let line = long.strip_suffix('\n').expect("one line, newline-terminated");
    assert!(!line.contains('\n'), "one line: {long:?}");
    let rest = line.strip_prefix(concat!("fixity ", env!("CARGO_PKG_VERSION"))).expect(line);
    match git_head() {
        Some((full, date)) => {
            // `fixity 0.1.0 (41dfd03 2026-11-26)`: HEAD's abbreviated hash and its date.
            let inner = rest.strip_prefix(" (").and_then(|r| r.strip_suffix(')')).expect(line);
            let (hash, got_date) = inner.split_once(' ').expect(line);
            assert!(hash.len() >= 7 && full.starts_with(hash), "{hash} abbreviates HEAD {full}");
            assert_eq!(got_date, date, "{line}");
        }
        None => assert_eq!(rest, "", "a build outside git says the bare version: {line}"),
    }
    // The drop-ins keep their peers' banners, with the bare version.
    let d = tempdir();
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_fixity"));
    let o = crate::util::run_as_tool(bin, "md5sum", d.path(), &["--version"], b"");
    let banner = text(&o.stdout);
    assert_eq!(
        banner.lines().next(),
        Some(concat!("md5sum (fixity) ", env!("CARGO_PKG_VERSION"))),
        "{banner}"
    );
}
