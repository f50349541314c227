//! The kernels seen from outside the crate, for the `multibuf` fuzz target and the
//! `multibuf_speed` example only (re-exported hidden as `fixity::algo::multibuf_harness`;
//! not an API). Families are named as in the registry: `md5`, `sha1`, `sha256`; BLAKE3's
//! lanes are [`Blake3Lanes`].
//!
//! [`engine_digests`] is also the reference driver of the unit tests: it feeds the lanes
//! the way a lane engine does, and checks on the way that idle lanes keep their state.

use super::{Family, Kernel, State, b3};

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

    /// Every kernel this CPU runs for the family named `name`, the preferred first.
    pub fn every(name: &str) -> Vec<Lanes> {
        Kernel::every(family(name)).map(Lanes).collect()
    }

    /// How many lanes.
    pub fn lanes(&self) -> usize {
        self.0.lanes()
    }

    /// `avx512x16`, `avx512x8` or `avx2x8`.
    pub fn name(&self) -> &'static str {
        self.0.name()
    }

    /// See `Kernel::break_even`.
    pub fn break_even(&self) -> Option<usize> {
        self.0.break_even()
    }

    /// See `Kernel::compress`.
    pub fn compress(&self, states: &mut [[u32; 8]], data: &[&[u8]], blocks: usize) {
        self.0.compress(states, data, blocks)
    }
}

/// A BLAKE3 lane kernel (`b3`), or the portable code.
#[derive(Clone, Copy)]
pub struct Blake3Lanes(&'static b3::Kernel);

impl Blake3Lanes {
    /// Every BLAKE3 kernel this CPU runs, the preferred first, the portable code last.
    pub fn every() -> Vec<Blake3Lanes> {
        b3::Kernel::every().map(Blake3Lanes).collect()
    }

    /// How many lanes (1 for the portable code).
    pub fn lanes(&self) -> usize {
        self.0.lanes()
    }

    /// `avx512x16`, `avx512x8`, `avx2x8` or `portable`.
    pub fn name(&self) -> &'static str {
        self.0.name()
    }

    /// The BLAKE3 hash of every input, their chunks side by side (see `b3::hash_many`).
    pub fn hash_many(&self, inputs: &[&[u8]]) -> Vec<[u8; 32]> {
        b3::hash_many(self.0, inputs)
    }
}

/// Cuts a fuzz input into `count` messages: each of the first `count - 1` takes as many
/// bytes as its two-byte length says (less when the input runs out), the last the rest.
pub fn split_messages(mut rest: &[u8], count: usize) -> Vec<&[u8]> {
    let mut messages = Vec::with_capacity(count);
    for _ in 1..count {
        let [a, b, tail @ ..] = rest else { break };
        let len = (u16::from_le_bytes([*a, *b]) as usize).min(tail.len());
        messages.push(&tail[..len]);
        rest = &tail[len..];
    }
    messages.push(rest);
    messages
}

/// The BLAKE3 hash of `message` as the `blake3` crate computes it.
pub fn blake3_reference(message: &[u8]) -> [u8; 32] {
    *::blake3::hash(message).as_bytes()
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
    super::finish(family(name), state, tail, total).as_bytes().to_vec()
}

/// The final blocks of a message (see `final_blocks`).
pub fn final_blocks(name: &str, rest: &[u8], total: u64) -> ([u8; 128], usize) {
    super::final_blocks(family(name), rest, total)
}

/// The digest of a finished state (see `digest`).
pub fn digest(name: &str, state: &[u32; 8]) -> Vec<u8> {
    super::digest(family(name), state).as_bytes().to_vec()
}

/// The digest of `message` as the RustCrypto crate computes it.
pub fn reference(name: &str, message: &[u8]) -> Vec<u8> {
    use sha2::Digest;
    match family(name) {
        Family::Md5 => ::md5::Md5::digest(message).to_vec(),
        Family::Sha1 => ::sha1::Sha1::digest(message).to_vec(),
        Family::Sha256 => sha2::Sha256::digest(message).to_vec(),
        Family::Blake3 => ::blake3::hash(message).as_bytes().to_vec(),
    }
}

