//! What webpki does not do for libpq's certificates: X.509 v1 certificates (what
//! `openssl x509 -req` makes without extensions, as PostgreSQL's "Creating Certificates"
//! does), which webpki refuses outright (`UnsupportedCertVersion`) but OpenSSL, and so
//! libpq, takes; and the names a certificate presents, read for libpq's host-name rules
//! (`name`).
//!
//! A v1 server certificate's chain, or a CA's certificate's serving as the server's (a
//! self-signed one, as PostgreSQL's documentation makes first, which webpki refuses as
//! `CaUsedAsEndEntity`), is walked here as OpenSSL walks it: the server certificate's
//! purpose (extendedKeyUsage serverAuth and a keyUsage for TLS when present, no unknown
//! critical extension), each certificate's signature by its issuer (a root from the
//! root file, or an intermediate the server sent that is a CA: basicConstraints cA),
//! its validity dates, and, when CRLs are in use, a CRL signed by its issuer that does not list it (none found: refused, as
//! OpenSSL's `X509_V_FLAG_CRL_CHECK_ALL` refuses; an expired CRL: refused). A v3
//! certificate goes to webpki (rustls' own verifier), which checks the same.
//! Signatures are verified by rustls' crypto provider (ring), algorithm by algorithm
//! as webpki does.

use super::name::San;
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::{CertificateDer, CertificateRevocationListDer, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, Error, PeerMisbehaved, SignatureScheme};
use x509_cert::crl::CertificateList;
use x509_cert::der::asn1::{AnyRef, BitStringRef};
use x509_cert::der::oid::{AssociatedOid, ObjectIdentifier};
use x509_cert::der::{Decode, Encode, Reader, SliceReader};
use x509_cert::ext::pkix::name::GeneralName;
use x509_cert::ext::pkix::{BasicConstraints, ExtendedKeyUsage, KeyUsage, SubjectAltName};
use x509_cert::name::Name;
use x509_cert::spki::SubjectPublicKeyInfoOwned;
use x509_cert::{Certificate, Version};

/// The subject's commonName attribute.
const COMMON_NAME: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.4.3");

/// The extendedKeyUsage purpose of a TLS server.
const SERVER_AUTH: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.5.5.7.3.1");

/// The longest chain walked (OpenSSL's default depth is 100; real chains are short).
const MAX_DEPTH: usize = 8;

/// A certificate: its DER and what is read of it.
pub(super) fn parse(der: &[u8]) -> Result<Certificate, CertificateError> {
    Certificate::from_der(der).map_err(|_| CertificateError::BadEncoding)
}

/// Whether a certificate is X.509 v1 (no extensions: webpki refuses it).
pub(super) fn is_v1(cert: &Certificate) -> bool {
    cert.tbs_certificate.version == Version::V1
}

/// Whether a server certificate's chain is walked here, not by webpki: a v1 one, or a
/// CA's (basicConstraints cA: what `openssl req -x509` makes, PostgreSQL's self-signed
/// server certificate, its own root), which webpki refuses as a server's
/// (`CaUsedAsEndEntity`) and OpenSSL takes.
pub(super) fn walked_here(cert: &Certificate) -> bool {
    is_v1(cert) || is_ca(cert)
}

/// OpenSSL's checks of a server certificate's own extensions (its `ssl_server` purpose):
/// no critical extension it does not know, an extendedKeyUsage (when present) with
/// serverAuth, a keyUsage (when present) for TLS.
fn server_purpose(cert: &Certificate) -> Result<(), CertificateError> {
    const KNOWN: [&str; 7] = [
        "2.5.29.19", // basicConstraints
        "2.5.29.15", // keyUsage
        "2.5.29.37", // extendedKeyUsage
        "2.5.29.17", // subjectAltName
        "2.5.29.14", // subjectKeyIdentifier
        "2.5.29.35", // authorityKeyIdentifier
        "2.5.29.32", // certificatePolicies
    ];
    let exts = cert.tbs_certificate.extensions.as_deref().unwrap_or_default();
    if exts.iter().any(|e| e.critical && !KNOWN.contains(&e.extn_id.to_string().as_str())) {
        return Err(CertificateError::UnhandledCriticalExtension);
    }
    if let Some(eku) = extension::<ExtendedKeyUsage>(cert)?
        && !eku.0.contains(&SERVER_AUTH)
    {
        return Err(CertificateError::InvalidPurpose);
    }
    tls_key_usage(cert)
}

