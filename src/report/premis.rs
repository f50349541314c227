//! The catalog as PREMIS 3 XML (`export --format premis`): an object per recorded file
//! (identifier = its path relative to the tree, fixity = the recorded digest, size), the
//! events the catalog knows of (the last fixity check and its outcome; when a standing
//! finding was first found; the digest calculation of a file not checked since it was
//! hashed), each linking its object and the agent, and one agent: fixity itself.
//!
//! PREMIS puts every object before every event, so the store is read twice, page by page
//! (bounded memory, whatever the size of the tree). Text is XML-escaped; a path that is
//! not UTF-8 or holds control characters is percent-encoded
//! ([`crate::pathtext::text_or_percent`]) and its identifier's type says so.

use crate::catalog::{Class, History, Store, StoreError};
use crate::clock::format_rfc3339;
use crate::pathtext::text_or_percent;
use std::io::{self, Write};

/// The PREMIS namespace and where its schema is published.
const NAMESPACE: &str = "http://www.loc.gov/premis/v3";
const SCHEMA: &str = "https://www.loc.gov/standards/premis/premis.xsd";

/// The identifier type of a path written as it is, and of a percent-encoded one.
pub const PATH_TYPE: &str = "relative path";
pub const ENCODED_PATH_TYPE: &str = "relative path, percent-encoded";

/// Errors of [`write_premis`]: the store's, or the output's.
#[derive(Debug, thiserror::Error)]
pub enum PremisError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("write error: {0}")]
    Write(#[from] io::Error),
}

/// The name of an algorithm in the Library of Congress's vocabulary of cryptographic
/// hash functions (id.loc.gov/vocabulary/preservation/cryptographicHashFunctions), where
/// it has one; else fixity's own name.
pub fn algorithm_name(fixity_name: &'static str) -> &'static str {
    match fixity_name {
        "md5" => "MD5",
        "sha1" => "SHA-1",
        "sha224" => "SHA-224",
        "sha256" => "SHA-256",
        "sha384" => "SHA-384",
        "sha512" => "SHA-512",
        "crc32" => "CRC32",
        "tiger" => "TIGER",
        "whirlpool" => "WHIRLPOOL",
        other => other,
    }
}

/// Escapes `&`, `<` and `>` for XML text, and replaces characters XML 1.0 cannot hold
/// (control characters other than tab, newline and carriage return) with U+FFFD; a
/// carriage return is written as a character reference, so it survives parsing.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\r' => out.push_str("&#13;"),
            '\t' | '\n' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => out.push('\u{fffd}'),
            _ => out.push(c),
        }
    }
    out
}

/// What was written.
#[derive(Clone, Copy, Debug, Default)]
pub struct Written {
    pub objects: u64,
    pub events: u64,
}

/// Writes every record of `store` as PREMIS 3 XML to `out`; `version` is fixity's
/// version, the agent's.
pub fn write_premis(
    store: &dyn Store,
    version: &str,
    out: &mut dyn Write,
) -> Result<Written, PremisError> {
    let agent = format!("fixity {version}");
    let algo = algorithm_name(store.algorithm().name);
    writeln!(
        out,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<premis:premis xmlns:premis=\"{NAMESPACE}\" \
         xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" \
         xsi:schemaLocation=\"{NAMESPACE} {SCHEMA}\" version=\"3.0\">"
    )?;
    let mut written = Written::default();
    each(store, &mut |h| {
        object(h, algo, out)?;
        written.objects += 1;
        Ok(())
    })?;
    let mut n = 0u64;
    each(store, &mut |h| {
        for e in events(h) {
            n += 1;
            event(h, &e, n, &agent, out)?;
        }
        Ok(())
    })?;
    written.events = n;
    writeln!(
        out,
        "  <premis:agent>\n    <premis:agentIdentifier>\n      \
         <premis:agentIdentifierType>local</premis:agentIdentifierType>\n      \
         <premis:agentIdentifierValue>{}</premis:agentIdentifierValue>\n    \
         </premis:agentIdentifier>\n    <premis:agentName>fixity</premis:agentName>\n    \
         <premis:agentType>software</premis:agentType>\n    \
         <premis:agentVersion>{}</premis:agentVersion>\n  </premis:agent>\n</premis:premis>",
        escape(&agent),
        escape(version)
    )?;
    Ok(written)
}

