//! The lane engine: one worker hashes many files at once with a multi-buffer kernel
//! ([`crate::algo::multibuf`]: MD5, SHA-1 or SHA-256 of 8 or 16 independent inputs in the
//! lanes of SIMD registers). These algorithms are serial within one input, so a tree's
//! many files are what fills the lanes.
//!
//! Each lane holds one open file and a buffer of its next bytes. A step reads for every
//! lane that ran dry, finishes every lane whose file has been read to its end, then
//! compresses as many whole blocks as every busy lane has, all lanes together; a lane
//! that finishes is refilled with the next file at once, so a small file never waits for
//! a large one beside it. With few lanes busy (the tail of a run, one large file) the
//! kernel would compress mostly empty lanes: those steps use the single-stream code.
//!
//! BLAKE3 ([`multibuf::b3`]) is hashed otherwise: a lane holds a whole small file (at
//! most the kernel's `max_input`: 64 KiB with AVX-512, under 8 KiB with AVX2), read to its end before it is hashed, and every step hashes
//! the files read to their end together, their chunks side by side in the kernel's
//! lanes. Larger files (and empty ones) are hashed on the spot by the crate, which is
//! multi-lane within one large input.
//!
//! Reading keeps every guarantee of [`crate::read`]: the same open modes and refusals
//! ([`read::admit`]), reads stopped at the size of the stat, and a file that changes while
//! it is read reported as such ([`read::settle`]), never given a digest.

use super::{Outcome, Work, hash_file, hashed};
use crate::algo::multibuf::{self, Family, Kernel, State, b3};
use crate::digest::Digest;
use crate::read::{
    self, Admitted, Extents, OnChange, OpenMode, ReadError, ReadOptions, Serial, Span,
};
use crate::sys::MetadataExt;
use std::fs::{File, Metadata};
use std::io;
use std::sync::atomic::Ordering;

/// The most bytes a lane reads at once: large enough for few system calls, small enough
/// that 16 lanes' buffers stay small beside a worker's usual one.
const LANE_BUFFER: usize = 128 * 1024;

/// How far ahead the kernel is asked to read for a lane whose next bytes are not cached.
const READ_AHEAD: u64 = 2 * 1024 * 1024;

/// How many steps a lane whose bytes are not cached is polled without waiting
/// (`RWF_NOWAIT`) before it is read in the usual, waiting way. The kernel was asked to
/// fetch them at the first poll; if a few steps later they are still not there, either
/// the device is slow (the wait is short by then) or the kernel does not read ahead for
/// this file (ext4's data kept in the inode: `WILLNEED` does nothing for it), and
/// polling again at every step would cost a system call a step for nothing: a warm tree
/// of a million tiny files, a few thousand of them evicted, made 6.9 million failed
/// polls.
const MAX_POLLS: u32 = 4;

/// The smallest lane buffer (a file's size, rounded up to whole pages, above that).
const MIN_LANE_BUFFER: usize = 16 * 1024;

/// The multi-buffer family `work` hashes with, if a lane engine can take it: one
/// algorithm whose registry row has a family, a path to open (not standard input), and a
/// kernel this CPU runs.
pub(super) fn family_for(work: &Work) -> Option<Family> {
    let [algo] = &*work.algos else { return None };
    let family = algo.lanes?;
    let wins = if family == Family::Blake3 {
        b3::Kernel::best().is_some()
    } else {
        Kernel::for_engine(family).is_some()
    };
    (work.mode != OpenMode::Stdin && wins).then_some(family)
}

/// Whether a run of such work is one worker per core. So for the block families, whose
/// lanes hold files of any size; BLAKE3's lanes take small files only, and a tree of
/// large ones hashes faster with the usual workers (D1: 40.0 against 44.9 ms).
pub(super) fn one_per_core(work: &Work) -> bool {
    family_for(work).is_some_and(|f| f != Family::Blake3)
}

