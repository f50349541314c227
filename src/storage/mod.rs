//! The storage policy: how the files of each device are read. A seeking disk (a spinning
//! disk, or anything that answers random reads in milliseconds) gets one reader at a time
//! and its files in physical order; flash, virtual disks and network storage get many
//! reads in flight. The policy is decided per device (`st_dev`), once per run, from what
//! the device does ([`probe`]: a few small timed reads of files the run reads anyway)
//! rather than from the kernel's rotational flag alone (most virtual and cloud disks say
//! they rotate); `--storage` overrides it.
//!
//! [`Devices`] is the run's table of decisions: the reader asks it through
//! [`read::Serial`](crate::read::Serial) which lock, if any, a file's reads take; the
//! engine's producer asks it which files to hold back and hand on in physical order
//! ([`order`]). A device is decided before the run for the first path (the engine's
//! worker count follows), and otherwise when the run first meets it. A tree whose data
//! is all in the page cache is not probed at all: nothing would be read from the device.

mod order;
mod probe;

pub(crate) use order::Dispatch;
pub(crate) use probe::Want;
pub use probe::{Facts, ForcedBy, Probe, Timings};

use crate::read::Serial;
use crate::sys::MetadataExt;
use std::fmt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// How a device is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Random reads cost milliseconds: one reader at a time, files in physical order.
    Seeking,
    /// Random reads cost a fraction of a millisecond: many reads in flight.
    Flash,
    /// A network file system: many reads in flight hide the latency.
    Network,
}

impl Kind {
    /// What the policy does, for people.
    pub fn label(self) -> &'static str {
        match self {
            Kind::Seeking => "seeking: one reader at a time, files in physical order",
            Kind::Flash => "flash-like: many reads in flight",
            Kind::Network => "network storage: many reads in flight",
        }
    }
}

/// The policy decided for one device, with its evidence.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    /// The device (`st_dev`).
    pub dev: u64,
    /// Its name: the mounted source (`/dev/vda`, `server:/export`).
    pub device: String,
    /// The policy.
    pub kind: Kind,
    /// Why, in words: timings, the file system type, the kernel's flag, or `--storage`.
    pub evidence: String,
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} ({})", self.device, self.kind.label(), self.evidence)
    }
}

/// What the table tells its observer.
#[derive(Debug)]
pub enum Note<'a> {
    /// A device's policy is decided.
    Decided(&'a Decision),
    /// The device named was looked at, but everything sampled on it is in the page cache:
    /// its policy waits for the first read that has to wait for it.
    Deferred(&'a str),
}

impl fmt::Display for Note<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Note::Decided(d) => d.fmt(f),
            Note::Deferred(device) => write!(
                f,
                "{device}: not decided yet (every block sampled is in the page cache); \
                 many reads in flight until a read has to wait for the device"
            ),
        }
    }
}

/// Where a device's facts come from: the real probe, or a test's fake devices.
type Source = dyn Fn(u64, &Path, Want) -> Facts + Send + Sync;
/// The observer of decisions (the binary prints them under `--verbose`).
type Observer = dyn Fn(&Note<'_>) + Send + Sync;

/// One decided device.
struct Entry {
    decision: Decision,
    /// Its readers' turn, if it is seeking.
    lock: Mutex<()>,
    /// Whether a read of it has had to wait for it (its data is not all cached).
    cold: AtomicBool,
}

/// Devices a table holds with a lock of their own; more share one.
const ROOM: usize = 64;

/// The run's storage decisions, one per device, made once and shared by every thread.
pub struct Devices {
    /// The policy the user chose instead of probing, and where they named it.
    forced: Option<(Kind, ForcedBy)>,
    source: Box<Source>,
    observer: Option<Box<Observer>>,
    /// Decided devices, appended to (under `deciding`) and read without a lock.
    slots: Box<[OnceLock<Entry>]>,
    len: AtomicUsize,
    deciding: Mutex<Spill>,
    /// The lock of the seeking devices beyond `ROOM`.
    spill_lock: Mutex<()>,
    spill_cold: AtomicBool,
    /// Whether any seeking device has had a read wait for it: the producer orders files
    /// only then.
    cold: AtomicBool,
}

/// Decisions beyond `ROOM`, and the devices deferred so far (with their names).
#[derive(Default)]
struct Spill {
    decided: Vec<Decision>,
    deferred: Vec<(u64, String)>,
}

/// A device's policy as the reader and the producer use it.
#[derive(Clone, Copy)]
pub(crate) struct Policy<'a> {
    pub kind: Kind,
    pub lock: &'a Mutex<()>,
    pub cold: &'a AtomicBool,
}

impl Devices {
    /// A table deciding each device by probing it, or as `forced` (`--storage`) says.
    pub fn new(forced: Option<(Kind, ForcedBy)>) -> Devices {
        Devices::with_source(forced, Box::new(probe::gather))
    }

    /// A table whose facts come from `source` (tests give fake devices).
    pub(crate) fn with_source(forced: Option<(Kind, ForcedBy)>, source: Box<Source>) -> Devices {
        Devices {
            forced,
            source,
            observer: None,
            slots: (0..ROOM).map(|_| OnceLock::new()).collect(),
            len: AtomicUsize::new(0),
            deciding: Mutex::new(Spill::default()),
            spill_lock: Mutex::new(()),
            spill_cold: AtomicBool::new(false),
            cold: AtomicBool::new(false),
        }
    }