/// Calls `f` with every record, in path order, a page at a time.
fn each(
    store: &dyn Store,
    f: &mut dyn FnMut(&History) -> Result<(), PremisError>,
) -> Result<(), PremisError> {
    let mut after: Option<Vec<u8>> = None;
    loop {
        let page = store.history_page(after.as_deref(), 4096, false)?;
        let Some(last) = page.last() else { return Ok(()) };
        after = Some(last.path.clone());
        for h in &page {
            f(h)?;
        }
    }
}

/// A record's identifier: (type, value).
fn identifier(path: &[u8]) -> (&'static str, String) {
    match text_or_percent(path) {
        (text, false) => (PATH_TYPE, escape(&text)),
        (text, true) => (ENCODED_PATH_TYPE, escape(&text)),
    }
}

fn object(h: &History, algo: &str, out: &mut dyn Write) -> io::Result<()> {
    let (kind, value) = identifier(&h.path);
    writeln!(
        out,
        "  <premis:object xsi:type=\"premis:file\">\n    <premis:objectIdentifier>\n      \
         <premis:objectIdentifierType>{kind}</premis:objectIdentifierType>\n      \
         <premis:objectIdentifierValue>{value}</premis:objectIdentifierValue>\n    \
         </premis:objectIdentifier>\n    <premis:objectCharacteristics>\n      \
         <premis:fixity>\n        <premis:messageDigestAlgorithm>{}</premis:messageDigestAlgorithm>\n        \
         <premis:messageDigest>{}</premis:messageDigest>\n        \
         <premis:messageDigestOriginator>fixity</premis:messageDigestOriginator>\n      \
         </premis:fixity>\n      <premis:size>{}</premis:size>\n      <premis:format>\n        \
         <premis:formatDesignation>\n          <premis:formatName>unknown</premis:formatName>\n        \
         </premis:formatDesignation>\n      </premis:format>\n    </premis:objectCharacteristics>\n  \
         </premis:object>",
        escape(algo),
        h.digest.to_hex(),
        h.size.min(i64::MAX as u64)
    )
}

/// One event the catalog knows of a file.
#[derive(Debug, PartialEq)]
struct Event {
    kind: &'static str,
    time: i64,
    pass: bool,
    detail: String,
}

/// The events of a record, oldest first.
fn events(h: &History) -> Vec<Event> {
    let check = |time, pass, detail: String| Event { kind: "fixity check", time, pass, detail };
    let mut v = Vec::new();
    if let Some(since) = h.missing_since {
        v.push(check(h.last_checked, false, format!("missing since {}", format_rfc3339(since))));
        return v;
    }
    let note = h.note.clone().unwrap_or_default();
    match h.last_result {
        // When the content last matched (a file back from missing keeps that time).
        Class::Ok => {
            v.push(check(h.last_verified, true, "content matches the recorded digest".into()))
        }
        Class::Corrupt | Class::Unreadable => {
            let what = if h.last_result == Class::Corrupt { "corrupt" } else { "unreadable" };
            if let Some(first) = h.finding_since.filter(|&t| t < h.last_checked) {
                v.push(check(first, false, format!("first found {what}")));
            }
            let detail = match (&h.found_digest, h.last_result) {
                (Some(d), Class::Corrupt) => {
                    format!("corrupt: recorded {}, now {}", h.digest.to_hex(), d.to_hex())
                }
                _ if note.is_empty() => what.to_string(),
                _ => format!("{what}: {note}"),
            };
            v.push(check(h.last_checked, false, detail));
        }
        // Hashed (new, edited, moved) and not checked since.
        _ => v.push(Event {
            kind: "message digest calculation",
            time: h.last_verified,
            pass: true,
            detail: format!("recorded as {}", h.last_result.name()),
        }),
    }
    v
}