/// One busy lane: a file being read and hashed.
struct Lane<T> {
    seq: u64,
    payload: T,
    work: Work,
    file: File,
    before: Metadata,
    /// Size by the stat before the read: reading stops there (growth shows in the stat
    /// after). 0 reads to the end (a pseudo file system's files).
    len: u64,
    /// Bytes read so far.
    got: u64,
    /// The unhashed bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    /// Nothing more to read.
    eof: bool,
    /// The file system refuses reads that must not wait (`RWF_NOWAIT`).
    no_nowait: bool,
    /// How far the kernel has been asked to read ahead (`WILLNEED`): asked again only
    /// once the reads pass it, not at every step the lane waits.
    ahead: u64,
    /// Polls since the lane's last bytes came that found nothing cached
    /// ([`MAX_POLLS`]).
    polls: u32,
    /// A sparse file's extents: its holes are given as zeros, not read
    /// ([`read::is_sparse`]).
    holes: Option<Extents>,
    /// The file is hashed whole once read to its end (BLAKE3), not block by block.
    whole: bool,
}

impl<T> Lane<T> {
    /// Bytes read and not hashed yet.
    fn unhashed(&self) -> usize {
        self.end - self.start
    }

    /// Whether a step can go on with this lane without reading: a whole block to hash,
    /// or the end of the file.
    fn ready(&self) -> bool {
        self.eof || (!self.whole && self.unhashed() >= 64)
    }

    /// Whether the step finishes it: read to its end, and less than a block left (or
    /// the whole file, BLAKE3).
    fn finishing(&self) -> bool {
        self.eof && (self.whole || self.unhashed() < 64)
    }
}

