//! Connecting: the settings from the URL and the environment, and TLS through rustls
//! (libpq's sslmode and certificates: see `tls`).

use super::PgError;
use super::tls::Tls;
use super::url::{cause, mask, settings_noted};
use postgres::{Client, Config};
use tokio_postgres_rustls::MakeRustlsConnect;

/// A catalog's connection settings, and its URL as messages show it.
#[derive(Clone)]
pub(crate) struct Target {
    config: Config,
    tls: Tls,
    /// The URL, password masked.
    pub(crate) shown: String,
    /// Why the password file was not read, when it was not: said with a failed connection.
    passfile_note: Option<String>,
}

/// A connection made to find where a directory's tree is ([`super::tree_roots`]), with the
/// schema version it read, kept for the store this process opens next on the same URL: a
/// run across a network then waits for one connection's start-up and schema checks, not
/// two (four round trips less).
static SPARE: std::sync::Mutex<Option<(String, Client, i64)>> = std::sync::Mutex::new(None);

/// Keeps `client` (on `url`, whose schema is at `version`) for [`take_spare`].
pub(crate) fn keep_spare(url: &str, client: Client, version: i64) {
    if let Ok(mut spare) = SPARE.lock() {
        *spare = Some((url.to_string(), client, version));
    }
}

/// The connection [`keep_spare`] kept for `url`, and its schema version, once.
pub(crate) fn take_spare(url: &str) -> Option<(Client, i64)> {
    let mut spare = SPARE.lock().ok()?;
    match spare.take() {
        Some((u, client, version)) if u == url && !client.is_closed() => Some((client, version)),
        _ => None,
    }
}

impl Target {
    /// The settings of `url`, completed from the process's environment.
    pub(crate) fn new(url: &str) -> Result<Target, PgError> {
        let shown = mask(url);
        let env = |name: &str| std::env::var(name).ok();
        match settings_noted(url, &env) {
            Ok(s) => {
                Ok(Target { config: s.config, tls: s.tls, shown, passfile_note: s.passfile_note })
            }
            Err(cause) => Err(PgError::Settings { catalog: shown, cause }),
        }
    }

    /// A new connection. With sslmode allow or prefer, one whose TLS fails (its
    /// certificate refused by the root file, say) is tried again without TLS, as libpq
    /// does.
    pub(crate) fn connect(&self) -> Result<Client, PgError> {
        let tls = MakeRustlsConnect::new((*self.tls.config).clone());
        let e = match self.config.connect(tls) {
            Ok(client) => return Ok(client),
            Err(e) => e,
        };
        let mut cause = cause(&e);
        if self.tls.fallback && is_tls(&cause) {
            let mut plain = self.config.clone();
            plain.ssl_mode(postgres::config::SslMode::Disable);
            match plain.connect(postgres::NoTls) {
                Ok(client) => return Ok(client),
                Err(e) => cause.push_str(&format!("; then without TLS: {}", super::url::cause(&e))),
            }
        }
        if let Some(note) = &self.passfile_note {
            cause.push_str(&format!(" ({note})"));
        }
        if cause.contains("client certificate") {
            cause.push_str(&format!(" ({})", self.tls.sent));
        } else if is_tls(&cause) {
            cause.push_str(&format!(" ({})", self.tls.checks));
        }
        Err(PgError::Connect { catalog: self.shown.clone(), cause })
    }

    /// A statement's error as the catalog's; one the server refused for want of a
    /// privilege (a role set up by `fixity catalog init-roles`) says so, as a write.
    pub(crate) fn query_error(&self, e: &postgres::Error) -> PgError {
        self.refusal(e, "write to the catalog")
    }

    /// A statement's error as the catalog's, `what` naming what was tried when the server
    /// refused it for want of a privilege: then the role is named, and what to do.
    pub(crate) fn refusal(&self, e: &postgres::Error, what: &str) -> PgError {
        let cause = cause(e);
        if e.code() != Some(&postgres::error::SqlState::INSUFFICIENT_PRIVILEGE) {
            return PgError::Query { catalog: self.shown.clone(), cause };
        }
        let role = self.config.get_user().unwrap_or("(this role)").to_string();
        let advice = super::error::advice(&cause);
        PgError::Refused {
            catalog: self.shown.clone(),
            role,
            what: what.to_string(),
            cause,
            advice,
        }
    }
}

/// Whether a connection's error is about encryption (the handshake, the server's
/// certificate, or a server that asks for TLS).
fn is_tls(cause: &str) -> bool {
    ["TLS", "certificate", "no encryption", "SSL"].iter().any(|w| cause.contains(w))
}
