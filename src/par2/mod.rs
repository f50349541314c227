//! PAR2 2.0 recovery data, written here from the Parchive specification: the packets
//! (`packet`), GF(2^16) arithmetic with run-time picked SIMD kernels (`gf16`), the
//! Reed-Solomon code over it (`encode`), making a set in one read of its files
//! (`create`), writing it as files par2cmdline reads (`write`), reading any client's set
//! back and checking files against it (`set`), and computing lost slices (`solve`).
//!
//! The module knows files and bytes, not catalogs: `crate::repair` decides what to protect
//! and what a repaired file must be (the catalog's recorded digest).

mod create;
mod encode;
#[allow(unsafe_code)]
mod gf16;
mod packet;
mod scan;
mod set;
mod solve;
mod write;

pub(crate) use create::{CreateError, Member, Sink};
pub(crate) use set::{Set, State, check_file, empty_set, load, safe_name};
pub(crate) use solve::{Placed, solve};
pub(crate) use write::{Listing, Written};

/// A set made, its volumes written to temporary files: [`Pending::finish`] puts it in
/// place; dropping it leaves nothing behind (the caller found a reason not to keep it).
pub(crate) struct Pending {
    writer: write::SetWriter,
    described: create::Described,
    /// How many times the data was read.
    pub(crate) passes: u32,
}

impl Pending {
    /// Writes and syncs every file of the set, nothing put in place (see
    /// `SetWriter::sync`): where the set is made, before it is settled.
    pub(crate) fn sync(&mut self) -> std::io::Result<()> {
        self.writer.sync(&self.described)
    }

    /// Puts the set in place; `old`: the directory's files when the run began (the earlier
    /// version's volumes, removed unless the new set has them).
    pub(crate) fn finish(self, old: &Listing) -> std::io::Result<Written> {
        self.writer.finish(&self.described, old)
    }
}

/// Makes the set of `members` (of `sizes`, none empty) as `dir/STEM.par2` and its
/// volumes: `recovery` slices of `slice` bytes, read in as many passes as `memory` (the
/// recovery data held at once) needs. `sink` sees every byte of every member once
/// ([`Sink`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn make(
    members: &[Member],
    sizes: &[u64],
    slice: u64,
    recovery: u32,
    memory: u64,
    dir: &std::path::Path,
    stem: &std::ffi::OsStr,
    sink: &mut dyn Sink,
) -> Result<Pending, CreateError> {
    let names: Vec<&[u8]> = members.iter().map(|m| &m.name[..]).collect();
    let creator = creator();
    let critical = write::critical_len(&names, sizes, slice, &creator);
    let mut writer = write::SetWriter::new(dir, stem, recovery, slice, critical, memory, &creator)
        .map_err(CreateError::Emit)?;
    let passes = writer.passes(memory);
    let params = create::Params { slice, passes: passes.clone() };
    let described = create::create(members, &params, sink, &mut |d, rec| writer.take(d, rec))?;
    Ok(Pending { writer, described, passes: passes.len() as u32 })
}

/// The Creator packet's text.
pub(crate) fn creator() -> String {
    format!("Created by fixity version {}.", env!("CARGO_PKG_VERSION"))
}

/// The GF(2^16) kernel this CPU runs (for `bench` and `--verbose`).
pub fn kernel() -> &'static str {
    gf16::kernel_name()
}

/// Makes PAR2 recovery data for `data` held in memory, as `protect` would for a file of
/// it (slices of `slice` bytes, `recovery` recovery slices): the slices' checksums and the
/// recovery slices, on every core. Returns the recovery bytes made. For `fixity bench`.
pub fn encode_in_memory(data: &[u8], slice: u64, recovery: u32) -> usize {
    use rayon::prelude::*;
    let s = slice as usize;
    let n = data.len().div_ceil(s);
    let mut padded;
    let whole = if data.len().is_multiple_of(s) {
        data
    } else {
        padded = data.to_vec();
        padded.resize(n * s, 0);
        &padded[..]
    };
    let slices: Vec<&[u8]> = whole.chunks(s).collect();
    let per = slices.len().div_ceil(rayon::current_num_threads()).max(16);
    let checks: Vec<packet::SliceCheck> =
        slices.par_chunks(per).flat_map_iter(packet::slice_checks).collect();
    std::hint::black_box(checks);
    let mut enc = encode::Encoder::new(s, (0..recovery).collect(), n);
    for (k, batch) in slices.chunks(64).enumerate() {
        let items: Vec<(usize, &[u8])> =
            batch.iter().enumerate().map(|(i, d)| (k * 64 + i, *d)).collect();
        enc.add(&items);
    }
    enc.finish().iter().map(|r| r.1.len()).sum()
}

/// Scans bytes for PAR2 packets (the fuzz target's entry): how many intact packets.
pub fn scan_packets(data: &[u8]) -> usize {
    scan::scan(&data).0.len()
}

#[cfg(test)]
mod tests;