/// What hashes the lanes' files.
enum Engine {
    /// A Merkle-Damgard kernel, block by block, one file per lane; `threshold` is the
    /// number of busy lanes from which it beats the single-stream code.
    Blocks { kernel: &'static Kernel, threshold: usize },
    /// BLAKE3: whole files, their chunks side by side.
    Blake3(&'static b3::Kernel),
}

/// A worker's lanes for one family.
pub(super) struct Lanes<T> {
    family: Family,
    engine: Engine,
    slots: Vec<Option<Lane<T>>>,
    states: Vec<State>,
    bufs: Vec<Vec<u8>>,
    /// Scratch buffer for an input that is not read in a lane (a FIFO named by the user).
    scratch: Vec<u8>,
}

impl<T> Lanes<T> {
    /// Lanes for `family`, if this CPU has a kernel for it that beats the single-stream
    /// code with enough lanes busy.
    pub(super) fn new(family: Family) -> Option<Lanes<T>> {
        let engine = if family == Family::Blake3 {
            Engine::Blake3(b3::Kernel::best()?)
        } else {
            let kernel = Kernel::for_engine(family)?;
            Engine::Blocks { kernel, threshold: kernel.break_even()? }
        };
        Some(Lanes::with_engine(family, engine))
    }

    fn with_engine(family: Family, engine: Engine) -> Lanes<T> {
        let n = match engine {
            // As many files as the widest kernel has lanes, whatever this one's: more
            // chunks at once fill more of its calls.
            Engine::Blake3(_) => multibuf::MAX_LANES,
            Engine::Blocks { kernel, .. } => kernel.lanes(),
        };
        Lanes {
            family,
            engine,
            slots: (0..n).map(|_| None).collect(),
            states: vec![multibuf::initial(family); n],
            bufs: vec![Vec::new(); n],
            scratch: Vec::new(),
        }
    }

    pub(super) fn family(&self) -> Family {
        self.family
    }

    /// Lanes with a file in them.
    pub(super) fn busy(&self) -> usize {
        self.slots.iter().filter(|s| s.is_some()).count()
    }

    /// Whether a lane is free for another file.
    pub(super) fn has_free(&self) -> bool {
        self.slots.iter().any(|s| s.is_none())
    }

    /// Opens the file of task `seq` and gives it a free lane. A file that cannot be
    /// opened or is refused gets its outcome at once through `done`, as does an input
    /// read as a stream (a FIFO named by the user) or a file on a device whose reads the
    /// storage policy may serialize (`serial`: a seeking disk), which are hashed here on
    /// the spot, one at a time.
    pub(super) fn admit(
        &mut self,
        seq: u64,
        payload: T,
        work: Work,
        opts: &ReadOptions,
        serial: Option<&dyn Serial>,
        done: &mut dyn FnMut(u64, T, Outcome),
    ) {
        let file = match read::open(&work.path, work.mode) {
            Ok(f) => f,
            Err(e) => return done(seq, payload, Some(Err(e))),
        };
        // BLAKE3's lanes take whole files up to the kernel's size; the crate the others.
        let whole = match self.engine {
            Engine::Blake3(k) => Some(k),
            Engine::Blocks { .. } => None,
        };
        let before = match read::admit(&file, work.mode, None, opts) {
            Ok(Admitted::Regular(before))
                if serial.is_none_or(|s| s.seeking(before.dev()) != Some(true))
                    && whole.is_none_or(|k| k.takes(before.len())) =>
            {
                before
            }
            Ok(_) => {
                let (path, algos) = (&work.path, &work.algos);
                let r = hash_file(&file, path, work.mode, algos, &mut self.scratch, opts, serial);
                return done(seq, payload, Some(r));
            }
            Err(e) => return done(seq, payload, Some(Err(e))),
        };
        let len = before.len();
        let holes = read::is_sparse(&before).then(|| Extents::new(len));
        // Read-ahead would read the holes too.
        if opts.advise && holes.is_none() {
            read::advise_sequential(&file, len);
        }
        let i = self.slots.iter().position(|s| s.is_none()).expect("a free lane");
        let want = usize::try_from(len).unwrap_or(usize::MAX).div_ceil(4096).saturating_mul(4096);
        let size = want.clamp(MIN_LANE_BUFFER, LANE_BUFFER);
        if self.bufs[i].len() < size {
            self.bufs[i] = vec![0; size];
        }
        self.states[i] = multibuf::initial(self.family);
        self.slots[i] = Some(Lane {
            seq,
            payload,
            work,
            file,
            before,
            len,
            got: 0,
            start: 0,
            end: 0,
            eof: false,
            no_nowait: false,
            ahead: 0,
            polls: 0,
            holes,
            whole: whole.is_some(),
        });
    }

    /// One step: read for the lanes that ran dry, finish the lanes read to their end,
    /// compress what every busy lane has. Outcomes go to `done`.
    pub(super) fn step(
        &mut self,
        opts: &ReadOptions,
        serial: Option<&dyn Serial>,
        done: &mut dyn FnMut(u64, T, Outcome),
    ) {
        // Lanes that ran dry read what the page cache holds; if none of them got
        // anything and no lane has work, wait for the first one's bytes.
        let mut waiting = None;
        for i in 0..self.slots.len() {
            let Some(lane) = self.slots[i].as_mut().filter(|l| !l.ready()) else { continue };
            match refill(lane, &mut self.bufs[i], lane.polls >= MAX_POLLS) {
                Ok(Refill::Progress) => {}
                Ok(Refill::Pending) => {
                    // The first read that waits for a device not decided yet decides it
                    // (the files after this one go by the decision).
                    let dev = lane.before.dev();
                    if let Some(s) = serial.filter(|s| s.seeking(dev).is_none()) {
                        s.wait(dev, &lane.work.path);
                    }
                    waiting.get_or_insert(i);
                }
                Err(e) => self.fail(i, e, done),
            }
        }
        if let Some(i) = waiting
            && !self.slots.iter().flatten().any(Lane::ready)
        {
            let lane = self.slots[i].as_mut().expect("busy");
            if let Err(e) = refill(lane, &mut self.bufs[i], true) {
                self.fail(i, e, done);
            }
        }
        if let Engine::Blake3(kernel) = self.engine {
            return self.finish_whole(kernel, opts, done);
        }
        for i in 0..self.slots.len() {
            if !self.slots[i].as_ref().is_some_and(Lane::finishing) {
                continue;
            }
            let lane = self.slots[i].take().expect("busy");
            let tail = &self.bufs[i][lane.start..lane.end];
            if let Some(p) = opts.progress {
                p.fetch_add(tail.len() as u64, Ordering::Relaxed);
            }
            let digest = multibuf::finish(self.family, self.states[i], tail, lane.got);
            let r = read::settle(&lane.file, &lane.before, lane.got, OnChange::Refuse)
                .map(|f| hashed(f, vec![digest]));
            done(lane.seq, lane.payload, Some(r));
        }
        self.compress(opts);
    }

    /// Hashes every file read to its end together (BLAKE3), and frees their lanes.
    fn finish_whole(
        &mut self,
        kernel: &b3::Kernel,
        opts: &ReadOptions,
        done: &mut dyn FnMut(u64, T, Outcome),
    ) {
        let ready: Vec<usize> = (0..self.slots.len())
            .filter(|&i| self.slots[i].as_ref().is_some_and(Lane::finishing))
            .collect();
        if ready.is_empty() {
            return;
        }
        let data: Vec<&[u8]> = ready
            .iter()
            .map(|&i| {
                let lane = self.slots[i].as_ref().expect("busy");
                &self.bufs[i][lane.start..lane.end]
            })
            .collect();
        let hashes = b3::hash_many(kernel, &data);
        if let Some(p) = opts.progress {
            p.fetch_add(data.iter().map(|d| d.len() as u64).sum(), Ordering::Relaxed);
        }
        for (&i, hash) in ready.iter().zip(hashes) {
            let lane = self.slots[i].take().expect("busy");
            let r = read::settle(&lane.file, &lane.before, lane.got, OnChange::Refuse)
                .map(|f| hashed(f, vec![Digest::new(&hash)]));
            done(lane.seq, lane.payload, Some(r));
        }
    }

    /// Frees lane `i`, whose read failed with `e`, and reports it.
    fn fail(&mut self, i: usize, e: io::Error, done: &mut dyn FnMut(u64, T, Outcome)) {
        let lane = self.slots[i].take().expect("busy");
        done(lane.seq, lane.payload, Some(Err(ReadError::Io(e))));
    }

    /// Compresses the whole blocks every busy lane has, in the kernel when enough lanes
    /// are busy, one lane at a time otherwise.
    fn compress(&mut self, opts: &ReadOptions) {
        let Engine::Blocks { kernel, threshold } = self.engine else { return };
        let mut blocks = usize::MAX;
        let mut active = 0;
        for lane in self.slots.iter().flatten() {
            let have = lane.unhashed() / 64;
            if have > 0 {
                blocks = blocks.min(have);
                active += 1;
            }
        }
        if active == 0 {
            return;
        }
        let bytes = blocks * 64;
        if active >= threshold {
            let mut data: [&[u8]; multibuf::MAX_LANES] = [&[]; multibuf::MAX_LANES];
            for (i, slot) in self.slots.iter().enumerate() {
                if let Some(l) = slot.as_ref().filter(|l| l.unhashed() >= bytes) {
                    data[i] = &self.bufs[i][l.start..l.start + bytes];
                }
            }
            let n = self.slots.len();
            kernel.compress(&mut self.states, &data[..n], blocks);
        } else {
            for (i, slot) in self.slots.iter().enumerate() {
                if let Some(l) = slot.as_ref().filter(|l| l.unhashed() >= bytes) {
                    let data = &self.bufs[i][l.start..l.start + bytes];
                    multibuf::compress_one(self.family, &mut self.states[i], data);
                }
            }
        }
        for lane in self.slots.iter_mut().flatten() {
            if lane.unhashed() >= bytes {
                lane.start += bytes;
            }
        }
        if let Some(p) = opts.progress {
            p.fetch_add((bytes * active) as u64, Ordering::Relaxed);
        }
    }
}

/// What a lane's read did.
#[derive(Debug, PartialEq, Eq)]
enum Refill {
    /// Bytes came, or the end of the file.
    Progress,
    /// The bytes are not in the page cache yet: the kernel was asked to fetch them, and
    /// the lane waits while the others go on.
    Pending,
}

/// Reads the next bytes of a lane's file behind the fewer than 64 still unhashed, up to
/// the size of the stat (or to the end of a file whose stat says 0). Sets `eof` when
/// nothing more is to be read.
///
/// Unless `block`, the read takes only what the page cache holds (`RWF_NOWAIT`); when
/// that is nothing, the kernel is asked to read the next bytes ahead
/// (`POSIX_FADV_WILLNEED`) and the lane waits: on a cold cache the lanes' files are
/// fetched side by side, many reads in flight from one thread.
fn refill<T>(lane: &mut Lane<T>, buf: &mut [u8], block: bool) -> io::Result<Refill> {
    if lane.start > 0 {
        buf.copy_within(lane.start..lane.end, 0);
        lane.end -= lane.start;
        lane.start = 0;
    }
    let mut room = buf.len() - lane.end;
    if lane.len > 0 {
        let left = lane.len - lane.got;
        if left == 0 {
            lane.eof = true;
            return Ok(Refill::Progress);
        }
        room = room.min(usize::try_from(left).unwrap_or(usize::MAX));
    }
    // Where the read-ahead stops: a sparse file's data extent's end (ahead of it, the
    // kernel would read the hole into the page cache).
    let mut extent_end = u64::MAX;
    if let Some(holes) = lane.holes.as_mut() {
        // A sparse file (its size known: `len` > 0): a hole is zeros, read up to the
        // end of the data extent.
        let span = holes.at(&lane.file, lane.got);
        let left = match span {
            Span::Data(end) | Span::Hole(end) => end - lane.got,
        };
        extent_end = lane.got + left;
        room = room.min(usize::try_from(left).unwrap_or(usize::MAX));
        if let Span::Hole(_) = span {
            buf[lane.end..lane.end + room].fill(0);
            lane.end += room;
            lane.got += room as u64;
            lane.eof = lane.got >= lane.len;
            return Ok(Refill::Progress);
        }
    }
    let dest = &mut buf[lane.end..lane.end + room];
    let r = read_some(lane, dest, block, extent_end);
    if let Ok(Refill::Pending) = r {
        lane.polls += 1;
    } else {
        lane.polls = 0;
    }
    r
}

/// The read of [`refill`] into `dest`.
fn read_some<T>(
    lane: &mut Lane<T>,
    dest: &mut [u8],
    block: bool,
    extent_end: u64,
) -> io::Result<Refill> {
    use crate::sys::FileExt;
    loop {
        let r = if block || lane.no_nowait {
            lane.file.read_at(dest, lane.got)
        } else {
            crate::device::pread_nowait(&lane.file, dest, lane.got)
        };
        match r {
            Ok(0) => {
                lane.eof = true;
                return Ok(Refill::Progress);
            }
            Ok(n) => {
                lane.end += n;
                lane.got += n as u64;
                if lane.len > 0 && lane.got >= lane.len {
                    lane.eof = true;
                }
                return Ok(Refill::Progress);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if lane.got >= lane.ahead {
                    let ahead = READ_AHEAD.min(extent_end - lane.got);
                    read::advise_willneed(&lane.file, lane.got, ahead);
                    lane.ahead = lane.got + ahead;
                }
                return Ok(Refill::Pending);
            }
            Err(e) if crate::device::cannot_nowait(&e) => {
                // No RWF_NOWAIT here (some file systems): plain reads from now on.
                lane.no_nowait = true;
            }
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Config, Task, run};
    use super::*;
    use crate::algo::{Algorithm, lookup};
    use std::io::Write;
    use std::path::PathBuf;
    use std::sync::Arc;

    /// Sizes around every block and buffer boundary, and larger than a lane's buffer.
    const SIZES: [usize; 24] = [
        0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1000, 4095, 4096, 4097, 16_384,
        65_537, 131_071, 131_072, 131_073, 300_001, 1_000_003,
    ];

    fn content(i: usize, len: usize) -> Vec<u8> {
        (0..len).map(|j| (j.wrapping_mul(31) ^ i.wrapping_mul(7)) as u8).collect()
    }

    fn single_stream(algo: &Algorithm, data: &[u8]) -> Vec<u8> {
        let mut h = algo.hasher();
        h.update(data);
        h.finish().as_bytes().to_vec()
    }

    /// Every file of a mixed tree gets, through the lanes, the digest the single-stream
    /// hasher gives; a missing file and a directory get the errors `hash_path` gives; the
    /// order is the producer's.
    #[test]
    fn lanes_give_the_single_stream_digests_and_errors() {
        let dir = tempfile::tempdir().unwrap();
        let mut files: Vec<(PathBuf, Option<Vec<u8>>)> = Vec::new();
        for round in 0..4 {
            for (k, &len) in SIZES.iter().enumerate() {
                let i = round * SIZES.len() + k;
                let p = dir.path().join(format!("f{i:03}"));
                let data = content(i, len);
                std::fs::write(&p, &data).unwrap();
                files.push((p, Some(data)));
            }
            files.push((dir.path().join(format!("missing{round}")), None));
        }
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        files.push((dir.path().join("sub"), None));
        for name in ["md5", "sha1", "sha256", "blake3"] {
            let algo = lookup(name).unwrap();
            assert!(algo.lanes.is_some(), "{name} has a kernel family");
            let algos: Arc<[&'static Algorithm]> = Arc::from(vec![algo]);
            for workers in [1, 3] {
                let cfg = Config { workers, ..Config::for_storage(false) };
                let mut seen = 0;
                run(
                    &cfg,
                    |push| {
                        for (i, (p, _)) in files.iter().enumerate() {
                            let work = Work {
                                path: p.clone(),
                                mode: OpenMode::Walked { follow: false },
                                algos: algos.clone(),
                            };
                            if !push(Task { payload: i, work: Some(work) }) {
                                return;
                            }
                        }
                    },
                    |i, outcome| {
                        assert_eq!(i, seen, "in order");
                        seen += 1;
                        let (path, data) = &files[i];
                        match (data, outcome.unwrap()) {
                            (Some(d), Ok(h)) => {
                                assert_eq!(h.size, d.len() as u64);
                                assert_eq!(
                                    h.digests[0].as_bytes(),
                                    single_stream(algo, d),
                                    "{name} of {} bytes",
                                    d.len()
                                );
                                assert!(h.mtime_ns.is_some() && h.file_id.is_some());
                            }
                            (None, Err(e)) => {
                                let direct = super::super::hash_path(
                                    path,
                                    OpenMode::Walked { follow: false },
                                    &[algo],
                                    &mut Vec::new(),
                                    &cfg.read,
                                    None,
                                )
                                .unwrap_err();
                                assert_eq!(e.message(), direct.message());
                            }
                            (d, r) => panic!("{path:?}: expected {}, got {r:?}", d.is_some()),
                        }
                        true
                    },
                );
                assert_eq!(seen, files.len());
            }
        }
    }

    /// Lanes of every kernel this CPU runs for `family`, not only the one dispatch picks
    /// (where the single stream wins, SHA-256 beside SHA-NI, dispatch picks none): each
    /// forced to run from one busy lane, and also from its break-even where dispatch
    /// would use it, with a name for messages. None on a CPU without any (no AVX2, not
    /// x86-64), which the test says ("skipped: WHY") instead of passing silently.
    fn every_lanes(family: Family) -> Vec<(String, Lanes<()>)> {
        let mut all = Vec::new();
        if family == Family::Blake3 {
            for k in b3::Kernel::every().filter(|k| k.lanes() > 1) {
                all.push((
                    format!("blake3 {}", k.name()),
                    Lanes::with_engine(family, Engine::Blake3(k)),
                ));
            }
        } else {
            for kernel in Kernel::every(family) {
                let mut thresholds = vec![1];
                thresholds.extend(kernel.break_even().filter(|&t| t > 1));
                for threshold in thresholds {
                    let name =
                        format!("{} {} from {threshold} lanes", family.name(), kernel.name());
                    let engine = Engine::Blocks { kernel, threshold };
                    all.push((name, Lanes::with_engine(family, engine)));
                }
            }
        }
        if all.is_empty() {
            eprintln!(
                "skipped: {} lanes: this CPU runs no multi-buffer kernel for it",
                family.name()
            );
        }
        all
    }

    fn lane_of(path: &std::path::Path, mut lanes: Lanes<()>) -> (Lanes<()>, Vec<Outcome>) {
        let algo = lookup(lanes.family().name()).unwrap();
        let work = Work { path: path.into(), mode: OpenMode::Named, algos: Arc::from(vec![algo]) };
        let mut out = Vec::new();
        lanes.admit(0, (), work, &ReadOptions::default(), None, &mut |_, _, o| out.push(o));
        assert!(out.is_empty() && lanes.busy() == 1);
        (lanes, out)
    }

    fn run_out(lanes: &mut Lanes<()>, out: &mut Vec<Outcome>) {
        while lanes.busy() > 0 {
            lanes.step(&ReadOptions::default(), None, &mut |_, _, o| out.push(o));
        }
    }

    /// One worker's lanes, kept full as the engine keeps them (a finished lane refilled at
    /// once), lanes of every length finishing at different times: every digest is the
    /// single-stream one, for every family.
    #[test]
    fn full_lanes_refilled_as_they_finish() {
        let dir = tempfile::tempdir().unwrap();
        let mut datas = Vec::new();
        for (i, &len) in SIZES.iter().chain(SIZES.iter().rev()).enumerate() {
            let data = content(i, len);
            std::fs::write(dir.path().join(format!("{i}")), &data).unwrap();
            datas.push(data);
        }
        let every = ["md5", "sha1", "sha256", "blake3"]
            .map(|n| every_lanes(lookup(n).unwrap().lanes.unwrap()));
        for (name, mut lanes) in every.into_iter().flatten() {
            let algo = lookup(lanes.family().name()).unwrap();
            let opts = ReadOptions::default();
            let mut out: Vec<(u64, Outcome)> = Vec::new();
            let mut next = 0;
            while next < datas.len() || lanes.busy() > 0 {
                while next < datas.len() && lanes.has_free() {
                    let work = Work {
                        path: dir.path().join(format!("{next}")),
                        mode: OpenMode::Named,
                        algos: Arc::from(vec![algo]),
                    };
                    lanes
                        .admit(next as u64, (), work, &opts, None, &mut |s, _, o| out.push((s, o)));
                    next += 1;
                }
                lanes.step(&opts, None, &mut |s, _, o| out.push((s, o)));
            }
            assert_eq!(out.len(), datas.len());
            for (seq, outcome) in out {
                let h = outcome.unwrap().unwrap();
                let d = &datas[seq as usize];
                assert_eq!(h.digests[0].as_bytes(), single_stream(algo, d), "{name} {}", d.len());
            }
        }
    }

    /// A file that grows or shrinks between the stat before the read and the end of the
    /// read is reported as changed, never given a digest.
    /// A BLAKE3 lane takes a whole file up to its kernel's `max_input`; a larger one is
    /// hashed on the spot by the crate (the same digest either way).
    #[test]
    fn blake3_lanes_take_files_up_to_their_kernels_limit() {
        let dir = tempfile::tempdir().unwrap();
        let algo = lookup("blake3").unwrap();
        for k in b3::Kernel::every().filter(|k| k.lanes() > 1) {
            for (len, in_lane) in [(k.max_input(), true), (k.max_input() + 1, false)] {
                let p = dir.path().join(format!("{}-{len}", k.name()));
                let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
                std::fs::write(&p, &data).unwrap();
                let mut lanes = Lanes::<()>::with_engine(Family::Blake3, Engine::Blake3(k));
                let work = Work { path: p, mode: OpenMode::Named, algos: Arc::from(vec![algo]) };
                let mut out = Vec::new();
                lanes.admit(0, (), work, &ReadOptions::default(), None, &mut |_, _, o| out.push(o));
                assert_eq!(lanes.busy() == 1, in_lane, "{} with {len} bytes", k.name());
                run_out(&mut lanes, &mut out);
                let Some(Ok(got)) = &out[0] else { panic!("{} {len}: {out:?}", k.name()) };
                assert_eq!(got.digests[0].as_bytes(), blake3::hash(&data).as_bytes(), "{len}");
            }
        }
        if b3::Kernel::every().all(|k| k.lanes() == 1) {
            eprintln!("skipped: BLAKE3 lane limits: this CPU runs no BLAKE3 lane kernel");
        }
    }

    #[test]
    fn a_file_that_changes_in_a_lane_is_refused() {
        // A file a block lane hashes as it reads, and one a BLAKE3 lane hashes whole (under
        // every BLAKE3 kernel's max_input).
        let cases = [(Family::Md5, 200_000), (Family::Blake3, 6_000)];
        for (family, len) in cases {
            for (name, _) in every_lanes(family) {
                refused_in_lanes(family, &name, len);
            }
        }
    }

    /// [`a_file_that_changes_in_a_lane_is_refused`] with the kernel named `name`.
    fn refused_in_lanes(family: Family, name: &str, len: usize) {
        let fresh = || every_lanes(family).into_iter().find(|(n, _)| n == name).unwrap().1;
        let algo = lookup(family.name()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let grows = dir.path().join("grows");
        std::fs::write(&grows, vec![1u8; len]).unwrap();
        let (mut lanes, mut out) = lane_of(&grows, fresh());
        let mut f = std::fs::OpenOptions::new().append(true).open(&grows).unwrap();
        f.write_all(b"more").unwrap();
        run_out(&mut lanes, &mut out);
        assert!(matches!(out.as_slice(), [Some(Err(ReadError::Changed))]), "{name} {out:?}");

        let shrinks = dir.path().join("shrinks");
        std::fs::write(&shrinks, vec![2u8; len]).unwrap();
        let (mut lanes, mut out) = lane_of(&shrinks, fresh());
        let f = std::fs::OpenOptions::new().write(true).open(&shrinks).unwrap();
        f.set_len(1000).unwrap();
        run_out(&mut lanes, &mut out);
        assert!(matches!(out.as_slice(), [Some(Err(ReadError::Changed))]), "{name} {out:?}");

        // Untouched, the same file hashes.
        let (mut lanes, mut out) = lane_of(&shrinks, fresh());
        run_out(&mut lanes, &mut out);
        let [Some(Ok(h))] = out.as_slice() else { panic!("{name} {out:?}") };
        assert_eq!(h.digests[0].as_bytes(), single_stream(algo, &[2u8; 1000]));
    }
}
