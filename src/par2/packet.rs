//! PAR2 2.0 packets: the 64-byte header every packet starts with, the bodies of the five
//! packet types fixity writes and reads (Main, File Description, Input File Slice Checksum,
//! Recovery Slice, Creator); `scan` finds them in a file, damaged or not.
//!
//! The header: the magic `PAR2\0PKT`, the packet's length (u64, little-endian, header
//! included, a multiple of 4), the MD5 of everything after the MD5 field (from the recovery
//! set ID to the end), the recovery set ID (the MD5 of the Main packet's body) and the
//! 16-byte type. A packet whose length or MD5 does not hold is skipped: the scanner then
//! looks for the next magic, byte by byte, so damage loses only the packets it touches.

use md5::{Digest as _, Md5};

/// A 16-byte identifier or MD5 (recovery set IDs, File IDs, digests).
pub(crate) type Id = [u8; 16];

/// The first 8 bytes of every packet.
pub(crate) const MAGIC: &[u8; 8] = b"PAR2\0PKT";
/// Bytes of the header.
pub(crate) const HEADER: usize = 64;

pub(crate) const MAIN: &[u8; 16] = b"PAR 2.0\0Main\0\0\0\0";
pub(crate) const FILE_DESC: &[u8; 16] = b"PAR 2.0\0FileDesc";
pub(crate) const IFSC: &[u8; 16] = b"PAR 2.0\0IFSC\0\0\0\0";
pub(crate) const RECOVERY: &[u8; 16] = b"PAR 2.0\0RecvSlic";
pub(crate) const CREATOR: &[u8; 16] = b"PAR 2.0\0Creator\0";

/// The Main packet: the slice size and the File IDs of the set, in the order that numbers
/// the input slices (File IDs sorted as little-endian 128-bit numbers).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Main {
    pub(crate) slice_size: u64,
    pub(crate) files: Vec<Id>,
    /// Files described but not protected (PAR2's non-recovery set); kept when read.
    pub(crate) others: Vec<Id>,
}

impl Main {
    pub(crate) fn body(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(12 + 16 * (self.files.len() + self.others.len()));
        b.extend_from_slice(&self.slice_size.to_le_bytes());
        b.extend_from_slice(&(self.files.len() as u32).to_le_bytes());
        for id in self.files.iter().chain(&self.others) {
            b.extend_from_slice(id);
        }
        b
    }

    /// The recovery set ID: the MD5 of this packet's body.
    pub(crate) fn set_id(&self) -> Id {
        Md5::digest(self.body()).into()
    }

    pub(crate) fn parse(b: &[u8]) -> Option<Main> {
        let slice_size = u64::from_le_bytes(b.get(..8)?.try_into().ok()?);
        let n = u32::from_le_bytes(b.get(8..12)?.try_into().ok()?) as usize;
        let ids = b.get(12..)?;
        if slice_size == 0 || slice_size % 4 != 0 || ids.len() % 16 != 0 || ids.len() / 16 < n {
            return None;
        }
        let all: Vec<Id> = ids.chunks_exact(16).map(|c| c.try_into().unwrap()).collect();
        Some(Main { slice_size, files: all[..n].to_vec(), others: all[n..].to_vec() })
    }
}

/// Orders File IDs as PAR2 does: as little-endian 128-bit numbers.
pub(crate) fn id_order(a: &Id, b: &Id) -> std::cmp::Ordering {
    u128::from_le_bytes(*a).cmp(&u128::from_le_bytes(*b))
}

/// A File Description packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FileDesc {
    pub(crate) id: Id,
    /// MD5 of the whole file.
    pub(crate) md5: Id,
    /// MD5 of its first 16 KiB (of the whole file when shorter).
    pub(crate) md5_16k: Id,
    pub(crate) length: u64,
    /// The name, relative to the base directory, `/` between components; raw bytes.
    pub(crate) name: Vec<u8>,
}

impl FileDesc {
    /// The File ID: MD5 over the 16k MD5, the length and the name.
    pub(crate) fn file_id(md5_16k: &Id, length: u64, name: &[u8]) -> Id {
        let mut h = Md5::new();
        h.update(md5_16k);
        h.update(length.to_le_bytes());
        h.update(name);
        h.finalize().into()
    }

    pub(crate) fn body(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(56 + self.name.len() + 3);
        b.extend_from_slice(&self.id);
        b.extend_from_slice(&self.md5);
        b.extend_from_slice(&self.md5_16k);
        b.extend_from_slice(&self.length.to_le_bytes());
        b.extend_from_slice(&self.name);
        pad4(&mut b);
        b
    }

