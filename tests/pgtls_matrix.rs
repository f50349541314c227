//! psql and fixity connect, or refuse, alike: for a matrix of server certificates made
//! with `openssl` (X.509 v1 as PostgreSQL's "Creating Certificates" makes them, and its
//! self-signed one, a CA's; a CA-flagged or client-only server certificate; v3 with a
//! common name only, SAN dNSName and iPAddress, wildcards, a wrong host, another CA,
//! expired, revoked by a CRL), in every sslmode, with no CRL, a CRL file, a hashed CRL
//! directory, and a CRL file or directory that does not exist. One cluster of its own
//! (tests/util/pg.rs, `pg::own_tls`) is restarted with each certificate; names resolve
//! with `hostaddr=127.0.0.1` (no DNS). A difference fails with the whole table.

use crate::util::{self, pg};
use std::path::Path;
use std::process::Command;

/// How a server certificate is made.
#[derive(Clone, Copy, PartialEq)]
enum How {
    /// `openssl x509 -req` by the CA (v1 without extensions, as PostgreSQL documents).
    Signed,
    /// The same by the other CA, which the client does not trust.
    OtherCa,
    /// `openssl ca`, valid in 2020 only.
    Expired,
    /// `openssl ca`, then revoked in the CA's CRL.
    Revoked,
    /// `openssl req -x509` (a CA's certificate, as OpenSSL's configuration makes it), its
    /// own root: PostgreSQL's first example.
    SelfSigned,
}

/// A server certificate of the matrix.
struct Cert {
    name: &'static str,
    cn: &'static str,
    /// Its v3 extensions (`None`: an X.509 v1 certificate).
    ext: Option<&'static str>,
    how: How,
    /// The hosts verify-full is tried with (the first for the other modes).
    hosts: &'static [&'static str],
}

const LEAF: &str = "basicConstraints=CA:FALSE\n";

