//! Making a recovery set: read each file once, computing in the same read the PAR2
//! checksums (the whole file's MD5, its first 16 KiB's, each slice's MD5 and CRC-32), the
//! recovery slices, and whatever the caller's sink wants (the catalog's digest).
//!
//! A File ID depends on the MD5 of the file's first 16 KiB, and the slices are numbered in
//! File-ID order, so the heads are read first (and kept, up to [`HEAD_BUDGET`], so they are
//! not read twice); the files are then read in the order given (path order), each slice
//! going to the encoder under its number. A reader thread reads and hashes the serial
//! digests while the calling thread (with rayon) checksums slices and multiplies them
//! into the recovery buffers: two batches in flight. The caller says which recovery slices
//! each read of the data (a pass) computes, so their memory is bounded (`write::SetWriter`
//! plans the passes from the memory allowed); each pass hands its slices out at its end.

use super::encode::{Encoder, batch_bytes};
use super::packet::{
    DataMd5, FileDesc, Id, Ifsc, Main, SliceCheck, id_order, md5_many, slice_checks,
};
use crate::read::Zeroed;
use crate::sys::FileExt;
use crate::sys::MetadataExt;
use rayon::prelude::*;
use std::fs::File;
use std::io::{self, Read};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

/// Bytes of file heads kept between the first read of the heads and the read of the data.
const HEAD_BUDGET: usize = 64 << 20;
/// The first 16 KiB: what the File ID hashes.
const HEAD: u64 = 16 << 10;

/// The caller's sink: every byte of every member once, in order (the catalog's digests).
pub(crate) trait Sink: Send {
    /// The next bytes of member `i`.
    fn update(&mut self, i: usize, data: &[u8]);

    /// Members read whole with their heads (no longer than 16 KiB), each `(member, its
    /// bytes)`: given here, once, instead of to [`Sink::update`], so that their digests can
    /// be taken together (in the lanes: most of a tree of small files).
    fn whole(&mut self, members: &[(usize, &[u8])]) {
        for &(i, d) in members {
            self.update(i, d);
        }
    }
}

impl<F: FnMut(usize, &[u8]) + Send> Sink for F {
    fn update(&mut self, i: usize, data: &[u8]) {
        self(i, data)
    }
}

/// A file to protect: where to read it, and its name in the set (relative to the base
/// directory, `/` between components).
#[derive(Clone, Debug)]
pub(crate) struct Member {
    pub(crate) path: PathBuf,
    pub(crate) name: Vec<u8>,
}

/// What to make.
#[derive(Clone, Debug)]
pub(crate) struct Params {
    /// Slice size, a multiple of 4.
    pub(crate) slice: u64,
    /// The recovery slices' exponents, one range per read of the data (a pass): the
    /// recovery data of a pass is held in memory until handed out.
    pub(crate) passes: Vec<Range<u32>>,
}

/// A set's description: what its critical packets say, known after the first pass.
pub(crate) struct Described {
    pub(crate) main: Main,
    /// In the Main packet's order.
    pub(crate) descs: Vec<FileDesc>,
    pub(crate) ifscs: Vec<Ifsc>,
}

/// Receives, after each pass, the set's description and that pass's recovery slices
/// (exponent, data); an error stops the making.
pub(crate) type Emit<'a> = &'a mut dyn FnMut(&Described, Vec<(u32, Vec<u8>)>) -> io::Result<()>;

/// Why a set was not made.
#[derive(Debug)]
pub(crate) enum CreateError {
    /// A member could not be read as it was (the caller leaves it out and tries again).
    Member(MemberError),
    /// The recovery data could not be handed out (written).
    Emit(io::Error),
}

impl From<MemberError> for CreateError {
    fn from(e: MemberError) -> CreateError {
        CreateError::Member(e)
    }
}

/// Why a set could not be made: one member could not be read as it was (the caller
/// leaves it out and tries again), or it changed while read.
#[derive(Debug)]
pub(crate) struct MemberError {
    pub(crate) member: usize,
    pub(crate) error: io::Error,
}

/// A member's stamp at its first read: size, mtime (ns), inode.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Stamp(u64, i128, u64);

fn stamp(f: &File) -> io::Result<Stamp> {
    stamp_of(f, &f.metadata()?)
}

/// [`stamp`] of an open file from a stat of it already taken.
fn stamp_of(f: &File, m: &std::fs::Metadata) -> io::Result<Stamp> {
    if !m.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    let ino = crate::sys::id(f, m).1;
    Ok(Stamp(m.len(), m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128, ino))
}

/// A member changed between its reads (or while read): an edit under way, not a fault.
#[derive(Debug)]
struct Changed;

impl std::fmt::Display for Changed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("changed while being read")
    }
}

impl std::error::Error for Changed {}

