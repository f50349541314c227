//! Tamper evidence (issue 24): an honest history passes `audit-proof` with any head it
//! gave; a record edited offline together with its file, a run deleted from the history
//! and a forged head are each found; OpenSSH and minisign signatures of a head verify,
//! and a signed head that was changed does not. On SQLite and on PostgreSQL.

use crate::catalog::Cat;
use crate::util::{self, tempdir, write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The current head of the tree `t` under `dir`, written to `dir/NAME`.
fn keep_head(cat: &Cat, dir: &Path, name: &str) -> PathBuf {
    let out = cat.run(dir, &["status", "--proof", "t"]);
    assert!(out.status.success(), "status --proof: {}", text(&out.stderr));
    let head = text(&out.stdout);
    assert!(head.starts_with("fixity-proof 1\n"), "{head}");
    let path = dir.join(name);
    std::fs::write(&path, &out.stdout).unwrap();
    path
}

/// `fixity audit-proof t --head HEAD EXTRA...`.
fn audit(cat: &Cat, dir: &Path, head: &Path, extra: &[&str]) -> Output {
    let head = head.to_str().unwrap();
    let mut args = vec!["audit-proof", "t", "--head", head];
    args.extend_from_slice(extra);
    cat.run(dir, &args)
}

fn assert_intact(out: &Output, what: &str) {
    assert_eq!(out.status.code(), Some(0), "{what}: {}{}", text(&out.stdout), text(&out.stderr));
    assert!(out.stdout.is_empty(), "{what}: {}", text(&out.stdout));
    assert!(text(&out.stderr).contains("intact"), "{what}: {}", text(&out.stderr));
}

fn assert_broken(out: &Output, what: &str, says: &[&str]) {
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{what}: {stdout}{}", text(&out.stderr));
    for s in says {
        assert!(stdout.contains(s), "{what}: no {s:?} in\n{stdout}");
    }
}

fn run_ok(cat: &Cat, dir: &Path, args: &[&str]) {
    let out = cat.run(dir, args);
    assert!(out.status.code().is_some_and(|c| c <= 1), "{args:?}: {}", text(&out.stderr));
}

/// A field of a statement.
fn field(head: &Path, key: &str) -> String {
    let t = std::fs::read_to_string(head).unwrap();
    let line = t.lines().find(|l| l.starts_with(&format!("{key} "))).unwrap();
    line[key.len() + 1..].to_string()
}

/// Runs `sqlite` on the SQLite catalog, or `pg` on the PostgreSQL one (its tables are in
/// the schema `fixity`; the test's database holds one tree).
fn tamper(cat: &Cat, dir: &Path, sqlite: &str, pg: &str) {
    match cat {
        Cat::Sqlite => {
            let db = fixity::catalog::sqlite::Catalog::default_path(&dir.join("t"));
            let c = rusqlite::Connection::open(db).unwrap();
            c.execute_batch(sqlite).unwrap_or_else(|e| panic!("{sqlite}: {e}"));
        }
        Cat::Postgres(url) => {
            let mut c = ::postgres::Client::connect(url, ::postgres::NoTls).unwrap();
            c.batch_execute(pg).unwrap_or_else(|e| panic!("{pg}: {e}"));
        }
    }
}

/// Sets the mtime of `path` to `ns` nanoseconds since the epoch.
fn set_mtime(path: &Path, ns: i128) {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(ns as u64);
    std::fs::File::options().write(true).open(path).unwrap().set_modified(t).unwrap();
}

fn mtime_ns(path: &Path) -> i128 {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).unwrap();
    i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec())
}

fn a_tree(dir: &Path) {
    write(dir, "t/a.txt", b"alpha\n");
    write(dir, "t/b.txt", b"bravo\n");
    write(dir, "t/sub/c.txt", b"charlie\n");
    write(dir, "t/sub/d.txt", b"delta\n");
}