const CERTS: &[Cert] = &[
    Cert {
        name: "self-signed",
        cn: "db.example.test",
        ext: None,
        how: How::SelfSigned,
        hosts: &["db.example.test", "other.example.test"],
    },
    Cert {
        name: "v3-ca-flag",
        cn: "db.example.test",
        ext: Some("basicConstraints=critical,CA:TRUE\nsubjectAltName=DNS:db.example.test\n"),
        how: How::Signed,
        hosts: &["db.example.test"],
    },
    Cert {
        name: "v3-client-eku",
        cn: "db.example.test",
        ext: Some("subjectAltName=DNS:db.example.test\nextendedKeyUsage=clientAuth\n"),
        how: How::Signed,
        hosts: &["db.example.test"],
    },
    Cert {
        name: "v3-sign-only-ku",
        cn: "db.example.test",
        ext: Some("subjectAltName=DNS:db.example.test\nkeyUsage=critical,nonRepudiation\n"),
        how: How::Signed,
        hosts: &["db.example.test"],
    },
    Cert {
        name: "v3-ca-client-eku",
        cn: "db.example.test",
        ext: Some("basicConstraints=CA:TRUE\nextendedKeyUsage=clientAuth\n"),
        how: How::Signed,
        hosts: &["db.example.test"],
    },
    Cert {
        name: "v1-cn",
        cn: "db.example.test",
        ext: None,
        how: How::Signed,
        hosts: &["db.example.test", "other.example.test"],
    },
    Cert {
        name: "v1-cn-wildcard",
        cn: "*.example.test",
        ext: None,
        how: How::Signed,
        hosts: &["db.example.test", "a.db.example.test"],
    },
    Cert {
        name: "v1-other-ca",
        cn: "db.example.test",
        ext: None,
        how: How::OtherCa,
        hosts: &["db.example.test"],
    },
    Cert {
        name: "v1-expired",
        cn: "db.example.test",
        ext: None,
        how: How::Expired,
        hosts: &["db.example.test"],
    },
    Cert {
        name: "v1-revoked",
        cn: "db.example.test",
        ext: None,
        how: How::Revoked,
        hosts: &["db.example.test"],
    },
    Cert {
        name: "v3-cn-only",
        cn: "db.example.test",
        ext: Some(LEAF),
        how: How::Signed,
        hosts: &["db.example.test", "127.0.0.1"],
    },
    Cert {
        name: "v3-cn-ip",
        cn: "127.0.0.1",
        ext: Some(LEAF),
        how: How::Signed,
        hosts: &["127.0.0.1", "db.example.test"],
    },
    Cert {
        name: "san-dns-cn-ignored",
        cn: "other.example.test",
        ext: Some("subjectAltName=DNS:db.example.test\nbasicConstraints=CA:FALSE\n"),
        how: How::Signed,
        hosts: &["db.example.test", "other.example.test", "127.0.0.1"],
    },
    Cert {
        name: "san-dns-cn-ip",
        cn: "127.0.0.1",
        ext: Some("subjectAltName=DNS:db.example.test\nbasicConstraints=CA:FALSE\n"),
        how: How::Signed,
        hosts: &["127.0.0.1"],
    },
    Cert {
        name: "san-ip",
        cn: "db.example.test",
        ext: Some("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n"),
        how: How::Signed,
        hosts: &["127.0.0.1", "db.example.test", "other.example.test"],
    },
    Cert {
        name: "san-wildcard",
        cn: "nothing",
        ext: Some("subjectAltName=DNS:*.example.test\nbasicConstraints=CA:FALSE\n"),
        how: How::Signed,
        hosts: &["db.example.test", "example.test", "a.db.example.test"],
    },
    Cert {
        name: "san-partial-wildcard",
        cn: "nothing",
        ext: Some("subjectAltName=DNS:d*.example.test\nbasicConstraints=CA:FALSE\n"),
        how: How::Signed,
        hosts: &["db.example.test"],
    },
    Cert {
        name: "san-wrong-host",
        cn: "db.example.test",
        ext: Some("subjectAltName=DNS:other.example.test\nbasicConstraints=CA:FALSE\n"),
        how: How::Signed,
        hosts: &["db.example.test"],
    },
    Cert {
        name: "v3-other-ca",
        cn: "db.example.test",
        ext: Some("subjectAltName=DNS:db.example.test\nbasicConstraints=CA:FALSE\n"),
        how: How::OtherCa,
        hosts: &["db.example.test"],
    },
    Cert {
        name: "v3-expired",
        cn: "db.example.test",
        ext: Some("subjectAltName=DNS:db.example.test\nbasicConstraints=CA:FALSE\n"),
        how: How::Expired,
        hosts: &["db.example.test"],
    },
    Cert {
        name: "v3-revoked",
        cn: "db.example.test",
        ext: Some("subjectAltName=DNS:db.example.test\nbasicConstraints=CA:FALSE\n"),
        how: How::Revoked,
        hosts: &["db.example.test"],
    },
];

const MODES: [&str; 6] = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"];

/// The CRLs a connection names.
#[derive(Clone, Copy, Debug)]
enum Crl {
    None,
    File,
    Dir,
    /// `sslcrl` naming a file that does not exist (libpq: no CRL check).
    NoFile,
    /// `sslcrldir` naming a directory that does not exist.
    NoDir,
}

/// Runs `openssl ARGS` (as `owner` when given), its error in words.
fn openssl(owner: &[String], args: &[&str]) -> Result<(), String> {
    pg::run(owner, Path::new("openssl"), args)
}

