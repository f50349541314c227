//! TLS to a PostgreSQL catalog by libpq's rules, against a real server with a CA and
//! certificates made by these tests (tests/util/pg.rs, `pg::tls`): verify-full takes the
//! right server and refuses a certificate for another host name or from another CA;
//! verify-ca checks the chain only; require checks it when ~/.postgresql/root.crt exists;
//! the root file comes from the URL, PGSSLROOTCERT or a service file; a client
//! certificate is required by the server and sent (from the URL or ~/.postgresql), and a
//! key others can read is refused. The server takes only TLS over TCP, so every
//! connection that succeeds was encrypted.

use crate::util::{self, pg};
use std::path::Path;
use std::process::Output;

/// `fixity ARGS` with HOME (where ~/.postgresql is) and further variables.
fn fx(home: &Path, args: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut cmd = util::fixity(home);
    cmd.env("HOME", home).env_remove("PGSSLMODE").env_remove("PGSSLROOTCERT");
    cmd.env_remove("PGSERVICE").env_remove("PGSERVICEFILE");
    for (k, v) in vars {
        cmd.env(k, v);
    }
    cmd.args(args).output().expect("run fixity")
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A home directory with a small tree in it.
fn home() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("tree")).unwrap();
    std::fs::write(d.path().join("tree/a.txt"), "hello\n").unwrap();
    d
}

/// Scans `tree` into the catalog at `url`: the output.
fn scan(home: &Path, url: &str, vars: &[(&str, &str)]) -> Output {
    fx(home, &["scan", "tree", "--catalog", url, "-q"], vars)
}

fn accepted(o: &Output, what: &str) {
    assert_eq!(o.status.code(), Some(0), "{what}: {}", err(o));
}

fn refused(o: &Output, what: &str, says: &[&str]) {
    assert_eq!(o.status.code(), Some(2), "{what} must be refused: {}", err(o));
    let e = err(o);
    for s in says {
        assert!(e.contains(s), "{what}: {s:?} not in {e}");
    }
}

#[test]
fn verify_full_takes_the_right_server_only() {
    let Some(c) = pg::tls() else { return };
    let h = home();
    let ca = c.ca.to_str().unwrap();
    let other = c.other_ca.to_str().unwrap();
    let full = |host: &str, root: &str| {
        c.url(pg::USER, host, &format!("sslmode=verify-full&sslrootcert={root}"))
    };
    accepted(&scan(h.path(), &full("localhost", ca), &[]), "verify-full of localhost");
    let o = fx(h.path(), &["status", "tree", "--catalog", &full("localhost", ca)], &[]);
    accepted(&o, "status over verify-full");
    // The certificate names localhost, not 127.0.0.1: another host name.
    let o = scan(h.path(), &full("127.0.0.1", ca), &[]);
    refused(
        &o,
        "a certificate for another host name",
        &["certificate not valid for name", "127.0.0.1", "sslmode=verify-full", "its host name"],
    );
    // verify-ca checks the chain and not the name.
    let ca_only = c.url(pg::USER, "127.0.0.1", &format!("sslmode=verify-ca&sslrootcert={ca}"));
    accepted(&scan(h.path(), &ca_only, &[]), "verify-ca of 127.0.0.1");
    // A server whose certificate another CA signed: refused by verify-full and verify-ca.
    for mode in ["verify-full", "verify-ca"] {
        let url = c.url(pg::USER, "localhost", &format!("sslmode={mode}&sslrootcert={other}"));
        refused(
            &scan(h.path(), &url, &[]),
            &format!("{mode} with another CA"),
            &["invalid peer certificate", "UnknownIssuer", other],
        );
    }
    // The system's roots do not hold the test CA; a weaker mode with them is refused.
    let system = c.url(pg::USER, "localhost", "sslrootcert=system");
    refused(&scan(h.path(), &system, &[]), "the system roots", &["UnknownIssuer", "system"]);
    let weak = c.url(pg::USER, "localhost", "sslrootcert=system&sslmode=require");
    refused(&scan(h.path(), &weak, &[]), "require with the system roots", &["weak sslmode"]);
    // Without the root file, verifying is refused before connecting, in libpq's words.
    let none = c.url(pg::USER, "localhost", "sslmode=verify-full");
    refused(
        &scan(h.path(), &none, &[]),
        "verify-full without ~/.postgresql/root.crt",
        &["root certificate file", ".postgresql/root.crt\" does not exist"],
    );
}

