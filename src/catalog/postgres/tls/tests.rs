//! libpq's TLS rules without a server (the certificates themselves are exercised against a
//! real server in tests/pgtls.rs).

use super::*;
#[cfg(unix)]
use std::os::unix::fs::PermissionsExt;

fn asked(mode: Option<&str>, rootcert: Option<&str>) -> Asked {
    Asked { mode: mode.map(String::from), rootcert: rootcert.map(String::from), ..Asked::default() }
}

#[test]
fn the_modes_ask_the_server_as_libpq_does() {
    let home = tempfile::tempdir().unwrap();
    let h = Some(home.path());
    for (mode, wire) in [
        (None, SslMode::Prefer),
        (Some("disable"), SslMode::Disable),
        (Some("allow"), SslMode::Prefer),
        (Some("prefer"), SslMode::Prefer),
        (Some("require"), SslMode::Require),
    ] {
        let tls = resolve(&asked(mode, None), h, false).unwrap();
        assert_eq!(tls.wire, wire, "{mode:?}");
        let said = if mode == Some("disable") { "not encrypted" } else { "not checked" };
        assert!(tls.checks.contains(said), "{mode:?}: {}", tls.checks);
    }
    // allow and prefer try again without TLS when TLS fails (libpq's rule); no other.
    for (mode, fallback) in [("allow", true), ("prefer", true), ("require", false)] {
        let tls = resolve(&asked(Some(mode), None), h, false).unwrap();
        assert_eq!(tls.fallback, fallback, "{mode}");
    }
    // Over Unix-domain sockets, never (the server serves no TLS there).
    let tls = resolve(&asked(Some("require"), None), h, true).unwrap();
    assert_eq!(tls.wire, SslMode::Disable);
    let e = resolve(&asked(Some("verify"), None), h, false).err().unwrap();
    assert!(e.contains("invalid sslmode \"verify\""), "{e}");
}

#[test]
fn verifying_needs_a_root_file_and_names_it() {
    let home = tempfile::tempdir().unwrap();
    for mode in ["verify-ca", "verify-full"] {
        let e = resolve(&asked(Some(mode), None), Some(home.path()), false).err().unwrap();
        let default = home.path().join(CERT_DIR).join("root.crt");
        assert!(
            e.contains(&format!("root certificate file \"{}\" does not exist", default.display())),
            "{e}"
        );
        assert!(e.contains("sslrootcert=system"), "{e}");
        let e =
            resolve(&asked(Some(mode), Some("/nonexistent/ca.pem")), None, false).err().unwrap();
        assert!(e.contains("\"/nonexistent/ca.pem\" does not exist"), "{e}");
    }
    // A root file that holds no certificate is refused, not taken as "trust nothing".
    let empty = home.path().join("empty.pem");
    std::fs::write(&empty, "not a certificate\n").unwrap();
    let e = resolve(&asked(Some("verify-full"), empty.to_str()), None, false).err().unwrap();
    assert!(e.contains("holds no certificate"), "{e}");
    // require checks the chain only when the root file exists (libpq's old rule).
    let tls = resolve(&asked(Some("require"), Some("/nonexistent/ca.pem")), None, false).unwrap();
    assert!(tls.checks.contains("not checked"));
    let e = resolve(&asked(Some("require"), empty.to_str()), None, false).err().unwrap();
    assert!(e.contains("holds no certificate"), "{e}");
}

#[test]
fn the_system_roots_ask_verify_full() {
    let e = resolve(&asked(Some("require"), Some("system")), None, false).err().unwrap();
    assert_eq!(
        e,
        "weak sslmode \"require\" may not be used with sslrootcert=system (use \"verify-full\")"
    );
    assert!(resolve(&asked(Some("verify-ca"), Some("system")), None, false).is_err());
    // Without a mode, the system's roots mean verify-full (when the system has roots).
    if let Ok(tls) = resolve(&asked(None, Some("system")), None, false) {
        assert_eq!(tls.wire, SslMode::Require);
        assert!(tls.checks.contains("sslmode=verify-full"), "{}", tls.checks);
        assert!(tls.checks.contains("system's trusted roots"), "{}", tls.checks);
    }
}

#[cfg(unix)]
#[test]
fn a_client_key_others_can_read_is_refused_and_a_missing_certificate_sends_none() {
    let d = tempfile::tempdir().unwrap();
    let cert = d.path().join("client.crt");
    let key = d.path().join("client.key");
    // No certificate file: no client certificate, whatever the key.
    assert!(client_identity(Some(cert.clone()), Some(key.clone())).unwrap().is_none());
    std::fs::write(&cert, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
        .unwrap();
    let e = client_identity(Some(cert.clone()), Some(key.clone())).err().unwrap();
    assert!(e.contains("not private key file"), "{e}");
    std::fs::write(&key, "key").unwrap();
    // A key root owns may be read by its group (0640); one the user owns may not.
    use crate::sys::MetadataExt;
    let by_root = std::fs::metadata(&key).unwrap().uid() == 0;
    for (mode, refused) in [
        (0o644, true),
        (0o640, !by_root),
        (0o660, true),
        (0o604, true),
        (0o600, false),
        (0o400, false),
    ] {
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(mode)).unwrap();
        let r = key_permissions(&key);
        assert_eq!(r.is_err(), refused, "mode {mode:o}: {r:?}");
        if let Err(e) = r {
            assert!(e.contains("has group or world access"), "{e}");
            assert!(e.contains("u=rw (0600) or less"), "{e}");
        }
    }
    let e = key_permissions(d.path()).err().unwrap();
    assert!(e.contains("is not a regular file"), "{e}");
}
