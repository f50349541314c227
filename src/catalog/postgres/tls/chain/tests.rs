//! `chain` against fixtures made with `openssl` (valid for 100 years from 2026-11-28): a
//! CA, another CA of the same name, and by the CA with `openssl ca`: a v1 server
//! certificate (serial 0x1000), a v1 one its CRL revokes (0x1001), and a v3 one with
//! SANs (DNS:a.example.test, IP:127.0.0.1); all for CN=db.example.test.

use super::*;
use rustls::pki_types::pem::PemObject;

const CA: &str = "-----BEGIN CERTIFICATE-----
MIIBkTCCATegAwIBAgIUAumRp1MpSsbu89LPNnK85aNdkYwwCgYIKoZIzj0EAwIw
FTETMBEGA1UEAwwKZml4dHVyZSBDQTAgFw0yNjExMjgyMDA1NDJaGA8yMTI2MTEw
NDIwMDU0MlowFTETMBEGA1UEAwwKZml4dHVyZSBDQTBZMBMGByqGSM49AgEGCCqG
SM49AwEHA0IABCZswS7oX8m8fp/YdGjE1j5vVqoqlFAxY9Hph4q92uzOdIhr26MN
6uzaU4f8exr3b+8N+9qXhRdDh9Lk5a+ERJ+jYzBhMB0GA1UdDgQWBBQiScsKpzUK
H0A+kxJxG9+GP9QwwzAfBgNVHSMEGDAWgBQiScsKpzUKH0A+kxJxG9+GP9QwwzAP
BgNVHRMBAf8EBTADAQH/MA4GA1UdDwEB/wQEAwIBBjAKBggqhkjOPQQDAgNIADBF
AiBnup5hVm/iPTzR8qZpqUgyP4RE0QEth8H1xs87R9I4aAIhANJZCKhLZz9dbjeJ
2ZKzP6+SkMNg7hbCYY5+JC16Bg0K
-----END CERTIFICATE-----";
const OTHER_CA: &str = "-----BEGIN CERTIFICATE-----
MIIBkjCCATegAwIBAgIUbiMzztv2ClPldHyojxH3EkcDNXowCgYIKoZIzj0EAwIw
FTETMBEGA1UEAwwKZml4dHVyZSBDQTAgFw0yNjExMjgyMDA1NDJaGA8yMTI2MTEw
NDIwMDU0MlowFTETMBEGA1UEAwwKZml4dHVyZSBDQTBZMBMGByqGSM49AgEGCCqG
SM49AwEHA0IABNeuQuDnHEucwyhVFFcGKa6wuU/zrVFzWdUr8Z/fTn9oIfXAOVWx
e7z112/5PMnFMo3eA5uxFt49DQndfcA+r4ajYzBhMB0GA1UdDgQWBBTEkz2S3Dpa
hcDeYgzWrdLsaIqqwDAfBgNVHSMEGDAWgBTEkz2S3DpahcDeYgzWrdLsaIqqwDAP
BgNVHRMBAf8EBTADAQH/MA4GA1UdDwEB/wQEAwIBBjAKBggqhkjOPQQDAgNJADBG
AiEAniFn3Lsg83dw38/MM8BD7OG0y4aZJouQFYgJiZtC2AUCIQCpxkuOpjHl67Wb
96MWPH06IWtGmdcnHOSFGCgytbAWpQ==
-----END CERTIFICATE-----";
const V1: &str = "-----BEGIN CERTIFICATE-----
MIIBGjCBwAICEAAwCgYIKoZIzj0EAwIwFTETMBEGA1UEAwwKZml4dHVyZSBDQTAg
Fw0yNjExMjgyMDA1NDJaGA8yMTI2MTEwNDIwMDU0MlowGjEYMBYGA1UEAwwPZGIu
ZXhhbXBsZS50ZXN0MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEIWVp6wb2SQIg
YcNFltbtwVL4Et8D7473pCl7NhyM8BF1xFMMFR5+yO7l3L9DRj3//CySKf5AU5Rg
OUVSoYYWmTAKBggqhkjOPQQDAgNJADBGAiEAuUDWk/AY0XTomQtDNoxxVih1eVub
xJM0y6X7G03UjtwCIQCzXkD02PUsdMKPPu2vWqaMsrrFblL0PxZnv/m2TzNmaA==
-----END CERTIFICATE-----";
const REVOKED: &str = "-----BEGIN CERTIFICATE-----
MIIBGTCBwAICEAEwCgYIKoZIzj0EAwIwFTETMBEGA1UEAwwKZml4dHVyZSBDQTAg
Fw0yNjExMjgyMDA1NDJaGA8yMTI2MTEwNDIwMDU0MlowGjEYMBYGA1UEAwwPZGIu
ZXhhbXBsZS50ZXN0MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEIWVp6wb2SQIg
YcNFltbtwVL4Et8D7473pCl7NhyM8BF1xFMMFR5+yO7l3L9DRj3//CySKf5AU5Rg
OUVSoYYWmTAKBggqhkjOPQQDAgNIADBFAiBcWmi+55zinFDZmwuDwieC1wfHRRBI
ro/PKFUx5FkfigIhAOFnsrKeHdBhuOfzk7ZMRAAdV8DAu1aE+mnufTrtbkpo
-----END CERTIFICATE-----";
const V3: &str = "-----BEGIN CERTIFICATE-----
MIIBgzCCASqgAwIBAgICEAIwCgYIKoZIzj0EAwIwFTETMBEGA1UEAwwKZml4dHVy
ZSBDQTAgFw0yNjExMjgyMDA1NDJaGA8yMTI2MTEwNDIwMDU0MlowGjEYMBYGA1UE
AwwPZGIuZXhhbXBsZS50ZXN0MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEIWVp
6wb2SQIgYcNFltbtwVL4Et8D7473pCl7NhyM8BF1xFMMFR5+yO7l3L9DRj3//CyS
Kf5AU5RgOUVSoYYWmaNjMGEwHwYDVR0RBBgwFoIOYS5leGFtcGxlLnRlc3SHBH8A
AAEwHQYDVR0OBBYEFH4J6yw7xgIwFaq/IBpiUd1rr2WcMB8GA1UdIwQYMBaAFCJJ
ywqnNQofQD6TEnEb34Y/1DDDMAoGCCqGSM49BAMCA0cAMEQCIBF+2bTdSHiPr5Xf
hybMxRkShq/O4W+ZCESztPGqIoxQAiB1RLU9qrSot+46SyaL5FgJ3tdqeqEoGCSf
LxuAydUJxg==
-----END CERTIFICATE-----";
const CRL: &str = "-----BEGIN X509 CRL-----
MIHHMG4CAQEwCgYIKoZIzj0EAwIwFTETMBEGA1UEAwwKZml4dHVyZSBDQRcNMjYx
MTI4MjAwNTQyWhgPMjEyNjExMDQyMDA1NDJaMBUwEwICEAEXDTI2MTEyODIwMDU0
MlqgDzANMAsGA1UdFAQEAgIQADAKBggqhkjOPQQDAgNJADBGAiEAlZcHOdKbu+Vw
q13l7pA7DJSkSNbfBYcwgCEi+I9wipoCIQC6z4ul/E1Xk3vfbrpIZetqdkz/YW4T
n11z7u/1/JoJcg==
-----END X509 CRL-----";