fn event(h: &History, e: &Event, n: u64, agent: &str, out: &mut dyn Write) -> io::Result<()> {
    let (kind, value) = identifier(&h.path);
    writeln!(
        out,
        "  <premis:event>\n    <premis:eventIdentifier>\n      \
         <premis:eventIdentifierType>local</premis:eventIdentifierType>\n      \
         <premis:eventIdentifierValue>fixity-event-{n}</premis:eventIdentifierValue>\n    \
         </premis:eventIdentifier>\n    <premis:eventType>{}</premis:eventType>\n    \
         <premis:eventDateTime>{}</premis:eventDateTime>\n    <premis:eventOutcomeInformation>\n      \
         <premis:eventOutcome>{}</premis:eventOutcome>\n      <premis:eventOutcomeDetail>\n        \
         <premis:eventOutcomeDetailNote>{}</premis:eventOutcomeDetailNote>\n      \
         </premis:eventOutcomeDetail>\n    </premis:eventOutcomeInformation>\n    \
         <premis:linkingAgentIdentifier>\n      \
         <premis:linkingAgentIdentifierType>local</premis:linkingAgentIdentifierType>\n      \
         <premis:linkingAgentIdentifierValue>{}</premis:linkingAgentIdentifierValue>\n      \
         <premis:linkingAgentRole>executing program</premis:linkingAgentRole>\n    \
         </premis:linkingAgentIdentifier>\n    <premis:linkingObjectIdentifier>\n      \
         <premis:linkingObjectIdentifierType>{kind}</premis:linkingObjectIdentifierType>\n      \
         <premis:linkingObjectIdentifierValue>{value}</premis:linkingObjectIdentifierValue>\n      \
         <premis:linkingObjectRole>source</premis:linkingObjectRole>\n    \
         </premis:linkingObjectIdentifier>\n  </premis:event>",
        e.kind,
        format_rfc3339(e.time),
        if e.pass { "pass" } else { "fail" },
        escape(&e.detail),
        escape(agent)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::Digest;

    fn history(result: Class) -> History {
        History {
            path: b"a".to_vec(),
            size: 3,
            digest: Digest::new(&[0xab; 4]),
            first_seen: 1_000,
            last_verified: 2_000,
            last_checked: 3_000,
            last_result: result,
            missing_since: None,
            finding_since: None,
            found_digest: None,
            note: None,
            moved_from: None,
        }
    }

    #[test]
    fn each_record_gives_the_events_the_catalog_knows() {
        let ok = events(&history(Class::Ok));
        assert_eq!(
            (ok.len(), ok[0].kind, ok[0].time, ok[0].pass),
            (1, "fixity check", 2_000, true)
        );
        let mut bad = history(Class::Corrupt);
        bad.finding_since = Some(2_500);
        bad.found_digest = Some(Digest::new(&[0xcd; 4]));
        let e = events(&bad);
        assert_eq!(e.len(), 2, "first found, last seen");
        assert!(!e[0].pass && !e[1].pass);
        assert_eq!(e[1].detail, "corrupt: recorded abababab, now cdcdcdcd");
        let new = events(&history(Class::New));
        assert_eq!((new[0].kind, new[0].time), ("message digest calculation", 2_000));
        let mut gone = history(Class::Missing);
        gone.missing_since = Some(2_900);
        assert!(!events(&gone)[0].pass);
    }

    #[test]
    fn algorithms_take_the_loc_names_and_text_is_escaped() {
        assert_eq!(algorithm_name("sha256"), "SHA-256");
        assert_eq!(algorithm_name("md5"), "MD5");
        assert_eq!(algorithm_name("blake3"), "blake3");
        assert_eq!(escape("a<b>&c\r\u{1}"), "a&lt;b&gt;&amp;c&#13;\u{fffd}");
    }
}