/// OpenSSL's check of a server certificate's keyUsage, when it has one: it must allow
/// TLS (digitalSignature, keyEncipherment or keyAgreement). webpki does not look.
pub(super) fn tls_key_usage(cert: &Certificate) -> Result<(), CertificateError> {
    match extension::<KeyUsage>(cert)? {
        Some(ku) if !(ku.digital_signature() || ku.key_encipherment() || ku.key_agreement()) => {
            Err(CertificateError::InvalidPurpose)
        }
        _ => Ok(()),
    }
}

/// A trusted root: its subject and key.
pub(super) struct Anchor {
    subject: Name,
    key: SubjectPublicKeyInfoOwned,
}

/// The roots of `certs` that parse (a root file's were all parsed by rustls before).
pub(super) fn anchors(certs: &[CertificateDer<'_>]) -> Vec<Anchor> {
    certs
        .iter()
        .filter_map(|c| parse(c).ok())
        .map(|c| Anchor {
            subject: c.tbs_certificate.subject,
            key: c.tbs_certificate.subject_public_key_info,
        })
        .collect()
}

/// A CRL, read, and its DER (for its signature).
pub(super) struct Crl {
    der: Vec<u8>,
    list: CertificateList,
}

/// The CRLs, read; `Err` is a sentence naming what could not be read.
pub(super) fn crls(ders: &[CertificateRevocationListDer<'_>]) -> Result<Vec<Crl>, String> {
    ders.iter()
        .map(|d| {
            let list = CertificateList::from_der(d)
                .map_err(|e| format!("a certificate revocation list cannot be read: {e}"))?;
            Ok(Crl { der: d.to_vec(), list })
        })
        .collect()
}

/// What a signed structure (certificate, CRL) signs, with which algorithm (the
/// AlgorithmIdentifier's contents, as rustls names algorithms) and the signature.
struct Signed<'a> {
    tbs: &'a [u8],
    algorithm: &'a [u8],
    signature: &'a [u8],
}

fn signed(der: &[u8]) -> Result<Signed<'_>, CertificateError> {
    let read = || -> x509_cert::der::Result<Signed<'_>> {
        let mut r = SliceReader::new(der)?;
        let s = r.sequence(|r| {
            let tbs = r.tlv_bytes()?;
            let algorithm = AnyRef::decode(r)?.value();
            let signature = BitStringRef::decode(r)?.raw_bytes();
            Ok(Signed { tbs, algorithm, signature })
        })?;
        r.finish(s)
    };
    read().map_err(|_| CertificateError::BadEncoding)
}

/// A key's algorithm (the AlgorithmIdentifier's contents) and its bits.
fn key_parts(key: &SubjectPublicKeyInfoOwned) -> Result<(Vec<u8>, &[u8]), CertificateError> {
    let der = key.algorithm.to_der().map_err(|_| CertificateError::BadEncoding)?;
    let algorithm = AnyRef::from_der(&der).map_err(|_| CertificateError::BadEncoding)?.value();
    Ok((algorithm.to_vec(), key.subject_public_key.raw_bytes()))
}