/// The digests of `messages` hashed through `kernel` as a lane engine does: each lane
/// takes the next message when its own is done; each step compresses, in every busy
/// lane, as many whole blocks as the busy lane with the fewest left has (at most
/// `max_step`, at least 1), so lanes finish at different times and are refilled. A lane
/// with less than a block of its message left finishes it: with `finish` (the
/// single-stream code), or with `pad_in_lanes` by compressing its `final_blocks` in the
/// lane and taking the `digest`. Busy lanes are handed all the rest of their data (more
/// than the step needs), idle lanes a slice shorter than the step needs (empty for lane
/// 0). Panics if a step changes an idle lane's state.
pub fn engine_digests(
    kernel: Lanes,
    messages: &[&[u8]],
    max_step: usize,
    pad_in_lanes: bool,
) -> Vec<Vec<u8>> {
    run_engine(kernel.0, messages, max_step, pad_in_lanes)
}

/// A busy lane: its message, how much of it is compressed, and once only the padding is
/// left (with `pad_in_lanes`), the final blocks and how much of them is compressed.
#[derive(Clone, Copy)]
struct Busy {
    message: usize,
    done: usize,
    last: Option<([u8; 128], usize, usize)>,
}

impl Busy {
    /// The data the lane has left to compress.
    fn data<'a>(&'a self, messages: &[&'a [u8]]) -> &'a [u8] {
        match &self.last {
            Some((blocks, n, done)) => &blocks[*done..*n],
            None => &messages[self.message][self.done..],
        }
    }
}

pub(super) fn run_engine(
    kernel: &Kernel,
    messages: &[&[u8]],
    max_step: usize,
    pad_in_lanes: bool,
) -> Vec<Vec<u8>> {
    let (f, n) = (kernel.family(), kernel.lanes());
    let junk: Vec<u8> = (0..n * 5).map(|i| i as u8).collect();
    // What an idle lane holds: must come back unchanged from every step.
    let marker = |i: usize| -> State { std::array::from_fn(|k| 0x9e3779b9 ^ (i * 8 + k) as u32) };
    let mut out = vec![Vec::new(); messages.len()];
    let mut next = 0;
    let mut lanes: Vec<Option<Busy>> = vec![None; n];
    let mut states: Vec<State> = (0..n).map(marker).collect();
    loop {
        for (i, (lane, state)) in lanes.iter_mut().zip(&mut states).enumerate() {
            loop {
                if let Some(busy) = lane {
                    if busy.data(messages).len() >= 64 {
                        break;
                    }
                    let msg = messages[busy.message];
                    let total = msg.len() as u64;
                    match busy.last {
                        None if pad_in_lanes => {
                            busy.last = Some(super::final_blocks(f, &msg[busy.done..], total))
                                .map(|(blocks, n)| (blocks, n, 0));
                            break;
                        }
                        None => {
                            out[busy.message] = super::finish(f, *state, &msg[busy.done..], total)
                                .as_bytes()
                                .to_vec()
                        }
                        Some(_) => out[busy.message] = super::digest(f, state).as_bytes().to_vec(),
                    }
                    *lane = None;
                    *state = marker(i);
                }
                if next == messages.len() {
                    break;
                }
                *lane = Some(Busy { message: next, done: 0, last: None });
                *state = super::initial(f);
                next += 1;
            }
        }
        let fewest = lanes.iter().flatten().map(|b| b.data(messages).len() / 64).min();
        let Some(fewest) = fewest else { break };
        let step = fewest.min(max_step).max(1);
        let data: Vec<&[u8]> = lanes
            .iter()
            .enumerate()
            .map(|(i, lane)| match lane {
                Some(busy) => busy.data(messages),
                None => &junk[..(i * 5).min(step * 64 - 1)],
            })
            .collect();
        let before = states.clone();
        kernel.compress(&mut states, &data, step);
        for (i, lane) in lanes.iter_mut().enumerate() {
            match lane {
                Some(Busy { last: Some((_, _, done)), .. }) | Some(Busy { done, .. }) => {
                    *done += step * 64
                }
                None => assert_eq!(states[i], before[i], "idle lane {i} was changed"),
            }
        }
    }
    out
}
