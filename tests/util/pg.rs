//! A throwaway PostgreSQL cluster for the tests: made under a temporary directory with
//! initdb (as an unprivileged user when the tests run as root), started with pg_ctl on a
//! free port of 127.0.0.1 and a socket in that directory, shared by every test of this
//! run (made once), stopped and removed when the test binary exits. Each test gets a
//! database of its own.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The superuser, and its password for connections over TCP (the socket trusts).
pub const USER: &str = "fixity";
pub const PASSWORD: &str = "s3cret-pw";

struct Cluster {
    dir: PathBuf,
    port: u16,
    /// The command prefix that runs a program as the cluster's owner.
    as_owner: Vec<String>,
    bin: PathBuf,
}

static CLUSTER: OnceLock<Result<Cluster, String>> = OnceLock::new();
/// The owner's command prefix, pg_ctl and data directory of each running cluster, for
/// the stop at exit.
static STOP: std::sync::Mutex<Vec<(Vec<String>, PathBuf, PathBuf)>> =
    std::sync::Mutex::new(Vec::new());

/// The password file of the running cluster (`*:*:*:fixity:PASSWORD`, mode 0600):
/// `util::fixity` hands it to every fixity it runs as `PGPASSFILE`, so command lines name
/// the catalog without a password, as a user should (fixity warns of one there).
static PASSFILE: OnceLock<PathBuf> = OnceLock::new();

/// The cluster's password file, once a cluster runs.
pub fn passfile() -> Option<&'static Path> {
    PASSFILE.get().map(PathBuf::as_path)
}

/// A database of one test's own.
pub struct Database {
    /// `postgresql://fixity@127.0.0.1:PORT/NAME`: for command lines (the password comes
    /// from the cluster's password file).
    pub url: String,
    /// The same with the password, for connections the tests make in their own process.
    pub secret: String,
    pub name: String,
    pub port: u16,
}

impl Database {
    /// The URL with a password (a wrong one, say) on the command line.
    pub fn url_with_password(&self, password: &str) -> String {
        self.secret.replace(PASSWORD, password)
    }

    /// A client connected to this database.
    pub fn client(&self) -> postgres::Client {
        postgres::Client::connect(&self.secret, postgres::NoTls)
            .expect("connect to the test database")
    }

    /// This database's URL for another role (`role` percent-encoded, no password: give
    /// the role's password as PGPASSWORD).
    pub fn url_as(&self, role: &str) -> String {
        let user: String = role
            .bytes()
            .map(|b| match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'-' | b'.' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect();
        format!("postgresql://{user}@127.0.0.1:{}/{}", self.port, self.name)
    }

    /// A client connected to this database as `role`, with its `password`.
    pub fn client_as(&self, role: &str, password: &str) -> postgres::Client {
        let mut config = postgres::Config::new();
        config.host("127.0.0.1").port(self.port).dbname(&self.name).user(role).password(password);
        config.connect(postgres::NoTls).unwrap_or_else(|e| panic!("connect as {role:?}: {e}"))
    }
}

/// `url` without the test password: what a command line names.
pub fn public(url: &str) -> String {
    url.replace(&format!(":{PASSWORD}@"), "@")
}

/// A fresh database, or `None` (after [`super::missing`]) when no cluster can run here.
pub fn database() -> Option<Database> {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let cluster = match CLUSTER.get_or_init(|| start(None)) {
        Ok(c) => c,
        Err(why) => {
            super::missing("postgresql", why);
            return None;
        }
    };
    let name = format!("test_{}", NEXT.fetch_add(1, Ordering::SeqCst));
    let admin = format!("postgresql://{USER}:{PASSWORD}@127.0.0.1:{}/postgres", cluster.port);
    let mut c = postgres::Client::connect(&admin, postgres::NoTls).expect("connect to the cluster");
    c.batch_execute(&format!("CREATE DATABASE {name}")).expect("create database");
    let secret = format!("postgresql://{USER}:{PASSWORD}@127.0.0.1:{}/{name}", cluster.port);
    Some(Database { url: public(&secret), secret, name, port: cluster.port })
}

/// Where initdb and pg_ctl are: on PATH, else Debian's /usr/lib/postgresql/VERSION/bin
/// (the newest).
fn bindir() -> Option<PathBuf> {
    if let Some(p) = super::which("initdb") {
        return p.parent().map(Path::to_path_buf);
    }
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|b| b.join("initdb").is_file() && b.join("pg_ctl").is_file())
        .collect();
    dirs.sort_by_key(|d| {
        d.parent().and_then(|v| v.file_name()?.to_str()?.parse::<u32>().ok()).unwrap_or(0)
    });
    dirs.pop()
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines().any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
    })
}

