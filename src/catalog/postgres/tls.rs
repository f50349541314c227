//! TLS to a PostgreSQL catalog, by libpq's rules (`sslmode`, `sslrootcert`, `sslcert`,
//! `sslkey`, `sslcrl`, `sslcrldir`), through rustls: what psql accepts is accepted, what
//! it refuses is refused (tests/pgtls_matrix.rs holds fixity to psql, certificate by
//! certificate, in every sslmode).
//!
//! - `disable` never encrypts; `allow` and `prefer` (the default) encrypt when the
//!   server offers it; `require` refuses a server that does not encrypt. The three check
//!   the server's certificate against the root certificate file when that file exists
//!   (libpq's rule, kept for compatibility with its old versions), and not otherwise;
//!   with `allow` and `prefer`, a connection whose TLS fails is tried again without TLS.
//! - `verify-ca` checks that the server's certificate chains to a root in `sslrootcert`
//!   (default `~/.postgresql/root.crt`, which must then exist), within its dates, X.509
//!   v1 certificates included (what PostgreSQL's "Creating Certificates" makes with
//!   `openssl x509 -req`); `verify-full` also checks that the certificate names the host
//!   connected to, by libpq's rules (`name`: the dNSName and iPAddress SANs, the common
//!   name when there is no SAN of the host's kind, a `*` only as a whole leftmost label).
//! - With a root file, the chain is also checked against the CRLs of `sslcrl` (default
//!   `~/.postgresql/root.crl`) and `sslcrldir` when they exist (`crl`).
//! - `sslrootcert=system` takes the system's trusted roots, and asks `verify-full` (the
//!   default with it; a weaker mode is refused, as libpq refuses it).
//! - A client certificate (`sslcert`, default `~/.postgresql/postgresql.crt`) is sent
//!   when its file exists, with its key (`sslkey`, default
//!   `~/.postgresql/postgresql.key`), which must not be readable by others (0600, or 0640
//!   when root owns it).
//!
//! Unix-domain sockets never carry TLS (PostgreSQL serves none there; libpq ignores
//! sslmode for them).
//!
//! Why rustls with checks of fixity's own, not OpenSSL as libpq: v3 certificates go to
//! webpki (rustls' verifier, CRLs included) and only what it refuses or does otherwise
//! is done here (v1 chains: `chain`; libpq's host names: `name`; CRL files and
//! directories: `crl`), with `x509-cert`, which the build already compiled, with the
//! same features, for tokio-postgres-rustls. Measured (no release build was made):
//! Cargo.lock holds 355 packages before and after, its one change is fixity's own list
//! of dependencies; the debug binary (`cargo build --bin fixity`, with debug info) grew
//! by 2.2 MB, 0.47% (468,746,920 to 470,971,440 bytes); the static builds stay static.
//! OpenSSL (the `openssl` crate) would be libpq's code exactly, but adds `openssl`,
//! `openssl-sys`, `openssl-macros`, `foreign-types` (and `openssl-src` with a C build of
//! OpenSSL for each musl target, to stay static), a second TLS stack beside the rustls
//! one the cloud stores use. The price of our own: `tests/pgtls_matrix.rs` must hold
//! the two to psql's verdicts.

use postgres::config::SslMode;
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, CertificateRevocationListDer, PrivateKeyDer};
use rustls::{ClientConfig, RootCertStore};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// libpq's sslmode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Disable,
    Allow,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl Mode {
    fn parse(text: &str) -> Result<Mode, String> {
        Ok(match text {
            "disable" => Mode::Disable,
            "allow" => Mode::Allow,
            "prefer" => Mode::Prefer,
            "require" => Mode::Require,
            "verify-ca" => Mode::VerifyCa,
            "verify-full" => Mode::VerifyFull,
            _ => {
                return Err(format!(
                    "invalid sslmode {text:?}: disable, allow, prefer, require, verify-ca or \
                     verify-full"
                ));
            }
        })
    }

    fn name(self) -> &'static str {
        match self {
            Mode::Disable => "disable",
            Mode::Allow => "allow",
            Mode::Prefer => "prefer",
            Mode::Require => "require",
            Mode::VerifyCa => "verify-ca",
            Mode::VerifyFull => "verify-full",
        }
    }
}

