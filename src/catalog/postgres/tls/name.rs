//! Whether a server's certificate names the host connected to, by libpq's rules
//! (`sslmode=verify-full`; PostgreSQL's fe-secure-common.c and fe-secure-openssl.c,
//! `pq_verify_peer_name_matches_certificate*`):
//!
//! - The host is the `host` setting as given (not `hostaddr`); it is an IP address when
//!   `inet_aton` (IPv4, with its short and octal/hex forms) or `inet_pton` (IPv6) reads it.
//! - Every dNSName and iPAddress subject alternative name is tried, in order; the first
//!   that matches wins. A dNSName is compared as text with the host (so a dNSName
//!   "127.0.0.1" matches the host 127.0.0.1), an iPAddress as bytes with the host read
//!   as an address (never matching a host name).
//! - The subject's first common name is tried only when no SAN of the host's kind
//!   (dNSName for a name, iPAddress for an address) is present, and no SAN matched.
//! - Text compares case-insensitively (ASCII). A name starting `*.` matches a host that
//!   ends with the rest and whose first label (non-empty, without a dot) is the part the
//!   `*` stands for: `*.example.test` matches `db.example.test`, not `example.test` nor
//!   `a.db.example.test`; a `*` anywhere else is a plain character.
//! - A name with an embedded NUL, or an iPAddress that is neither 4 nor 16 bytes, fails the
//!   check (when met before a matching name), as libpq fails it.

use std::net::Ipv6Addr;

/// A subject alternative name of the kinds libpq reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum San {
    /// dNSName: its bytes.
    Dns(Vec<u8>),
    /// iPAddress: 4 or 16 bytes (any other length is an error to libpq).
    Ip(Vec<u8>),
}

/// Whether the certificate whose SANs are `sans` and first common name `cn` names `host`:
/// `Ok(false)` when it does not, `Err` (a sentence) when a name is malformed.
pub(crate) fn names_host(host: &str, sans: &[San], cn: Option<&[u8]>) -> Result<bool, String> {
    if host.is_empty() {
        return Err("host name must be specified for a verified SSL connection".into());
    }
    let host_ip = ip_bytes(host);
    let mut check_cn = true;
    for san in sans {
        let same_kind = matches!(san, San::Ip(_)) == host_ip.is_some();
        if same_kind {
            check_cn = false;
        }
        let matched = match san {
            San::Dns(name) => name_matches(name, host)?,
            San::Ip(bytes) => ip_matches(bytes, host)?,
        };
        if matched {
            return Ok(true);
        }
    }
    match cn {
        Some(cn) if check_cn => name_matches(cn, host),
        _ => Ok(false),
    }
}

/// The names presented, as messages show them (`DNS:…`, `IP:…`, `CN=…`).
pub(crate) fn shown(sans: &[San], cn: Option<&[u8]>) -> Vec<String> {
    let mut out: Vec<String> = sans
        .iter()
        .map(|s| match s {
            San::Dns(n) => format!("DNS:{}", String::from_utf8_lossy(n)),
            San::Ip(b) if b.len() == 4 => format!("IP:{}.{}.{}.{}", b[0], b[1], b[2], b[3]),
            San::Ip(b) => match <[u8; 16]>::try_from(b.as_slice()) {
                Ok(a) => format!("IP:{}", Ipv6Addr::from(a)),
                Err(_) => format!("IP:(bad length {})", b.len()),
            },
        })
        .collect();
    if let Some(cn) = cn {
        out.push(format!("CN={}", String::from_utf8_lossy(cn)));
    }
    out
}

/// A name from the certificate against the host: exactly or as a wildcard.
fn name_matches(name: &[u8], host: &str) -> Result<bool, String> {
    if name.contains(&0) {
        return Err("SSL certificate's name contains embedded null".into());
    }
    let host = host.as_bytes();
    Ok(name.eq_ignore_ascii_case(host) || wildcard_matches(name, host))
}

