//! Walking a tree's chain in order of sequence number: each entry's head must recompute
//! from its fields, its `prev` must be the previous entry's head, no number may be
//! missing, its run must still be recorded; and the entry a kept head names must be the
//! one the head describes.

use super::{Entry, GENESIS, Identity, Link, Statement};

/// Where a chain (or a kept head) breaks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Break {
    /// Entries `after + 1 .. next` are gone (`after` 0: from the first): runs deleted
    /// from the history.
    Gap { after: u64, next: u64 },
    /// The entry's head does not recompute from its fields: an entry edited.
    Head { seq: u64 },
    /// The entry's `prev` is not the previous entry's head: history rewritten.
    Prev { seq: u64 },
    /// The entry's run is no longer among the store's runs: a run deleted.
    RunGone { seq: u64, run: i64 },
    /// The kept head names an entry past the end of the chain: history cut short, or a
    /// forged head.
    Beyond { seq: u64, last: u64 },
    /// The chain's entry at the kept head's number has other values (`fields`): history
    /// rewritten, or a forged head.
    Differs { seq: u64, fields: Vec<&'static str> },
    /// The kept head's own fields do not give its head: an edited head.
    Forged { seq: u64 },
    /// The kept head is of another host or tree.
    OtherTree,
}

/// A chain checked as its entries come, in order of `seq`.
pub struct Chain<'a> {
    id: &'a Identity,
    kept: Option<&'a Statement>,
    last: Option<Entry>,
    entries: u64,
}

impl<'a> Chain<'a> {
    /// A check of the chain of the tree `id`, against the head `kept` if one is given:
    /// the kept head's own consistency is checked here at once.
    pub fn new(id: &'a Identity, kept: Option<&'a Statement>, out: &mut Vec<Break>) -> Chain<'a> {
        if let Some(k) = kept {
            if !k.consistent() {
                out.push(Break::Forged { seq: k.seq });
            }
            if k.identity() != *id {
                out.push(Break::OtherTree);
            }
        }
        Chain { id, kept, last: None, entries: 0 }
    }

    /// The next entry (in order of `seq`); its breaks go to `out`.
    pub fn feed(&mut self, link: &Link, out: &mut Vec<Break>) {
        let e = &link.entry;
        let after = self.last.as_ref().map_or(0, |l| l.seq);
        if e.seq != after + 1 {
            out.push(Break::Gap { after, next: e.seq });
        } else if e.prev != self.last.as_ref().map_or(GENESIS, |l| l.head) {
            out.push(Break::Prev { seq: e.seq });
        }
        if e.compute_head(self.id) != e.head {
            out.push(Break::Head { seq: e.seq });
        }
        if !link.run_kept {
            out.push(Break::RunGone { seq: e.seq, run: e.run });
        }
        if let Some(k) = self.kept.filter(|k| k.seq == e.seq) {
            let fields = k.differences(e);
            if !fields.is_empty() {
                out.push(Break::Differs { seq: e.seq, fields });
            }
        }
        self.entries += 1;
        self.last = Some(e.clone());
    }

    /// Ends the walk: the last entry (`None` for an empty chain) and how many there were.
    pub fn finish(self, out: &mut Vec<Break>) -> (Option<Entry>, u64) {
        let last = self.last.as_ref().map_or(0, |l| l.seq);
        if let Some(k) = self.kept.filter(|k| k.seq > last) {
            out.push(Break::Beyond { seq: k.seq, last });
        }
        (self.last, self.entries)
    }
}
