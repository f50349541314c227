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

/// The class of a file, from its record (`None`: never recorded) and what the run saw,
/// with mtimes `modify_window` ns apart still counting as equal:
///
/// - read, with no record: [`Class::New`];
/// - read, another version (size or mtime differ): [`Class::Modified`], an edit;
/// - read, the recorded version with the recorded content: [`Class::Ok`];
/// - read, the recorded version with other content: [`Class::Corrupt`], bitrot;
/// - read at another path, with a missing file's size (not empty) and content:
///   [`Class::Moved`], else [`Class::New`] there;
/// - recorded and absent: [`Class::Missing`] (with no record either, there is nothing
///   to class; that is also given as missing);
/// - not readable: [`Class::Unreadable`].
///
/// Digests are compared in constant time.
pub(crate) fn classify(old: Option<&Record>, new: Seen<'_>, modify_window: i128) -> Class {
    match (old, new) {
        (_, Seen::Unreadable) => Class::Unreadable,
        (_, Seen::Absent) => Class::Missing,
        (None, Seen::Content(_) | Seen::Elsewhere(_)) => Class::New,
        (Some(old), Seen::Content(new)) => {
            if !old.describes(&new.stamp, modify_window) {
                Class::Modified
            } else if old.digest.ct_eq(&new.digest) {
                Class::Ok
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
        Found { digest: Digest::new(&[digest; 32]), stamp: Stamp { size, mtime_ns }, file_id: None }
    }

    #[test]
    fn every_class_follows_from_record_and_sight() {
        let rec = record(10, 1_000, 1);
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
        for (i, (old, new, window, want)) in cases.iter().enumerate() {
            assert_eq!(classify(*old, *new, *window), *want, "case {i}");
        }
        for c in Class::ALL {
            assert!(cases.iter().any(|case| case.3 == c), "no case gives {c:?}");
        }
    }
}