pub(crate) fn an_honest_history_passes_with_earlier_and_current_heads(cat: &Cat) {
    let tmp = tempdir();
    let dir = tmp.path();
    a_tree(dir);
    run_ok(cat, dir, &["scan", "t"]);
    let first = keep_head(cat, dir, "head1.txt");
    assert_eq!(field(&first, "seq"), "1");
    assert_eq!(field(&first, "files"), "4");
    // An edit, found by a verify.
    write(dir, "t/b.txt", b"bravo, edited\n");
    run_ok(cat, dir, &["verify", "t"]);
    let second = keep_head(cat, dir, "head2.txt");
    // Rot (same size and mtime, other content), found and accepted; a loss, forgotten.
    let a = dir.join("t/a.txt");
    let when = mtime_ns(&a);
    std::fs::write(&a, b"ALPHA\n").unwrap();
    set_mtime(&a, when);
    std::fs::remove_file(dir.join("t/sub/d.txt")).unwrap();
    run_ok(cat, dir, &["verify", "t"]);
    let out = cat.run(dir, &["accept", "t/a.txt"]);
    assert!(out.status.success(), "accept: {}", text(&out.stderr));
    let out = cat.run(dir, &["forget", "t/sub/d.txt"]);
    assert!(out.status.success(), "forget: {}", text(&out.stderr));
    let third = keep_head(cat, dir, "head3.txt");
    // scan, verify, verify, accept, forget: one entry each.
    assert_eq!(field(&third, "seq"), "5");
    assert_eq!(field(&third, "files"), "3");
    for head in [&first, &second, &third] {
        assert_intact(&audit(cat, dir, head, &[]), &head.display().to_string());
    }
    assert_intact(&audit(cat, dir, &first, &["--no-read"]), "--no-read");
    // The JSON says the same.
    let out = audit(cat, dir, &second, &["--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["intact"], true, "{v}");
    assert_eq!(v["summary"]["entries"], 5, "{v}");
    assert_eq!(v["head"]["seq"], 2, "{v}");
    // status --proof --json carries the statement's fields and its text.
    let out = cat.run(dir, &["status", "--proof", "--json", "t"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["seq"], 5);
    assert_eq!(v["statement"].as_str().unwrap(), std::fs::read_to_string(&third).unwrap());
    if let Cat::Postgres(_) = cat {
        assert!(v["host"].is_string() && v["tree"].as_str().unwrap().ends_with("/t"), "{v}");
    }
}

pub(crate) fn a_record_edited_offline_with_its_file_is_found(cat: &Cat) {
    let tmp = tempdir();
    let dir = tmp.path();
    a_tree(dir);
    run_ok(cat, dir, &["scan", "t"]);
    let head = keep_head(cat, dir, "head.txt");
    // Someone who can write the files and the catalog changes a file and its record
    // together: every later scan or verify would find it as recorded.
    let b = dir.join("t/b.txt");
    std::fs::write(&b, b"bravo, forged\n").unwrap();
    let digest = fixity::algo::lookup("blake3").unwrap().digest(b"bravo, forged\n").to_hex();
    let (size, mtime) = (std::fs::metadata(&b).unwrap().len(), mtime_ns(&b));
    tamper(
        cat,
        dir,
        &format!(
            "UPDATE files SET digest = X'{digest}', size = {size}, mtime_ns = {mtime}
             WHERE path = CAST('b.txt' AS BLOB)"
        ),
        &format!(
            "UPDATE fixity.files SET digest = '\\x{digest}', size = {size}, mtime_ns = {mtime}
             WHERE path = 'b.txt'::bytea"
        ),
    );
    let says = ["seq 1: ", "records changed after the last run, outside fixity"];
    assert_broken(&audit(cat, dir, &head, &[]), "record edited", &says);
    assert_broken(&audit(cat, dir, &head, &["--no-read"]), "record edited, --no-read", &says);
    let out = audit(cat, dir, &head, &["--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["intact"], false);
    assert_eq!(v["breaks"][0]["kind"], "records", "{v}");

    // A file changed alone is found by reading it.
    let tmp = tempdir();
    let dir = tmp.path();
    a_tree(dir);
    run_ok(cat, dir, &["scan", "t"]);
    let head = keep_head(cat, dir, "head.txt");
    let c = dir.join("t/sub/c.txt");
    let when = mtime_ns(&c);
    std::fs::write(&c, b"CHARLIE\n").unwrap();
    set_mtime(&c, when);
    let out = audit(cat, dir, &head, &[]);
    assert_broken(&out, "file changed", &["sub/c.txt: content differs", "size and mtime as"]);
    assert_eq!(text(&out.stdout).lines().count(), 1, "{}", text(&out.stdout));
    assert_intact(&audit(cat, dir, &head, &["--no-read"]), "the catalog is intact");
}

pub(crate) fn a_run_deleted_from_the_history_is_found(cat: &Cat) {
    let tmp = tempdir();
    let dir = tmp.path();
    a_tree(dir);
    run_ok(cat, dir, &["scan", "t"]);
    run_ok(cat, dir, &["verify", "t"]);
    write(dir, "t/e.txt", b"echo\n");
    run_ok(cat, dir, &["scan", "t"]);
    let head = keep_head(cat, dir, "head.txt");
    assert_eq!(field(&head, "seq"), "3");
    // The run and its entry both deleted.
    tamper(
        cat,
        dir,
        "DELETE FROM runs WHERE id = (SELECT run FROM proofs WHERE seq = 2);
         DELETE FROM proofs WHERE seq = 2;",
        "DELETE FROM fixity.runs WHERE id = (SELECT run FROM fixity.proofs WHERE seq = 2);
         DELETE FROM fixity.proofs WHERE seq = 2;",
    );
    let out = audit(cat, dir, &head, &["--no-read"]);
    assert_broken(&out, "entry deleted", &["seq 2: missing", "runs deleted from the history"]);
    // Only the run's row deleted.
    tamper(
        cat,
        dir,
        "DELETE FROM runs WHERE id = (SELECT run FROM proofs WHERE seq = 1);",
        "DELETE FROM fixity.runs WHERE id = (SELECT run FROM fixity.proofs WHERE seq = 1);",
    );
    let out = audit(cat, dir, &head, &["--no-read"]);
    assert_broken(&out, "run deleted", &["seq 1: its run", "a run deleted"]);
    // The last entry deleted: the kept head is past the end of the chain.
    tamper(
        cat,
        dir,
        "DELETE FROM proofs WHERE seq = 3;",
        "DELETE FROM fixity.proofs WHERE seq = 3;",
    );
    let out = audit(cat, dir, &head, &["--no-read"]);
    assert_broken(&out, "last entry deleted", &["seq 3: the head kept is past the chain's end"]);
}

pub(crate) fn a_forged_head_is_found(cat: &Cat) {
    let tmp = tempdir();
    let dir = tmp.path();
    a_tree(dir);
    run_ok(cat, dir, &["scan", "t"]);
    let head = keep_head(cat, dir, "head.txt");
    let t = std::fs::read_to_string(&head).unwrap();
    // Another root in the head: it no longer gives its own head, nor is it the catalog's.
    let root = field(&head, "root");
    let other = format!("{}{}", if root.starts_with('0') { "1" } else { "0" }, &root[1..]);
    let forged = dir.join("forged.txt");
    std::fs::write(&forged, t.replace(&root, &other)).unwrap();
    assert_broken(
        &audit(cat, dir, &forged, &["--no-read"]),
        "forged root",
        &[
            "head: its fields do not give its head",
            "seq 1: the catalog's entry is not the head kept (root differ)",
        ],
    );
    // A head made whole again with a head of its own: still not the catalog's.
    let mut st = fixity::proof::Statement::parse(&t.replace(&root, &other)).unwrap();
    st.head = fixity::proof::head_of(&st.identity(), st.seq, st.at, st.files, &st.root, &st.prev);
    std::fs::write(&forged, st.render()).unwrap();
    let out = audit(cat, dir, &forged, &["--no-read"]);
    assert_broken(
        &out,
        "re-headed",
        &["seq 1: the catalog's entry is not the head kept (head, root differ)"],
    );
    assert!(!text(&out.stdout).contains("its fields do not give"), "{}", text(&out.stdout));
    // Not a head at all: exit 2.
    std::fs::write(&forged, "hello\n").unwrap();
    let out = audit(cat, dir, &forged, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

macro_rules! both {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(#[test]
            fn $name() {
                super::$name(&crate::catalog::Cat::Sqlite);
            })*
        }
        mod postgres {
            $(#[test]
            fn $name() {
                if let Some(db) = crate::util::pg::database() {
                    super::$name(&crate::catalog::Cat::Postgres(db.secret));
                }
            })*
        }
    };
}

both!(
    an_honest_history_passes_with_earlier_and_current_heads,
    a_record_edited_offline_with_its_file_is_found,
    a_run_deleted_from_the_history_is_found,
    a_forged_head_is_found,
);

/// `TOOL ARGS` in `dir`, which must succeed.
fn tool(dir: &Path, program: &str, args: &[&str]) -> Output {
    let out = Command::new(program).current_dir(dir).args(args).output().unwrap();
    assert!(out.status.success(), "{program} {args:?}: {}", text(&out.stderr));
    out
}

#[test]
fn ssh_signatures_of_a_head_verify_and_a_changed_signed_head_does_not() {
    if !util::have("ssh-keygen") {
        return util::missing("ssh-keygen", "not installed (openssh-client)");
    }
    let tmp = tempdir();
    let dir = tmp.path();
    a_tree(dir);
    let cat = Cat::Sqlite;
    run_ok(&cat, dir, &["scan", "t"]);
    let head = keep_head(&cat, dir, "head.txt");
    tool(dir, "ssh-keygen", &["-q", "-t", "ed25519", "-N", "", "-C", "admin", "-f", "key"]);
    let public = std::fs::read_to_string(dir.join("key.pub")).unwrap();
    let signers = format!("admin@example.org namespaces=\"fixity\" {public}");
    std::fs::write(dir.join("allowed_signers"), signers).unwrap();
    tool(dir, "ssh-keygen", &["-Y", "sign", "-f", "key", "-n", "fixity", "head.txt"]);
    assert!(dir.join("head.txt.sig").exists());
    let ssh = ["--allowed-signers", "allowed_signers", "--identity", "admin@example.org"];
    let out = audit(&cat, dir, &head, &ssh);
    assert_intact(&out, "signed head");
    assert!(text(&out.stderr).contains("signature good"), "{}", text(&out.stderr));
    // Another identity: refused.
    let other = ["--allowed-signers", "allowed_signers", "--identity", "eve@example.org"];
    assert_broken(
        &audit(&cat, dir, &head, &other),
        "other identity",
        &["head: the signature does not verify"],
    );
    // The signed head changed (its file count) and made whole again (a head of its own):
    // the signature tells it is not what was signed.
    let t = std::fs::read_to_string(&head).unwrap();
    let mut st = fixity::proof::Statement::parse(&t).unwrap();
    st.files += 1;
    st.head = fixity::proof::head_of(&st.identity(), st.seq, st.at, st.files, &st.root, &st.prev);
    std::fs::write(&head, st.render()).unwrap();
    let out = audit(&cat, dir, &head, &ssh);
    assert_broken(&out, "changed signed head", &["head: the signature does not verify"]);
    assert!(text(&out.stderr).contains("signature BAD"), "{}", text(&out.stderr));
    // A signature elsewhere (--signature), and one for another namespace.
    std::fs::write(&head, &t).unwrap();
    std::fs::rename(dir.join("head.txt.sig"), dir.join("elsewhere.sig")).unwrap();
    let mut moved = ssh.to_vec();
    moved.extend(["--signature", "elsewhere.sig"]);
    assert_intact(&audit(&cat, dir, &head, &moved), "--signature");
    tool(dir, "ssh-keygen", &["-Y", "sign", "-f", "key", "-n", "file", "head.txt"]);
    assert_broken(
        &audit(&cat, dir, &head, &ssh),
        "namespace file",
        &["the signature does not verify"],
    );
}

#[test]
fn minisign_signatures_of_a_head_verify_and_a_changed_signed_head_does_not() {
    if !util::have("minisign") {
        return util::missing("minisign", "not installed");
    }
    let tmp = tempdir();
    let dir = tmp.path();
    a_tree(dir);
    let cat = Cat::Sqlite;
    run_ok(&cat, dir, &["scan", "t"]);
    let head = keep_head(&cat, dir, "head.txt");
    tool(dir, "minisign", &["-G", "-W", "-p", "key.pub", "-s", "key.sec"]);
    tool(dir, "minisign", &["-S", "-s", "key.sec", "-m", "head.txt"]);
    let key = ["--minisign-key", "key.pub"];
    assert_intact(&audit(&cat, dir, &head, &key), "signed head");
    let t = std::fs::read_to_string(&head).unwrap();
    std::fs::write(&head, t.replace("seq 1", "seq 2")).unwrap();
    assert_broken(
        &audit(&cat, dir, &head, &key),
        "changed signed head",
        &["the signature does not verify"],
    );
}