/// Whether `key` made `signed`'s signature, by an algorithm of `algs`.
fn verify_signed(
    algs: &WebPkiSupportedAlgorithms,
    signed: &Signed<'_>,
    key: &SubjectPublicKeyInfoOwned,
) -> Result<(), CertificateError> {
    let (key_algorithm, bits) = key_parts(key)?;
    let mut known = false;
    for alg in algs.all {
        if alg.signature_alg_id().as_ref() == signed.algorithm
            && alg.public_key_alg_id().as_ref() == key_algorithm.as_slice()
        {
            known = true;
            if alg.verify_signature(bits, signed.tbs, signed.signature).is_ok() {
                return Ok(());
            }
        }
    }
    match known {
        true => Err(CertificateError::BadSignature),
        false => Err(CertificateError::UnsupportedSignatureAlgorithmContext {
            signature_algorithm_id: signed.algorithm.to_vec(),
            supported_algorithms: algs.all.iter().map(|a| a.signature_alg_id()).collect(),
        }),
    }
}

/// A handshake's signature by a v1 certificate's key (rustls' own check parses the
/// certificate with webpki, which refuses v1): the scheme must be one of `algs`, and one
/// for TLS 1.3 when `tls13`.
pub(super) fn handshake_signature(
    algs: &WebPkiSupportedAlgorithms,
    cert: &Certificate,
    message: &[u8],
    dss: &DigitallySignedStruct,
    tls13: bool,
) -> Result<(), Error> {
    if tls13 && !in_tls13(dss.scheme) {
        return Err(PeerMisbehaved::SignedHandshakeWithUnadvertisedSigScheme.into());
    }
    let (key_algorithm, bits) = key_parts(&cert.tbs_certificate.subject_public_key_info)?;
    let candidates = algs
        .mapping
        .iter()
        .find(|(scheme, _)| *scheme == dss.scheme)
        .map(|(_, a)| *a)
        .ok_or(PeerMisbehaved::SignedHandshakeWithUnadvertisedSigScheme)?;
    let fits = candidates.iter().filter(|a| a.public_key_alg_id().as_ref() == key_algorithm);
    for alg in fits {
        if alg.verify_signature(bits, message, dss.signature()).is_ok() {
            return Ok(());
        }
    }
    Err(CertificateError::BadSignature.into())
}

/// Whether TLS 1.3 signs handshakes with `scheme` (RFC 8446 4.2.3: no PKCS#1 v1.5, no
/// SHA-1).
fn in_tls13(scheme: SignatureScheme) -> bool {
    use SignatureScheme::*;
    matches!(
        scheme,
        ECDSA_NISTP256_SHA256
            | ECDSA_NISTP384_SHA384
            | ECDSA_NISTP521_SHA512
            | RSA_PSS_SHA256
            | RSA_PSS_SHA384
            | RSA_PSS_SHA512
            | ED25519
            | ED448
    )
}

/// A certificate's validity dates against `now`.
fn dates(cert: &Certificate, now: UnixTime) -> Result<(), CertificateError> {
    let v = &cert.tbs_certificate.validity;
    let not_before = UnixTime::since_unix_epoch(v.not_before.to_unix_duration());
    let not_after = UnixTime::since_unix_epoch(v.not_after.to_unix_duration());
    if now < not_before {
        return Err(CertificateError::NotValidYetContext { time: now, not_before });
    }
    if now > not_after {
        return Err(CertificateError::ExpiredContext { time: now, not_after });
    }
    Ok(())
}

/// Whether a certificate may issue others: basicConstraints with cA.
fn is_ca(cert: &Certificate) -> bool {
    extension::<BasicConstraints>(cert).ok().flatten().is_some_and(|b| b.ca)
}

/// An extension of the certificate, decoded, if present.
fn extension<'a, T: AssociatedOid + Decode<'a>>(
    cert: &'a Certificate,
) -> Result<Option<T>, CertificateError> {
    let Some(exts) = &cert.tbs_certificate.extensions else { return Ok(None) };
    match exts.iter().find(|e| e.extn_id == T::OID) {
        None => Ok(None),
        Some(e) => T::from_der(e.extn_value.as_bytes())
            .map(Some)
            .map_err(|_| CertificateError::BadEncoding),
    }
}