/// What the URL, the service file and the environment ask for (the first that names a
/// setting wins, in that order).
#[derive(Default, Debug)]
pub(super) struct Asked {
    pub(super) mode: Option<String>,
    pub(super) rootcert: Option<String>,
    pub(super) cert: Option<String>,
    pub(super) key: Option<String>,
    pub(super) crl: Option<String>,
    pub(super) crldir: Option<String>,
}

/// How a catalog's connections are encrypted and checked.
#[derive(Clone)]
pub(crate) struct Tls {
    /// What the client asks of the server (whether TLS is tried, and required).
    pub(super) wire: SslMode,
    /// The rustls settings, when TLS may be used.
    pub(super) config: Arc<ClientConfig>,
    /// What is checked, in words: said with a connection that fails in the handshake.
    pub(super) checks: String,
    /// The client certificate sent, in words: said when the server asks for one.
    pub(super) sent: String,
    /// sslmode allow or prefer: a connection whose TLS fails is tried without (libpq's).
    pub(super) fallback: bool,
}

/// What is checked of the server's certificate.
enum Check {
    /// Nothing but the handshake's signatures.
    Nothing,
    /// Its chain to one of these roots.
    Chain(Roots),
    /// Its chain, and the host name.
    Full(Roots),
}

/// The trusted roots (as rustls takes them, and their certificates), and the CRLs in use
/// (`None`: no CRL check).
struct Roots {
    store: RootCertStore,
    certs: Vec<CertificateDer<'static>>,
    crls: Option<Vec<CertificateRevocationListDer<'static>>>,
}

/// libpq's directory of certificates under [`CERT_HOME`]: `~/.postgresql` on Unix,
/// `%APPDATA%\postgresql` on Windows.
pub(crate) const CERT_DIR: &str = if cfg!(windows) { "postgresql" } else { ".postgresql" };
/// The variable naming the directory [`CERT_DIR`] is in.
pub(crate) const CERT_HOME: &str = if cfg!(windows) { "APPDATA" } else { "HOME" };

