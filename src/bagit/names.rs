//! Payload names across file systems (RFC 8493 §6.1): names that are one file on a
//! case-insensitive or normalizing file system, and manifest names written in another
//! Unicode normalization form than the file's name on disk.

use std::collections::{BTreeMap, HashMap};
use unicode_normalization::UnicodeNormalization;

/// How two names are alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Alike {
    /// The same text in two Unicode normalization forms (NFC and NFD, say).
    Normalization,
    /// The same but for case (and maybe normalization).
    Case,
}

fn nfc(name: &str) -> String {
    name.nfc().collect()
}

/// Groups of names (each sorted) that are distinct bytes but one file where names are
/// compared without case or normalization (NTFS, HFS+, APFS, exFAT), with how they are
/// alike. Names that are not UTF-8 are not compared.
pub(crate) fn collisions<'a>(names: impl Iterator<Item = &'a [u8]>) -> Vec<(Vec<Vec<u8>>, Alike)> {
    // Hashed, not ordered: one look-up per name whatever the tree's size. ASCII names (most)
    // are their own normal form, and only their ASCII case folds.
    let mut groups: HashMap<String, Vec<(&'a [u8], String)>> = HashMap::new();
    for name in names {
        let Ok(text) = std::str::from_utf8(name) else { continue };
        let (key, normal) = if text.is_ascii() {
            (text.to_ascii_lowercase(), text.to_string())
        } else {
            let normal = nfc(text);
            (normal.to_lowercase(), normal)
        };
        groups.entry(key).or_default().push((name, normal));
    }
    let mut found: Vec<Vec<(&'a [u8], String)>> =
        groups.into_values().filter(|m| m.len() > 1).collect();
    found.sort_by(|a, b| a.iter().map(|m| m.0).min().cmp(&b.iter().map(|m| m.0).min()));
    let mut out = Vec::new();
    for members in found {
        let first = &members[0].1;
        let alike = if members.iter().all(|(_, n)| n == first) {
            Alike::Normalization
        } else {
            Alike::Case
        };
        let mut names: Vec<Vec<u8>> = members.iter().map(|(n, _)| n.to_vec()).collect();
        names.sort();
        out.push((names, alike));
    }
    out
}

/// Finds names on disk by their Unicode normalization: a manifest may list a file in NFD
/// that the file system holds in NFC (or the reverse), after a copy through a normalizing
/// system; RFC 8493 §6.1 asks validators to tolerate it.
pub(crate) struct ByNormalization<'a> {
    map: BTreeMap<String, &'a [u8]>,
}

impl<'a> ByNormalization<'a> {
    pub(crate) fn new(names: impl Iterator<Item = &'a [u8]>) -> ByNormalization<'a> {
        let mut map = BTreeMap::new();
        for name in names {
            if let Ok(text) = std::str::from_utf8(name) {
                map.entry(nfc(text)).or_insert(name);
            }
        }
        ByNormalization { map }
    }

    /// The name on disk that `listed` is in another normalization form, if one is.
    pub(crate) fn find(&self, listed: &[u8]) -> Option<&'a [u8]> {
        let text = std::str::from_utf8(listed).ok()?;
        self.map.get(&nfc(text)).copied().filter(|&found| found != listed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collisions_by_case_and_normalization() {
        let nfc_name = "data/Nu\u{fa}\u{f1}ez".as_bytes();
        let nfd_name = "data/Nu\u{75}\u{301}n\u{303}ez".as_bytes();
        let names: Vec<&[u8]> = vec![
            b"data/a.txt",
            b"data/A.txt",
            nfc_name,
            nfd_name,
            b"data/b",
            b"data/\xff",
            b"data/\xfe",
        ];
        let found = collisions(names.into_iter());
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(found[0], (vec![b"data/A.txt".to_vec(), b"data/a.txt".to_vec()], Alike::Case));
        assert_eq!(found[1].1, Alike::Normalization);
        assert_eq!(found[1].0.len(), 2);
    }

    #[test]
    fn a_manifest_name_finds_its_file_in_another_form() {
        let nfc_name = "data/caf\u{e9}".as_bytes();
        let nfd_name = "data/cafe\u{301}".as_bytes();
        let disk: Vec<&[u8]> = vec![nfc_name, b"data/x"];
        let by = ByNormalization::new(disk.into_iter());
        assert_eq!(by.find(nfd_name), Some(nfc_name));
        assert_eq!(by.find(nfc_name), None, "the same name is no alias");
        assert_eq!(by.find(b"data/y"), None);
    }
}