/// Runs `program args` as the cluster's owner; its output on failure.
pub fn run(as_owner: &[String], program: &Path, args: &[&str]) -> Result<(), String> {
    let mut cmd = match as_owner.split_first() {
        Some((first, rest)) => {
            let mut c = Command::new(first);
            c.args(rest).arg(program);
            c
        }
        None => Command::new(program),
    };
    let out = cmd.args(args).output().map_err(|e| format!("{}: {e}", program.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} {}: {}{}",
            program.display(),
            args.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(())
}

/// Makes a cluster's certificates in its directory (given the owner's command prefix):
/// the server's extra options.
type Setup<'a> = dyn Fn(&Path, &[String]) -> Result<String, String> + 'a;

/// Starts a cluster; `tls` makes its certificates and configures it for TLS (see
/// [`tls`]): it returns the server's extra options.
fn start(tls: Option<&Setup<'_>>) -> Result<Cluster, String> {
    let bin = bindir().ok_or("initdb and pg_ctl not found (apt-get install postgresql)")?;
    // initdb refuses to run as root: the cluster belongs to postgres (or nobody).
    let as_owner: Vec<String> = if is_root() {
        let owner = if Command::new("id")
            .args(["-u", "postgres"])
            .output()
            .is_ok_and(|o| o.status.success())
        {
            "postgres"
        } else {
            "nobody"
        };
        if !super::have("setpriv") {
            return Err("running as root without setpriv to run initdb as another user".into());
        }
        ["setpriv", "--reuid", owner, "--regid", owner, "--init-groups"].map(String::from).to_vec()
    } else {
        Vec::new()
    };
    let dir =
        tempfile::Builder::new().prefix("fixity-pg").tempdir().map_err(|e| e.to_string())?.keep();
    std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o777))
        .map_err(|e| e.to_string())?;
    let passfile = dir.join("pgpass");
    std::fs::write(&passfile, format!("*:*:*:{USER}:{PASSWORD}\n")).map_err(|e| e.to_string())?;
    std::fs::set_permissions(&passfile, std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .map_err(|e| e.to_string())?;
    let _ = PASSFILE.set(passfile);
    let pwfile = dir.join("pw");
    std::fs::write(&pwfile, PASSWORD).map_err(|e| e.to_string())?;
    std::fs::set_permissions(&pwfile, std::os::unix::fs::PermissionsExt::from_mode(0o644))
        .map_err(|e| e.to_string())?;
    let data = dir.join("data");
    let d = |p: &Path| p.to_string_lossy().into_owned();
    run(
        &as_owner,
        &bin.join("initdb"),
        &[
            "-D",
            &d(&data),
            "-U",
            USER,
            "--pwfile",
            &d(&pwfile),
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "-E",
            "UTF8",
            "--no-sync",
            "--no-instructions",
        ],
    )?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| e.to_string())?
        .port();
    let mut opts = format!(
        "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300 \
         -c shared_buffers=32MB",
        d(&dir)
    );
    if let Some(setup) = tls {
        opts.push_str(&setup(&dir, &as_owner)?);
    }
    let first = {
        let mut stop = STOP.lock().unwrap();
        stop.push((as_owner.clone(), bin.join("pg_ctl"), data.clone()));
        stop.len() == 1
    };
    run(
        &as_owner,
        &bin.join("pg_ctl"),
        &["-D", &d(&data), "-l", &d(&dir.join("log")), "-w", "-o", &opts, "start"],
    )
    .map_err(|e| {
        let log = std::fs::read_to_string(dir.join("log")).unwrap_or_default();
        format!("{e}\n{log}")
    })?;
    if first {
        // SAFETY: registering a plain function to run at exit.
        unsafe { libc::atexit(stop) };
    }
    Ok(Cluster { dir, port, as_owner, bin })
}