fn changed() -> io::Error {
    io::Error::other(Changed)
}

impl MemberError {
    /// Whether the member changed while read (else it could not be read).
    pub(crate) fn changed(&self) -> bool {
        self.error.get_ref().is_some_and(|e| e.is::<Changed>())
    }
}

/// What the first read of a member found.
struct Head {
    stamp: Stamp,
    /// The first 16 KiB (the whole file when shorter).
    bytes: Vec<u8>,
    /// Whether the budget had room to keep them until the data is read.
    keep: bool,
}

impl Head {
    /// Whether it holds the whole member.
    fn is_whole(&self) -> bool {
        self.bytes.len() as u64 == self.stamp.0
    }
}

fn head(
    i: usize,
    m: &Member,
    budget: &std::sync::atomic::AtomicUsize,
) -> Result<Head, MemberError> {
    use std::sync::atomic::Ordering;
    let fail = |error| MemberError { member: i, error };
    let f = File::open(&m.path).map_err(fail)?;
    let st = stamp(&f).map_err(fail)?;
    // Read into room not zeroed first (50,000 small files: 217 MB of zeros written for
    // nothing); the probe for more that ends `read_to_end` stops at the limit, unread.
    let n = st.0.min(HEAD) as usize;
    let mut head = Vec::with_capacity(n);
    (&f).take(n as u64).read_to_end(&mut head).map_err(fail)?;
    if head.len() < n {
        return Err(fail(io::ErrorKind::UnexpectedEof.into()));
    }
    // A file read whole here is not read again: it must not have changed meanwhile.
    if st.0 <= HEAD && stamp(&f).map_err(fail)? != st {
        return Err(fail(changed()));
    }
    let n = head.len();
    let keep =
        budget.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| b.checked_sub(n)).is_ok();
    Ok(Head { stamp: st, bytes: head, keep })
}

/// Makes the set of `members` (none empty). `sink` sees every byte of every member once:
/// the members read whole with their heads at once, the others in order during the first
/// pass.
pub(crate) fn create(
    members: &[Member],
    p: &Params,
    sink: &mut dyn Sink,
    emit: Emit<'_>,
) -> Result<Described, CreateError> {
    // The heads: File IDs, and so the numbering of the slices. Read in parallel; a file
    // no longer than its head is read whole here and not opened again.
    let budget = std::sync::atomic::AtomicUsize::new(HEAD_BUDGET);
    let read: Vec<Result<Head, MemberError>> =
        members.par_iter().enumerate().map(|(i, m)| head(i, m, &budget)).collect();
    let read: Vec<Head> = read.into_iter().collect::<Result<_, _>>()?;
    // Their MD5s in lanes, a group of like-sized heads per thread.
    let bytes: Vec<&[u8]> = read.iter().map(|h| &h.bytes[..]).collect();
    let per = bytes.len().div_ceil(rayon::current_num_threads() * 4).max(64);
    let md5s: Vec<Id> = bytes.par_chunks(per).flat_map_iter(md5_many).collect();
    // The members the heads hold whole go to the sink now (and not again in the pass).
    let whole: Vec<(usize, &[u8])> = read
        .iter()
        .enumerate()
        .filter(|(_, h)| h.is_whole())
        .map(|(i, h)| (i, &h.bytes[..]))
        .collect();
    sink.whole(&whole);
    let fed: Vec<bool> = read.iter().map(Head::is_whole).collect();
    let mut heads = Vec::with_capacity(members.len());
    let mut stamps = Vec::with_capacity(members.len());
    for (h, md5) in read.into_iter().zip(md5s) {
        heads.push((md5, h.keep.then_some(h.bytes)));
        stamps.push(h.stamp);
    }
    let ids: Vec<Id> = members
        .iter()
        .zip(&heads)
        .zip(&stamps)
        .map(|((m, h), s)| FileDesc::file_id(&h.0, s.0, &m.name))
        .collect();
    let mut order: Vec<usize> = (0..members.len()).collect();
    order.sort_by(|&a, &b| id_order(&ids[a], &ids[b]));
    let s = p.slice;
    let mut first = vec![0usize; members.len()];
    let mut total = 0usize;
    for &i in &order {
        first[i] = total;
        total += stamps[i].0.div_ceil(s) as usize;
    }
    let mut checks = vec![SliceCheck { md5: [0; 16], crc: 0 }; total];
    let mut md5s = vec![[0u8; 16]; members.len()];
    let mut described = None;
    for (k, exps) in p.passes.iter().enumerate() {
        let mut enc = Encoder::new(s as usize, exps.clone().collect(), total);
        let job =
            Pass { members, heads: &heads, stamps: &stamps, first: &first, fed: &fed, slice: s };
        job.run(&mut enc, (k == 0).then_some(&mut *sink), &mut checks, &mut md5s)?;
        let d = described.get_or_insert_with(|| Described {
            main: Main {
                slice_size: s,
                files: order.iter().map(|&i| ids[i]).collect(),
                others: vec![],
            },
            descs: order
                .iter()
                .map(|&i| FileDesc {
                    id: ids[i],
                    md5: md5s[i],
                    md5_16k: heads[i].0,
                    length: stamps[i].0,
                    name: members[i].name.clone(),
                })
                .collect(),
            ifscs: order
                .iter()
                .map(|&i| {
                    let n = stamps[i].0.div_ceil(s) as usize;
                    Ifsc { id: ids[i], checks: checks[first[i]..first[i] + n].to_vec() }
                })
                .collect(),
        });
        emit(d, enc.finish()).map_err(CreateError::Emit)?;
    }
    Ok(described.expect("at least one pass"))
}