/// libpq's `wildcard_certificate_match`.
fn wildcard_matches(pattern: &[u8], host: &[u8]) -> bool {
    if pattern.len() < 3 || !pattern.starts_with(b"*.") || pattern.len() > host.len() {
        return false;
    }
    // Where the pattern's `.rest` lines up with the host's end.
    let label_end = host.len() - pattern.len() + 1;
    if !pattern[1..].eq_ignore_ascii_case(&host[label_end..]) {
        return false;
    }
    // The `*` stands for one label: no dot before the one the pattern starts with.
    host.iter().position(|&b| b == b'.').is_none_or(|dot| dot >= label_end)
}

/// An iPAddress SAN against the host read as an address of the same family.
fn ip_matches(bytes: &[u8], host: &str) -> Result<bool, String> {
    match bytes.len() {
        4 => Ok(inet_aton(host).is_some_and(|a| a == bytes)),
        16 => Ok(host.parse::<Ipv6Addr>().is_ok_and(|a| a.octets() == bytes)),
        n => Err(format!("certificate contains IP address with invalid length {n}")),
    }
}

/// The host as an address's bytes, when libpq takes it for one.
fn ip_bytes(host: &str) -> Option<Vec<u8>> {
    inet_aton(host)
        .map(|a| a.to_vec())
        .or_else(|| host.parse::<Ipv6Addr>().ok().map(|a| a.octets().to_vec()))
}

