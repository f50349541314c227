//! Repair: the lost input slices of a set computed from the recovery slices and the
//! slices still intact.
//!
//! With `m` slices lost, `m` recovery slices are taken; the `m` x `m` matrix of their
//! exponents over the lost slices' constants must invert. PAR2's Vandermonde-like code is
//! not MDS over GF(2^16), so a choice that does not invert is replaced by another (other
//! exponents) until one does or the tries run out. Then each recovery slice has the
//! intact slices' share subtracted (one read of the set's intact data, in batches), and
//! the inverse turns the remainders into the lost slices.

use super::encode::{batch_bytes, invert, lost_matrix, mul_add_parallel};
use super::gf16;
use super::packet::{DataMd5, FileDesc, Id};
use super::set::{Set, State, open_member, read_full};
use crate::read::Zeroed;
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Write};

/// Other choices of recovery slices tried when one does not invert.
const TRIES: usize = 64;

/// Why a set cannot be repaired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unrepairable {
    /// More slices lost than recovery slices intact.
    TooFew { lost: usize, available: usize },
    /// No choice of recovery slices tried inverted.
    Singular { lost: usize, tries: usize },
    /// Descriptions or checksums of some files were lost with the PAR2 files: the
    /// slices cannot be numbered.
    Incomplete,
    /// The repair would hold more than the memory allowed (bytes needed).
    Memory(u64),
    /// A read failed (of a recovery slice or an intact slice).
    Io(String),
}

impl std::fmt::Display for Unrepairable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unrepairable::TooFew { lost, available } => write!(
                f,
                "too few recovery slices: {lost} slices lost, {available} recovery slices intact \
                 ({} more needed)",
                lost - available
            ),
            Unrepairable::Singular { lost, tries } => {
                write!(f, "no {tries} choices of recovery slices for {lost} lost slices inverted")
            }
            Unrepairable::Incomplete => {
                write!(f, "the recovery files lost the description of some protected files")
            }
            Unrepairable::Memory(n) => write!(f, "repair needs {n} bytes, more than --memory"),
            Unrepairable::Io(e) => write!(f, "{e}"),
        }
    }
}

/// The lost slices, computed.
pub(crate) struct Solution {
    slice: usize,
    data: HashMap<usize, Vec<u8>>,
    /// The recovery exponents used (the tests check the non-MDS retry with it).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) exponents: Vec<u32>,
}

/// A file of the set as laid out: description, first slice, what checking found.
pub(crate) struct Placed<'a> {
    pub(crate) desc: &'a FileDesc,
    pub(crate) first: usize,
    pub(crate) state: &'a State,
}

