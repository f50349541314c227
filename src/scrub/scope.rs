//! A run over part of a tree (`scan|verify --plan DIR --part I`): the files a list
//! names instead of a walk, and the records in the part's range of paths.
//!
//! A tree's records are split by path: a part owns the records from its first path up to
//! the next part's first path, the first part everything before, the last everything
//! after. So every record has one owner, and a file gone from the tree is reported
//! missing by exactly one part: the one whose range it falls in.

/// One entry of a part's list, relative to the tree's root, in path order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Listed {
    /// A path to look at now: a file when the list was made, or an entry its walk left
    /// out (looked at again: it may be a file now).
    Path(Vec<u8>),
    /// A directory the list's walk could not read, and why: the records under it are
    /// unreachable, not missing.
    Unlisted(Vec<u8>, String),
}

/// The paths a part owns: from `from` (the first, with `None`) up to `until`, exclusive
/// (the last, with `None`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bounds {
    pub from: Option<Vec<u8>>,
    pub until: Option<Vec<u8>>,
}

impl Bounds {
    /// Whether the record at `rel` is this part's.
    pub fn holds(&self, rel: &[u8]) -> bool {
        self.from.as_deref().is_none_or(|f| rel >= f)
            && self.until.as_deref().is_none_or(|u| rel < u)
    }

    /// Whether records at `rel` and after can no longer be this part's.
    pub(crate) fn past(&self, rel: &[u8]) -> bool {
        self.until.as_deref().is_some_and(|u| rel >= u)
    }

    /// The bounds that hold nothing.
    pub fn nothing() -> Bounds {
        Bounds { from: Some(Vec::new()), until: Some(Vec::new()) }
    }
}

/// Which part of which plan a run covers, as its summary records it.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PartOf {
    /// The plan's id.
    pub plan: String,
    /// The part (from 0).
    pub part: usize,
    /// Of how many.
    pub parts: usize,
}

/// Part of a tree for a run: its entries and the records it owns.
pub struct Scope {
    /// The records the part owns.
    pub bounds: Bounds,
    /// Its entries, in path order; an error (the list could not be read on) ends the run.
    pub entries: Box<dyn Iterator<Item = Result<Listed, String>> + Send>,
    /// Which part.
    pub part: PartOf,
    /// When its list was made (ms): a file first recorded since then by any part is
    /// new in the same sweep of the tree, so a file this part finds gone may have moved
    /// there, even if another part recorded it before this one ran.
    pub listed_ms: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_hold_a_half_open_range() {
        let b = Bounds { from: Some(b"b".to_vec()), until: Some(b"d".to_vec()) };
        assert!(!b.holds(b"a") && !b.holds(b"az"));
        assert!(b.holds(b"b") && b.holds(b"b/x") && b.holds(b"c"));
        assert!(!b.holds(b"d") && b.past(b"d") && !b.past(b"c"));
        assert!(Bounds::default().holds(b"anything") && !Bounds::default().past(b"z"));
        assert!(!Bounds::nothing().holds(b"") && !Bounds::nothing().holds(b"a"));
    }
}