/// The CAs, the server key, every certificate of [`CERTS`] (as `NAME.crt`), the CA's CRL
/// (`ca.crl`) and a hashed CRL directory (`crls/`) in `dir`; `server.crt` the first.
fn make(dir: &Path, owner: &[String]) -> Result<(), String> {
    let p = |name: &str| dir.join(name).to_string_lossy().into_owned();
    for (ca, cn) in [("ca", "matrix CA"), ("other-ca", "matrix other CA")] {
        pg::make_ca(Path::new("openssl"), dir, ca, cn)?;
    }
    // One key for every server certificate: the cluster owner's, 0600.
    openssl(
        owner,
        &["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", &p("server.key")],
    )?;
    let chmod = owner.iter().map(String::as_str).chain(["chmod", "600"]).collect::<Vec<_>>();
    let status = Command::new(chmod[0]).args(&chmod[1..]).arg(p("server.key")).status();
    if !status.is_ok_and(|s| s.success()) {
        return Err("chmod 600 server.key failed".into());
    }
    std::fs::create_dir_all(dir.join("issued")).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("index.txt"), "").map_err(|e| e.to_string())?;
    std::fs::write(dir.join("serial"), "1000\n").map_err(|e| e.to_string())?;
    std::fs::write(dir.join("crlnumber"), "1000\n").map_err(|e| e.to_string())?;
    let d = dir.display();
    let config = format!(
        "[ca]\ndefault_ca = d\n[d]\ndatabase = {d}/index.txt\nnew_certs_dir = {d}/issued\n\
         certificate = {d}/ca.crt\nprivate_key = {d}/ca.key\nserial = {d}/serial\n\
         crlnumber = {d}/crlnumber\ndefault_md = sha256\ndefault_days = 3\n\
         default_crl_days = 3\npolicy = any\nunique_subject = no\n[any]\ncommonName = supplied\n"
    );
    std::fs::write(dir.join("ca.cnf"), config).map_err(|e| e.to_string())?;
    for c in CERTS {
        let (csr, crt, ext) = (
            p(&format!("{}.csr", c.name)),
            p(&format!("{}.crt", c.name)),
            p(&format!("{}.ext", c.name)),
        );
        let subj = format!("/CN={}", c.cn);
        if c.how != How::SelfSigned {
            openssl(&[], &["req", "-new", "-key", &p("server.key"), "-subj", &subj, "-out", &csr])?;
        }
        let mut args: Vec<String> = match c.how {
            How::SelfSigned => ["req", "-x509", "-key", &p("server.key"), "-subj", &subj]
                .into_iter()
                .chain(["-days", "3", "-out", &crt])
                .map(String::from)
                .collect(),
            How::Signed | How::OtherCa => {
                let ca = if c.how == How::OtherCa { "other-ca" } else { "ca" };
                ["x509", "-req", "-in", &csr, "-CA", &p(&format!("{ca}.crt")), "-CAkey"]
                    .map(String::from)
                    .into_iter()
                    .chain([p(&format!("{ca}.key"))])
                    .chain(["-CAcreateserial", "-days", "3", "-out", &crt].map(String::from))
                    .collect()
            }
            How::Expired | How::Revoked => {
                let mut a: Vec<String> =
                    ["ca", "-batch", "-notext", "-config", &p("ca.cnf"), "-in", &csr, "-out", &crt]
                        .map(String::from)
                        .to_vec();
                if c.how == How::Expired {
                    a.extend(
                        ["-startdate", "20200101000000Z", "-enddate", "20200102000000Z"]
                            .map(String::from),
                    );
                }
                a
            }
        };
        if let Some(text) = c.ext {
            std::fs::write(&ext, text).map_err(|e| e.to_string())?;
            args.extend(["-extfile".to_string(), ext]);
        }
        openssl(&[], &args.iter().map(String::as_str).collect::<Vec<_>>())?;
        if c.how == How::Revoked {
            openssl(&[], &["ca", "-config", &p("ca.cnf"), "-revoke", &crt])?;
        }
    }
    openssl(&[], &["ca", "-config", &p("ca.cnf"), "-gencrl", "-out", &p("ca.crl")])?;
    let out = Command::new("openssl")
        .args(["crl", "-hash", "-noout", "-in", &p("ca.crl")])
        .output()
        .map_err(|e| e.to_string())?;
    let hash = String::from_utf8_lossy(&out.stdout).trim().to_string();
    std::fs::create_dir_all(dir.join("crls")).map_err(|e| e.to_string())?;
    std::fs::copy(dir.join("ca.crl"), dir.join("crls").join(format!("{hash}.r0")))
        .map_err(|e| e.to_string())?;
    std::fs::copy(dir.join(format!("{}.crt", CERTS[0].name)), dir.join("server.crt"))
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// One connection of the matrix.
struct Try {
    cert: &'static str,
    host: &'static str,
    mode: &'static str,
    crl: Crl,
}