/// One read of the data.
struct Pass<'a> {
    members: &'a [Member],
    heads: &'a [(Id, Option<Vec<u8>>)],
    stamps: &'a [Stamp],
    first: &'a [usize],
    /// The members the sink was given whole.
    fed: &'a [bool],
    slice: u64,
}

/// Input slices read, for the encoder.
struct Batch {
    /// Room for the batch's slices, allocated (and zeroed) once: the slices in use are
    /// [`Batch::data`].
    buf: Vec<u8>,
    /// The set's number of each slice in `buf`.
    slices: Vec<usize>,
    /// The member each slice is of, and its bytes before the padding.
    parts: Vec<(usize, usize)>,
}

impl Batch {
    /// The slices of the batch, `slice` bytes each.
    fn data(&self, slice: usize) -> &[u8] {
        &self.buf[..self.slices.len() * slice]
    }
}

impl Pass<'_> {
    fn run(
        &self,
        enc: &mut Encoder,
        sink: Option<&mut dyn Sink>,
        checks: &mut [SliceCheck],
        md5s: &mut [Id],
    ) -> Result<(), MemberError> {
        let s = self.slice as usize;
        let per_batch = (batch_bytes(enc.bytes()) / self.slice).clamp(1, 512) as usize;
        let want_checks = sink.is_some();
        // Two batches: one filled by the reader while the other is encoded (a third made
        // no run faster and held 50 MB more for a 2 GiB file).
        let (full_tx, full_rx) = sync_channel::<Batch>(1);
        let (free_tx, free_rx) = sync_channel::<Batch>(2);
        for _ in 0..2 {
            let b = Batch { buf: vec![0; per_batch * s], slices: Vec::new(), parts: Vec::new() };
            free_tx.send(b).expect("room for the batches");
        }
        let mut sink = sink;
        std::thread::scope(|scope| {
            let reader = scope.spawn(move || self.read_all(per_batch, &full_tx, &free_rx));
            for batch in full_rx.iter() {
                // The caller's digests (serial per member) beside the slices' checksums and
                // the recovery data (parallel).
                let feed = |sink: &mut Option<&mut dyn Sink>| {
                    if let Some(sink) = sink.as_deref_mut() {
                        for (d, &(m, n)) in batch.data(s).chunks(s).zip(&batch.parts) {
                            if !self.fed[m] {
                                sink.update(m, &d[..n]);
                            }
                        }
                    }
                };
                let work = || {
                    let sums = want_checks.then(|| {
                        // Groups of slices, one per thread, each group in the MD5 lanes.
                        let slices: Vec<&[u8]> = batch.data(s).chunks(s).collect();
                        let per = slices.len().div_ceil(rayon::current_num_threads()).max(16);
                        slices.par_chunks(per).flat_map_iter(slice_checks).collect::<Vec<_>>()
                    });
                    let items: Vec<(usize, &[u8])> =
                        batch.slices.iter().copied().zip(batch.data(s).chunks(s)).collect();
                    enc.add(&items);
                    sums
                };
                let ((), sums) = rayon::join(|| feed(&mut sink), work);
                for (&i, c) in batch.slices.iter().zip(sums.into_iter().flatten()) {
                    checks[i] = c;
                }
                let _ = free_tx.send(batch);
            }
            let done = reader.join().expect("the reader thread does not panic")?;
            if want_checks {
                md5s.copy_from_slice(&done);
            }
            Ok(())
        })
    }

    /// Reads every member into batches; returns each member's MD5.
    fn read_all(
        &self,
        per_batch: usize,
        full: &SyncSender<Batch>,
        free: &Receiver<Batch>,
    ) -> Result<Vec<Id>, MemberError> {
        let mut md5s = Vec::with_capacity(self.members.len());
        let mut out = Out { batch: free.recv().expect("a free batch"), per_batch, full, free };
        for (i, m) in self.members.iter().enumerate() {
            let len = self.stamps[i].0;
            let (head_md5, head) = &self.heads[i];
            match head {
                // Read whole with the heads (and checked unchanged then): from memory.
                Some(h) if h.len() as u64 == len => {
                    for (j, data) in h.chunks(self.slice as usize).enumerate() {
                        out.push(self.first[i] + j, i, data, self.slice as usize);
                    }
                    md5s.push(*head_md5);
                }
                _ => md5s.push(self.read_member(i, m, &mut out)?),
            }
        }
        if !out.batch.slices.is_empty() {
            full.send(out.batch).expect("the encoder takes batches");
        }
        Ok(md5s)
    }

    /// Reads member `i` (its kept head from memory) into batches; returns its MD5.
    fn read_member(&self, i: usize, m: &Member, out: &mut Out<'_>) -> Result<Id, MemberError> {
        let fail = |error| MemberError { member: i, error };
        let s = self.slice as usize;
        let f = File::open(&m.path).map_err(fail)?;
        // One stat: the stamp to compare, and the extents' size for the reader below.
        let meta = f.metadata().map_err(fail)?;
        if stamp_of(&f, &meta).map_err(fail)? != self.stamps[i] {
            return Err(fail(changed()));
        }
        let len = self.stamps[i].0;
        let mut md5 = DataMd5::new();
        let (head_md5, head) = &self.heads[i];
        let kept = head.as_ref().map_or(0, |h| h.len() as u64);
        // From the kept head's end on; a sparse member's holes as zeros, not read. Slices
        // of 64 KiB and more are read straight into the batch (a buffer between would copy
        // every byte once more: a tenth of a large file's run); small ones through 256 KiB
        // reads.
        let capacity = if s >= 64 << 10 { 0 } else { 256 << 10 };
        let mut reader = io::BufReader::with_capacity(capacity, Zeroed::new(&f, &meta, kept));
        let mut pos = 0u64;
        let mut slice_no = 0usize;
        let mut head_check = DataMd5::new();
        while pos < len {
            let n = (len - pos).min(self.slice) as usize;
            let dst = out.next(self.first[i] + slice_no, i, n, s);
            // The part of this slice still in the kept head comes from memory; the reader
            // stands at the head's end, then at `pos`.
            let from_head = kept.saturating_sub(pos).min(n as u64) as usize;
            if let Some(h) = head.as_ref().filter(|_| from_head > 0) {
                dst[..from_head].copy_from_slice(&h[pos as usize..pos as usize + from_head]);
            }
            reader.read_exact(&mut dst[from_head..]).map_err(fail)?;
            if head.is_none() && pos < HEAD {
                head_check.update(&dst[..(HEAD - pos).min(n as u64) as usize]);
            }
            md5.update(dst);
            out.done();
            slice_no += 1;
            pos += n as u64;
        }
        drop(reader);
        if head.is_none() && head_check.finish() != *head_md5 {
            return Err(fail(changed()));
        }
        // Changed since its first stat, or grown past the length read.
        let mut probe = [0u8; 1];
        if stamp(&f).map_err(fail)? != self.stamps[i]
            || f.read_at(&mut probe, len).map_err(fail)? != 0
        {
            return Err(fail(changed()));
        }
        Ok(md5.finish())
    }
}