/// `inet_aton`: one to four parts, each decimal, octal (`0…`) or hex (`0x…`); the last
/// part fills the bytes the others leave (`127.1` is 127.0.0.1).
fn inet_aton(text: &str) -> Option<[u8; 4]> {
    let parts: Vec<&str> = text.split('.').collect();
    if parts.len() > 4 {
        return None;
    }
    let mut nums = Vec::with_capacity(4);
    for p in &parts {
        let (digits, radix) = if let Some(h) = p.strip_prefix("0x").or(p.strip_prefix("0X")) {
            (h, 16)
        } else if p.len() > 1 && p.starts_with('0') {
            (&p[1..], 8)
        } else {
            (*p, 10)
        };
        if digits.is_empty() && radix != 16 {
            return None;
        }
        let n = if digits.is_empty() { 0 } else { u32::from_str_radix(digits, radix).ok()? };
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        nums.push(n);
    }
    let (last, head) = nums.split_last()?;
    if head.iter().any(|&n| n > 255) {
        return None;
    }
    let room = 8 * (4 - head.len() as u32);
    if room < 32 && *last >> room != 0 {
        return None;
    }
    let mut value = *last;
    for (i, &n) in head.iter().enumerate() {
        value |= n << (24 - 8 * i as u32);
    }
    Some(value.to_be_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dns(n: &str) -> San {
        San::Dns(n.as_bytes().to_vec())
    }

    fn ip(a: &[u8]) -> San {
        San::Ip(a.to_vec())
    }

    fn names(host: &str, sans: &[San], cn: Option<&str>) -> bool {
        names_host(host, sans, cn.map(str::as_bytes)).unwrap()
    }

    #[test]
    fn the_common_name_counts_only_without_a_san_of_the_host_kind() {
        // CN only (PostgreSQL's documented certificates): the CN.
        assert!(names("db.example.test", &[], Some("db.example.test")));
        assert!(names("DB.Example.TEST", &[], Some("db.example.test")));
        assert!(!names("other.example.test", &[], Some("db.example.test")));
        assert!(!names("db.example.test", &[], None));
        // A dNSName SAN hides the CN from a host name.
        assert!(!names("db.example.test", &[dns("other.test")], Some("db.example.test")));
        assert!(names("db.example.test", &[dns("other.test"), dns("db.example.test")], None));
        // An iPAddress SAN does not hide it from a host name...
        assert!(names("db.example.test", &[ip(&[10, 0, 0, 1])], Some("db.example.test")));
        // ...nor a dNSName from an address (libpq breaks RFC 6125 there, on purpose).
        assert!(names("127.0.0.1", &[dns("db.example.test")], Some("127.0.0.1")));
        assert!(!names("127.0.0.1", &[ip(&[10, 0, 0, 1])], Some("127.0.0.1")));
    }

    #[test]
    fn addresses_match_ip_sans_and_names_as_text() {
        assert!(names("127.0.0.1", &[ip(&[127, 0, 0, 1])], None));
        assert!(!names("127.0.0.2", &[ip(&[127, 0, 0, 1])], None));
        // inet_aton's short form is the same address.
        assert!(names("127.1", &[ip(&[127, 0, 0, 1])], None));
        // A host name never matches an iPAddress, whatever it resolves to.
        assert!(!names("localhost", &[ip(&[127, 0, 0, 1])], None));
        // A dNSName that spells the address matches as text.
        assert!(names("127.0.0.1", &[dns("127.0.0.1")], None));
        let six: [u8; 16] = "::1".parse::<Ipv6Addr>().unwrap().octets();
        assert!(names("::1", &[ip(&six)], None));
        assert!(names("0:0::1", &[ip(&six)], None));
        assert!(!names("::1", &[ip(&[0, 0, 0, 1])], None));
        // A malformed address fails the check; one after a match is not read.
        let e = names_host("127.0.0.1", &[ip(&[1, 2, 3])], None).unwrap_err();
        assert!(e.contains("invalid length 3"), "{e}");
        assert!(names("127.0.0.1", &[ip(&[127, 0, 0, 1]), ip(&[1, 2, 3])], None));
    }

    #[test]
    fn a_wildcard_is_one_whole_leftmost_label() {
        let w = [dns("*.example.test")];
        assert!(names("db.example.test", &w, None));
        assert!(names("DB.EXAMPLE.test", &w, None));
        assert!(names("d.example.test", &w, None));
        assert!(!names("example.test", &w, None));
        assert!(!names(".example.test", &w, None));
        assert!(!names("a.db.example.test", &w, None));
        assert!(!names("db.example.testx", &w, None));
        assert!(!names("db.xexample.test", &w, None));
        // Only as the whole leftmost label: elsewhere, a plain character.
        assert!(!names("db.example.test", &[dns("d*.example.test")], None));
        assert!(names("d*.example.test", &[dns("d*.example.test")], None));
        assert!(!names("db.example.test", &[dns("db.*.test")], None));
        assert!(!names("db.example.test", &[dns("*")], None));
        // No rule of public suffixes (libpq has none): `*.test` takes any name in .test.
        assert!(names("example.test", &[dns("*.test")], None));
        // In the common name too.
        assert!(names("db.example.test", &[], Some("*.example.test")));
        // The pattern is not read as a pattern in the host.
        assert!(!names("*.example.test", &[dns("db.example.test")], None));
    }

    #[test]
    fn embedded_nuls_and_empty_hosts_fail() {
        let e = names_host("db.example.test", &[dns("db.example.test\0.evil")], None).unwrap_err();
        assert!(e.contains("embedded null"), "{e}");
        let e = names_host("db.example.test", &[], Some(b"db\0x")).unwrap_err();
        assert!(e.contains("embedded null"), "{e}");
        assert!(names_host("", &[], Some(b"x")).is_err());
    }

    #[test]
    fn inet_aton_reads_what_libc_reads() {
        assert_eq!(inet_aton("127.0.0.1"), Some([127, 0, 0, 1]));
        assert_eq!(inet_aton("127.1"), Some([127, 0, 0, 1]));
        assert_eq!(inet_aton("10.1.258"), Some([10, 1, 1, 2]));
        assert_eq!(inet_aton("0x7f.1"), Some([127, 0, 0, 1]));
        assert_eq!(inet_aton("0177.0.0.1"), Some([127, 0, 0, 1]));
        assert_eq!(inet_aton("2130706433"), Some([127, 0, 0, 1]));
        assert_eq!(inet_aton("256.0.0.1"), None);
        assert_eq!(inet_aton("1.2.3.256"), None);
        assert_eq!(inet_aton("1.2.3.4.5"), None);
        assert_eq!(inet_aton("db.example.test"), None);
        assert_eq!(inet_aton("1..2"), None);
        assert_eq!(inet_aton("08.1.1.1"), None);
        assert_eq!(inet_aton(""), None);
    }

    #[test]
    fn presented_names_are_shown() {
        let s = shown(&[dns("a.test"), ip(&[127, 0, 0, 1])], Some(b"cn.test"));
        assert_eq!(s, ["DNS:a.test", "IP:127.0.0.1", "CN=cn.test"]);
    }
}
