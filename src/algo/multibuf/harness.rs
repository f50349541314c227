//! The kernels seen from outside the crate, for the `multibuf` fuzz target and the
//! `multibuf_speed` example only (re-exported hidden as `fixity::algo::multibuf_harness`;
//! not an API). Families are named as in the registry: `md5`, `sha1`, `sha256`.
//!
//! [`engine_digests`] is also the reference driver of the unit tests: it feeds the lanes
//! the way a lane engine does, and checks on the way that idle lanes keep their state.

use super::{Family, Kernel, State};

fn family(name: &str) -> Family {
    Family::ALL
        .into_iter()
        .find(|f| f.name() == name)
        .unwrap_or_else(|| panic!("no multi-buffer family {name:?}"))
}

/// A multi-buffer kernel.
#[derive(Clone, Copy)]
pub struct Lanes(&'static Kernel);

impl Lanes {
    /// The kernel of `lanes` lanes (8 or 16) for the family named `name`, if this CPU
    /// runs it. Panics on a name that is not a family.
    pub fn new(name: &str, lanes: usize) -> Option<Lanes> {
        Kernel::with_lanes(family(name), lanes).map(Lanes)
    }

    /// The kernel dispatch picks for the family named `name` on this CPU (the widest).
    pub fn best(name: &str) -> Option<Lanes> {
        Kernel::best(family(name)).map(Lanes)
    }

    /// How many lanes.
    pub fn lanes(&self) -> usize {
        self.0.lanes()
    }

    /// `avx512x16` or `avx2x8`.
    pub fn name(&self) -> &'static str {
        self.0.name()
    }

    /// See `Kernel::compress`.
    pub fn compress(&self, states: &mut [[u32; 8]], data: &[&[u8]], blocks: usize) {
        self.0.compress(states, data, blocks)
    }
}

/// The initial chaining value of the family named `name`.
pub fn initial(name: &str) -> [u32; 8] {
    super::initial(family(name))
}

/// The single-stream compression the registry's code uses (see `compress_one`).
pub fn compress_one(name: &str, state: &mut [u32; 8], data: &[u8]) {
    super::compress_one(family(name), state, data)
}

/// The digest of a message of `total` bytes, `tail` its last bytes (see `finish`).
pub fn finish(name: &str, state: [u32; 8], tail: &[u8], total: u64) -> Vec<u8> {
    super::finish(family(name), state, tail, total)
}

/// The digest of `message` as the RustCrypto crate computes it.
pub fn reference(name: &str, message: &[u8]) -> Vec<u8> {
    use sha2::Digest;
    match family(name) {
        Family::Md5 => ::md5::Md5::digest(message).to_vec(),
        Family::Sha1 => ::sha1::Sha1::digest(message).to_vec(),
        Family::Sha256 => sha2::Sha256::digest(message).to_vec(),
    }
}

/// The digests of `messages` hashed through `kernel` as a lane engine does: each lane
/// takes the next message when its own is done; each step compresses, in every busy
/// lane, as many whole blocks as the busy lane with the fewest left has (at most
/// `max_step`, at least 1); a lane with less than a block left finishes (`finish`) and
/// takes the next message, so lanes finish at different times and are refilled. Busy
/// lanes are handed all the rest of their message (more than the step needs), idle lanes
/// a slice shorter than the step needs (empty for lane 0). Panics if a step changes an
/// idle lane's state.
pub fn engine_digests(kernel: Lanes, messages: &[&[u8]], max_step: usize) -> Vec<Vec<u8>> {
    run_engine(kernel.0, messages, max_step)
}

pub(super) fn run_engine(kernel: &Kernel, messages: &[&[u8]], max_step: usize) -> Vec<Vec<u8>> {
    let (f, n) = (kernel.family(), kernel.lanes());
    let junk: Vec<u8> = (0..n * 5).map(|i| i as u8).collect();
    // What an idle lane holds: must come back unchanged from every step.
    let marker = |i: usize| -> State { std::array::from_fn(|k| 0x9e3779b9 ^ (i * 8 + k) as u32) };
    let mut out = vec![Vec::new(); messages.len()];
    let mut next = 0;
    // Per lane: the message and how much of it is compressed.
    let mut slots: Vec<Option<(usize, usize)>> = vec![None; n];
    let mut states: Vec<State> = (0..n).map(marker).collect();
    loop {
        for (i, (slot, state)) in slots.iter_mut().zip(&mut states).enumerate() {
            loop {
                if let Some((m, done)) = *slot {
                    let msg = messages[m];
                    if msg.len() - done >= 64 {
                        break;
                    }
                    out[m] = super::finish(f, *state, &msg[done..], msg.len() as u64);
                    *slot = None;
                    *state = marker(i);
                }
                if next == messages.len() {
                    break;
                }
                *slot = Some((next, 0));
                *state = super::initial(f);
                next += 1;
            }
        }
        let fewest = slots.iter().flatten().map(|&(m, done)| (messages[m].len() - done) / 64).min();
        let Some(fewest) = fewest else { break };
        let step = fewest.min(max_step).max(1);
        let data: Vec<&[u8]> = slots
            .iter()
            .enumerate()
            .map(|(i, s)| match *s {
                Some((m, done)) => &messages[m][done..],
                None => &junk[..(i * 5).min(step * 64 - 1)],
            })
            .collect();
        let before = states.clone();
        kernel.compress(&mut states, &data, step);
        for (i, slot) in slots.iter_mut().enumerate() {
            match slot {
                Some((_, done)) => *done += step * 64,
                None => assert_eq!(states[i], before[i], "idle lane {i} was changed"),
            }
        }
    }
    out
}
