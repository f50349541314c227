//! The engine's run: the calling thread produces the tasks, hands results to the sink in
//! the producer's order, and hashes too when it has nothing else to do; worker threads
//! are started only as queued work outgrows the threads already there, so a run over one
//! file starts none.
//!
//! Hand-offs go through lock-free queues. A thread that runs out of work waits at a
//! [`Gate`]: a short spin, then a block on a condition variable; waking it costs the
//! waker a system call only when someone is really blocked, so a steady stream of small
//! files makes none, and no thread ever sleeps for a fixed time.

use super::gate::Gate;
use super::lanes::{self, Lanes};
use super::{Config, Outcome, Task, Work, hash_path};
use crate::read::Serial;
use crate::storage::Dispatch;
use crossbeam_queue::SegQueue;
use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// A task with work, numbered in the producer's order.
type Job<T> = (u64, T, Work);

/// What the calling thread and the workers share.
struct Shared<T> {
    /// Work not yet taken: at most the tasks alive, which the window bounds. Grows in
    /// small blocks, so a run over a few files allocates little.
    jobs: SegQueue<Job<T>>,
    /// Work done, in the order it finished.
    results: SegQueue<(u64, T, Outcome)>,
    /// The producer pushed its last task.
    done: AtomicBool,
    /// The sink asked to stop: workers leave at their next task.
    stop: AtomicBool,
    /// Where workers wait for jobs.
    idle: Gate,
    /// Where the calling thread waits for the result it must hand over next.
    waiting: Gate,
    /// The task whose result the calling thread waits for.
    head: AtomicU64,
    /// That result has come (set by the worker that pushed it).
    head_in: AtomicBool,
}

/// Jobs queued before idle workers are woken: one wake-up per batch, not per file, when
/// the workers outrun the producer. The first jobs of a run wake them one by one.
const WAKE_BATCH: usize = 16;

/// The calling thread's reorder buffer: slot i holds the outcome of task `next + i`.
struct Order<T> {
    pending: VecDeque<Option<(T, Outcome)>>,
    next: u64,
}

impl<T> Order<T> {
    fn put(&mut self, seq: u64, payload: T, outcome: Outcome) {
        let idx = (seq - self.next) as usize;
        if self.pending.len() <= idx {
            self.pending.resize_with(idx + 1, || None);
        }
        self.pending[idx] = Some((payload, outcome));
    }

    /// The next task's outcome, if it is in.
    fn pop_ready(&mut self) -> Option<(T, Outcome)> {
        match self.pending.front() {
            Some(Some(_)) => {
                self.next += 1;
                self.pending.pop_front().flatten()
            }
            _ => None,
        }
    }
}

/// Runs `produce` and `sink` on the calling thread and hashes on up to `config.workers`
/// more threads: `sink` gets every task in producer order, as soon as the task and its
/// predecessors are done. `sink` returns `false` to stop early (e.g. a closed stdout);
/// the producer's next push then returns `false`.
///
/// At most `config.window` tasks are alive at once (queued, being hashed, or waiting for
/// a slower predecessor): while the window is full, the producer's push hands results
/// over and hashes queued work itself until a slot frees.
pub fn run<T, P, S>(config: &Config, produce: P, mut sink: S)
where
    T: Send,
    P: FnOnce(&mut dyn FnMut(Task<T>) -> bool),
    S: FnMut(T, Outcome) -> bool,
{
    let window = config.window.max(1) as u64;
    let workers = config.workers.max(1);
    let shared = Shared {
        jobs: SegQueue::new(),
        results: SegQueue::new(),
        done: AtomicBool::new(false),
        stop: AtomicBool::new(false),
        idle: Gate::new(),
        waiting: Gate::new(),
        head: AtomicU64::new(u64::MAX),
        head_in: AtomicBool::new(false),
    };
    let io_lock = Mutex::new(());
    let serial: Option<&dyn Serial> = match (&config.storage, config.serial_reads) {
        (_, true) => Some(&io_lock),
        (Some(devices), false) => Some(&**devices),
        (None, false) => None,
    };
    let shared = &shared;

    std::thread::scope(|scope| {
        let mut order = Order { pending: VecDeque::new(), next: 0 };
        let mut buf = Vec::new();
        let mut seq = 0u64;
        let mut spawned = 0usize;
        // Set at the second job (a run over one file needs neither): the most workers, and
        // whether this thread hashes too.
        let mut limit = workers;
        let mut lane_run = false;
        let mut jobs = 0usize;
        let mut live = true;
        // Tasks of files on a seeking disk may be held back, to go out in physical order.
        let mut dispatch =
            Dispatch::new(config.storage.as_deref(), (window / 2) as usize, |job: &Job<T>| {
                (job.0, job.2.path.as_path(), job.2.mode)
            });
        let mut send = |job: Job<T>| shared.jobs.push(job);
        {
            let mut push = |task: Task<T>| -> bool {
                live = live && deliver(&mut order, shared, &mut sink);
                while live && seq >= order.next + window {
                    // Held tasks count in the window: they go out if the one due next is
                    // among them; whatever is queued goes to the workers before this
                    // thread waits.
                    if dispatch.holds(order.next) {
                        dispatch.flush(&mut send);
                    }
                    shared.idle.wake_all();
                    let help = spawned == 0 || !lane_run;
                    live = progress(&mut order, shared, config, serial, help, &mut buf, &mut sink);
                }
                if !live {
                    return false;
                }
                let s = seq;
                seq += 1;
                let Some(work) = task.work else {
                    order.put(s, task.payload, None);
                    return true;
                };
                jobs += 1;
                if jobs == 2 && !config.serial_reads && lanes::one_per_core(&work) {
                    // Lanes are fed from one thread per core: more threads would split
                    // the files among more lanes, each emptier. Reads stay many in flight
                    // (see `lanes`), and this thread leaves the hashing to the lanes.
                    lane_run = true;
                    limit = workers.min(super::cores());
                }
                dispatch.admit((s, task.payload, work), &mut send);
                if s < WAKE_BATCH as u64 || shared.jobs.len() >= WAKE_BATCH {
                    shared.idle.wake_all();
                }
                // The first task waits for a second before a thread is started: a run
                // over one file hashes it on this thread.
                if s > 0 && spawned < limit && shared.jobs.len() > shared.idle.waiting() {
                    spawned += 1;
                    scope.spawn(move || worker(shared, config, serial));
                }
                true
            };
            produce(&mut push);
        }
        dispatch.flush(&mut send);
        // Tasks held to the end (a few files on a seeking disk) get workers too; one is
        // left to this thread.
        while spawned < limit && shared.jobs.len() > shared.idle.waiting() + 1 {
            spawned += 1;
            scope.spawn(move || worker(shared, config, serial));
        }
        shared.done.store(true, Ordering::SeqCst);
        shared.idle.wake_all();
        let help = spawned == 0 || !lane_run;
        while live && order.next < seq {
            live = progress(&mut order, shared, config, serial, help, &mut buf, &mut sink);
        }
        if !live {
            // What the workers finish now is dropped with the queues.
            shared.stop.store(true, Ordering::SeqCst);
            shared.idle.wake_all();
        }
    });
}

