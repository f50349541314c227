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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shard::Piece;

    fn piece_records(data: &[u8], algos: &[&'static Algorithm], cuts: &[u64]) -> Vec<Record> {
        let unit = 1024;
        let mut bounds = vec![0];
        bounds.extend_from_slice(cuts);
        bounds.push(data.len() as u64);
        bounds
            .windows(2)
            .map(|w| {
                let states = algos
                    .iter()
                    .map(|a| {
                        let mut p = a.combine.unwrap().piece(unit, w[0]);
                        p.update(&data[w[0] as usize..w[1] as usize]);
                        p.finish()
                    })
                    .collect();
                Record::Piece {
                    name: b"f".to_vec(),
                    piece: Piece { start: w[0], end: w[1], unit },
                    total: data.len() as u64,
                    result: PieceResult::Hashed {
                        size: data.len() as u64,
                        mtime_ns: Some(5),
                        states,
                        changed: false,
                    },
                }
            })
            .collect()
    }

    fn message(r: &Record) -> &str {
        match r {
            Record::Unreadable { message, .. } => message,
            r => panic!("not unreadable: {r:?}"),
        }
    }

    #[test]
    fn pieces_join_into_one_record_and_gaps_are_reported() {
        let algos = [crate::algo::lookup("blake3").unwrap(), crate::algo::lookup("crc32").unwrap()];
        let data: Vec<u8> = (0..5000u32).map(|i| (i * 7 % 251) as u8).collect();
        let records = piece_records(&data, &algos, &[1024, 3072]);
        let mut j = Joiner::default();
        let mut out = Vec::new();
        for r in records.iter().cloned() {
            out.extend(j.take(r, &algos));
        }
        assert!(j.finish().is_none());
        let [Record::Hashed { digests, size: 5000, .. }] = &out[..] else { panic!("{out:?}") };
        assert_eq!(digests[0], algos[0].digest(&data));
        assert_eq!(digests[1], algos[1].digest(&data));
        // The middle piece missing: one record, unreadable, at the file's place.
        let mut j = Joiner::default();
        let mut out = j.take(records[0].clone(), &algos);
        out.extend(j.take(records[2].clone(), &algos));
        out.extend(j.take(Record::Skipped { path: b"x".to_vec(), why: "y".into() }, &algos));
        assert_eq!(out.len(), 3, "{out:?}");
        assert!(message(&out[0]).contains("its last pieces are not in the parts"));
        assert!(message(&out[1]).contains("its first pieces are not in the parts"));
        // A piece whose stat differs from the others': changed.
        let mut changed = records.clone();
        if let Record::Piece { result: PieceResult::Hashed { mtime_ns, .. }, .. } = &mut changed[1]
        {
            *mtime_ns = Some(6);
        }
        let mut j = Joiner::default();
        let out: Vec<Record> = changed.into_iter().flat_map(|r| j.take(r, &algos)).collect();
        assert_eq!(message(&out[0]), CHANGED);
        // Covered pieces after a whole read are dropped; without one, reported once.
        let covered = |start, end| Record::Piece {
            name: b"f".to_vec(),
            piece: Piece { start, end, unit: 1024 },
            total: 5000,
            result: PieceResult::Covered,
        };
        let whole = Record::Unreadable { name: b"f".to_vec(), message: "m".into(), skipped: false };
        let mut j = Joiner::default();
        let out: Vec<Record> = [whole, covered(1024, 3072), covered(3072, 5000)]
            .into_iter()
            .flat_map(|r| j.take(r, &algos))
            .collect();
        assert_eq!(out.len(), 1);
        let mut j = Joiner::default();
        let out: Vec<Record> = [covered(1024, 3072), covered(3072, 5000)]
            .into_iter()
            .flat_map(|r| j.take(r, &algos))
            .collect();
        assert_eq!(out.len(), 1);
        assert!(message(&out[0]).contains("not in the parts"));
    }
}