/// Whether psql and fixity connected (`true`), and what each said when it did not.
fn attempt(
    t: &Try,
    port: u16,
    certs: &Path,
    home: &Path,
    tree: &str,
) -> ((bool, String), (bool, String)) {
    // A self-signed certificate is its own root (PostgreSQL: `cp server.crt root.crt`).
    let root = match t.cert {
        "self-signed" => certs.join("self-signed.crt"),
        _ => certs.join("ca.crt"),
    };
    let mut params = vec![format!("sslmode={}", t.mode), format!("sslrootcert={}", root.display())];
    match t.crl {
        Crl::None => {}
        Crl::File => params.push(format!("sslcrl={}", certs.join("ca.crl").display())),
        Crl::Dir => params.push(format!("sslcrldir={}", certs.join("crls").display())),
        Crl::NoFile => params.push(format!("sslcrl={}", certs.join("none.crl").display())),
        Crl::NoDir => params.push(format!("sslcrldir={}", certs.join("nodir").display())),
    }
    let conninfo = format!(
        "host={} hostaddr=127.0.0.1 port={port} user={} dbname=matrix_db {}",
        t.host,
        pg::USER,
        params.join(" ")
    );
    let mut psql = Command::new("psql");
    psql.args(["-X", "-Atq", "-c", "select 1", &conninfo]).env("HOME", home);
    psql.env("PGCONNECT_TIMEOUT", "5");
    for var in ["PGSSLMODE", "PGSSLROOTCERT", "PGSSLCRL", "PGSSLCRLDIR", "PGSERVICE", "PGHOST"] {
        psql.env_remove(var);
    }
    if let Some(pass) = pg::passfile() {
        psql.env("PGPASSFILE", pass);
    }
    let o = psql.output().expect("run psql");
    let by_psql = (o.status.success(), first_line(&o.stderr));
    let url = format!(
        "postgresql://{}@{}:{port}/matrix_db?hostaddr=127.0.0.1&connect_timeout=5&{}",
        pg::USER,
        t.host,
        params.join("&")
    );
    let mut fx = util::fixity(home);
    fx.env("HOME", home);
    for var in ["PGSSLMODE", "PGSSLROOTCERT", "PGSSLCRL", "PGSSLCRLDIR", "PGSERVICE", "PGHOST"] {
        fx.env_remove(var);
    }
    let o = fx.args(["scan", tree, "--catalog", &url, "-q"]).output().expect("run fixity");
    let said = first_line(&o.stderr);
    let by_fixity = match o.status.code() {
        Some(0) => (true, said),
        Some(2) => (false, said),
        other => (false, format!("exit {other:?}: {said}")),
    };
    (by_psql, by_fixity)
}

fn first_line(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    text.lines().filter(|l| !l.trim().is_empty()).collect::<Vec<_>>().join(" | ")
}

