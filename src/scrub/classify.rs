//! The rule that tells bitrot from an edit, written once for every store.

use crate::catalog::{Class, Found, Record};

/// What a run saw where a record (or none) says a file is.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Seen<'a> {
    /// The file at the record's path, read: this content and version.
    Content(&'a Found),
    /// Content read at another path than the record's (a candidate for a move).
    Elsewhere(&'a Found),
    /// No file at the path.
    Absent,
    /// A file that could not be read (or a directory above it that could not be listed).
    Unreadable,
}

/// How a run tells versions apart: mtimes `mtime_ns` apart still count as equal
/// (`--modify-window`); ctimes count where the file system's can be trusted (`ctime`:
/// the slack within which two ctimes are equal, 0 but for the xattr store), else `None`
/// and the classes are those of size and mtime alone.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Window {
    pub(crate) mtime_ns: i128,
    pub(crate) ctime: Option<i128>,
}

impl Window {
    /// Whether the inode of the file `stamp` describes changed since `rec` was written,
    /// by this window's ctime rule.
    pub(crate) fn ctime_moved(&self, rec: &Record, stamp: &crate::device::Stamp) -> bool {
        self.ctime.is_some_and(|slack| rec.ctime_moved(stamp, slack))
    }
}

/// The class of a file, from its record (`None`: never recorded) and what the run saw,
/// by the rules of `window`:
///
/// - read, with no record: [`Class::New`];
/// - read, another version (size or mtime differ): [`Class::Modified`], an edit;
/// - read, the recorded version with the recorded content: [`Class::Ok`];
/// - read, the recorded size and mtime with other content, and a ctime that moved:
///   [`Class::Changed`], an edit whose mtime was put back (ctimes known and trusted);
/// - read, the recorded version with other content: [`Class::Corrupt`], bitrot;
/// - read at another path, with a missing file's size (not empty) and content:
///   [`Class::Moved`], else [`Class::New`] there;
/// - recorded and absent: [`Class::Missing`] (with no record either, there is nothing
///   to class; that is also given as missing);
/// - not readable: [`Class::Unreadable`].
///
/// Digests are compared in constant time.
pub(crate) fn classify(old: Option<&Record>, new: Seen<'_>, window: Window) -> Class {
    match (old, new) {
        (_, Seen::Unreadable) => Class::Unreadable,
        (_, Seen::Absent) => Class::Missing,
        (None, Seen::Content(_) | Seen::Elsewhere(_)) => Class::New,
        (Some(old), Seen::Content(new)) => {
            if !old.describes(&new.stamp, window.mtime_ns) {
                Class::Modified
            } else if old.digest.ct_eq(&new.digest) {
                Class::Ok
            } else if window.ctime_moved(old, &new.stamp) {
                Class::Changed
            } else {
                Class::Corrupt
            }
        }
        (Some(old), Seen::Elsewhere(new)) => {
            let same_size = old.size.is_some_and(|s| s > 0 && s == new.stamp.size);
            if same_size && old.digest.ct_eq(&new.digest) { Class::Moved } else { Class::New }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Stamp;
    use crate::digest::Digest;

    fn record(size: u64, mtime_ns: i128, digest: u8) -> Record {
        let digest = Digest::new(&[digest; 32]);
        Record { digest, mtime_ns, ..Record::sample(b"f", "sha256", Some(size)) }
    }

    fn found(size: u64, mtime_ns: i128, digest: u8) -> Found {
        let stamp = Stamp { ctime_ns: Some(50), ..Stamp::sized(size, mtime_ns) };
        Found { digest: Digest::new(&[digest; 32]), stamp, file_id: None, access: None }
    }

    fn window(mtime_ns: i128) -> Window {
        Window { mtime_ns, ctime: Some(0) }
    }

    #[test]
    fn every_class_follows_from_record_and_sight() {
        let rec = Record { ctime_ns: Some(50), ..record(10, 1_000, 1) };
        let unknown = record(10, 1_000, 1);
        let kept = Record { ctime_ns: Some(40), ..record(10, 1_000, 1) };
        let empty = record(0, 1_000, 1);
        let same = found(10, 1_000, 1);
        let rotted = found(10, 1_000, 2);
        let edited = found(11, 2_000, 2);
        let touched = found(10, 1_500, 1);
        let resized = found(12, 1_000, 1);
        let empty_found = found(0, 1_000, 1);
        let cases: &[(Option<&Record>, Seen<'_>, i128, Class)] = &[
            (Some(&rec), Seen::Content(&same), 0, Class::Ok),
            (Some(&rec), Seen::Content(&rotted), 0, Class::Corrupt),
            // The ctime moved: an edit that put the mtime back, not rot.
            (Some(&kept), Seen::Content(&rotted), 0, Class::Changed),
            // Same content, ctime moved (a chmod): ok.
            (Some(&kept), Seen::Content(&same), 0, Class::Ok),
            // No ctime on record (a catalog made before): as before, corrupt.
            (Some(&unknown), Seen::Content(&rotted), 0, Class::Corrupt),
            (Some(&rec), Seen::Content(&edited), 0, Class::Modified),
            (Some(&rec), Seen::Content(&touched), 0, Class::Modified),
            // Within --modify-window the version is the same: the content decides.
            (Some(&rec), Seen::Content(&touched), 500, Class::Ok),
            (Some(&rec), Seen::Content(&resized), 1_000_000, Class::Modified),
            (None, Seen::Content(&same), 0, Class::New),
            (Some(&rec), Seen::Absent, 0, Class::Missing),
            (Some(&rec), Seen::Elsewhere(&same), 0, Class::Moved),
            (Some(&rec), Seen::Elsewhere(&touched), 0, Class::Moved),
            (Some(&rec), Seen::Elsewhere(&rotted), 0, Class::New),
            (Some(&rec), Seen::Elsewhere(&resized), 0, Class::New),
            // Every empty file looks alike: none is taken for a moved one.
            (Some(&empty), Seen::Elsewhere(&empty_found), 0, Class::New),
            (None, Seen::Elsewhere(&same), 0, Class::New),
            (Some(&rec), Seen::Unreadable, 0, Class::Unreadable),
            (None, Seen::Unreadable, 0, Class::Unreadable),
        ];
        for (i, (old, new, w, want)) in cases.iter().enumerate() {
            assert_eq!(classify(*old, *new, window(*w)), *want, "case {i}");
        }
        // Where ctimes are not trusted (FUSE), or within the store's slack, an edit that
        // kept its mtime is taken for rot, as before fixity kept ctimes.
        let untrusted = Window { mtime_ns: 0, ctime: None };
        assert_eq!(classify(Some(&kept), Seen::Content(&rotted), untrusted), Class::Corrupt);
        let slack = Window { mtime_ns: 0, ctime: Some(10) };
        assert_eq!(classify(Some(&kept), Seen::Content(&rotted), slack), Class::Corrupt);
        let rolled_back = Record { ctime_ns: Some(60), ..record(10, 1_000, 1) };
        assert_eq!(classify(Some(&rolled_back), Seen::Content(&rotted), slack), Class::Changed);
        for c in Class::ALL {
            assert!(cases.iter().any(|case| case.3 == c), "no case gives {c:?}");
        }
    }
}
