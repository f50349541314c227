//! A manifest's name as the file system holds it. A manifest written on a Mac names
//! files in the Unicode form macOS gave them (NFD: `e` and a combining accent, on HFS+
//! and from many Mac programs), a Linux or Windows file system keeps the form they were
//! made in (NFC, as typed), and a copy through SMB or a zip can turn one into the other:
//! the same name, other bytes (rclone #623, #1472). A name not found as written is
//! looked for in the other form (NFC, then NFD) before it is reported missing; the line
//! is still printed with the manifest's name. ASCII names have one form and cost nothing.

use crate::pathtext::{bytes_path, other_forms};
use std::path::PathBuf;

/// The path a manifest's `name` opens: as written when that exists (or when no other
/// normalization form of it does), else its NFC or NFD form that does.
pub(crate) fn on_disk(name: &[u8]) -> PathBuf {
    let written = bytes_path(name);
    let forms = other_forms(name);
    if forms.is_empty() || std::fs::symlink_metadata(&written).is_ok() {
        return written;
    }
    forms
        .into_iter()
        .map(|form| bytes_path(&form))
        .find(|p| std::fs::symlink_metadata(p).is_ok())
        .unwrap_or(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_in_the_other_normalization_form_finds_the_file() {
        let d = tempfile::tempdir().unwrap();
        let (nfc, nfd) = ("caf\u{e9}.txt", "cafe\u{301}.txt");
        let in_dir = |n: &str| d.path().join(n);
        std::fs::write(in_dir(nfc), b"x").unwrap();
        // Where names are bytes (Linux), the NFD name finds the NFC file; where the file
        // system normalizes (APFS, NTFS lookups), the name as written does.
        let found = on_disk(in_dir(nfd).as_os_str().as_encoded_bytes());
        assert!(std::fs::symlink_metadata(&found).is_ok(), "{}", found.display());
        assert_eq!(on_disk(in_dir(nfc).as_os_str().as_encoded_bytes()), in_dir(nfc));
        // A name in no form on disk stays as written (reported missing as such).
        let gone = in_dir("gone-\u{e9}");
        assert_eq!(on_disk(gone.as_os_str().as_encoded_bytes()), gone);
        assert_eq!(on_disk(b"plain.txt"), PathBuf::from("plain.txt"));
    }
}