    /// Calls `observer` with each decision as it is made (from whichever thread makes it).
    pub fn observe(mut self, observer: impl Fn(&Note<'_>) + Send + Sync + 'static) -> Devices {
        self.observer = Some(Box::new(observer));
        self
    }

    /// Decides the device holding `path` (a file or directory) before a run, probing
    /// files at or below it; the decision waits if all it samples is in the page cache.
    pub fn survey(&self, path: &Path) {
        if let Ok(md) = std::fs::metadata(path) {
            self.policy(md.dev(), path, Want::IfCold);
        }
    }

    /// Every decision so far, in the order made, then the devices still undecided.
    pub fn notes(&self) -> Vec<String> {
        let mut v: Vec<String> = self.entries().map(|e| e.decision.to_string()).collect();
        let spill = self.deciding.lock().unwrap_or_else(|e| e.into_inner());
        v.extend(spill.decided.iter().map(|d| d.to_string()));
        v.extend(spill.deferred.iter().map(|(_, name)| Note::Deferred(name).to_string()));
        v
    }

    /// Whether every device decided so far is seeking (and at least one is): the engine's
    /// settings for one sequential reader then fit the run.
    pub fn all_seeking(&self) -> bool {
        if let Some((k, _)) = self.forced {
            return k == Kind::Seeking;
        }
        let mut kinds = self.entries().map(|e| e.decision.kind).peekable();
        kinds.peek().is_some() && kinds.all(|k| k == Kind::Seeking)
    }

    /// Whether any device decided so far is network storage.
    pub fn any_network(&self) -> bool {
        self.forced.is_none() && self.entries().any(|e| e.decision.kind == Kind::Network)
    }

    /// Whether the producer should put files in physical order: some seeking device has
    /// had a read wait for it.
    pub(crate) fn ordering(&self) -> bool {
        self.cold.load(Ordering::Relaxed)
    }

    fn entries(&self) -> impl Iterator<Item = &Entry> {
        let n = self.len.load(Ordering::Acquire);
        self.slots[..n].iter().filter_map(OnceLock::get)
    }

    /// The policy of a device already decided and holding its own slot, without a lock.
    fn known(&self, dev: u64) -> Option<Policy<'_>> {
        self.entries().find(|e| e.decision.dev == dev).map(|e| Policy {
            kind: e.decision.kind,
            lock: &e.lock,
            cold: &e.cold,
        })
    }

    /// The policy of `dev`, deciding it now from files near `seed` if needed (`None` when
    /// `want` lets the decision wait and it does).
    pub(crate) fn policy(&self, dev: u64, seed: &Path, want: Want) -> Option<Policy<'_>> {
        if let Some(p) = self.known(dev) {
            return Some(p);
        }
        let mut spill = self.deciding.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = self.known(dev) {
            return Some(p);
        }
        let spilled =
            |d: &Decision| Policy { kind: d.kind, lock: &self.spill_lock, cold: &self.spill_cold };
        if let Some(d) = spill.decided.iter().find(|d| d.dev == dev) {
            return Some(spilled(d));
        }
        let deferred = spill.deferred.iter().any(|(d, _)| *d == dev);
        if deferred && want == Want::IfCold {
            return None;
        }
        let want = match self.forced {
            Some((Kind::Seeking, _)) => Want::Cache,
            Some(_) => Want::Name,
            None => want,
        };
        let facts = (self.source)(dev, seed, want);
        if facts.probe == Probe::Deferred {
            if !deferred {
                self.tell(&Note::Deferred(&facts.device));
                spill.deferred.push((dev, facts.device));
            }
            return None;
        }
        spill.deferred.retain(|(d, _)| *d != dev);
        let (kind, evidence) = probe::decide(&facts, self.forced);
        // A seeking disk whose sampled data is not all cached is read from: files go in
        // physical order from the start.
        let cold = kind == Kind::Seeking && facts.uncached == Some(true);
        if cold {
            self.cold.store(true, Ordering::Relaxed);
        }
        let decision = Decision { dev, device: facts.device, kind, evidence };
        self.tell(&Note::Decided(&decision));
        let n = self.len.load(Ordering::Acquire);
        if n == ROOM {
            self.spill_cold.fetch_or(cold, Ordering::Relaxed);
            spill.decided.push(decision);
            return spill.decided.last().map(spilled);
        }
        let entry = Entry { decision, lock: Mutex::new(()), cold: AtomicBool::new(cold) };
        // Only this thread (holding `deciding`) fills slots, so slot `n` is free.
        let _ = self.slots[n].set(entry);
        self.len.store(n + 1, Ordering::Release);
        self.known(dev)
    }

    fn tell(&self, note: &Note<'_>) {
        if let Some(o) = &self.observer {
            o(note);
        }
    }
}

impl Serial for Devices {
    fn seeking(&self, dev: u64) -> Option<bool> {
        self.known(dev).map(|p| p.kind == Kind::Seeking)
    }

    fn wait(&self, dev: u64, path: &Path) -> Option<&Mutex<()>> {
        let p = self.policy(dev, path, Want::Now)?;
        if p.kind != Kind::Seeking {
            return None;
        }
        p.cold.store(true, Ordering::Relaxed);
        self.cold.store(true, Ordering::Relaxed);
        Some(p.lock)
    }
}

impl fmt::Debug for Devices {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Devices")
            .field("forced", &self.forced)
            .field("notes", &self.notes())
            .finish()
    }
}

#[cfg(test)]
mod tests;