/// The TLS settings `asked` gives, by libpq's rules; `home` is where `~/.postgresql`
/// is; `sockets_only`: every host is a Unix-domain socket. An error is a sentence.
pub(super) fn resolve(
    asked: &Asked,
    home: Option<&Path>,
    sockets_only: bool,
) -> Result<Tls, String> {
    let system = asked.rootcert.as_deref() == Some("system");
    let mode = match &asked.mode {
        Some(m) => Mode::parse(m)?,
        None if system => Mode::VerifyFull,
        None => Mode::Prefer,
    };
    if system && mode != Mode::VerifyFull {
        return Err(format!(
            "weak sslmode \"{}\" may not be used with sslrootcert=system (use \"verify-full\")",
            mode.name()
        ));
    }
    let in_home = |name: &str| home.map(|h| h.join(CERT_DIR).join(name));
    let rootfile = match asked.rootcert.as_deref() {
        Some("system") => None,
        Some(p) if !p.is_empty() => Some(PathBuf::from(p)),
        _ => in_home("root.crt"),
    };
    let present = rootfile.as_deref().is_some_and(|f| f.exists());
    let verifying = matches!(mode, Mode::VerifyCa | Mode::VerifyFull);
    if verifying && !system && !present {
        let shown = rootfile.as_deref().map_or("~/.postgresql/root.crt".into(), shown_path);
        return Err(format!(
            "root certificate file \"{shown}\" does not exist; either provide the file, use \
             the system's trusted roots with sslrootcert=system, or change sslmode to \
             disable server certificate verification"
        ));
    }
    // libpq reads CRLs with a root file (not with the system's roots): sslcrl, else
    // ~/.postgresql/root.crl when sslcrldir is not given either.
    let given = |v: &Option<String>| v.as_deref().filter(|v| !v.is_empty()).map(PathBuf::from);
    let crldir = given(&asked.crldir);
    let crlfile = given(&asked.crl).or_else(|| crldir.is_none().then(|| in_home("root.crl"))?);
    let checking = mode != Mode::Disable && present;
    let crls = match checking && !system {
        true => crl::load(crlfile.as_deref(), crldir.as_deref())?,
        false => None,
    };
    let crls_from = match (&crls, &crlfile, &crldir) {
        (None, _, _) => String::new(),
        (Some(_), Some(f), Some(d)) => {
            format!(" and the CRLs in {} and {}", shown_path(f), shown_path(d))
        }
        (Some(_), Some(f), None) => format!(" and the CRLs in {}", shown_path(f)),
        (Some(_), None, Some(d)) => format!(" and the CRLs in {}", shown_path(d)),
        (Some(_), None, None) => String::new(),
    };
    // libpq checks the chain whenever a root file exists, in allow, prefer and require
    // too (and, in allow and prefer, tries again without TLS when the check fails).
    let check = match mode {
        Mode::Disable => Check::Nothing,
        Mode::Allow | Mode::Prefer | Mode::Require if !present => Check::Nothing,
        Mode::Allow | Mode::Prefer | Mode::Require | Mode::VerifyCa => {
            Check::Chain(roots(rootfile.as_deref(), crls)?)
        }
        Mode::VerifyFull => Check::Full(roots(rootfile.as_deref(), crls)?),
    };
    let from = match &rootfile {
        _ if system => "the system's trusted roots".to_string(),
        Some(f) => format!("the roots in {}{crls_from}", shown_path(f)),
        None => String::new(),
    };
    let checks = match &check {
        Check::Nothing if mode == Mode::Disable => "sslmode=disable: not encrypted".to_string(),
        Check::Nothing => {
            format!("sslmode={}: the server's certificate is not checked", mode.name())
        }
        Check::Chain(_) => format!(
            "sslmode={}: the server's certificate is checked against {from}, not its host \
             name{}",
            mode.name(),
            match mode {
                Mode::Allow | Mode::Prefer => " (on failure, tried again without TLS)",
                _ => "",
            }
        ),
        Check::Full(_) => format!(
            "sslmode={}: the server's certificate is checked against {from}, and its host name",
            mode.name()
        ),
    };
    let cert = asked.cert.as_deref().map(PathBuf::from).or_else(|| in_home("postgresql.crt"));
    let client = client_identity(
        cert.clone(),
        asked.key.as_deref().map(PathBuf::from).or_else(|| in_home("postgresql.key")),
    )?;
    let sent = match (&client, &cert) {
        (Some(_), Some(c)) => format!("the client certificate in {} was sent", shown_path(c)),
        _ => "no client certificate was sent: give one with sslcert and sslkey (or PGSSLCERT, \
              PGSSLKEY, or ~/.postgresql/postgresql.crt and .key)"
            .to_string(),
    };
    let wire = match mode {
        _ if sockets_only => SslMode::Disable,
        Mode::Disable => SslMode::Disable,
        Mode::Allow | Mode::Prefer => SslMode::Prefer,
        Mode::Require | Mode::VerifyCa | Mode::VerifyFull => SslMode::Require,
    };
    let fallback = matches!(mode, Mode::Allow | Mode::Prefer) && !sockets_only;
    Ok(Tls { wire, config: Arc::new(client_config(check, client)?), checks, sent, fallback })
}