/// Stops the clusters and removes their directories (at the test binary's exit).
extern "C" fn stop() {
    let Ok(stop) = STOP.lock() else { return };
    for (as_owner, pg_ctl, data) in stop.iter() {
        let d = data.to_string_lossy().into_owned();
        let _ = run(as_owner, pg_ctl, &["-D", &d, "-m", "immediate", "-w", "stop"]);
        if let Some(dir) = data.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// A cluster that serves TLS with certificates made here, for the tests of libpq's
/// sslmode rules: its server certificate names `localhost` only (so `127.0.0.1` is
/// another host name to verify-full), signed by `ca`; `other_ca` signed nothing this
/// server shows. Over TCP it takes only TLS: role `certuser` logs in with a client
/// certificate from `ca` (`client_cert`, `client_key`), everyone else with a password.
pub struct TlsCluster {
    pub port: u16,
    pub ca: PathBuf,
    pub other_ca: PathBuf,
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
    /// The database the superuser's connections use (`certuser` has one of its own).
    pub database: String,
}

impl TlsCluster {
    /// `postgresql://USER@HOST:PORT/DATABASE?PARAMS` (certuser's database for certuser).
    pub fn url(&self, user: &str, host: &str, params: &str) -> String {
        let q = if params.is_empty() { String::new() } else { format!("?{params}") };
        let db = if user == "certuser" { "cert_db" } else { self.database.as_str() };
        format!("postgresql://{user}@{host}:{}/{db}{q}", self.port)
    }
}

static TLS: OnceLock<Result<TlsCluster, String>> = OnceLock::new();

/// The TLS cluster, or `None` (after [`super::missing`]) when none can run here.
pub fn tls() -> Option<&'static TlsCluster> {
    match TLS.get_or_init(start_tls) {
        Ok(c) => Some(c),
        Err(why) => {
            super::missing("postgresql with TLS", why);
            None
        }
    }
}

fn start_tls() -> Result<TlsCluster, String> {
    let openssl = super::which("openssl").ok_or("openssl not found (apt-get install openssl)")?;
    let made: std::sync::Mutex<Option<PathBuf>> = std::sync::Mutex::new(None);
    let setup = |dir: &Path, as_owner: &[String]| -> Result<String, String> {
        // Over TCP, TLS only (so a connection that succeeds was encrypted): certuser with a
        // client certificate, everyone else with a password; the socket trusts.
        let hba = "local all all trust\n\
                   hostssl all certuser 127.0.0.1/32 cert\n\
                   hostssl all all 127.0.0.1/32 scram-sha-256\n";
        let make = |certs: &Path, owner: &[String]| make_certificates(&openssl, certs, owner);
        let (certs, settings) = tls_dir(dir, as_owner, &make, hba, true)?;
        *made.lock().unwrap() = Some(certs);
        Ok(settings)
    };
    let cluster = start(Some(&setup))?;
    let certs = made.lock().unwrap().clone().ok_or("no certificates made")?;
    let admin =
        format!("host={} port={} user={USER} dbname=postgres", cluster.dir.display(), cluster.port);
    let mut c = postgres::Client::connect(&admin, postgres::NoTls).map_err(|e| e.to_string())?;
    for sql in [
        "CREATE ROLE certuser LOGIN",
        "CREATE DATABASE cert_db OWNER certuser",
        "CREATE DATABASE tls_db",
    ] {
        c.batch_execute(sql).map_err(|e| format!("{sql}: {e:?}"))?;
    }
    Ok(TlsCluster {
        port: cluster.port,
        ca: certs.join("ca.crt"),
        other_ca: certs.join("other-ca.crt"),
        client_cert: certs.join("client.crt"),
        client_key: certs.join("client.key"),
        database: "tls_db".into(),
    })
}

/// A CA of its own in `dir`: `NAME.key` and the self-signed `NAME.crt` (P-256, 3 days,
/// CN `cn`), by `openssl`.
pub fn make_ca(openssl: &Path, dir: &Path, name: &str, cn: &str) -> Result<(), String> {
    let p = |file: String| dir.join(file).to_string_lossy().into_owned();
    run(
        &[],
        openssl,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            &p(format!("{name}.key")),
            "-out",
            &p(format!("{name}.crt")),
            "-days",
            "3",
            "-subj",
            &format!("/CN={cn}"),
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        ],
    )
}

/// A cluster's TLS set-up in `dir/certs` (made writable for the owner's key): the
/// certificates `make(certs, as_owner)` writes, `pg_hba.conf` holding `hba`; the server's
/// settings (`-c ...`: certificate, key, the rules, and `ca.crt` as the CA of client
/// certificates with `client_ca`).
fn tls_dir(
    dir: &Path,
    as_owner: &[String],
    make: &(impl Fn(&Path, &[String]) -> Result<(), String> + ?Sized),
    hba: &str,
    client_ca: bool,
) -> Result<(PathBuf, String), String> {
    let certs = dir.join("certs");
    std::fs::create_dir_all(&certs).map_err(|e| e.to_string())?;
    std::fs::set_permissions(&certs, std::os::unix::fs::PermissionsExt::from_mode(0o777))
        .map_err(|e| e.to_string())?;
    make(&certs, as_owner)?;
    let hba_file = certs.join("pg_hba.conf");
    std::fs::write(&hba_file, hba).map_err(|e| e.to_string())?;
    std::fs::set_permissions(&hba_file, std::os::unix::fs::PermissionsExt::from_mode(0o644))
        .map_err(|e| e.to_string())?;
    let c = |name: &str| certs.join(name).to_string_lossy().into_owned();
    let ca = if client_ca { format!(" -c ssl_ca_file={}", c("ca.crt")) } else { String::new() };
    let settings = format!(
        " -c ssl=on -c ssl_cert_file={} -c ssl_key_file={}{ca} -c hba_file={}",
        c("server.crt"),
        c("server.key"),
        c("pg_hba.conf")
    );
    Ok((certs, settings))
}