    pub(crate) fn parse(b: &[u8]) -> Option<FileDesc> {
        if b.len() < 56 {
            return None;
        }
        let name = &b[56..];
        let end = name.iter().rposition(|&c| c != 0).map_or(0, |i| i + 1);
        Some(FileDesc {
            id: b[..16].try_into().ok()?,
            md5: b[16..32].try_into().ok()?,
            md5_16k: b[32..48].try_into().ok()?,
            length: u64::from_le_bytes(b[48..56].try_into().ok()?),
            name: name[..end].to_vec(),
        })
    }
}

/// The MD5 and CRC-32 of one input slice (the last one of a file padded with zeros).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SliceCheck {
    pub(crate) md5: Id,
    pub(crate) crc: u32,
}

impl SliceCheck {
    /// The checksums of `data`, padded with zeros to `slice_size`, one stream at a time
    /// (the reference the lanes of [`slice_checks`] are tested against).
    #[cfg(test)]
    pub(crate) fn of(data: &[u8], slice_size: usize) -> SliceCheck {
        let pad = slice_size.saturating_sub(data.len());
        let mut h = Md5::new();
        h.update(data);
        let mut c = crc32fast::Hasher::new();
        c.update(data);
        const ZEROS: [u8; 4096] = [0; 4096];
        let mut left = pad;
        while left > 0 {
            let n = left.min(ZEROS.len());
            h.update(&ZEROS[..n]);
            c.update(&ZEROS[..n]);
            left -= n;
        }
        SliceCheck { md5: h.finalize().into(), crc: c.finalize() }
    }
}

/// The MD5s of many messages, in the lanes of a multi-buffer kernel where the CPU has
/// one (16 or 8 at once), their padding too ([`crate::algo::multibuf::digests`]).
pub(crate) fn md5_many(msgs: &[&[u8]]) -> Vec<Id> {
    let digests = crate::algo::multibuf::digests(crate::algo::multibuf::Family::Md5, msgs);
    digests.iter().map(|d| d.as_bytes().try_into().expect("16 bytes")).collect()
}

/// The MD5 of a stream of data (a whole file): fixity's own compression function
/// ([`crate::algo::Md5`], on x86-64 the assembly written for MD5's critical path, 25%
/// faster than the `md-5` crate's), which the reader thread of a 256 MiB file spent a
/// fifth of a `protect` in.
pub(crate) struct DataMd5(crate::algo::Md5);

impl DataMd5 {
    pub(crate) fn new() -> DataMd5 {
        DataMd5(crate::algo::Md5::new())
    }

    pub(crate) fn update(&mut self, data: &[u8]) {
        crate::algo::Hasher::update(&mut self.0, data);
    }

    pub(crate) fn finish(&self) -> Id {
        crate::algo::Hasher::finish(&self.0).as_bytes().try_into().expect("16 bytes")
    }
}

/// The checksums of equal-length slices (each already padded to the slice size), the MD5s
/// in lanes ([`md5_many`]).
pub(crate) fn slice_checks(slices: &[&[u8]]) -> Vec<SliceCheck> {
    md5_many(slices)
        .into_iter()
        .zip(slices)
        .map(|(md5, s)| SliceCheck { md5, crc: crc32fast::hash(s) })
        .collect()
}

/// An Input File Slice Checksum packet: one [`SliceCheck`] per slice of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Ifsc {
    pub(crate) id: Id,
    pub(crate) checks: Vec<SliceCheck>,
}

impl Ifsc {
    pub(crate) fn body(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(16 + 20 * self.checks.len());
        b.extend_from_slice(&self.id);
        for c in &self.checks {
            b.extend_from_slice(&c.md5);
            b.extend_from_slice(&c.crc.to_le_bytes());
        }
        b
    }

    pub(crate) fn parse(b: &[u8]) -> Option<Ifsc> {
        let rest = b.get(16..)?;
        if rest.len() % 20 != 0 {
            return None;
        }
        let checks = rest
            .chunks_exact(20)
            .map(|c| SliceCheck {
                md5: c[..16].try_into().unwrap(),
                crc: u32::from_le_bytes(c[16..].try_into().unwrap()),
            })
            .collect();
        Some(Ifsc { id: b[..16].try_into().ok()?, checks })
    }
}

/// A Creator packet's body: the text, zero-padded to a multiple of 4.
pub(crate) fn creator_body(text: &str) -> Vec<u8> {
    let mut b = text.as_bytes().to_vec();
    pad4(&mut b);
    b
}

fn pad4(b: &mut Vec<u8>) {
    while !b.len().is_multiple_of(4) {
        b.push(0);
    }
}

