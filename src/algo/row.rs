//! The builders of the registry's rows: each adds one group of facts to a row of
//! [`ALGORITHMS`](super::ALGORITHMS) (`algo!(...).with_rhash(...).with_tools(...)`).

use super::{Algorithm, Combine, Encoding, Hasher, RhashFacts, Strength, multibuf};

impl Algorithm {
    /// A row with its own facts only (no aliases or extensions, single-threaded, no
    /// peer's facts): the start of every row, registered or made at run time (BLAKE2b-N,
    /// s3etag-SIZE). A new fact of the registry gets its default here once.
    pub(super) const fn base(
        name: &'static str,
        tag: &'static str,
        len: usize,
        strength: Strength,
        encoding: Encoding,
        new: fn(&Algorithm) -> Box<dyn Hasher>,
    ) -> Algorithm {
        Algorithm {
            name,
            aliases: &[],
            tag,
            len,
            extensions: &[],
            strength,
            multithreaded: false,
            encoding,
            rhash: None,
            lanes: None,
            tools: &[],
            xxhsum: None,
            cksum: None,
            shatag: None,
            stream: None,
            combine: None,
            new,
        }
    }

    /// This row with rhash's facts (see [`RhashFacts`]).
    pub(super) const fn with_rhash(
        mut self,
        rank: u8,
        name: &'static str,
        urn: &'static str,
        base32: bool,
        letter: Option<u8>,
    ) -> Algorithm {
        self.rhash = Some(RhashFacts { rank, name, urn, base32, letter });
        self
    }

    /// This row with the multi-buffer kernel family that hashes it.
    pub(super) const fn with_lanes(mut self, family: multibuf::Family) -> Algorithm {
        self.lanes = Some(family);
        self
    }

    /// This row with the drop-in tools that compute it.
    pub(super) const fn with_tools(mut self, tools: &'static [&'static str]) -> Algorithm {
        self.tools = tools;
        self
    }

    /// This row with its place and name in coreutils `cksum -a`'s list.
    pub(super) const fn with_cksum(mut self, rank: u8, name: &'static str) -> Algorithm {
        self.cksum = Some((rank, name));
        self
    }

    /// This row with cshatag's attribute name.
    pub(super) const fn with_shatag(mut self, attribute: &'static str) -> Algorithm {
        self.shatag = Some(attribute);
        self
    }

    /// This row with the name of the alternate data stream RapidCRC-Unicode keeps it in.
    pub(super) const fn with_stream(mut self, name: &'static str) -> Algorithm {
        self.stream = Some(name);
        self
    }

    /// This row with xxhsum's `-H` number.
    pub(super) const fn with_xxhsum(mut self, h: u8) -> Algorithm {
        self.xxhsum = Some(h);
        self
    }

    /// This row with how its digest joins from pieces' (see [`Combine`]).
    pub(super) const fn with_combine(mut self, combine: Combine) -> Algorithm {
        self.combine = Some(combine);
        self
    }
}
