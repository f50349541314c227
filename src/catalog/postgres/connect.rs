//! Connecting: the settings from the URL and the environment, and TLS through rustls.
//!
//! sslmode is libpq's: `disable` never encrypts, `prefer` (the default) encrypts when
//! the server offers it, `require` refuses a server that does not. As with libpq
//! without a root certificate, the server's certificate is not checked against an
//! authority: the connection is encrypted, and the network is trusted to reach the
//! right server. The handshake's signatures are still verified.

use super::PgError;
use super::url::{cause, mask, settings_noted};
use postgres::{Client, Config};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use std::sync::Arc;
use tokio_postgres_rustls::MakeRustlsConnect;

/// A catalog's connection settings, and its URL as messages show it.
#[derive(Clone)]
pub(crate) struct Target {
    config: Config,
    /// The URL, password masked.
    pub(crate) shown: String,
    /// Why the password file was not read, when it was not: said with a failed connection.
    passfile_note: Option<String>,
}

impl Target {
    /// The settings of `url`, completed from the process's environment.
    pub(crate) fn new(url: &str) -> Result<Target, PgError> {
        let shown = mask(url);
        let env = |name: &str| std::env::var(name).ok();
        match settings_noted(url, &env) {
            Ok((config, passfile_note)) => Ok(Target { config, shown, passfile_note }),
            Err(cause) => Err(PgError::Settings { catalog: shown, cause }),
        }
    }

    /// A new connection.
    pub(crate) fn connect(&self) -> Result<Client, PgError> {
        self.config.connect(tls()).map_err(|e| {
            let mut cause = cause(&e);
            if let Some(note) = &self.passfile_note {
                cause.push_str(&format!(" ({note})"));
            }
            PgError::Connect { catalog: self.shown.clone(), cause }
        })
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

/// The TLS connector (used only when sslmode asks for TLS and the server agrees).
fn tls() -> MakeRustlsConnect {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let verifier = Arc::new(Unchecked(provider.signature_verification_algorithms));
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("ring supports the default protocol versions")
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    MakeRustlsConnect::new(config)
}

/// libpq's `prefer` and `require`: any certificate is taken; the handshake's signatures
/// must still be the certificate's.
#[derive(Debug)]
struct Unchecked(WebPkiSupportedAlgorithms);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}
