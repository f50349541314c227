//! Where a thread with nothing to do waits: it spins briefly, then blocks on a condition
//! variable until another thread says something changed. Saying so costs one fence and
//! one load while nobody waits, so the busy path (a queue that never runs dry) makes no
//! system call; a wake-up (a futex) is paid only by a thread that really ran out of work.

use std::sync::atomic::{AtomicUsize, Ordering, fence};
use std::sync::{Condvar, Mutex};

/// Rounds of polling before a waiter blocks: the first few with a CPU pause, then
/// yielding the core. Long enough to ride out a producer's pause between two pushes,
/// short enough that an idle worker stops taking CPU time from the busy ones.
const SPINS: u32 = 32;
const PAUSES: u32 = 16;

/// A place to wait for a condition that other threads make true.
pub(super) struct Gate {
    /// Threads inside [`Gate::wait`] (spinning or blocked).
    waiting: AtomicUsize,
    lock: Mutex<()>,
    cv: Condvar,
}

impl Gate {
    pub(super) fn new() -> Gate {
        Gate { waiting: AtomicUsize::new(0), lock: Mutex::new(()), cv: Condvar::new() }
    }

    /// Threads waiting now (spinning or blocked).
    pub(super) fn waiting(&self) -> usize {
        self.waiting.load(Ordering::SeqCst)
    }

    /// Returns once `ready()` is true. `ready` must only read state that the threads
    /// making it true change before calling [`Gate::wake_one`] or [`Gate::wake_all`].
    pub(super) fn wait(&self, ready: impl Fn() -> bool) {
        self.waiting.fetch_add(1, Ordering::SeqCst);
        // Pairs with the fence in `wake`: either the waker sees this waiter, or this
        // waiter's next look at the state sees the change.
        fence(Ordering::SeqCst);
        for i in 0..SPINS {
            if ready() {
                self.waiting.fetch_sub(1, Ordering::SeqCst);
                return;
            }
            if i < PAUSES {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        let mut guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        // Checked under the lock a waker takes before notifying: no wake-up is lost
        // between this check and the wait.
        while !ready() {
            guard = self.cv.wait(guard).unwrap_or_else(|e| e.into_inner());
        }
        drop(guard);
        self.waiting.fetch_sub(1, Ordering::SeqCst);
    }

    /// Wakes one blocked waiter, after the caller changed what waiters look at.
    pub(super) fn wake_one(&self) {
        self.wake(false);
    }

    /// Wakes every blocked waiter (the end of the run, a stop).
    pub(super) fn wake_all(&self) {
        self.wake(true);
    }

    fn wake(&self, all: bool) {
        fence(Ordering::SeqCst);
        if self.waiting.load(Ordering::SeqCst) == 0 {
            return;
        }
        // Taking the lock orders this notification after a waiter's check-then-wait.
        let _guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        if all {
            self.cv.notify_all();
        } else {
            self.cv.notify_one();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    /// Many hand-offs between two threads through one gate each way: a lost wake-up
    /// would hang the test.
    #[test]
    fn no_wake_up_is_lost() {
        let there = AtomicUsize::new(0);
        let back = AtomicUsize::new(0);
        let (g1, g2) = (Gate::new(), Gate::new());
        let done = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                for i in 1..=20_000 {
                    g1.wait(|| there.load(Ordering::SeqCst) >= i);
                    back.store(i, Ordering::SeqCst);
                    g2.wake_one();
                }
                done.store(true, Ordering::SeqCst);
            });
            for i in 1..=20_000 {
                there.store(i, Ordering::SeqCst);
                g1.wake_one();
                g2.wait(|| back.load(Ordering::SeqCst) >= i);
            }
        });
        assert!(done.load(Ordering::SeqCst));
        assert_eq!(g1.waiting() + g2.waiting(), 0);
    }
}