/// A whole packet (header and body) of type `kind` in set `set_id`, its MD5 by the `md-5`
/// crate (the reference [`packets`] is checked against).
#[cfg(test)]
pub(crate) fn packet(set_id: &Id, kind: &[u8; 16], body: &[u8]) -> Vec<u8> {
    let len = (HEADER + body.len()) as u64;
    let mut p = Vec::with_capacity(len as usize);
    p.extend_from_slice(MAGIC);
    p.extend_from_slice(&len.to_le_bytes());
    p.extend_from_slice(&[0; 16]);
    p.extend_from_slice(set_id);
    p.extend_from_slice(kind);
    p.extend_from_slice(body);
    let md5: Id = Md5::digest(&p[32..]).into();
    p[16..32].copy_from_slice(&md5);
    p
}

/// Whole packets one after another, each `(type, body)` in set `set_id`, their MD5s in the
/// lanes ([`md5_many`]): a set's critical packets, two for each of its files (one stream
/// of MD5 for each packet took 2% of a `protect` of D3's 50,000 files).
pub(crate) fn packets(set_id: &Id, parts: &[(&[u8; 16], &[u8])]) -> Vec<u8> {
    let total = parts.iter().map(|(_, body)| HEADER + body.len()).sum();
    let mut out = Vec::with_capacity(total);
    let mut spans = Vec::with_capacity(parts.len());
    for (kind, body) in parts {
        let len = HEADER + body.len();
        spans.push(out.len()..out.len() + len);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(len as u64).to_le_bytes());
        out.extend_from_slice(&[0; 16]);
        out.extend_from_slice(set_id);
        out.extend_from_slice(*kind);
        out.extend_from_slice(body);
    }
    let hashed: Vec<&[u8]> = spans.iter().map(|r| &out[r.start + 32..r.end]).collect();
    let md5s = md5_many(&hashed);
    for (r, md5) in spans.iter().zip(md5s) {
        out[r.start + 16..r.start + 32].copy_from_slice(&md5);
    }
    out
}

/// The header and exponent of a Recovery Slice packet whose data is `data` (written after
/// it): 68 bytes.
pub(crate) fn recovery_head(set_id: &Id, exponent: u32, data: &[u8]) -> [u8; 68] {
    let mut p = recovery_head_unsummed(set_id, exponent, data.len());
    let mut h = Md5::new();
    h.update(&p[32..]);
    h.update(data);
    let md5: Id = h.finalize().into();
    p[16..32].copy_from_slice(&md5);
    p
}

/// [`recovery_head`] with its MD5 (bytes 16..32) still zero.
fn recovery_head_unsummed(set_id: &Id, exponent: u32, len: usize) -> [u8; 68] {
    let mut p = [0u8; 68];
    p[..8].copy_from_slice(MAGIC);
    p[8..16].copy_from_slice(&((68 + len) as u64).to_le_bytes());
    p[32..48].copy_from_slice(set_id);
    p[48..64].copy_from_slice(RECOVERY);
    p[64..68].copy_from_slice(&exponent.to_le_bytes());
    p
}

