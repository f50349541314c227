//! What fixity remembers about a tree between runs, so a later run can tell silent
//! corruption from an edit, a move or a deletion. Two stores:
//!
//! - [`sqlite`]: the embedded default, one SQLite database per tree (`ROOT/.fixity/
//!   catalog.db`), which also knows about files that disappeared;
//! - [`xattr`]: the digest kept in each file's extended attributes (`user.fixity.*`),
//!   reading what cshatag wrote (`user.shatag.*`).
//!
//! Both implement [`Store`], the one interface the scan/verify engine ([`crate::scrub`]),
//! `status`, `export`, `accept` and `forget` use; [`open_store`] picks one from a
//! [`StoreSpec`]. The classes a run gives files are [`Class`]; the rule that gives them is
//! `scrub::classify`. The run lock is in [`lock`].

pub mod ads;
mod error;
mod extra;
pub mod locate;
pub mod lock;
mod numbers;
pub mod postgres;
mod proofs;
pub mod sqlite;
mod store;
mod stream;
pub mod under;
pub mod xattr;

pub use error::CatalogError;
pub use extra::{Extra, RemoteCheck};
pub use proofs::{leaf, state_root};
pub use store::{
    Found, History, Inode, OpenOptions, Pages, Pass, PassOrder, PassState, PassUnderWay, Record,
    Records, ReportFn, RunInfo, Store, StoreError, StoreSpec, Summary, open_store,
};
pub use stream::RecordPages;

/// What a run says once, when it has upgraded a catalog made before files' ctimes and
/// access were recorded ([`Store::upgrade_note`]).
pub const INODE_NOTE: &str = "catalog upgraded: each file's ctime, mode and owner are recorded \
    from now on, as runs write its record (a verify, for every file found ok). Until then an \
    edit that put a file's mtime back is taken for rot (CORRUPT), as before, and a file a repair \
    rebuilds where none stands is made 0600";

/// What a run found for one file. Every file a run looks at gets exactly one class.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// Content matches the recorded digest (or, in a scan, size and mtime are unchanged).
    Ok,
    /// Size or mtime changed: an ordinary edit. Re-hashed and recorded.
    Modified,
    /// Size and mtime unchanged but the content's digest differs: bitrot. The catalog
    /// keeps the old, good digest.
    Corrupt,
    /// Recorded, but no longer in the tree. Kept on record until it is back or forgotten.
    Missing,
    /// In the tree for the first time. Hashed and recorded.
    New,
    /// A missing file's content found at a new path.
    Moved,
    /// Could not be read (an I/O error, or it changed while being read).
    Unreadable,
    /// Size and mtime unchanged, other content, and the inode's change time (ctime)
    /// moved: an edit whose mtime was put back (`touch -r`, `cp -p`, `rsync -t`, `tar x`,
    /// `exiftool -P`), not bitrot, which moves no ctime. The catalog keeps the old digest
    /// and the finding stands, never repaired, until `fixity accept` takes the change.
    Changed,
}

impl Class {
    /// Every class, in report order.
    pub const ALL: [Class; 8] = [
        Class::Ok,
        Class::Modified,
        Class::Corrupt,
        Class::Missing,
        Class::New,
        Class::Moved,
        Class::Unreadable,
        Class::Changed,
    ];

    /// The name stored in the catalog and used in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Class::Ok => "ok",
            Class::Modified => "modified",
            Class::Corrupt => "corrupt",
            Class::Missing => "missing",
            Class::New => "new",
            Class::Moved => "moved",
            Class::Unreadable => "unreadable",
            Class::Changed => "changed",
        }
    }

    /// The inverse of [`Class::name`].
    pub fn from_name(name: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.name() == name)
    }

    /// Whether this class is a finding: data may be lost, the exit status is 1, and it
    /// stands (reported by every run) until resolved.
    pub fn is_failure(self) -> bool {
        matches!(self, Class::Corrupt | Class::Unreadable | Class::Missing | Class::Changed)
    }

    /// Whether the record keeps the digest the run found beside the recorded one: the
    /// content differs with the recorded version's size and mtime (corrupt, changed).
    pub fn keeps_found(self) -> bool {
        matches!(self, Class::Corrupt | Class::Changed)
    }

    /// Whether every run reads the file again, slice or not, until the finding is
    /// resolved: a standing finding about its content.
    pub fn read_again(self) -> bool {
        matches!(self, Class::Corrupt | Class::Unreadable | Class::Changed)
    }
}

/// Who this process's runs are recorded as started by: `FIXITY_ACTOR` (`fixity serve`
/// sets it to the user who started an action from its page), else nobody named.
pub fn actor() -> Option<&'static str> {
    static ACTOR: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    ACTOR
        .get_or_init(|| std::env::var("FIXITY_ACTOR").ok().filter(|a| !a.trim().is_empty()))
        .as_deref()
}

/// A run's summary (a JSON object) with `"by"` naming who started it, when `by` names
/// someone; as given otherwise (or when it is not an object).
pub fn signed(summary: &str, by: Option<&str>) -> String {
    let Some(by) = by else { return summary.to_string() };
    match serde_json::from_str::<serde_json::Value>(summary) {
        Ok(serde_json::Value::Object(mut o)) => {
            o.insert("by".into(), by.into());
            serde_json::Value::Object(o).to_string()
        }
        _ => summary.to_string(),
    }
}

/// The range of paths strictly below directory `rel`, as (after, before) bounds: every
/// path that starts with `rel/` sorts between `rel/` and `rel0` ('0' follows '/').
/// `(None, None)` for the empty `rel` (the whole tree).
pub fn below(rel: &[u8]) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
    if rel.is_empty() {
        return (None, None);
    }
    (Some([rel, b"/"].concat()), Some([rel, b"0"].concat()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_is_signed_by_who_started_the_run() {
        assert_eq!(
            signed(r#"{"files_read":3}"#, Some("alice (fixity serve)")),
            r#"{"by":"alice (fixity serve)","files_read":3}"#
        );
        assert_eq!(signed(r#"{"files_read":3}"#, None), r#"{"files_read":3}"#);
        assert_eq!(signed("not json", Some("a")), "not json");
    }

    #[test]
    fn class_names_round_trip() {
        for c in Class::ALL {
            assert_eq!(Class::from_name(c.name()), Some(c));
        }
        assert!(Class::Corrupt.is_failure() && Class::Unreadable.is_failure());
        assert!(Class::Missing.is_failure() && !Class::Modified.is_failure());
    }
}
