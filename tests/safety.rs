//! Safety of paths and outputs: `--confine` against symlinks, `-o` over existing files and
//! symlinks, fixity's own state never hashed, `bag create` recovering an interrupted run.

use crate::util::{run, tempdir, write};
use std::os::unix::fs::symlink;
use std::path::Path;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A GNU line for `data` under `name`, with fixity's own digest.
fn sha256_line(dir: &Path, name: &str) -> String {
    let out = run(dir, ["hash", "-a", "sha256", name]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

#[test]
fn confine_refuses_a_symlink_that_leads_out_of_the_tree() {
    let outer = tempdir();
    let tree = outer.path().join("tree");
    write(outer.path(), "secret", b"outside\n");
    write(&tree, "a", b"a\n");
    write(&tree, "sub/b", b"b\n");
    symlink(outer.path(), tree.join("outlink")).unwrap();
    symlink("sub", tree.join("inlink")).unwrap();
    // A manifest with the outside file seen through the link (as `sha256sum` of the
    // real path would give, then renamed): the lexical test sees a plain relative name.
    let secret = sha256_line(outer.path(), "secret").replace("secret", "outlink/secret");
    let list = format!(
        "{}{}{}",
        sha256_line(&tree, "a"),
        secret,
        sha256_line(&tree, "sub/b").replace("sub/b", "inlink/b")
    );
    write(&tree, "list.sha256", list.as_bytes());

    let out = run(&tree, ["check", "--confine", "list.sha256"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    // The file outside is never read, and the line is named; the link inside still works.
    assert_eq!(text(&out.stdout), "a: OK\ninlink/b: OK\n");
    let err = text(&out.stderr);
    assert!(
        err.contains(
            "list.sha256: 2: outlink/secret: refused: the path escapes the tree through a \
             symbolic link"
        ),
        "{err}"
    );
    assert!(err.contains("WARNING: 1 line was refused"), "{err}");
    // Without --confine the link is followed, as coreutils follows it.
    let out = run(&tree, ["check", "list.sha256"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("outlink/secret: OK"));
}
