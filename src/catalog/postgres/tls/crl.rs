//! libpq's certificate revocation lists: `sslcrl`, a PEM file of CRLs (default
//! `~/.postgresql/root.crl` when neither it nor `sslcrldir` is given), and `sslcrldir`, a
//! directory of PEM CRLs named as OpenSSL's `openssl rehash` names them (`HASH.rN`).
//!
//! libpq hands both to OpenSSL's `X509_STORE_load_locations` and, when that succeeds,
//! checks every certificate of the server's chain but the root against a CRL of its
//! issuer (`X509_V_FLAG_CRL_CHECK_ALL`): a certificate no CRL speaks for is refused. So:
//! - a CRL file that does not exist means no CRL check at all (libpq's "silently
//!   ignore"), even with a directory;
//! - a directory is taken as given, existing or not (OpenSSL only notes its name): with
//!   no CRL of the issuer in it, the server is refused.
//!
//! Where fixity is stricter: a CRL file that exists but cannot be read, or holds no CRL,
//! is an error (libpq ignores it, and so silently checks nothing). Where it is wider: the
//! directory's CRLs are read whatever hash names them (OpenSSL looks up only the file
//! named by the issuer's hash); each CRL is used for the issuer it names.

use rustls::pki_types::CertificateRevocationListDer;
use rustls::pki_types::pem::PemObject;
use std::path::Path;

/// The CRLs in use (`None`: no CRL check), from the CRL file and directory asked for
/// (`file` already defaulted to `~/.postgresql/root.crl` when neither was given).
pub(super) fn load(
    file: Option<&Path>,
    dir: Option<&Path>,
) -> Result<Option<Vec<CertificateRevocationListDer<'static>>>, String> {
    let mut crls = Vec::new();
    match file {
        Some(f) if !f.exists() => return Ok(None),
        Some(f) => crls.extend(read_file(f)?),
        None if dir.is_none() => return Ok(None),
        None => {}
    }
    if let Some(dir) = dir {
        crls.extend(read_dir(dir)?);
    }
    Ok(Some(crls))
}

/// The CRLs of a PEM file: at least one.
fn read_file(file: &Path) -> Result<Vec<CertificateRevocationListDer<'static>>, String> {
    let shown = file.display();
    let crls: Vec<_> = CertificateRevocationListDer::pem_file_iter(file)
        .and_then(|it| it.collect::<Result<_, _>>())
        .map_err(|e| format!("could not read certificate revocation list file \"{shown}\": {e}"))?;
    if crls.is_empty() {
        return Err(format!(
            "certificate revocation list file \"{shown}\" holds no CRL (a PEM \"X509 CRL\")"
        ));
    }
    Ok(crls)
}

/// The CRLs of a hashed directory's `HASH.rN` files (none when it does not exist).
fn read_dir(dir: &Path) -> Result<Vec<CertificateRevocationListDer<'static>>, String> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(Vec::new()) };
    let mut names: Vec<_> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(is_hashed_crl_name))
        .collect();
    names.sort();
    let mut crls = Vec::new();
    for p in names {
        crls.extend(read_file(&p)?);
    }
    Ok(crls)
}

/// `HASH.rN`: eight hex digits, `.r`, a number (OpenSSL's name for a hashed CRL).
fn is_hashed_crl_name(name: &str) -> bool {
    let Some((hash, n)) = name.split_once(".r") else { return false };
    hash.len() == 8
        && hash.bytes().all(|b| b.is_ascii_hexdigit())
        && !n.is_empty()
        && n.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashed_names_are_openssls() {
        assert!(is_hashed_crl_name("1a2b3c4d.r0"));
        assert!(is_hashed_crl_name("1A2B3C4D.r12"));
        assert!(!is_hashed_crl_name("1a2b3c4d.0"));
        assert!(!is_hashed_crl_name("1a2b3c4.r0"));
        assert!(!is_hashed_crl_name("1a2b3c4d.r"));
        assert!(!is_hashed_crl_name("root.crl"));
    }

    #[test]
    fn a_missing_file_means_no_check_a_missing_directory_none_found() {
        let d = tempfile::tempdir().unwrap();
        let missing = d.path().join("root.crl");
        assert!(load(Some(&missing), None).unwrap().is_none());
        assert!(load(Some(&missing), Some(d.path())).unwrap().is_none());
        assert!(load(None, None).unwrap().is_none());
        let nowhere = d.path().join("nowhere");
        assert_eq!(load(None, Some(&nowhere)).unwrap().map(|c| c.len()), Some(0));
        // A file that exists but holds no CRL is an error, not "check nothing".
        std::fs::write(&missing, "not a CRL\n").unwrap();
        let e = load(Some(&missing), None).unwrap_err();
        assert!(e.contains("holds no CRL"), "{e}");
    }
}