/// [`recovery_head`] of many recovery slices, their MD5s in the MD5 lanes (`multibuf`):
/// a set's recovery packets hash as much data as a tenth of its files, which one stream of
/// MD5 took 40 ms of a 256 MiB file's `protect` to do, and the lanes 16 at a time in the
/// time of one. Each packet's MD5 covers 36 bytes of its header, then its data: the first
/// block (those 36 bytes and the data's first 28) is compressed alone, the rest of the data
/// straight from the slice.
pub(crate) fn recovery_heads(set_id: &Id, slices: &[(u32, &[u8])]) -> Vec<[u8; 68]> {
    use crate::algo::multibuf::{Family, Kernel, compress_one, finish, initial};
    const FIRST: usize = 64 - 36;
    let lanes = Kernel::best(Family::Md5).filter(|k| slices.len() > 1 && k.lanes() > 1);
    let Some(kernel) = lanes else {
        return slices.iter().map(|&(e, d)| recovery_head(set_id, e, d)).collect();
    };
    let mut out = Vec::with_capacity(slices.len());
    let mut heads: Vec<[u8; 68]> = slices
        .iter()
        .map(|&(e, data)| recovery_head_unsummed(set_id, e, <[u8]>::len(data)))
        .collect();
    for (group, heads) in slices.chunks(kernel.lanes()).zip(heads.chunks_mut(kernel.lanes())) {
        // Slices shorter than the first block's share of data: one stream each.
        let shortest =
            group.iter().map(|(_, d)| <[u8]>::len(d)).min().expect("chunks are not empty");
        if shortest < FIRST {
            out.extend(group.iter().map(|&(e, d)| recovery_head(set_id, e, d)));
            continue;
        }
        let blocks = (shortest - FIRST) / 64;
        let mut states = vec![initial(Family::Md5); kernel.lanes()];
        for ((state, head), (_, data)) in states.iter_mut().zip(heads.iter()).zip(group) {
            let mut first = [0u8; 64];
            first[..36].copy_from_slice(&head[32..]);
            first[36..].copy_from_slice(&data[..FIRST]);
            compress_one(Family::Md5, state, &first);
        }
        let mut data: Vec<&[u8]> = group.iter().map(|(_, d)| &d[FIRST..]).collect();
        data.resize(kernel.lanes(), &[]);
        kernel.compress(&mut states, &data, blocks);
        for ((head, state), (_, d)) in heads.iter_mut().zip(states).zip(group) {
            let tail = &d[FIRST + blocks * 64..];
            let md5 = finish(Family::Md5, state, tail, 36 + <[u8]>::len(d) as u64);
            head[16..32].copy_from_slice(md5.as_bytes());
            out.push(*head);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_in_the_lanes_are_the_packets_one_at_a_time() {
        let set = [7u8; 16];
        let bodies: Vec<Vec<u8>> =
            (0..100).map(|i| (0..i * 13 % 700).map(|j| (i + j * 3) as u8).collect()).collect();
        let kinds = [MAIN, FILE_DESC, IFSC, CREATOR];
        let parts: Vec<(&[u8; 16], &[u8])> =
            bodies.iter().enumerate().map(|(i, b)| (kinds[i % 4], &b[..])).collect();
        let want: Vec<u8> = parts.iter().flat_map(|(k, b)| packet(&set, k, b)).collect();
        assert!(packets(&set, &parts) == want);
        assert!(packets(&set, &parts[..1]) == packet(&set, parts[0].0, parts[0].1));
        assert!(packets(&set, &[]).is_empty());
    }

    #[test]
    fn file_ids_sort_as_little_endian_numbers() {
        let mut a = [0u8; 16];
        let mut b = [0u8; 16];
        a[0] = 2;
        b[15] = 1;
        assert_eq!(id_order(&a, &b), std::cmp::Ordering::Less);
    }

    #[test]
    fn slice_checks_in_lanes_are_the_single_stream_ones() {
        for len in [4usize, 60, 64, 100, 128, 4096, 3484] {
            let slices: Vec<Vec<u8>> = (0..21u8)
                .map(|i| (0..len).map(|j| (j as u8).wrapping_mul(i) ^ i).collect())
                .collect();
            let refs: Vec<&[u8]> = slices.iter().map(|s| &s[..]).collect();
            let want: Vec<SliceCheck> = refs.iter().map(|s| SliceCheck::of(s, len)).collect();
            assert_eq!(slice_checks(&refs), want, "{len}");
        }
    }

    #[test]
    fn recovery_heads_in_lanes_are_the_single_stream_ones() {
        let set = [9u8; 16];
        for len in [0usize, 4, 27, 28, 29, 64, 92, 100, 2048, 4096 + 8] {
            let data: Vec<Vec<u8>> =
                (0..21u32).map(|i| (0..len).map(|j| (j as u32 * 7 + i) as u8).collect()).collect();
            let slices: Vec<(u32, &[u8])> =
                data.iter().enumerate().map(|(i, d)| (i as u32 * 3, &d[..])).collect();
            let want: Vec<[u8; 68]> =
                slices.iter().map(|&(e, d)| recovery_head(&set, e, d)).collect();
            assert_eq!(recovery_heads(&set, &slices), want, "{len}");
        }
    }

    #[test]
    fn md5s_in_lanes_are_the_single_stream_ones_for_any_lengths() {
        let msgs: Vec<Vec<u8>> = (0..70usize)
            .map(|i| (0..(i * 37) % 300 + i / 3).map(|j| (j * i) as u8).collect())
            .collect();
        let refs: Vec<&[u8]> = msgs.iter().map(|m| &m[..]).collect();
        let want: Vec<Id> = refs.iter().map(|m| Md5::digest(m).into()).collect();
        assert_eq!(md5_many(&refs), want);
    }

    #[test]
    fn slice_checks_pad_with_zeros() {
        let short = SliceCheck::of(b"abc", 8);
        let padded = SliceCheck::of(b"abc\0\0\0\0\0", 8);
        assert_eq!(short, padded);
        assert_eq!(padded.crc, crc32fast::hash(b"abc\0\0\0\0\0"));
    }
}