/// Computes every lost slice of `set` whose files are beneath `base`.
pub(crate) fn solve(
    set: &Set,
    base: &File,
    files: &[Placed<'_>],
    memory: u64,
) -> Result<Solution, Unrepairable> {
    if !set.complete() {
        return Err(Unrepairable::Incomplete);
    }
    let s = set.main.slice_size as usize;
    let mut lost = Vec::new();
    let mut present = Vec::new();
    for p in files {
        let n = p.desc.length.div_ceil(s as u64) as usize;
        for (j, ok) in p.state.usable(n).into_iter().enumerate() {
            if ok { present.push((p, j)) } else { lost.push(p.first + j) }
        }
    }
    let m = lost.len();
    if m == 0 {
        return Ok(Solution { slice: s, data: HashMap::new(), exponents: vec![] });
    }
    let available: Vec<u32> = set.recovery.keys().copied().collect();
    if available.len() < m {
        return Err(Unrepairable::TooFew { lost: m, available: available.len() });
    }
    let need = 2 * (m as u64) * s as u64;
    if need > memory {
        return Err(Unrepairable::Memory(need));
    }
    let constants = gf16::input_constants(set.input_slices());
    let (exponents, inverse) = choose(&constants, &lost, &available)?;
    // The recovery slices, less the intact slices' share.
    let mut rhs = Vec::with_capacity(m);
    for &e in &exponents {
        rhs.push(set.recovery_data(e).map_err(|e| Unrepairable::Io(e.to_string()))?);
    }
    let per_batch = (batch_bytes((m * s) as u64) as usize / s).max(1);
    // Each member opened once, with its stat (a sparse one's holes are read as zeros).
    let mut opened: HashMap<*const FileDesc, (File, std::fs::Metadata)> = HashMap::new();
    for chunk in present.chunks(per_batch) {
        let mut buf = vec![0u8; chunk.len() * s];
        let mut indices = Vec::with_capacity(chunk.len());
        for ((p, j), dst) in chunk.iter().zip(buf.chunks_mut(s)) {
            let key = p.desc as *const FileDesc;
            if let std::collections::hash_map::Entry::Vacant(slot) = opened.entry(key) {
                let f = open_member(base, &p.desc.name)
                    .map_err(|st| Unrepairable::Io(format!("cannot reopen: {st:?}")))?;
                let meta = f.metadata().map_err(|e| Unrepairable::Io(e.to_string()))?;
                slot.insert((f, meta));
            }
            let start = *j as u64 * s as u64;
            let n = (p.desc.length - start).min(s as u64) as usize;
            let (f, meta) = &opened[&key];
            let got = read_full(&mut Zeroed::new(f, meta, start), &mut dst[..n]);
            if got.map_err(|e| Unrepairable::Io(e.to_string()))? != n {
                return Err(Unrepairable::Io("a file shrank during repair".into()));
            }
            indices.push(p.first + j);
        }
        let coeffs = lost_matrix(&constants, &indices, &exponents);
        let srcs: Vec<&[u8]> = buf.chunks(s).collect();
        mul_add_parallel(&mut rhs, &srcs, &coeffs);
    }
    let mut out = vec![vec![0u8; s]; m];
    let r: Vec<&[u8]> = rhs.iter().map(|v| &v[..]).collect();
    mul_add_parallel(&mut out, &r, &inverse);
    Ok(Solution { slice: s, data: lost.into_iter().zip(out).collect(), exponents })
}

/// Recovery exponents whose matrix over `lost` inverts, and the inverse: the first `m`
/// available, then other choices.
fn choose(
    constants: &[u16],
    lost: &[usize],
    available: &[u32],
) -> Result<(Vec<u32>, Vec<u16>), Unrepairable> {
    let m = lost.len();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64 ^ m as u64;
    for attempt in 0..TRIES {
        let exps: Vec<u32> = if attempt == 0 {
            available[..m].to_vec()
        } else if attempt < available.len() - m + 1 {
            // A window further along the available exponents.
            available[attempt..attempt + m].to_vec()
        } else {
            let mut pool = available.to_vec();
            for i in 0..m {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let j = i + (seed % (pool.len() - i) as u64) as usize;
                pool.swap(i, j);
            }
            let mut pick = pool[..m].to_vec();
            pick.sort_unstable();
            pick
        };
        if let Some(inv) = invert(lost_matrix(constants, lost, &exps), m) {
            return Ok((exps, inv));
        }
    }
    Err(Unrepairable::Singular { lost: m, tries: TRIES })
}

impl Solution {
    /// Writes the file `p` as recorded to `out`: its intact slices from where it is now,
    /// its lost ones from the solution. Returns the MD5 of what was written.
    pub(crate) fn write_file(
        &self,
        base: &File,
        p: &Placed<'_>,
        out: &mut dyn Write,
    ) -> io::Result<Id> {
        let s = self.slice as u64;
        let n = p.desc.length.div_ceil(s) as usize;
        let usable = p.state.usable(n);
        // The file as it is now, and its stat (a sparse file's holes are read as zeros).
        let current = if usable.iter().any(|&u| u) {
            let f = open_member(base, &p.desc.name)
                .map_err(|st| io::Error::other(format!("{st:?}")))?;
            let meta = f.metadata()?;
            Some((f, meta))
        } else {
            None
        };
        let mut md5 = DataMd5::new();
        let mut buf = vec![0u8; self.slice];
        for (j, &intact) in usable.iter().enumerate() {
            let start = j as u64 * s;
            let len = (p.desc.length - start).min(s) as usize;
            let data: &[u8] = match (intact, &current) {
                (true, Some((f, meta))) => {
                    let mut r = Zeroed::new(f, meta, start);
                    if read_full(&mut r, &mut buf[..len])? != len {
                        return Err(io::Error::other("the file shrank during repair"));
                    }
                    &buf[..len]
                }
                _ => match self.data.get(&(p.first + j)) {
                    Some(d) => &d[..len],
                    None => return Err(io::Error::other("a lost slice was not computed")),
                },
            };
            md5.update(data);
            out.write_all(data)?;
        }
        Ok(md5.finish())
    }
}
