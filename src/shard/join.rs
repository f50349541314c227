//! The merge's view of files split across parts: a file's pieces come one after another
//! (across the ends of consecutive parts); the joiner gathers them and hands on one
//! record at the file's place, as one run would have written it: its digests joined
//! from the pieces' states ([`crate::algo::Combine`]), or why it has none.

use super::part::Record;
use super::piece::PieceResult;
use crate::algo::Algorithm;
use crate::digest::Digest;

/// What a run says of a file whose stat is not the plan's (as a part says it).
pub const CHANGED: &str = "changed since the plan (size or modification time)";

/// Gathers pieces; hands every other record on as it is.
#[derive(Default)]
pub(crate) struct Joiner {
    /// The file whose pieces are being gathered.
    open: Option<Open>,
    /// The last record handed on was of this file, read whole: the pieces other parts
    /// covered (`C` records) follow it.
    whole: Option<Vec<u8>>,
}

/// A file's pieces so far.
struct Open {
    name: Vec<u8>,
    total: u64,
    unit: u64,
    /// Where the next piece starts.
    next: u64,
    /// The stat every piece read saw (they must agree).
    stat: Option<(u64, Option<i128>)>,
    /// Per algorithm, each piece's (length, state).
    states: Vec<Vec<(u64, Vec<u8>)>>,
    /// Why the file gets no digest, once known: (message, skipped).
    failed: Option<(String, bool)>,
}

impl Joiner {
    /// Takes the next record of the parts, in order; returns what to hand on (none while
    /// a file's pieces are gathered).
    pub(crate) fn take(&mut self, r: Record, algos: &[&'static Algorithm]) -> Vec<Record> {
        let mut out = Vec::new();
        let Record::Piece { name, piece, total, result } = r else {
            out.extend(self.open.take().map(|o| o.cut_short()));
            self.whole = match &r {
                Record::Hashed { name, .. } | Record::Unreadable { name, .. } => Some(name.clone()),
                _ => None,
            };
            out.push(r);
            return out;
        };
        if result == PieceResult::Covered {
            out.extend(self.open.take().map(|o| o.cut_short()));
            if self.whole.as_ref() != Some(&name) {
                // Covered by a whole read that is not there: say so once, at its first
                // such piece.
                let message = "a piece covered by a read of the whole file that is not in the \
                               parts (were parts hashed with other algorithms?)";
                out.push(Record::Unreadable {
                    name: name.clone(),
                    message: message.into(),
                    skipped: false,
                });
            }
            self.whole = (piece.end < total).then_some(name);
            return out;
        }
        self.whole = None;
        let continues = self.open.as_ref().is_some_and(|o| {
            o.name == name && o.next == piece.start && o.total == total && o.unit == piece.unit
        });
        if !continues {
            out.extend(self.open.take().map(|o| o.cut_short()));
            let mut o = Open {
                name,
                total,
                unit: piece.unit,
                next: piece.start,
                stat: None,
                states: vec![Vec::new(); algos.len()],
                failed: None,
            };
            if piece.start != 0 {
                o.fail("its first pieces are not in the parts".into(), false);
            }
            self.open = Some(o);
        }
        let o = self.open.as_mut().expect("open");
        o.next = piece.end;
        match result {
            PieceResult::Hashed { changed: true, .. } => o.fail(CHANGED.into(), false),
            PieceResult::Hashed { size, mtime_ns, states, .. } => {
                if *o.stat.get_or_insert((size, mtime_ns)) != (size, mtime_ns) {
                    o.fail(CHANGED.into(), false);
                } else if states.len() != algos.len() {
                    o.fail("a piece holds no states".into(), false);
                } else {
                    for (all, s) in o.states.iter_mut().zip(states) {
                        all.push((piece.len(), s));
                    }
                }
            }
            PieceResult::Unreadable { message, skipped } => o.fail(message, skipped),
            PieceResult::Covered => unreachable!("handled above"),
        }
        if piece.end == total {
            out.push(self.open.take().expect("open").finish(algos));
        }
        out
    }

    /// What is left at the end of the parts: a file whose last pieces never came.
    pub(crate) fn finish(&mut self) -> Option<Record> {
        self.open.take().map(Open::cut_short)
    }
}

impl Open {
    /// Keeps the first reason the file gets no digest.
    fn fail(&mut self, message: String, skipped: bool) {
        self.failed.get_or_insert((message, skipped));
    }

    /// The record of a file whose pieces stop before its end.
    fn cut_short(mut self) -> Record {
        self.fail("its last pieces are not in the parts".into(), false);
        self.finish(&[])
    }

    /// The file's record from all its pieces.
    fn finish(self, algos: &[&'static Algorithm]) -> Record {
        let unreadable = |(message, skipped): (String, bool)| Record::Unreadable {
            name: self.name.clone(),
            message,
            skipped,
        };
        if let Some(why) = self.failed {
            return unreadable(why);
        }
        let (size, mtime_ns) = self.stat.expect("a piece was read");
        let mut digests: Vec<Digest> = Vec::with_capacity(algos.len());
        for (a, pieces) in algos.iter().zip(&self.states) {
            let refs: Vec<(u64, &[u8])> = pieces.iter().map(|(l, s)| (*l, &s[..])).collect();
            let joined = match a.combine {
                Some(c) => c.join(self.unit, &refs).map_err(|e| e.to_string()),
                None => Err(format!("{a} does not combine from ranges")),
            };
            match joined {
                Ok(d) => digests.push(d),
                Err(e) => return unreadable((format!("its pieces do not join: {e}"), false)),
            }
        }
        Record::Hashed { name: self.name.clone(), size, mtime_ns, digests, changed: false }
    }
}