/// Hands every result that is in, in order, to the sink. False when the sink says stop.
fn deliver<T, S>(order: &mut Order<T>, shared: &Shared<T>, sink: &mut S) -> bool
where
    S: FnMut(T, Outcome) -> bool,
{
    while let Some((s, payload, outcome)) = shared.results.pop() {
        order.put(s, payload, outcome);
    }
    while let Some((payload, outcome)) = order.pop_ready() {
        if !sink(payload, outcome) {
            return false;
        }
    }
    true
}

/// One step forward on the calling thread: hand over what is ready; if nothing was, hash
/// a queued job here (when `help`); else wait for a worker's result. False when the sink
/// says stop.
fn progress<T, S>(
    order: &mut Order<T>,
    shared: &Shared<T>,
    config: &Config,
    serial: Option<&dyn Serial>,
    help: bool,
    buf: &mut Vec<u8>,
    sink: &mut S,
) -> bool
where
    S: FnMut(T, Outcome) -> bool,
{
    let before = order.next;
    if !deliver(order, shared, sink) {
        return false;
    }
    if order.next > before {
        return true;
    }
    if let Some((s, payload, work)) = help.then(|| shared.jobs.pop()).flatten() {
        let r = hash_path(&work.path, work.mode, &work.algos, buf, &config.read, serial);
        order.put(s, payload, Some(r));
    } else {
        // Every task not yet handed over is queued or with a worker, which pushes its
        // result. Only the result of the task due next is worth a wake-up: the worker
        // that pushes it says so.
        shared.head.store(order.next, Ordering::SeqCst);
        shared.head_in.store(false, Ordering::SeqCst);
        let before = order.next;
        if !deliver(order, shared, sink) {
            return false;
        }
        if order.next == before {
            shared.waiting.wait(|| shared.head_in.load(Ordering::SeqCst));
        }
    }
    true
}

/// A worker thread: takes jobs until the producer is done and the queue is empty. Jobs
/// a multi-buffer kernel can hash go into the worker's lanes ([`Lanes`]), which it keeps
/// full while jobs are queued; others are hashed one at a time.
fn worker<T: Send>(shared: &Shared<T>, config: &Config, serial: Option<&dyn Serial>) {
    let mut buf = Vec::new();
    let mut lanes: Option<Lanes<T>> = None;
    let mut post = |s: u64, payload: T, outcome: Outcome| {
        shared.results.push((s, payload, outcome));
        if s == shared.head.load(Ordering::SeqCst) {
            shared.head_in.store(true, Ordering::SeqCst);
            shared.waiting.wake_one();
        }
    };
    loop {
        if shared.stop.load(Ordering::Relaxed) {
            return;
        }
        if lanes.as_ref().is_none_or(|l| l.has_free())
            && let Some((s, payload, work)) = shared.jobs.pop()
        {
            // Lanes only where reads are not all serialized; a file on a seeking disk is
            // read alone even so (see `Lanes::admit`).
            let family = (!config.serial_reads).then(|| lanes::family_for(&work)).flatten();
            if let Some(f) = family {
                if lanes.is_none() {
                    lanes = Lanes::new(f);
                }
                if let Some(l) = lanes.as_mut().filter(|l| l.family() == f) {
                    l.admit(s, payload, work, &config.read, serial, &mut post);
                    continue;
                }
            }
            let r = hash_path(&work.path, work.mode, &work.algos, &mut buf, &config.read, serial);
            post(s, payload, Some(r));
            continue;
        }
        if let Some(l) = lanes.as_mut().filter(|l| l.busy() > 0) {
            l.step(&config.read, serial, &mut post);
            continue;
        }
        if shared.done.load(Ordering::SeqCst) && shared.jobs.is_empty() {
            return;
        }
        shared.idle.wait(|| {
            !shared.jobs.is_empty()
                || shared.done.load(Ordering::SeqCst)
                || shared.stop.load(Ordering::SeqCst)
        });
    }
}