#[test]
fn the_root_file_comes_from_home_the_environment_or_a_service() {
    let Some(c) = pg::tls() else { return };
    let h = home();
    let ca = c.ca.to_str().unwrap();
    let other = c.other_ca.to_str().unwrap();
    let require = c.url(pg::USER, "localhost", "sslmode=require");
    // require without a root file: encrypted, not checked (the server takes only TLS).
    accepted(&scan(h.path(), &require, &[]), "require without a root file");
    // require with ~/.postgresql/root.crt checks the chain (libpq's rule).
    let dot = h.path().join(".postgresql");
    std::fs::create_dir(&dot).unwrap();
    std::fs::copy(&c.other_ca, dot.join("root.crt")).unwrap();
    refused(&scan(h.path(), &require, &[]), "require, root.crt another CA's", &["UnknownIssuer"]);
    std::fs::copy(&c.ca, dot.join("root.crt")).unwrap();
    accepted(&scan(h.path(), &require, &[]), "require, root.crt the CA");
    let full = c.url(pg::USER, "localhost", "sslmode=verify-full");
    accepted(&scan(h.path(), &full, &[]), "verify-full with ~/.postgresql/root.crt");
    std::fs::remove_file(dot.join("root.crt")).unwrap();
    // PGSSLMODE and PGSSLROOTCERT.
    let plain = c.url(pg::USER, "localhost", "");
    let env = [("PGSSLMODE", "verify-full"), ("PGSSLROOTCERT", ca)];
    accepted(&scan(h.path(), &plain, &env), "PGSSLROOTCERT");
    let env = [("PGSSLMODE", "verify-full"), ("PGSSLROOTCERT", other)];
    refused(&scan(h.path(), &plain, &env), "PGSSLROOTCERT another CA's", &["UnknownIssuer"]);
    // A service file: its sslmode and sslrootcert.
    let svc = h.path().join("services.conf");
    std::fs::write(
        &svc,
        format!(
            "[good]\nhost=localhost\nport={p}\ndbname={db}\nuser={u}\nsslmode=verify-full\n\
             sslrootcert={ca}\n[bad]\nhost=localhost\nport={p}\ndbname={db}\nuser={u}\n\
             sslmode=verify-ca\nsslrootcert={other}\n",
            p = c.port,
            db = c.database,
            u = pg::USER
        ),
    )
    .unwrap();
    let svc = svc.to_str().unwrap();
    let o = scan(h.path(), "postgresql://?service=good", &[("PGSERVICEFILE", svc)]);
    accepted(&o, "a service file's sslrootcert");
    let o = scan(h.path(), "postgresql://", &[("PGSERVICEFILE", svc), ("PGSERVICE", "bad")]);
    refused(&o, "a service file's other CA", &["UnknownIssuer"]);
    // sslmode=disable does not encrypt: this server refuses it.
    let o = scan(h.path(), &c.url(pg::USER, "localhost", "sslmode=disable"), &[]);
    refused(&o, "sslmode=disable", &["no encryption", "sslmode=disable: not encrypted"]);
}

#[test]
fn a_client_certificate_is_required_and_sent() {
    let Some(c) = pg::tls() else { return };
    let h = home();
    let ca = c.ca.to_str().unwrap();
    let (cert, key) = (c.client_cert.to_str().unwrap(), c.client_key.to_str().unwrap());
    let base = format!("sslmode=verify-full&sslrootcert={ca}");
    // Without a certificate, the server refuses certuser.
    let o = scan(h.path(), &c.url("certuser", "localhost", &base), &[]);
    refused(
        &o,
        "certuser without a certificate",
        &["requires a valid client certificate", "no client certificate was sent"],
    );
    // From the URL.
    let url = c.url("certuser", "localhost", &format!("{base}&sslcert={cert}&sslkey={key}"));
    accepted(&scan(h.path(), &url, &[]), "the client certificate from the URL");
    // From ~/.postgresql/postgresql.crt and .key, and PGSSLCERT/PGSSLKEY.
    let dot = h.path().join(".postgresql");
    std::fs::create_dir(&dot).unwrap();
    std::fs::copy(&c.client_cert, dot.join("postgresql.crt")).unwrap();
    std::fs::copy(&c.client_key, dot.join("postgresql.key")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    let mode = |m: u32| {
        std::fs::set_permissions(dot.join("postgresql.key"), std::fs::Permissions::from_mode(m))
            .unwrap()
    };
    mode(0o600);
    let o =
        fx(h.path(), &["verify", "tree", "--catalog", &c.url("certuser", "localhost", &base)], &[]);
    accepted(&o, "the client certificate from ~/.postgresql");
    // A key the group or others can read is refused, by libpq's rule, before connecting.
    mode(0o644);
    let o = scan(h.path(), &c.url("certuser", "localhost", &base), &[]);
    refused(&o, "a key others can read", &["has group or world access", "postgresql.key"]);
    let moved = h.path().join("elsewhere");
    std::fs::create_dir(&moved).unwrap();
    std::fs::rename(dot.join("postgresql.crt"), moved.join("c.crt")).unwrap();
    std::fs::rename(dot.join("postgresql.key"), moved.join("c.key")).unwrap();
    std::fs::set_permissions(moved.join("c.key"), std::fs::Permissions::from_mode(0o600)).unwrap();
    let env = [
        ("PGSSLCERT", moved.join("c.crt").to_string_lossy().into_owned()),
        ("PGSSLKEY", moved.join("c.key").to_string_lossy().into_owned()),
    ];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let o = scan(h.path(), &c.url("certuser", "localhost", &base), &env);
    accepted(&o, "PGSSLCERT and PGSSLKEY");
}
