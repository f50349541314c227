//! Memory maps that a storage fault cannot kill.
//!
//! Touching a page of a file mapping whose read fails (a bad sector: EIO) or that lies past
//! the end of a file truncated meanwhile raises SIGBUS, whose default action ends the
//! process. An integrity tool meets exactly those files on the day storage fails, so every
//! mapping fixity reads is registered here while it is in use, and a process-wide SIGBUS
//! handler turns a fault inside a registered mapping into a record instead of a death:
//!
//! 1. the handler finds the mapping holding the faulting address (a fixed table of
//!    lock-free slots, safe to read in a signal handler);
//! 2. it maps one page of zeros over the faulting page (`MAP_FIXED | MAP_ANONYMOUS`), so
//!    the instruction that faulted is retried and reads zeros;
//! 3. it records the first faulting offset in the slot.
//!
//! The reader goes on to the end of the mapping (the digest it computes is thrown away),
//! then asks [`Mapping::fault`] and reports the file as unreadable or changed. A SIGBUS at
//! an address outside every registered mapping is handed to the handler that was installed
//! before (Rust's own, or the default action), exactly as if this module did not exist.
//!
//! When no slot is free (more mappings alive at once than [`SLOTS`]), [`Mapping::new`]
//! returns `None` and the caller reads with a buffer instead: a mapping is never used
//! unguarded.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::Once;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// Most mappings alive at once (one per worker thread at most; workers are capped far
/// below this).
pub(crate) const SLOTS: usize = 512;

/// One registered mapping: its address range and the first offset that faulted.
struct Slot {
    /// Start address; 0 when the slot is free. Claimed with a compare-and-swap.
    start: AtomicUsize,
    /// Length in bytes; 0 while the slot is being claimed or released.
    len: AtomicUsize,
    /// 0: no fault; otherwise 1 + the offset of the first faulting page.
    fault: AtomicUsize,
}

#[allow(clippy::declare_interior_mutable_const)]
const FREE: Slot =
    Slot { start: AtomicUsize::new(0), len: AtomicUsize::new(0), fault: AtomicUsize::new(0) };
static TABLE: [Slot; SLOTS] = [FREE; SLOTS];
static PAGE: AtomicUsize = AtomicUsize::new(4096);
/// The SIGBUS action that was in place before ours, for faults that are not ours.
static PREVIOUS: AtomicPtr<libc::sigaction> = AtomicPtr::new(std::ptr::null_mut());
static INSTALL: Once = Once::new();

/// A read-only private mapping of a whole file, registered with the SIGBUS handler for as
/// long as it lives.
pub(crate) struct Mapping {
    ptr: *mut libc::c_void,
    len: usize,
    slot: &'static Slot,
}

