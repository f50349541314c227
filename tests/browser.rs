//! `fixity serve` in a real browser: headless Chromium driven over WebDriver
//! (tests/util/webdriver.rs) against the real binary on a free port, over a real catalog.
//! A login, and what an operator and a viewer may do; a request without the session's
//! CSRF token refused; rot found by a verify started from the tree page, repaired from the
//! file's page byte for byte, and another rotted file accepted as good; and a screenshot of
//! each page (login, fleet, tree, file, action) kept in `$FIXITY_ARTIFACTS` or
//! target/serve-screenshots/ (CI keeps them; docs/serve.md shows them).

use crate::util::serve::Server;
use crate::util::webdriver::{self, Browser};
use crate::util::{Rng, fixity, missing, run, tempdir, write};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Output;

/// The browser, or `None` (the test returns) when chromedriver or Chromium is missing.
fn browser() -> Option<Browser> {
    match Browser::start() {
        Ok(b) => Some(b),
        Err(why) => {
            missing(
                "browser tests",
                &format!("{why} (Debian: apt-get install chromium chromium-driver)"),
            );
            None
        }
    }
}

fn says(o: &Output) -> String {
    format!(
        "{}{}{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// `fixity ARGS` in `dir`, which must succeed.
fn ok(dir: &Path, args: &[&str]) -> Output {
    let o = run(dir, args);
    assert!(o.status.success(), "fixity {}: {}", args.join(" "), says(&o));
    o
}

/// Rot: the first byte of `path` changed, its size and mtime as they were.
fn rot(path: &Path) {
    let mtime = std::fs::metadata(path).unwrap().modified().unwrap();
    let mut data = std::fs::read(path).unwrap();
    data[0] ^= 0xFF;
    std::fs::write(path, &data).unwrap();
    std::fs::File::options().write(true).open(path).unwrap().set_modified(mtime).unwrap();
}

/// Keeps a screenshot of what the browser shows as `NAME.png`.
fn screenshot(b: &Browser, name: &str) {
    let png = b.screenshot();
    assert!(png.starts_with(webdriver::PNG), "the screenshot of {name} is not a PNG");
    let dir = webdriver::screenshot_dir();
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
}

/// POSTs `body` (a form) to `path` from the page, as its script could (the session's
/// cookie goes along, redirects are not followed); the answer's status and text.
fn post_from_page(b: &Browser, path: &str, body: &str) -> (u64, String) {
    let v = b.execute(
        "const [path, body] = arguments;
         return fetch(path, {method: 'POST', credentials: 'same-origin', redirect: 'manual',
                             headers: {'Content-Type': 'application/x-www-form-urlencoded'}, body})
           .then(r => r.text().then(t => [r.status, t]));",
        &[json!(path), json!(body)],
    );
    (v[0].as_u64().unwrap(), v[1].as_str().unwrap_or_default().to_string())
}

/// The actions the server knows, as the page's own session asks for them.
fn actions(b: &Browser) -> Vec<Value> {
    let v = b.execute(
        "return fetch('/api/actions', {credentials: 'same-origin'}).then(r => r.json());",
        &[],
    );
    v.as_array().cloned().unwrap_or_else(|| panic!("/api/actions: {v}"))
}

/// On an action's page (the one a form's button led to): waits until the action ended,
/// the page updating itself, and returns its exit status as the page shows it.
fn action_ends(b: &Browser) -> String {
    let url = b.wait("the action's page", |b| Some(b.url()).filter(|u| u.contains("/actions/")));
    b.wait(&format!("the action of {url} to end"), |b| {
        b.text("dd#exit").filter(|t| !t.is_empty() && t != "running")
    })
}

/// Logs in from the login page the browser is on, typing as a person does.
fn log_in(b: &Browser, user: &str, password: &str) {
    b.type_into("form.login input[name=user]", user);
    b.type_into("form.login input[name=password]", password);
    let typed =
        b.execute("return document.querySelector('form.login input[name=user]').value", &[]);
    assert_eq!(
        typed, user,
        "the keys typed into the login form did not reach it: a browser prompt over the page \
         (Chromium shows its own for a request of the page answered 401 with \
         WWW-Authenticate: Basic, as /events once was) takes the keyboard"
    );
    b.click("form.login button");
    b.wait("the login to land on a page", |b| Some(()).filter(|_| !b.url().contains("/login")));
}

/// Opens `url` again and again until `f` holds of the page (the server's next look).
fn reload_until(b: &Browser, url: &str, what: &str, f: impl Fn(&Browser) -> bool) {
    b.wait(what, |b| {
        b.goto(url);
        f(b).then_some(())
    });
}

const ALICE: &str = "alice's password";
const BOB: &str = "bob's password";

/// A login with a users file; an operator's and a viewer's pages; a request without the
/// CSRF token, and a viewer's request, refused with no action started.
#[test]
fn a_login_and_what_each_role_may_do() {
    let dir = tempdir();
    let d = dir.path();
    write(d, "photos/a.txt", b"alpha\n");
    write(d, "photos/2024/b.txt", b"beta\n");
    ok(d, &["scan", "-q", "photos"]);
    for (name, role, password) in [("alice", "operator", ALICE), ("bob", "viewer", BOB)] {
        let o = fixity(d)
            .args(["serve", "--add-user", name, "--users", "users", "--role", role])
            .args(["--password-env", "PASSWORD"])
            .env("PASSWORD", password)
            .output()
            .unwrap();
        assert!(o.status.success(), "--add-user {name}: {}", says(&o));
    }
    let Some(b) = browser() else { return };
    let server = Server::start(d, &["--users", "users", "--refresh", "0.3", "photos"], &[]);
    let home = server.url();

    // 1. The fleet page sends a stranger to the login page; alice logs in and lands on it.
    b.goto(&home);
    assert!(b.url().starts_with(&format!("{home}/login")), "not sent to log in: {}", b.url());
    assert_eq!(b.count("form.login"), 1, "{}", b.source());
    screenshot(&b, "login");
    log_in(&b, "alice", ALICE);
    assert_eq!(b.url(), format!("{home}/"));
    let row = b.text("table.fleet tr#tree-0").expect("the tree's row on the fleet page");
    assert!(row.contains("photos"), "{row}");
    assert!(b.text("header .who").unwrap().contains("alice (operator)"));

    // 6. A POST without the CSRF token is refused and starts nothing; with the token of the
    // page's forms, the same request starts a verify (by alice).
    b.goto(&format!("{home}/tree/0"));
    assert!(b.count("form.action") >= 2, "an operator sees the tree's actions");
    let (status, text) = post_from_page(&b, "/tree/0/action", "kind=verify");
    assert_eq!(status, 403, "{text}");
    assert!(text.contains("CSRF"), "{text}");
    assert_eq!(actions(&b), Vec::<Value>::new());
    let token =
        b.execute("return document.querySelector('form.action input[name=csrf]').value", &[]);
    let token = token.as_str().unwrap();
    let (status, text) = post_from_page(&b, "/tree/0/action", &format!("kind=verify&csrf={token}"));
    // A redirect not followed is opaque to the page: status 0, to the action's page.
    assert_eq!(status, 0, "{text}");
    let list = actions(&b);
    assert_eq!(list.len(), 1, "{list:?}");
    assert_eq!(list[0]["by"], "alice (fixity serve)");
    assert_eq!(list[0]["kind"], "verify");

    // 5. bob, a viewer, sees no action on the tree's page or a file's page, and a POST
    // with his own session's token is refused.
    b.click("header form.inline button");
    b.wait("the logout to reach the login page", |b| {
        Some(()).filter(|_| b.url().contains("/login"))
    });
    assert_eq!(b.cookie("fixity_session").unwrap_or_default(), "");
    log_in(&b, "bob", BOB);
    assert!(b.text("header .who").unwrap().contains("bob (viewer)"));
    b.goto(&format!("{home}/tree/0"));
    assert!(b.text("main h1").unwrap().contains("photos"));
    assert_eq!(b.count("form.action"), 0, "a viewer sees actions on the tree's page");
    b.goto(&format!("{home}/tree/0/file?p=2024/b.txt"));
    assert_eq!(b.text("main h1").unwrap(), "2024/b.txt");
    assert_eq!(b.count("form.action"), 0, "a viewer sees actions on a file's page");
    let token = b.execute("return document.querySelector('header input[name=csrf]').value", &[]);
    let body = format!("kind=verify&p=2024%2Fb.txt&csrf={}", token.as_str().unwrap());
    let (status, text) = post_from_page(&b, "/tree/0/action", &body);
    assert_eq!(status, 403, "{text}");
    assert!(text.contains("viewers cannot act"), "{text}");
    assert_eq!(actions(&b).len(), 1, "only alice's action");
}

/// Rot found by a verify started from the tree's page (CORRUPT there and CRITICAL on the
/// fleet page), repaired from the file's page byte for byte, another rotted file accepted
/// as good: `fixity verify` is clean after, and the tree has no finding.
#[test]
fn rot_found_repaired_and_accepted_from_the_pages() {
    let dir = tempdir();
    let d = dir.path();
    let mut rng = Rng(0x5e7e);
    let original: Vec<u8> = (0..40_000).map(|_| rng.next() as u8).collect();
    write(d, "archive/a.txt", b"alpha\n");
    let bin = write(d, "archive/scans/b.bin", &original);
    let notes = write(d, "archive/notes.txt", b"notes, first draft\n");
    ok(d, &["scan", "-q", "archive"]);
    ok(d, &["protect", "-q", "archive"]);
    rot(&bin);
    rot(&notes);
    let Some(b) = browser() else { return };
    // No --users: on loopback everyone is an operator, without a login.
    let server = Server::start(d, &["--refresh", "0.3", "archive"], &[]);
    let home = server.url();
    let tree = format!("{home}/tree/0");

    // 2. A verify of the whole tree from its page finds both files CORRUPT.
    b.goto(&tree);
    assert_eq!(b.count("table.findings"), 0, "findings before any verify");
    b.click(r#"form.action button[value="verify"]"#);
    assert_eq!(action_ends(&b), "1", "verify of the rotted tree");
    let output = b.text("pre#output").unwrap();
    let corrupt: Vec<&str> =
        output.lines().filter(|l| l.starts_with("CORRUPT") && l.contains("(recorded")).collect();
    assert!(corrupt.len() == 2 && corrupt[0].contains("notes.txt"), "{output}");
    assert!(corrupt[1].contains("scans/b.bin"), "{output}");
    screenshot(&b, "action");
    reload_until(&b, &tree, "scans/b.bin CORRUPT in the findings", |b| {
        b.texts("table.findings tr")
            .iter()
            .any(|r| r.contains("scans/b.bin") && r.contains("CORRUPT"))
    });
    let rows = b.texts("table.findings tr");
    assert_eq!(rows.len(), 3, "a header and two findings: {rows:?}");
    assert!(rows[1].contains("notes.txt") && rows[1].contains("CORRUPT"), "{rows:?}");
    screenshot(&b, "tree");
    b.execute("document.querySelector('table.findings').scrollIntoView()", &[]);
    screenshot(&b, "tree-findings");
    reload_until(&b, &format!("{home}/"), "the fleet's badge CRITICAL", |b| {
        b.text("tr#tree-0 span.badge").as_deref() == Some("CRITICAL")
    });
    screenshot(&b, "fleet");

    // 3. Repair from the file's page, reached by the finding's link: the bytes on disk
    // are the original ones; a verify of it again finds it OK.
    b.goto(&tree);
    b.click(r#"table.findings a[href="/tree/0/file?p=scans/b.bin"]"#);
    b.wait("the file's page", |b| b.text("main h1").filter(|h| h == "scans/b.bin"));
    assert_eq!(b.text("main dl dd span.badge").as_deref(), Some("CORRUPT"));
    screenshot(&b, "file");
    let file = b.url();
    b.click(r#"form.action button[value="repair"]"#);
    assert_eq!(action_ends(&b), "0", "repair: {}", b.text("pre#output").unwrap_or_default());
    assert!(
        std::fs::read(&bin).unwrap() == original,
        "scans/b.bin is not the original after repair"
    );
    reload_until(&b, &file, "the file's page to show it no longer CORRUPT", |b| {
        b.text("main dl dd span.badge").is_some_and(|s| s != "CORRUPT")
    });
    b.click(r#"form.action button[value="verify"]"#);
    assert_eq!(action_ends(&b), "0", "verify of the repaired file's directory");
    reload_until(&b, &file, "the file's page to show it OK", |b| {
        b.text("main dl dd span.badge").as_deref() == Some("OK")
    });

    // 4. The other rotted file accepted as good from its page: a verify is clean, and the
    // tree has no finding left.
    b.goto(&format!("{home}/tree/0/file?p=notes.txt"));
    assert_eq!(b.text("main dl dd span.badge").as_deref(), Some("CORRUPT"));
    b.click(r#"form.action button[value="accept"]"#);
    assert_eq!(action_ends(&b), "0", "accept: {}", b.text("pre#output").unwrap_or_default());
    let o = ok(d, &["verify", "archive"]);
    assert!(says(&o).contains("ok 3, modified 0, CORRUPT 0"), "{}", says(&o));
    server.wait_json("/api/tree/0", &[], 20, |v| {
        v["findings_page"]["items"].as_array().is_some_and(Vec::is_empty)
            && v["findings"]["corrupt"] == 0
    });
    reload_until(&b, &tree, "no findings on the tree's page", |b| b.count("table.findings") == 0);
}
