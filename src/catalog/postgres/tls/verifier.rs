//! The server certificate check rustls is given: libpq's, by sslmode (see `tls`).

use super::chain::{self, Anchor, Crl};
use super::name;
use rustls::SignatureScheme;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, Error};
use std::sync::Arc;

/// What the chain is checked against: the roots (for webpki, which takes v3 server
/// certificates, and for `chain::walk`, which takes v1 ones and CAs') and the CRLs.
pub(super) struct Chain {
    /// rustls' verifier over the roots and CRLs (its host-name check is not used).
    pub(super) webpki: Arc<WebPkiServerVerifier>,
    pub(super) anchors: Vec<Anchor>,
    /// `None`: no CRL check (libpq's, when no CRL file or directory is in use).
    pub(super) crls: Option<Vec<Crl>>,
}

/// The server's certificate as the sslmode asks: not at all (`chain` none), its chain,
/// or its chain and host name (`host_name`, libpq's rules: `name`). The handshake's
/// signatures are always verified, with v1 certificates too.
pub(super) struct ServerCheck {
    pub(super) chain: Option<Chain>,
    pub(super) host_name: bool,
    pub(super) algorithms: WebPkiSupportedAlgorithms,
}

impl std::fmt::Debug for ServerCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerCheck")
            .field("chain", &self.chain.is_some())
            .field("host_name", &self.host_name)
            .finish()
    }
}

/// The host connected to, as given (tokio-postgres names the `host`, not `hostaddr`).
fn host_of(server_name: &ServerName<'_>) -> String {
    match server_name {
        ServerName::DnsName(d) => d.as_ref().to_string(),
        ServerName::IpAddress(ip) => std::net::IpAddr::from(*ip).to_string(),
        _ => String::new(),
    }
}

impl ServerCertVerifier for ServerCheck {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        let Some(chain) = &self.chain else { return Ok(ServerCertVerified::assertion()) };
        let leaf = chain::parse(end_entity)?;
        if chain::walked_here(&leaf) {
            let crls = chain.crls.as_deref();
            let leaf_parts = (end_entity.as_ref(), &leaf);
            chain::walk(&self.algorithms, &chain.anchors, crls, leaf_parts, intermediates, now)?;
        } else {
            // webpki checks the name last, after the chain: forgiving its verdict on the
            // name keeps the chain's check whole; libpq's name rules follow.
            match chain.webpki.verify_server_cert(
                end_entity,
                intermediates,
                server_name,
                ocsp_response,
                now,
            ) {
                Ok(_)
                | Err(Error::InvalidCertificate(
                    CertificateError::NotValidForName
                    | CertificateError::NotValidForNameContext { .. },
                )) => {}
                Err(e) => return Err(e),
            }
            chain::tls_key_usage(&leaf)?;
            // CRLs in use but none at all (a CRL directory without any): rustls then
            // checks nothing; OpenSSL finds no CRL for the certificate, and refuses.
            if chain.crls.as_ref().is_some_and(|c| c.is_empty()) {
                return Err(CertificateError::UnknownRevocationStatus.into());
            }
        }
        if !self.host_name {
            return Ok(ServerCertVerified::assertion());
        }
        let (sans, cn) = chain::names(&leaf)?;
        match name::names_host(&host_of(server_name), &sans, cn.as_deref()) {
            Ok(true) => Ok(ServerCertVerified::assertion()),
            Ok(false) => Err(CertificateError::NotValidForNameContext {
                expected: server_name.to_owned(),
                presented: name::shown(&sans, cn.as_deref()),
            }
            .into()),
            Err(why) => Err(Error::General(format!("server certificate not checked: {why}"))),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        match chain::parse(cert) {
            Ok(c) if chain::is_v1(&c) => {
                chain::handshake_signature(&self.algorithms, &c, message, dss, false)?;
                Ok(HandshakeSignatureValid::assertion())
            }
            _ => rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms),
        }
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        match chain::parse(cert) {
            Ok(c) if chain::is_v1(&c) => {
                chain::handshake_signature(&self.algorithms, &c, message, dss, true)?;
                Ok(HandshakeSignatureValid::assertion())
            }
            _ => rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms),
        }
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}
