//! `fixity serve` over HTTP: who may look and act (loopback without logins, Argon2id
//! users, viewers, CSRF, other origins), the actions as the CLI's own runs (recorded with
//! who started them), the API, /metrics, server-sent events, TLS, a catalog that is
//! locked or gone and a PostgreSQL server that goes away (each shown, then recovered
//! without a restart). tests/browser.rs drives the same server from headless Chromium.

use crate::util::serve::{Server, request};
use crate::util::{fixity, have, missing, pg, run, tempdir, write};
use std::path::Path;
use std::time::{Duration, Instant};

/// A tree of three files, scanned.
fn tree(dir: &Path) -> std::path::PathBuf {
    let t = dir.join("t");
    write(&t, "a.txt", b"alpha\n");
    write(&t, "d/b.txt", b"bravo\n");
    write(&t, "d/c.txt", b"charlie\n");
    let out = run(dir, ["scan", "-q", "t"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    t
}

/// Writes `data` over `path` (same length) and puts its mtime back: rot, to a catalog
/// that does not trust ctimes (the tests' FIXITY_CTIME).
fn rot(path: &Path, data: &[u8]) {
    let mtime = std::fs::metadata(path).unwrap().modified().unwrap();
    std::fs::write(path, data).unwrap();
    std::fs::File::options().write(true).open(path).unwrap().set_modified(mtime).unwrap();
}

/// `--add-user NAME --role ROLE --users FILE` with the password from the environment.
fn add_user(dir: &Path, users: &Path, name: &str, role: &str, password: &str) {
    let out = fixity(dir)
        .args(["serve", "--users"])
        .arg(users)
        .args(["--add-user", name, "--role", role, "--password-env", "PW"])
        .env("PW", password)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Logs in; the session cookie.
fn login(s: &Server, user: &str, password: &str) -> String {
    let r = s.post("/login", &[], &[("user", user), ("password", password), ("next", "/")]);
    assert_eq!(r.status, 303, "{}", r.text());
    r.cookie().expect("a session cookie")
}

#[test]
fn a_server_off_loopback_needs_logins_and_a_users_file_needs_a_user() {
    let d = tempdir();
    tree(d.path());
    let out = run(d.path(), ["serve", "--listen", "0.0.0.0:0", "t"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a loopback address") && err.contains("--users"), "{err}");
    let out = run(d.path(), ["serve", "--listen", "0.0.0.0:0", "--users", "nobody.txt", "t"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("has no user"));
    for refresh in ["0", "nan", "-1"] {
        let out = run(d.path(), ["serve", &format!("--refresh={refresh}"), "t"]);
        assert_eq!(out.status.code(), Some(2), "--refresh {refresh}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("--refresh takes"));
    }
}

#[test]
fn without_logins_only_loopback_names_are_answered_and_every_action_needs_its_token() {
    let d = tempdir();
    tree(d.path());
    let s = Server::start(d.path(), &["t", "--refresh", "0.3"], &[]);
    let r = s.get("/", &[("host", "rebound.example:8470")]);
    assert_eq!(r.status, 421, "{}", r.text());
    let page = s.get("/", &[("host", "localhost")]);
    assert_eq!(page.status, 200);
    assert!(page.text().contains("href=\"/tree/0\""), "{}", page.text());
    assert_eq!(
        page.header("content-security-policy").map(|c| c.contains("default-src 'self'")),
        Some(true)
    );
    assert_eq!(page.header("x-frame-options"), Some("DENY"));
    let token = s.get("/tree/0", &[]).csrf().expect("an action form");
    let no_token = s.post("/tree/0/action", &[], &[("kind", "verify")]);
    assert_eq!(no_token.status, 403);
    assert!(no_token.text().contains("CSRF"), "{}", no_token.text());
    let other = s.post(
        "/tree/0/action",
        &[("origin", "http://evil.example")],
        &[("csrf", &token), ("kind", "verify")],
    );
    assert_eq!(other.status, 403);
    let cross = s.post(
        "/tree/0/action",
        &[("sec-fetch-site", "cross-site")],
        &[("csrf", &token), ("kind", "verify")],
    );
    assert_eq!(cross.status, 403);
    assert_eq!(
        s.get("/api/actions", &[]).json(),
        serde_json::json!([]),
        "nothing refused was started"
    );
    let ok = s.post("/tree/0/action", &[], &[("csrf", &token), ("kind", "verify")]);
    assert_eq!(ok.status, 303, "{}", ok.text());
    assert_eq!(ok.header("location"), Some("/actions/1"));
    let done = s.wait_json("/api/actions/1", &[], 30, |a| !a["finished"].is_null());
    assert_eq!(done["exit"], 0, "{done}");
    assert_eq!(done["command"][0], "verify");
    assert_eq!(s.stop(), Some(0), "SIGTERM ends the server with status 0");
}

#[test]
fn users_log_in_viewers_look_and_operators_act() {
    let d = tempdir();
    tree(d.path());
    let users = d.path().join("users");
    add_user(d.path(), &users, "alice", "operator", "alice's secret");
    add_user(d.path(), &users, "bob", "viewer", "bob's secret!");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&users).unwrap().permissions().mode() & 0o777, 0o600);
    let text = std::fs::read_to_string(&users).unwrap();
    assert_eq!(text.matches("$argon2id$v=19$").count(), 2, "{text}");
    assert!(!text.contains("secret"), "no password in clear: {text}");
    let s = Server::start(d.path(), &["t", "--users", users.to_str().unwrap()], &[]);
    // Every page asks for a login; the API answers 401 with a Basic challenge.
    let r = s.get("/tree/0", &[]);
    assert_eq!((r.status, r.header("location")), (303, Some("/login?next=/tree/0")));
    let r = s.get("/api/fleet", &[]);
    assert_eq!(r.status, 401);
    assert!(r.header("www-authenticate").is_some_and(|h| h.starts_with("Basic")));
    let wrong = s.post("/login", &[], &[("user", "alice"), ("password", "guess")]);
    assert_eq!(wrong.status, 401);
    assert!(wrong.cookie().is_none());
    let nobody = s.post("/login", &[], &[("user", "mallory"), ("password", "guess")]);
    assert_eq!(nobody.status, 401);
    // A login from another site is refused.
    let r = s.post(
        "/login",
        &[("origin", "http://evil.example")],
        &[("user", "alice"), ("password", "alice's secret")],
    );
    assert_eq!(r.status, 403);
    let alice = login(&s, "alice", "alice's secret");
    let bob = login(&s, "bob", "bob's secret!");
    let page = s.get("/tree/0", &[("cookie", &alice)]);
    assert_eq!(page.status, 200);
    assert!(page.text().contains("class=\"action\""), "an operator sees the actions");
    let token = page.csrf().unwrap();
    let bob_page = s.get("/tree/0", &[("cookie", &bob)]);
    assert!(!bob_page.text().contains("class=\"action\""), "a viewer sees no action");
    let bob_token = bob_page.csrf().expect("the logout form's token");
    let r =
        s.post("/tree/0/action", &[("cookie", &bob)], &[("csrf", &bob_token), ("kind", "verify")]);
    assert_eq!(r.status, 403);
    assert!(r.text().contains("viewers cannot act"), "{}", r.text());
    // Alice's token is hers: not with Bob's session, not without one.
    let r = s.post("/tree/0/action", &[("cookie", &bob)], &[("csrf", &token), ("kind", "verify")]);
    assert_eq!(r.status, 403);
    let r = s.post("/tree/0/action", &[], &[("csrf", &token), ("kind", "verify")]);
    assert_eq!(r.status, 303);
    assert!(r.header("location").unwrap().starts_with("/login"));
    // The API with Basic credentials (a scraper), as a viewer.
    let basic = [("authorization", "Basic Ym9iOmJvYidzIHNlY3JldCE=")];
    assert_eq!(s.get("/api/fleet", &basic).status, 200);
    assert_eq!(s.get("/metrics", &basic).status, 200);
    // Alice acts; the run is recorded as hers.
    let r =
        s.post("/tree/0/action", &[("cookie", &alice)], &[("csrf", &token), ("kind", "verify")]);
    assert_eq!(r.status, 303, "{}", r.text());
    let done =
        s.wait_json("/api/actions/1", &[("cookie", &alice)], 30, |a| !a["finished"].is_null());
    assert_eq!(done["by"], "alice (fixity serve)");
    let t = s.wait_json("/api/tree/0", &[("cookie", &alice)], 30, |t| {
        t["runs"][0]["command"] == "verify"
    });
    assert_eq!(t["runs"][0]["by"], "alice (fixity serve)", "{}", t["runs"]);
    // Logging out ends the session.
    let r = s.post("/logout", &[("cookie", &alice)], &[("csrf", &token)]);
    assert_eq!(r.status, 303);
    assert_eq!(s.get("/tree/0", &[("cookie", &alice)]).status, 303);
    // A changed users file takes effect without a restart: bob's role changes, his
    // session ends.
    add_user(d.path(), &users, "bob", "operator", "bob's new secret");
    assert_eq!(s.get("/tree/0", &[("cookie", &bob)]).status, 303);
}

#[test]
fn a_rotted_file_is_found_by_a_verify_from_the_page_then_repaired_and_an_edit_accepted() {
    let d = tempdir();
    let t = tree(d.path());
    assert!(run(d.path(), ["protect", "-q", "t"]).status.success());
    rot(&t.join("d/b.txt"), b"brAvo\n");
    let s = Server::start(d.path(), &["t", "--refresh", "0.3"], &[]);
    let token = s.get("/tree/0", &[]).csrf().unwrap();
    assert_eq!(s.post("/tree/0/action", &[], &[("csrf", &token), ("kind", "verify")]).status, 303);
    let a = s.wait_json("/api/actions/1", &[], 30, |a| !a["finished"].is_null());
    assert_eq!(a["exit"], 1, "{a}");
    assert!(a["output"].as_str().unwrap().contains("CORRUPT"), "{a}");
    let fleet = s.wait_json("/api/fleet", &[], 30, |f| f["trees"][0]["findings"]["corrupt"] == 1);
    assert_eq!(fleet["trees"][0]["state"], "CRITICAL");
    let tree = s.get("/api/tree/0", &[]).json();
    assert_eq!(tree["findings_page"]["items"][0]["path"]["text"], "d/b.txt");
    assert_eq!(tree["findings_page"]["items"][0]["class"], "corrupt");
    let file = s.get("/api/tree/0/file?p=d/b.txt", &[]).json();
    assert_eq!(file["record"]["class"], "corrupt", "{file}");
    assert_eq!(file["now"]["size"], 6);
    // A path that leaves the tree is refused.
    let r =
        s.post("/tree/0/action", &[], &[("csrf", &token), ("kind", "repair"), ("p", "../outside")]);
    assert_eq!(r.status, 409, "{}", r.text());
    let r =
        s.post("/tree/0/action", &[], &[("csrf", &token), ("kind", "repair"), ("p", "d/b.txt")]);
    assert_eq!(r.status, 303, "{}", r.text());
    let a = s.wait_json("/api/actions/2", &[], 30, |a| !a["finished"].is_null());
    assert_eq!(a["exit"], 0, "{a}");
    assert_eq!(std::fs::read(t.join("d/b.txt")).unwrap(), b"bravo\n");
    // An edit (new size and mtime) accepted from the page.
    std::fs::write(t.join("a.txt"), b"alpha, edited\n").unwrap();
    assert_eq!(
        run(d.path(), ["verify", "-q", "t"]).status.code(),
        Some(0),
        "an edit is no failure"
    );
    rot(&t.join("d/c.txt"), b"chArlie\n");
    assert_eq!(run(d.path(), ["verify", "-q", "t"]).status.code(), Some(1));
    let r =
        s.post("/tree/0/action", &[], &[("csrf", &token), ("kind", "accept"), ("p", "d/c.txt")]);
    assert_eq!(r.status, 303, "{}", r.text());
    let a = s.wait_json("/api/actions/3", &[], 30, |a| !a["finished"].is_null());
    assert_eq!(a["exit"], 0, "{a}");
    assert!(a["output"].as_str().unwrap().contains("accepted"), "{a}");
    assert_eq!(run(d.path(), ["verify", "-q", "t"]).status.code(), Some(0));
    // A file gone for good, forgotten.
    std::fs::remove_file(t.join("a.txt")).unwrap();
    assert_eq!(run(d.path(), ["verify", "-q", "t"]).status.code(), Some(1));
    let r = s.post("/tree/0/action", &[], &[("csrf", &token), ("kind", "forget"), ("p", "a.txt")]);
    assert_eq!(r.status, 303);
    let a = s.wait_json("/api/actions/4", &[], 30, |a| !a["finished"].is_null());
    assert_eq!(a["exit"], 0, "{a}");
    let fleet = s.wait_json("/api/fleet", &[], 30, |f| f["trees"][0]["findings"]["missing"] == 0);
    assert_eq!(fleet["trees"][0]["state"], "OK", "{fleet}");
}

#[test]
fn read_only_refuses_every_action_and_offers_none() {
    let d = tempdir();
    tree(d.path());
    let s = Server::start(d.path(), &["t", "--read-only"], &[]);
    let page = s.get("/tree/0", &[]);
    assert!(!page.text().contains("class=\"action\""));
    let token = page.csrf();
    assert!(token.is_none(), "no form at all without logins");
    let r = s.post("/tree/0/action", &[], &[("csrf", "x"), ("kind", "verify")]);
    assert_eq!(r.status, 403);
    assert!(r.text().contains("read-only"), "{}", r.text());
}

#[test]
fn metrics_give_every_tree_with_each_family_named_once() {
    let d = tempdir();
    tree(d.path());
    write(&d.path().join("u"), "x", b"x");
    assert!(run(d.path(), ["scan", "-q", "u"]).status.success());
    let s = Server::start(d.path(), &["t", "u"], &[]);
    let r = s.get("/metrics", &[]);
    assert!(r.header("content-type").unwrap().starts_with("text/plain; version=0.0.4"));
    let text = r.text();
    let t = d.path().join("t").canonicalize().unwrap();
    let u = d.path().join("u").canonicalize().unwrap();
    assert!(
        text.contains(&format!("fixity_catalog_bytes{{tree=\"{}\"}} 20", t.display())),
        "{text}"
    );
    assert!(
        text.contains(&format!("fixity_catalog_bytes{{tree=\"{}\"}} 1", u.display())),
        "{text}"
    );
    let mut helps: Vec<&str> = text.lines().filter(|l| l.starts_with("# HELP ")).collect();
    let n = helps.len();
    helps.sort();
    helps.dedup();
    assert_eq!(helps.len(), n, "a family named twice:\n{text}");
    assert!(text.contains("fixity_serve_catalogs_unreadable 0"));
}

#[test]
fn events_say_when_what_is_shown_changes() {
    let d = tempdir();
    let t = tree(d.path());
    let s = Server::start(d.path(), &["t", "--refresh", "0.2"], &[]);
    let mut conn = std::net::TcpStream::connect(&s.addr).unwrap();
    use std::io::{Read, Write};
    write!(conn, "GET /events HTTP/1.1\r\nhost: {}\r\n\r\n", s.addr).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let n = conn.read(&mut buf).unwrap();
    seen.extend_from_slice(&buf[..n]);
    assert!(
        String::from_utf8_lossy(&seen).contains("text/event-stream"),
        "{}",
        String::from_utf8_lossy(&seen)
    );
    write(&t, "new.txt", b"new\n");
    assert!(run(d.path(), ["scan", "-q", "t"]).status.success());
    let end = Instant::now() + Duration::from_secs(20);
    while !String::from_utf8_lossy(&seen).contains("event: change") {
        assert!(Instant::now() < end, "no change event: {}", String::from_utf8_lossy(&seen));
        let n = conn.read(&mut buf).unwrap();
        seen.extend_from_slice(&buf[..n]);
    }
    assert_eq!(s.get("/api/fleet", &[]).json()["trees"][0]["files"], 4);
}

#[test]
fn a_catalog_gone_or_locked_is_shown_and_the_server_recovers_without_a_restart() {
    let d = tempdir();
    let t = tree(d.path());
    let s = Server::start(d.path(), &["t", "--refresh", "0.2"], &[]);
    assert!(s.get("/api/fleet", &[]).json()["trees"][0]["trouble"].is_null());
    // Gone (an unmounted disk, say): the last look stays, with the reason beside it.
    let cat = t.join(".fixity/catalog.db");
    let away = t.join(".fixity/away.db");
    std::fs::rename(&cat, &away).unwrap();
    let f = s.wait_json("/api/fleet", &[], 20, |f| !f["trees"][0]["trouble"].is_null());
    assert_eq!(f["trees"][0]["files"], 3, "the last look is kept: {f}");
    assert!(s.get("/", &[]).text().contains("class=\"trouble\""));
    let m = s.get("/metrics", &[]).text();
    assert!(m.contains("fixity_serve_catalogs_unreadable 1"), "{m}");
    std::fs::rename(&away, &cat).unwrap();
    s.wait_json("/api/fleet", &[], 20, |f| f["trees"][0]["trouble"].is_null());
    // Busy: a verify holds the catalog (its run lock, its run begun and not ended).
    let lock =
        fixity::catalog::lock::RunLock::acquire(&t.join(".fixity/catalog.db.lock"), false, false)
            .unwrap()
            .expect("the run lock");
    let c = rusqlite::Connection::open(&cat).unwrap();
    c.execute(
        "INSERT INTO runs (command, started) VALUES ('verify', ?1)",
        [fixity::clock::now_ms()],
    )
    .unwrap();
    let f = s.wait_json("/api/fleet", &[], 20, |f| !f["trees"][0]["running"].is_null());
    assert!(f["trees"][0]["running"].as_str().unwrap().starts_with("verify running since"), "{f}");
    assert!(s.get("/tree/0", &[]).text().contains("class=\"running\""));
    // The run is killed: its lock goes with it, the run stays unfinished (interrupted).
    drop(lock);
    s.wait_json("/api/fleet", &[], 20, |f| f["trees"][0]["running"].is_null());
    // Locked: another program holds SQLite's exclusive lock (a catalog in rollback
    // journal mode, as on a file system without shared memory).
    c.execute_batch("PRAGMA journal_mode = DELETE; BEGIN EXCLUSIVE; INSERT INTO meta (key, value) VALUES ('held', 'x');").unwrap();
    let f = s.wait_json("/api/fleet", &[], 30, |f| !f["trees"][0]["trouble"].is_null());
    let why = f["trees"][0]["trouble"].as_str().unwrap();
    assert!(why.contains("busy") || why.contains("locked"), "{f}");
    assert_eq!(s.get("/", &[]).status, 200, "pages answer meanwhile");
    c.execute_batch("ROLLBACK").unwrap();
    drop(c);
    write(&t, "more.txt", b"more\n");
    assert!(run(d.path(), ["scan", "-q", "t"]).status.success());
    let f = s.wait_json("/api/fleet", &[], 30, |f| {
        f["trees"][0]["trouble"].is_null() && f["trees"][0]["files"] == 4
    });
    assert_eq!(f["trees"][0]["state"], "OK", "{f}");
}

#[test]
fn https_with_the_certificate_given() {
    if !have("openssl") {
        return missing("TLS test", "openssl is not installed");
    }
    let d = tempdir();
    tree(d.path());
    let (cert, key) = (d.path().join("cert.pem"), d.path().join("key.pem"));
    let out = std::process::Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost,IP:127.0.0.1",
            "-addext",
            "basicConstraints=critical,CA:FALSE",
            "-keyout",
        ])
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let users = d.path().join("users");
    add_user(d.path(), &users, "alice", "operator", "alice's secret");
    let s = Server::start(
        d.path(),
        &[
            "t",
            "--users",
            users.to_str().unwrap(),
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
        ],
        &[],
    );
    assert!(s.log.lock().unwrap().contains("https://"));
    // A plain request gets nothing back but a failed handshake.
    let plain = std::panic::catch_unwind(|| request(&s.addr, "GET", "/healthz", &[], b""));
    assert!(plain.is_err() || plain.unwrap().status != 200);
    let r = https(
        &s.addr,
        &cert,
        "POST /login HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/x-www-form-urlencoded\r\ncontent-length: 39\r\nconnection: close\r\n\r\nuser=alice&password=alice%27s+secret&x=",
    );
    assert_eq!(r.status, 303, "{}", r.text());
    let cookie = r.header("set-cookie").unwrap();
    assert!(
        cookie.contains("; Secure")
            && cookie.contains("HttpOnly")
            && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
}

/// One request over TLS, the server's certificate trusted as the only root.
fn https(addr: &str, cert: &Path, text: &str) -> crate::util::serve::Response {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    use std::io::{Read, Write};
    let mut roots = rustls::RootCertStore::empty();
    roots.add(CertificateDer::from_pem_file(cert).unwrap()).unwrap();
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let conn = rustls::ClientConnection::new(std::sync::Arc::new(config), name).unwrap();
    let sock = std::net::TcpStream::connect(addr).unwrap();
    let mut tls = rustls::StreamOwned::new(conn, sock);
    tls.write_all(text.as_bytes()).unwrap();
    let mut raw = Vec::new();
    let _ = tls.read_to_end(&mut raw);
    crate::util::serve::parse(&raw)
}

#[test]
fn the_fleet_from_postgresql_and_a_server_that_goes_away_and_comes_back() {
    let Some(db) = pg::database() else { return };
    let d = tempdir();
    for (host, name) in [("web1", "t"), ("web2", "u")] {
        write(&d.path().join(name), "f.txt", host.as_bytes());
        let out = fixity(d.path())
            .env("FIXITY_HOST", host)
            .args(["scan", "-q", "--catalog", &db.url, name])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let relay = Relay::start(db.port);
    let url = db.url.replace(&format!(":{}/", db.port), &format!(":{}/", relay.port));
    let s = Server::start(
        d.path(),
        &["--catalog", &url, "--refresh", "0.2"],
        &[("FIXITY_HOST", "web1")],
    );
    let f = s.get("/api/fleet", &[]).json();
    let hosts: Vec<&str> =
        f["trees"].as_array().unwrap().iter().map(|t| t["host"].as_str().unwrap()).collect();
    assert_eq!(hosts, ["web1", "web2"], "{f}");
    assert_eq!(f["trees"][0]["local"], true);
    assert_eq!(f["trees"][1]["local"], false, "actions run on the tree's own host");
    // The server goes away: the fleet page says so and keeps the last look.
    relay.cut(true);
    let f = s.wait_json("/api/fleet", &[], 30, |f| !f["trouble"].is_null());
    assert_eq!(f["trees"].as_array().unwrap().len(), 2, "{f}");
    assert!(s.get("/", &[]).text().contains("cannot read the fleet"));
    // It comes back; a tree scanned meanwhile shows up.
    relay.cut(false);
    write(&d.path().join("v"), "f.txt", b"v");
    let out = fixity(d.path())
        .env("FIXITY_HOST", "web3")
        .args(["scan", "-q", "--catalog", &db.url, "v"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let f = s.wait_json("/api/fleet", &[], 30, |f| {
        f["trouble"].is_null() && f["trees"].as_array().unwrap().len() == 3
    });
    assert_eq!(f["trees"][2]["host"], "web3");
    let tree = s.wait_json("/api/tree/1", &[], 30, |t| t["files"] == 1);
    assert_eq!(tree["runs"][0]["command"], "scan");
    let page = s.get("/tree/1", &[]).text();
    assert!(!page.contains("class=\"action\""), "no action offered on another host's tree");
    let token = s.get("/tree/0", &[]).csrf().unwrap();
    let r = s.post("/tree/1/action", &[], &[("csrf", &token), ("kind", "verify")]);
    assert_eq!(r.status, 409);
    assert!(r.text().contains("the tree is on web2: run its actions there"), "{}", r.text());
}

/// A TCP relay to a port, which can cut every connection and refuse new ones (a server
/// that goes away), and let them through again.
struct Relay {
    port: u16,
    cut: std::sync::Arc<std::sync::atomic::AtomicBool>,
    open: std::sync::Arc<std::sync::Mutex<Vec<std::net::TcpStream>>>,
}

impl Relay {
    fn start(to: u16) -> Relay {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let cut = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let open = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let (c, o) = (cut.clone(), open.clone());
        std::thread::spawn(move || {
            for conn in l.incoming().flatten() {
                if c.load(std::sync::atomic::Ordering::SeqCst) {
                    continue;
                }
                let Ok(up) = std::net::TcpStream::connect(("127.0.0.1", to)) else { continue };
                o.lock().unwrap().extend([conn.try_clone().unwrap(), up.try_clone().unwrap()]);
                for (mut a, mut b) in
                    [(conn.try_clone().unwrap(), up.try_clone().unwrap()), (up, conn)]
                {
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut a, &mut b);
                        let _ = b.shutdown(std::net::Shutdown::Both);
                    });
                }
            }
        });
        Relay { port, cut, open }
    }

    fn cut(&self, cut: bool) {
        self.cut.store(cut, std::sync::atomic::Ordering::SeqCst);
        if cut {
            for s in self.open.lock().unwrap().drain(..) {
                let _ = s.shutdown(std::net::Shutdown::Both);
            }
        }
    }
}

#[test]
fn the_systemd_unit_verifies_and_its_command_serves() {
    if !have("systemd-analyze") {
        return missing("systemd-analyze", "cannot check the shipped unit");
    }
    let d = tempdir();
    tree(d.path());
    let unit =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("dist/systemd/fixity-serve.service");
    let text = std::fs::read_to_string(&unit).unwrap();
    let exec = text.lines().find_map(|l| l.strip_prefix("ExecStart=")).unwrap();
    assert_eq!(exec, "fixity serve $FIXITY_SERVE_ARGS");
    assert!(text.contains("EnvironmentFile=/etc/default/fixity-serve"));
    // systemd-analyze checks the Documentation= page exists: the one `fixity man` writes.
    let man = d.path().join("man/man1");
    assert!(run(d.path(), ["man", "--dir", man.to_str().unwrap()]).status.success());
    assert!(man.join("fixity-serve.1").exists());
    let units = d.path().join("units");
    std::fs::create_dir_all(&units).unwrap();
    let exe = concat!("ExecStart=", env!("CARGO_BIN_EXE_fixity"), " ");
    std::fs::write(units.join("fixity-serve.service"), text.replace("ExecStart=fixity ", exe))
        .unwrap();
    let o = std::process::Command::new("systemd-analyze")
        .arg("verify")
        .arg(units.join("fixity-serve.service"))
        .env("MANPATH", d.path().join("man"))
        .output()
        .unwrap();
    assert!(o.status.success(), "systemd-analyze verify: {}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(String::from_utf8_lossy(&o.stderr), "", "no warning about the unit");
    // Its command with the arguments of an environment file, split as systemd splits an
    // unbraced $VAR: serves, and stops with status 0 on SIGTERM (no restart).
    let args = "--refresh 1 t";
    let argv: Vec<&str> = args.split_whitespace().collect();
    let s = Server::start(d.path(), &argv, &[]);
    assert_eq!(s.get("/healthz", &[]).text(), "ok\n");
    assert_eq!(s.get("/api/fleet", &[]).json()["trees"][0]["files"], 3);
    assert_eq!(s.stop(), Some(0));
}

#[test]
fn a_proxy_header_is_believed_from_the_trusted_proxy_only() {
    let d = tempdir();
    tree(d.path());
    let users = d.path().join("users");
    add_user(d.path(), &users, "carol", "operator", "carol's secret");
    let header = [("x-remote-user", "carol")];
    // Trusted from 127.0.0.1 (where the tests connect from): carol, an operator.
    let u = users.to_str().unwrap();
    let s = Server::start(
        d.path(),
        &["t", "--users", u, "--proxy-header", "X-Remote-User", "--trusted-proxy", "127.0.0.1"],
        &[],
    );
    let page = s.get("/tree/0", &header);
    assert_eq!(page.status, 200, "{}", page.text());
    assert!(page.text().contains("carol (operator)"), "{}", page.text());
    let token = page.csrf().unwrap();
    let r = s.post("/tree/0/action", &header, &[("csrf", &token), ("kind", "verify")]);
    assert_eq!(r.status, 303, "{}", r.text());
    // A name not in the users file is a viewer.
    let dave = s.get("/tree/0", &[("x-remote-user", "dave")]);
    assert!(dave.text().contains("dave (viewer)"), "{}", dave.text());
    drop(s);
    // From an address that is not the proxy's, the header is nobody's word.
    let s = Server::start(
        d.path(),
        &["t", "--users", u, "--proxy-header", "X-Remote-User", "--trusted-proxy", "10.9.9.9"],
        &[],
    );
    assert_eq!(s.get("/tree/0", &header).status, 303, "to the login page");
    assert_eq!(s.get("/api/fleet", &header).status, 401);
}

#[test]
fn an_action_killed_midway_leaves_the_catalog_as_a_killed_cli_run_does() {
    let d = tempdir();
    let t = d.path().join("t");
    // 128 MiB: a verify that takes long enough to be killed while it reads.
    for i in 0..256 {
        write(&t, format!("d{}/f{i}", i % 8), &vec![i as u8; 512 * 1024]);
    }
    assert!(run(d.path(), ["scan", "-q", "t"]).status.success());
    let s = Server::start(d.path(), &["t", "--refresh", "0.2"], &[]);
    let token = s.get("/tree/0", &[]).csrf().unwrap();
    // The verify, killed while it runs (SIGKILL: nothing of it can tidy up).
    let r = s.post("/tree/0/action", &[], &[("csrf", &token), ("kind", "verify")]);
    assert_eq!(r.status, 303);
    // Killed once its run is under way (recorded in the catalog, not yet ended): a kill
    // before that would leave nothing to look at.
    let end = Instant::now() + Duration::from_secs(30);
    let root = t.canonicalize().unwrap();
    let catalog = rusqlite::Connection::open(t.join(".fixity/catalog.db")).unwrap();
    let under_way = "SELECT count(*) FROM runs WHERE command = 'verify' AND finished IS NULL";
    while catalog.query_row(under_way, [], |r| r.get::<_, i64>(0)).unwrap_or(0) == 0 {
        let a = s.get("/api/actions/1", &[]).json();
        assert!(a["finished"].is_null(), "the verify ended before it could be killed: {a}");
        assert!(Instant::now() < end, "the verify never began its run");
    }
    let killed = std::process::Command::new("pkill")
        .args(["-KILL", "-f", &format!("verify --catalog .* {}$", root.display())])
        .status()
        .unwrap();
    assert!(killed.success(), "no verify to kill");
    let a = s.wait_json("/api/actions/1", &[], 30, |a| !a["finished"].is_null());
    assert!(a["exit"].is_null(), "killed by a signal: {a}");
    assert!(s.get("/actions/1", &[]).text().contains("killed"));
    // The catalog is as a killed CLI run leaves it: the run interrupted, the next verify
    // clean and whole.
    let status = String::from_utf8_lossy(&run(d.path(), ["status", "t"]).stdout).into_owned();
    assert!(status.contains("interrupted"), "{status}");
    let out = run(d.path(), ["verify", "t"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    let again = s.post("/tree/0/action", &[], &[("csrf", &token), ("kind", "verify")]);
    assert_eq!(again.status, 303, "a new action once the killed one ended");
}