/// The trusted roots: the file's certificates, or (`None`) the system's; with `crls`.
fn roots(
    file: Option<&Path>,
    crls: Option<Vec<CertificateRevocationListDer<'static>>>,
) -> Result<Roots, String> {
    let mut store = RootCertStore::empty();
    let mut kept = Vec::new();
    match file {
        Some(f) => {
            let shown = shown_path(f);
            let certs = CertificateDer::pem_file_iter(f)
                .map_err(|e| format!("could not read root certificate file \"{shown}\": {e}"))?;
            for cert in certs {
                let cert = cert.map_err(|e| {
                    format!("could not read root certificate file \"{shown}\": {e}")
                })?;
                store.add(cert.clone()).map_err(|e| {
                    format!("root certificate file \"{shown}\" holds a bad certificate: {e}")
                })?;
                kept.push(cert);
            }
            if store.is_empty() {
                return Err(format!("root certificate file \"{shown}\" holds no certificate"));
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            kept.clone_from(&found.certs);
            let (added, _) = store.add_parsable_certificates(found.certs);
            if added == 0 {
                let why = found.errors.first().map(|e| format!(": {e}")).unwrap_or_default();
                return Err(format!("sslrootcert=system: no trusted roots found{why}"));
            }
        }
    }
    Ok(Roots { store, certs: kept, crls })
}

/// The client certificate chain and key, when the certificate file exists (libpq sends
/// none otherwise).
fn client_identity(
    cert: Option<PathBuf>,
    key: Option<PathBuf>,
) -> Result<Option<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)>, String> {
    let Some(cert) = cert.filter(|c| c.exists()) else { return Ok(None) };
    let shown = shown_path(&cert);
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&cert)
        .and_then(|certs| certs.collect::<Result<_, _>>())
        .map_err(|e| format!("could not read certificate file \"{shown}\": {e}"))?;
    if chain.is_empty() {
        return Err(format!("certificate file \"{shown}\" holds no certificate"));
    }
    let Some(key) = key.filter(|k| k.exists()) else {
        return Err(format!(
            "certificate present, but not private key file (sslkey) for \"{shown}\""
        ));
    };
    key_permissions(&key)?;
    let key_shown = shown_path(&key);
    let key = PrivateKeyDer::from_pem_file(&key).map_err(|e| {
        format!(
            "could not load private key file \"{key_shown}\": {e} (PEM PKCS#8, PKCS#1 or SEC1 \
             keys without a passphrase are read)"
        )
    })?;
    Ok(Some((chain, key)))
}

/// libpq's check of a private key file: a plain file that the group and others cannot
/// read (0600 or less), or, when root owns it, that others cannot read and the group only
/// read (0640 or less).
fn key_permissions(key: &Path) -> Result<(), String> {
    use crate::sys::MetadataExt;
    let shown = shown_path(key);
    let meta = std::fs::metadata(key)
        .map_err(|e| format!("could not read private key file \"{shown}\": {e}"))?;
    if !meta.is_file() {
        return Err(format!("private key file \"{shown}\" is not a regular file"));
    }
    let mode = meta.mode();
    let loose = if meta.uid() == 0 { mode & 0o037 != 0 } else { mode & 0o077 != 0 };
    if loose {
        return Err(format!(
            "private key file \"{shown}\" has group or world access; file must have \
             permissions u=rw (0600) or less if owned by the current user, or permissions \
             u=rw,g=r (0640) or less if owned by root"
        ));
    }
    Ok(())
}

fn client_config(
    check: Check,
    client: Option<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)>,
) -> Result<ClientConfig, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let (chain, host_name) = match check {
        Check::Nothing => (None, false),
        Check::Chain(roots) => (Some(chain(roots, &provider)?), false),
        Check::Full(roots) => (Some(chain(roots, &provider)?), true),
    };
    let algorithms = provider.signature_verification_algorithms;
    let verifier = Arc::new(verifier::ServerCheck { chain, host_name, algorithms });
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    match client {
        None => Ok(builder.with_no_client_auth()),
        Some((chain, key)) => builder
            .with_client_auth_cert(chain, key)
            .map_err(|e| format!("the client certificate and key do not make a pair: {e}")),
    }
}

/// The chain's check: webpki over the roots and CRLs (for v3 server certificates; a CRL
/// speaking for every certificate but the root, and not expired, as OpenSSL asks for
/// libpq), and the same for `chain::walk` (v1 ones, and CAs' serving as servers').
fn chain(roots: Roots, provider: &Arc<CryptoProvider>) -> Result<verifier::Chain, String> {
    let anchors = chain::anchors(&roots.certs);
    let mut builder =
        WebPkiServerVerifier::builder_with_provider(Arc::new(roots.store), provider.clone());
    let crls = match roots.crls {
        None => None,
        Some(ders) => {
            let read = chain::crls(&ders)?;
            builder = builder.with_crls(ders).enforce_revocation_expiration();
            Some(read)
        }
    };
    let webpki = builder.build().map_err(|e| match e {
        rustls::client::VerifierBuilderError::InvalidCrl(e) => {
            format!("a certificate revocation list cannot be used: {e:?}")
        }
        e => format!("the trusted roots cannot be used: {e}"),
    })?;
    Ok(verifier::Chain { webpki, anchors, crls })
}

fn shown_path(p: &Path) -> String {
    p.display().to_string()
}

mod chain;
mod crl;
mod name;
#[cfg(test)]
mod tests;
mod verifier;