fn der(pem: &str) -> CertificateDer<'static> {
    CertificateDer::from_pem_slice(pem.as_bytes()).unwrap()
}

fn algs() -> WebPkiSupportedAlgorithms {
    rustls::crypto::ring::default_provider().signature_verification_algorithms
}

/// The CRLs to give `walk`: the CA's.
fn the_crl() -> Vec<Crl> {
    crls(&[CertificateRevocationListDer::from_pem_slice(CRL.as_bytes()).unwrap()]).unwrap()
}

fn walked(
    leaf: &str,
    root: &str,
    crls: Option<&[Crl]>,
    now: UnixTime,
) -> Result<(), CertificateError> {
    let leaf = der(leaf);
    let cert = parse(&leaf).unwrap();
    walk(&algs(), &anchors(&[der(root)]), crls, (leaf.as_ref(), &cert), &[], now)
}

#[test]
fn a_v1_certificate_chains_to_its_ca_within_its_dates() {
    let now = UnixTime::now();
    assert!(is_v1(&parse(&der(V1)).unwrap()));
    assert!(!is_v1(&parse(&der(V3)).unwrap()));
    assert_eq!(walked(V1, CA, None, now), Ok(()));
    // Another CA's key under the same name: the signature does not verify.
    assert_eq!(walked(V1, OTHER_CA, None, now), Err(CertificateError::BadSignature));
    // No root of that name: unknown issuer.
    assert_eq!(walked(V1, V3, None, now), Err(CertificateError::UnknownIssuer));
    let early = UnixTime::since_unix_epoch(std::time::Duration::from_secs(0));
    let e = walked(V1, CA, None, early).unwrap_err();
    assert!(matches!(e, CertificateError::NotValidYetContext { .. }), "{e:?}");
    let late = UnixTime::since_unix_epoch(std::time::Duration::from_secs(200 * 365 * 86400));
    let e = walked(V1, CA, None, late).unwrap_err();
    assert!(matches!(e, CertificateError::ExpiredContext { .. }), "{e:?}");
}