/// The certificates, by the openssl command: two CAs, the server's (for `localhost`,
/// its key the cluster owner's, 0600), and certuser's client certificate.
fn make_certificates(openssl: &Path, dir: &Path, as_owner: &[String]) -> Result<(), String> {
    let p = |name: &str| dir.join(name).to_string_lossy().into_owned();
    let ssl = |args: &[&str]| run(&[], openssl, args);
    for (ca, cn) in [("ca", "fixity test CA"), ("other-ca", "fixity other CA")] {
        make_ca(openssl, dir, ca, cn)?;
    }
    let leaf = |name: &str, cn: &str, ext: &str, owner: &[String]| -> Result<(), String> {
        std::fs::write(p(&format!("{name}.ext")), ext).map_err(|e| e.to_string())?;
        run(
            owner,
            openssl,
            &[
                "req",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:P-256",
                "-nodes",
                "-keyout",
                &p(&format!("{name}.key")),
                "-out",
                &p(&format!("{name}.csr")),
                "-subj",
                &format!("/CN={cn}"),
            ],
        )?;
        run(owner, Path::new("chmod"), &["600", &p(&format!("{name}.key"))])?;
        ssl(&[
            "x509",
            "-req",
            "-in",
            &p(&format!("{name}.csr")),
            "-CA",
            &p("ca.crt"),
            "-CAkey",
            &p("ca.key"),
            "-CAcreateserial",
            "-out",
            &p(&format!("{name}.crt")),
            "-days",
            "3",
            "-extfile",
            &p(&format!("{name}.ext")),
        ])
    };
    leaf(
        "server",
        "localhost",
        "subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n\
         keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n",
        as_owner,
    )?;
    leaf(
        "client",
        "certuser",
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n\
         extendedKeyUsage=clientAuth\n",
        &[],
    )?;
    // The certificates are public: readable by the server and by fixity.
    for name in ["ca.crt", "other-ca.crt", "server.crt", "client.crt"] {
        std::fs::set_permissions(
            dir.join(name),
            std::os::unix::fs::PermissionsExt::from_mode(0o644),
        )
        .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// A TLS cluster of one's own whose server certificate can be changed (for the matrix of
/// tests/pgtls_matrix.rs): over TCP it takes only TLS (superuser, password); database
/// `matrix_db`. Its certificates are in `certs`: `server.key` (the owner's, 0600, the
/// one key of every server certificate) and `server.crt`, which [`OwnTls::restart`]
/// makes the server read again.
pub struct OwnTls {
    pub port: u16,
    pub certs: PathBuf,
    cluster: &'static Cluster,
}

impl OwnTls {
    /// Restarts the server, so it serves the `server.crt` now in `certs`.
    pub fn restart(&self) -> Result<(), String> {
        let c = self.cluster;
        let data = c.dir.join("data").to_string_lossy().into_owned();
        let log = c.dir.join("log").to_string_lossy().into_owned();
        run(
            &c.as_owner,
            &c.bin.join("pg_ctl"),
            &["-D", &data, "-l", &log, "-w", "-m", "fast", "restart"],
        )
    }
}

/// Writes an [`OwnTls`]'s certificates in a directory, given the owner's command prefix.
pub type MakeCerts = dyn Fn(&Path, &[String]) -> Result<(), String>;

/// Starts an [`OwnTls`]: `make(certs, as_owner)` writes the certificates (at least
/// `server.key`, made as the owner with `as_owner`, and `server.crt`).
pub fn own_tls(make: &MakeCerts) -> Result<OwnTls, String> {
    let made: std::sync::Mutex<Option<PathBuf>> = std::sync::Mutex::new(None);
    let setup = |dir: &Path, as_owner: &[String]| -> Result<String, String> {
        let hba = "local all all trust\nhostssl all all 127.0.0.1/32 scram-sha-256\n";
        let (certs, settings) = tls_dir(dir, as_owner, make, hba, false)?;
        *made.lock().unwrap() = Some(certs);
        Ok(settings)
    };
    let cluster: &'static Cluster = Box::leak(Box::new(start(Some(&setup))?));
    let certs = made.lock().unwrap().clone().ok_or("no certificates made")?;
    let admin =
        format!("host={} port={} user={USER} dbname=postgres", cluster.dir.display(), cluster.port);
    let mut c = postgres::Client::connect(&admin, postgres::NoTls).map_err(|e| e.to_string())?;
    c.batch_execute("CREATE DATABASE matrix_db").map_err(|e| e.to_string())?;
    Ok(OwnTls { port: cluster.port, certs, cluster })
}
