//! What reading needs for an algorithm, from its registry row: the one fact the engine
//! picks a read plan from (`pipeline::plan_for`), so the reader never looks at the
//! registry itself.

use super::{Algorithm, Strength};

/// What hashing an input with an algorithm needs from the reader (see
/// [`Algorithm::access`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    /// Every byte, in order, through [`Hasher::update`](super::Hasher::update).
    Sequential,
    /// Every byte, in order; a large in-memory range is hashed on several threads
    /// ([`Hasher::update_parallel`](super::Hasher::update_parallel)), so mapping a file
    /// pays from a smaller size.
    Parallel,
    /// Only the byte ranges placed by the input's size
    /// ([`Hasher::sample_ranges`](super::Hasher::sample_ranges)): the size must be known
    /// before reading, so a stream cannot be hashed.
    Sampled,
}

impl Algorithm {
    /// What reading an input for this algorithm needs, from its row: sampled algorithms
    /// read ranges, multithreaded ones gain from a mapping, the rest read front to back.
    pub(crate) fn access(&self) -> Access {
        if self.strength == Strength::Sampled {
            Access::Sampled
        } else if self.multithreaded {
            Access::Parallel
        } else {
            Access::Sequential
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algo::{ALGORITHMS, lookup};

    #[test]
    fn every_row_says_what_reading_it_needs() {
        assert_eq!(lookup("imohash").unwrap().access(), Access::Sampled);
        assert_eq!(lookup("blake3").unwrap().access(), Access::Parallel);
        assert_eq!(lookup("sha256").unwrap().access(), Access::Sequential);
        for a in ALGORITHMS {
            let sampled = a.strength == Strength::Sampled;
            assert_eq!(a.access() == Access::Sampled, sampled, "{}", a.name);
            assert_eq!(a.access() == Access::Parallel, a.multithreaded && !sampled, "{}", a.name);
        }
    }
}