#[test]
fn the_crl_of_the_issuer_must_speak_for_the_certificate() {
    let now = UnixTime::now();
    let crl = the_crl();
    assert_eq!(walked(V1, CA, Some(&crl), now), Ok(()));
    assert_eq!(walked(REVOKED, CA, Some(&crl), now), Err(CertificateError::Revoked));
    // Without the CRL the revoked certificate passes; with CRLs in use but none of its
    // issuer, nothing does (OpenSSL's X509_V_FLAG_CRL_CHECK_ALL).
    assert_eq!(walked(REVOKED, CA, None, now), Ok(()));
    assert_eq!(walked(V1, CA, Some(&[]), now), Err(CertificateError::UnknownRevocationStatus));
    // The other CA (same name) did not sign the CRL: it speaks for none of its certificates.
    let leaf = der(V1);
    let cert = parse(&leaf).unwrap();
    let e = not_revoked(
        &algs(),
        Some(&crl),
        &cert,
        &parse(&der(OTHER_CA)).unwrap().tbs_certificate.subject_public_key_info,
        now,
    );
    assert_eq!(e, Err(CertificateError::UnknownRevocationStatus));
    // An expired CRL is refused.
    let late = UnixTime::since_unix_epoch(std::time::Duration::from_secs(200 * 365 * 86400));
    let ca = parse(&der(CA)).unwrap();
    let e =
        not_revoked(&algs(), Some(&crl), &cert, &ca.tbs_certificate.subject_public_key_info, late);
    assert!(matches!(e, Err(CertificateError::ExpiredRevocationListContext { .. })), "{e:?}");
}

#[test]
fn the_names_libpq_reads_are_read() {
    let (sans, cn) = names(&parse(&der(V1)).unwrap()).unwrap();
    assert!(sans.is_empty());
    assert_eq!(cn.as_deref(), Some(&b"db.example.test"[..]));
    let (sans, cn) = names(&parse(&der(V3)).unwrap()).unwrap();
    assert_eq!(sans, [San::Dns(b"a.example.test".to_vec()), San::Ip(vec![127, 0, 0, 1])]);
    assert_eq!(cn.as_deref(), Some(&b"db.example.test"[..]));
}

#[test]
fn tls13_takes_no_pkcs1_signatures() {
    assert!(in_tls13(SignatureScheme::ECDSA_NISTP256_SHA256));
    assert!(in_tls13(SignatureScheme::RSA_PSS_SHA256));
    assert!(!in_tls13(SignatureScheme::RSA_PKCS1_SHA256));
    assert!(!in_tls13(SignatureScheme::ECDSA_SHA1_Legacy));
}