#[test]
fn psql_and_fixity_accept_and_refuse_the_same_certificates() {
    let tools = ["psql", "openssl"];
    if let Some(t) = tools.iter().find(|t| util::which(t).is_none()) {
        util::missing(
            "the TLS matrix",
            &format!("{t} not found (apt-get install postgresql-client openssl)"),
        );
        return;
    }
    let own = match pg::own_tls(&make) {
        Ok(o) => o,
        Err(why) => {
            util::missing("postgresql with TLS", &why);
            return;
        }
    };
    let home = tempfile::tempdir().unwrap();
    // A tree for each of the three workers (a catalog serves one run per tree at once).
    for w in 0..3 {
        std::fs::create_dir(home.path().join(format!("tree{w}"))).unwrap();
        std::fs::write(home.path().join(format!("tree{w}/a.txt")), "hello\n").unwrap();
    }
    let mut table = Vec::new();
    let mut verdicts = Vec::new();
    let mut differ = 0;
    for (i, c) in CERTS.iter().enumerate() {
        if i > 0 {
            std::fs::copy(own.certs.join(format!("{}.crt", c.name)), own.certs.join("server.crt"))
                .unwrap();
            own.restart().expect("restart with the next certificate");
        }
        let mut tries = Vec::new();
        for mode in MODES {
            let hosts = if mode == "verify-full" { c.hosts } else { &c.hosts[..1] };
            let crls: &[Crl] = match mode {
                "require" | "verify-ca" | "verify-full" => {
                    &[Crl::None, Crl::File, Crl::Dir, Crl::NoFile, Crl::NoDir]
                }
                _ => &[Crl::None],
            };
            for host in hosts {
                for crl in crls {
                    tries.push(Try { cert: c.name, host, mode, crl: *crl });
                }
            }
        }
        let results: Vec<_> = std::thread::scope(|s| {
            let chunks: Vec<_> = tries
                .chunks(tries.len().div_ceil(3))
                .enumerate()
                .map(|(w, chunk)| {
                    let (own, home) = (&own, home.path());
                    s.spawn(move || {
                        let tree = format!("tree{w}");
                        chunk
                            .iter()
                            .map(|t| attempt(t, own.port, &own.certs, home, &tree))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            chunks.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        for (t, (p, f)) in tries.iter().zip(results) {
            let word = |ok: bool| if ok { "connect" } else { "refuse" };
            let same = p.0 == f.0;
            if !same {
                differ += 1;
            }
            verdicts.push((t.cert, t.host, t.mode, format!("{:?}", t.crl), f.0));
            table.push(format!(
                "{} {:<20} {:<19} {:<11} {:<7} psql {:<7} fixity {:<7}{}",
                if same { " " } else { "!" },
                t.cert,
                t.host,
                t.mode,
                format!("{:?}", t.crl),
                word(p.0),
                word(f.0),
                if same {
                    String::new()
                } else {
                    format!("\n    psql: {}\n    fixity: {}", p.1, f.1)
                }
            ));
        }
    }
    assert_eq!(differ, 0, "{differ} differences (!):\n{}", table.join("\n"));
    // And the verdicts are libpq's documented ones (so the matrix is not, say, all
    // refusals): the cases of issue 38 first.
    let full = "verify-full";
    for (cert, host, mode, crl, connects) in [
        ("v1-cn", "db.example.test", full, "None", true),
        ("v1-cn", "db.example.test", "verify-ca", "Dir", true),
        ("v3-cn-only", "db.example.test", full, "None", true),
        ("self-signed", "db.example.test", full, "None", true),
        ("self-signed", "other.example.test", full, "None", false),
        ("san-dns-cn-ignored", "other.example.test", full, "None", false),
        ("san-ip", "127.0.0.1", full, "None", true),
        ("san-wildcard", "db.example.test", full, "None", true),
        ("san-wildcard", "a.db.example.test", full, "None", false),
        ("v3-other-ca", "db.example.test", "require", "None", false),
        ("v3-expired", "db.example.test", "verify-ca", "None", false),
        ("v3-revoked", "db.example.test", full, "None", true),
        ("v3-revoked", "db.example.test", full, "File", false),
        ("v1-revoked", "db.example.test", full, "Dir", false),
        ("v3-client-eku", "db.example.test", full, "None", false),
        ("v3-sign-only-ku", "db.example.test", full, "None", false),
    ] {
        let got =
            verdicts.iter().find(|v| (v.0, v.1, v.2, v.3.as_str()) == (cert, host, mode, crl));
        assert_eq!(got.map(|v| v.4), Some(connects), "{cert} {host} {mode} {crl}");
    }
}