// SAFETY: the mapping is read-only memory owned by this value; the slot is made of atomics.
unsafe impl Send for Mapping {}
// SAFETY: as above; shared access only reads.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Maps `len` bytes of `file` from offset 0. `None` when the file cannot be mapped or
    /// every slot is taken (the caller then reads with a buffer).
    pub(crate) fn new(file: &File, len: usize) -> Option<Mapping> {
        if len == 0 {
            return None;
        }
        install();
        let slot = TABLE.iter().find(|s| {
            s.start.compare_exchange(0, usize::MAX, Ordering::AcqRel, Ordering::Relaxed).is_ok()
        })?;
        // SAFETY: a fresh read-only private mapping of a file we hold open; the kernel
        // picks the address.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            slot.start.store(0, Ordering::Release);
            return None;
        }
        slot.fault.store(0, Ordering::Relaxed);
        slot.len.store(len, Ordering::Relaxed);
        // Publishing the real start last makes the slot visible to the handler whole.
        slot.start.store(ptr as usize, Ordering::Release);
        Some(Mapping { ptr, len, slot })
    }

    /// The mapped bytes. A page whose read fails reads as zeros (see [`Mapping::fault`]).
    pub(crate) fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` is a live mapping of `len` readable bytes for the life of `self`;
        // a page that faults is replaced by zeros by the handler, never left unreadable.
        unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.len) }
    }

    /// Raw start of the mapping, for `madvise`/`mincore` by the reader.
    pub(crate) fn as_ptr(&self) -> *mut libc::c_void {
        self.ptr
    }

    /// The offset of the first page that could not be read, if any did.
    pub(crate) fn fault(&self) -> Option<u64> {
        match self.slot.fault.load(Ordering::Acquire) {
            0 => None,
            n => Some((n - 1) as u64),
        }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // Leave the table before unmapping, so the address range can never be matched to
        // a mapping made later at the same place.
        self.slot.len.store(0, Ordering::Release);
        self.slot.start.store(usize::MAX, Ordering::Release);
        // SAFETY: unmapping exactly the mapping made in `new`, after its last use.
        unsafe {
            libc::munmap(self.ptr, self.len);
        }
        self.slot.start.store(0, Ordering::Release);
    }
}

/// Installs the handler once per process, keeping the previous action for chaining.
fn install() {
    INSTALL.call_once(|| {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if page > 0 {
            PAGE.store(page as usize, Ordering::Relaxed);
        }
        // SAFETY: a zeroed sigaction is a valid value to fill; sigaction writes the old
        // action into the leaked box, which lives for the rest of the process.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            let old = Box::into_raw(Box::new(std::mem::zeroed::<libc::sigaction>()));
            if libc::sigaction(libc::SIGBUS, &action, old) == 0 {
                PREVIOUS.store(old, Ordering::Release);
            } else {
                drop(Box::from_raw(old));
            }
        }
    });
}

/// The SIGBUS handler. Only async-signal-safe work: atomic loads and stores and the
/// `mmap`/`sigaction` system calls.
extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for a handler installed with SA_SIGINFO.
    let addr = unsafe { (*info).si_addr() } as usize;
    let page = PAGE.load(Ordering::Relaxed);
    for slot in TABLE.iter() {
        let start = slot.start.load(Ordering::Acquire);
        let len = slot.len.load(Ordering::Acquire);
        if start == 0 || start == usize::MAX || len == 0 {
            continue;
        }
        if addr >= start && addr - start < len {
            let at = addr & !(page - 1);
            // SAFETY: replaces one page inside a mapping this process owns and is reading;
            // the rest of the process never sees that range.
            let r = unsafe {
                libc::mmap(
                    at as *mut libc::c_void,
                    page,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_FIXED | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if r != libc::MAP_FAILED {
                let off = at.saturating_sub(start) + 1;
                let _ = slot.fault.compare_exchange(0, off, Ordering::AcqRel, Ordering::Relaxed);
                return;
            }
            break;
        }
    }
    // Not ours (or the page could not be replaced): behave as the previous handler would.
    let prev = PREVIOUS.load(Ordering::Acquire);
    // SAFETY: `prev` is null or the action saved by `install`, never freed.
    unsafe {
        if prev.is_null() {
            restore_default(sig);
            return;
        }
        let handler = (*prev).sa_sigaction;
        if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
            // Re-install it; returning re-runs the faulting instruction, which faults
            // again under the previous action (the default one ends the process).
            libc::sigaction(sig, prev, std::ptr::null_mut());
        } else if (*prev).sa_flags & libc::SA_SIGINFO != 0 {
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                std::mem::transmute(handler);
            f(sig, info, ctx);
        } else {
            let f: extern "C" fn(libc::c_int) = std::mem::transmute(handler);
            f(sig);
        }
    }
}

/// Puts back the default action for `sig`.
fn restore_default(sig: libc::c_int) {
    // SAFETY: a zeroed sigaction with SIG_DFL (0) is the default action.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(sig, &action, std::ptr::null_mut());
    }
}

/// What a fault at `offset` of a file of `len` bytes (as mapped) means: the file shrank
/// (it is now shorter than the mapping: changed while read), or its storage failed (the
/// error a plain read at that offset gives now, or EIO if that read succeeds).
pub(crate) fn fault_error(file: &File, len: u64, offset: u64) -> FaultKind {
    use crate::sys::FileExt;
    if let Ok(md) = file.metadata()
        && md.len() < len
    {
        return FaultKind::Shrunk;
    }
    let mut probe = [0u8; 1];
    match file.read_at(&mut probe, offset) {
        Err(e) => FaultKind::Io(e),
        Ok(0) => FaultKind::Shrunk,
        Ok(_) => FaultKind::Io(io::Error::from_raw_os_error(libc::EIO)),
    }
}

/// Why a mapped read failed.
#[derive(Debug)]
pub(crate) enum FaultKind {
    /// The file is shorter than when it was mapped.
    Shrunk,
    /// The storage returned an error.
    Io(io::Error),
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A file truncated while mapped: the pages past the new end fault; the reader sees
    /// zeros there, the process lives, and the fault is recorded at the first lost page.
    #[test]
    fn a_truncated_mapping_records_a_fault_instead_of_dying() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let mut f = File::create(&p).unwrap();
        f.write_all(&vec![7u8; 1 << 20]).unwrap();
        drop(f);
        let file = File::open(&p).unwrap();
        let m = Mapping::new(&file, 1 << 20).unwrap();
        assert_eq!(m.fault(), None);
        std::fs::OpenOptions::new().write(true).open(&p).unwrap().set_len(8192).unwrap();
        let sum: u64 = m.bytes().iter().map(|&b| b as u64).sum();
        assert_eq!(sum, 7 * 8192, "bytes past the new end read as zeros");
        assert_eq!(m.fault(), Some(8192));
        assert!(matches!(fault_error(&file, 1 << 20, 8192), FaultKind::Shrunk));
        drop(m);
        // The slot is free again and a new mapping starts clean.
        let m2 = Mapping::new(&file, 8192).unwrap();
        assert_eq!(m2.fault(), None);
        assert_eq!(m2.bytes()[0], 7);
    }

    /// Many threads map, fault and release at once: every fault lands in its own slot.
    #[test]
    fn concurrent_mappings_keep_their_own_faults() {
        let dir = tempfile::tempdir().unwrap();
        std::thread::scope(|s| {
            for t in 0..8usize {
                let dir = dir.path();
                s.spawn(move || {
                    for round in 0..20usize {
                        let p = dir.join(format!("f{t}-{round}"));
                        std::fs::write(&p, vec![1u8; 64 * 1024]).unwrap();
                        let file = File::open(&p).unwrap();
                        let m = Mapping::new(&file, 64 * 1024).unwrap();
                        let cut = 4096 * (1 + (t + round) % 8);
                        if round % 2 == 0 {
                            std::fs::OpenOptions::new()
                                .write(true)
                                .open(&p)
                                .unwrap()
                                .set_len(cut as u64)
                                .unwrap();
                        }
                        let ones = m.bytes().iter().filter(|&&b| b == 1).count();
                        if round % 2 == 0 {
                            assert_eq!(ones, cut);
                            assert_eq!(m.fault(), Some(cut as u64));
                        } else {
                            assert_eq!(ones, 64 * 1024);
                            assert_eq!(m.fault(), None);
                        }
                    }
                });
            }
        });
    }
}
