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