/// Where the reader puts slices: the batch being filled, handed on when full.
struct Out<'a> {
    batch: Batch,
    per_batch: usize,
    full: &'a SyncSender<Batch>,
    free: &'a Receiver<Batch>,
}

impl Out<'_> {
    /// Adds slice `index` of `member` (`data`, zero-padded to `slice` bytes).
    fn push(&mut self, index: usize, member: usize, data: &[u8], slice: usize) {
        self.next(index, member, data.len(), slice).copy_from_slice(data);
        self.done();
    }

    /// The room for slice `index` of `member`, `n` of its `slice` bytes data (the rest
    /// zeros): the caller fills it, then calls [`Out::done`].
    fn next(&mut self, index: usize, member: usize, n: usize, slice: usize) -> &mut [u8] {
        let at = self.batch.slices.len() * slice;
        // The batch's buffer is reused as it is: the data goes over whatever an earlier
        // batch left, and only the padding past it is cleared.
        let room = &mut self.batch.buf[at..at + slice];
        room[n..].fill(0);
        self.batch.slices.push(index);
        self.batch.parts.push((member, n));
        &mut room[..n]
    }

    /// Ends the slice [`Out::next`] gave: a full batch goes to the encoder.
    fn done(&mut self) {
        if self.batch.slices.len() == self.per_batch {
            let next = self.free.recv().expect("a free batch");
            let full = std::mem::replace(&mut self.batch, next);
            self.full.send(full).expect("the encoder takes batches");
            self.batch.slices.clear();
            self.batch.parts.clear();
        }
    }
}