/// The names libpq reads of a certificate: its dNSName and iPAddress SANs, in order, and
/// its subject's first commonName (the value's bytes, as OpenSSL hands them to libpq).
pub(super) fn names(cert: &Certificate) -> Result<(Vec<San>, Option<Vec<u8>>), CertificateError> {
    let sans = match extension::<SubjectAltName>(cert)? {
        None => Vec::new(),
        Some(SubjectAltName(names)) => names
            .into_iter()
            .filter_map(|n| match n {
                GeneralName::DnsName(d) => Some(San::Dns(d.as_bytes().to_vec())),
                GeneralName::IpAddress(a) => Some(San::Ip(a.as_bytes().to_vec())),
                _ => None,
            })
            .collect(),
    };
    let cn = cert
        .tbs_certificate
        .subject
        .0
        .iter()
        .flat_map(|rdn| rdn.0.iter())
        .find(|atv| atv.oid == COMMON_NAME)
        .map(|atv| atv.value.value().to_vec());
    Ok((sans, cn))
}

/// A server certificate's chain (`leaf`, then the intermediates the server sent) to
/// one of `anchors`, checked at `now`; with `crls` (`None`: no CRL check), no certificate
/// of it revoked.
pub(super) fn walk(
    algs: &WebPkiSupportedAlgorithms,
    anchors: &[Anchor],
    crls: Option<&[Crl]>,
    leaf: (&[u8], &Certificate),
    intermediates: &[CertificateDer<'_>],
    now: UnixTime,
) -> Result<(), CertificateError> {
    let sent: Vec<(&[u8], Certificate)> =
        intermediates.iter().filter_map(|d| Some((d.as_ref(), parse(d).ok()?))).collect();
    let (mut der, mut cert) = leaf;
    server_purpose(cert)?;
    for _ in 0..MAX_DEPTH {
        dates(cert, now)?;
        let s = signed(der)?;
        let issuer = &cert.tbs_certificate.issuer;
        let mut failed = CertificateError::UnknownIssuer;
        for a in anchors.iter().filter(|a| &a.subject == issuer) {
            match verify_signed(algs, &s, &a.key) {
                Ok(()) => return not_revoked(algs, crls, cert, &a.key, now),
                Err(e) => failed = e,
            }
        }
        let next = sent.iter().find(|(_, c)| {
            &c.tbs_certificate.subject == issuer
                && is_ca(c)
                && verify_signed(algs, &s, &c.tbs_certificate.subject_public_key_info).is_ok()
        });
        let Some((next_der, next)) = next else { return Err(failed) };
        not_revoked(algs, crls, cert, &next.tbs_certificate.subject_public_key_info, now)?;
        (der, cert) = (next_der, next);
    }
    Err(CertificateError::UnknownIssuer)
}

/// `cert` against the CRLs its issuer (whose key is `key`) signed: at least one must be
/// found, none expired, none listing it.
fn not_revoked(
    algs: &WebPkiSupportedAlgorithms,
    crls: Option<&[Crl]>,
    cert: &Certificate,
    key: &SubjectPublicKeyInfoOwned,
    now: UnixTime,
) -> Result<(), CertificateError> {
    let Some(crls) = crls else { return Ok(()) };
    let serial = cert.tbs_certificate.serial_number.as_bytes();
    let mut found = false;
    for crl in crls.iter().filter(|c| c.list.tbs_cert_list.issuer == cert.tbs_certificate.issuer) {
        if verify_signed(algs, &signed(&crl.der)?, key).is_err() {
            continue;
        }
        let tbs = &crl.list.tbs_cert_list;
        if let Some(next) = &tbs.next_update {
            let next_update = UnixTime::since_unix_epoch(next.to_unix_duration());
            if now > next_update {
                return Err(CertificateError::ExpiredRevocationListContext {
                    time: now,
                    next_update,
                });
            }
        }
        let revoked = tbs.revoked_certificates.as_deref().unwrap_or_default();
        if revoked.iter().any(|r| r.serial_number.as_bytes() == serial) {
            return Err(CertificateError::Revoked);
        }
        found = true;
    }
    match found {
        true => Ok(()),
        false => Err(CertificateError::UnknownRevocationStatus),
    }
}

#[cfg(test)]
mod tests;
