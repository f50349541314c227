//! Finding the intact packets of a PAR2 file, damaged or not (`set::load` reads sets back
//! with it: `verify`'s check of every set, repair).
//!
//! A file is read in windows of up to [`WINDOW`] bytes. In each, the packets that follow one
//! another (each header's length leading to the next magic) are taken together: their
//! MD5s computed in the MD5 lanes at once (a set's recovery packets have one length, and
//! fill the lanes), then checked in order. Where a packet does not hold (its length or MD5
//! wrong, a body that does not parse), the scanner looks for the next magic byte by byte,
//! as it does where no packet starts, so damage loses only the packets it touches. A packet
//! longer than a window is read and summed on its own, a piece at a time.
//!
//! Read one packet at a time, two reads and a buffer of up to 1 MiB each, and summed with
//! the `md-5` crate, the sets of a tree of 500,000 small files took longer to check than
//! the tree took to verify (docs/benchmarks.md, issue 41, sixth pass).

use super::packet::{
    CREATOR, DataMd5, FILE_DESC, FileDesc, HEADER, IFSC, Id, Ifsc, MAGIC, MAIN, Main, RECOVERY,
    md5_many,
};
use std::io;

/// The largest body of a non-recovery packet this reader keeps (an IFSC packet of 32768
/// slices is 655 KiB); larger ones are refused as damage.
const MAX_BODY: u64 = 64 << 20;
/// Bytes read at once.
const WINDOW: usize = 8 << 20;

/// A packet found intact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Body {
    Main(Main),
    FileDesc(FileDesc),
    Ifsc(Ifsc),
    /// A recovery slice: its exponent, and where its data starts in the file and how long
    /// it is (the data is read when needed).
    Recovery {
        exponent: u32,
        offset: u64,
        len: u64,
    },
    Creator(Vec<u8>),
    /// A type this reader does not use (PAR2's optional packets), kept out.
    Other,
}

/// A packet found intact, with the set it belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Found {
    pub(crate) set_id: Id,
    pub(crate) body: Body,
    /// The packet's length, header included.
    pub(crate) len: u64,
}

/// Something to scan: a file or bytes in memory.
pub(crate) trait Source {
    fn len(&self) -> u64;
    /// Fills `buf` from `offset` (short only at the end).
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize>;
}

impl Source for &[u8] {
    fn len(&self) -> u64 {
        <[u8]>::len(self) as u64
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let start = (offset as usize).min(<[u8]>::len(self));
        let n = buf.len().min(<[u8]>::len(self) - start);
        buf[..n].copy_from_slice(&self[start..start + n]);
        Ok(n)
    }
}

impl Source for std::fs::File {
    fn len(&self) -> u64 {
        self.metadata().map_or(0, |m| m.len())
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        use crate::sys::FileExt;
        let mut done = 0;
        while done < buf.len() {
            match FileExt::read_at(self, &mut buf[done..], offset + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    }
}

/// Every intact packet in `src`, in file order. A read error ends the scan with what was
/// found so far and the error.
pub(crate) fn scan(src: &dyn Source) -> (Vec<Found>, Option<io::Error>) {
    let mut found = Vec::new();
    let total = src.len();
    let mut at = 0u64;
    let mut win = Vec::new();
    while at + HEADER as u64 <= total {
        let want = (total - at).min(WINDOW as u64) as usize;
        win.resize(want, 0);
        let got = match src.read_at(at, &mut win) {
            Ok(n) => n,
            Err(e) => return (found, Some(e)),
        };
        let chain = chain(&win[..got], at, total);
        let sums =
            md5_many(&chain.iter().map(|&(p, len)| &win[p + 32..p + len]).collect::<Vec<_>>());
        let mut taken = 0usize;
        let mut broken = false;
        for (&(p, len), sum) in chain.iter().zip(&sums) {
            let packet = &win[p..p + len];
            match (sum[..] == packet[16..32]).then(|| parse(packet, at + p as u64)).flatten() {
                Some(f) => {
                    found.push(f);
                    taken = p + len;
                }
                None => {
                    broken = true;
                    break;
                }
            }
        }
        at += taken as u64;
        if taken > 0 && !broken {
            continue;
        }
        // Nothing taken from the window, or a packet that does not hold at `at`: a packet
        // longer than the window is taken on its own; anything else is passed over to the
        // next magic.
        if !broken {
            match packet_at(src, at, total) {
                Ok(Some((f, len))) => {
                    found.push(f);
                    at += len;
                    continue;
                }
                Ok(None) => {}
                Err(e) => return (found, Some(e)),
            }
        }
        match next_magic(src, at + 1, total) {
            Ok(Some(next)) => at = next,
            Ok(None) => break,
            Err(e) => return (found, Some(e)),
        }
    }
    (found, None)
}

/// The packets in `win` (read from `at` of a source of `total` bytes) that follow one
/// another from its start, as (offset, length): each with the magic and a length that can
/// hold, and wholly in the window.
fn chain(win: &[u8], at: u64, total: u64) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut p = 0usize;
    while p + HEADER <= win.len() {
        match candidate(&win[p..p + HEADER], total - (at + p as u64)) {
            Some(len) if len <= (win.len() - p) as u64 => {
                out.push((p, len as usize));
                p += len as usize;
            }
            _ => break,
        }
    }
    out
}

/// The length of the packet whose header this is, if its magic and length can hold with
/// `left` bytes from its start to the source's end.
fn candidate(head: &[u8], left: u64) -> Option<u64> {
    if &head[..8] != MAGIC {
        return None;
    }
    let len = u64::from_le_bytes(head[8..16].try_into().unwrap());
    let body = len.checked_sub(HEADER as u64)?;
    let keep = head[48..64] != RECOVERY[..];
    (len.is_multiple_of(4) && len <= left && !(keep && body > MAX_BODY)).then_some(len)
}

/// The packet `bytes` (found at `offset`, its MD5 checked), or `None` when its body does
/// not parse. A recovery packet may be given only its first 4 bytes of body.
fn parse(bytes: &[u8], offset: u64) -> Option<Found> {
    let len = u64::from_le_bytes(bytes[8..16].try_into().unwrap());
    let set_id: Id = bytes[32..48].try_into().unwrap();
    let kind: [u8; 16] = bytes[48..64].try_into().unwrap();
    let body = &bytes[HEADER..];
    let body_len = len - HEADER as u64;
    let parsed = match &kind {
        MAIN => Main::parse(body).map(Body::Main),
        FILE_DESC => FileDesc::parse(body).map(Body::FileDesc),
        IFSC => Ifsc::parse(body).map(Body::Ifsc),
        RECOVERY if body_len >= 4 => Some(Body::Recovery {
            exponent: u32::from_le_bytes(body[..4].try_into().unwrap()),
            offset: offset + HEADER as u64 + 4,
            len: body_len - 4,
        }),
        RECOVERY => None,
        CREATOR => Some(Body::Creator(body.to_vec())),
        _ => Some(Body::Other),
    };
    parsed.map(|body| Found { set_id, body, len })
}

/// The packet at `at` and its length, read and summed a piece at a time (one longer than
/// a window), or `None` when there is no intact packet there.
fn packet_at(src: &dyn Source, at: u64, total: u64) -> io::Result<Option<(Found, u64)>> {
    let mut head = [0u8; HEADER];
    if src.read_at(at, &mut head)? < HEADER {
        return Ok(None);
    }
    let Some(len) = candidate(&head, total - at) else { return Ok(None) };
    let keep = head[48..64] != RECOVERY[..];
    let body_len = len - HEADER as u64;
    let mut h = DataMd5::new();
    h.update(&head[32..]);
    // The bytes `parse` is given: the header, and the body (a recovery packet's first 4).
    let mut kept = head.to_vec();
    let mut buf = vec![0u8; (body_len.min(1 << 20)) as usize];
    let mut off = 0u64;
    while off < body_len {
        let n = (body_len - off).min(buf.len() as u64) as usize;
        if src.read_at(at + HEADER as u64 + off, &mut buf[..n])? < n {
            return Ok(None);
        }
        h.update(&buf[..n]);
        if keep {
            kept.extend_from_slice(&buf[..n]);
        } else if off == 0 && n >= 4 {
            kept.extend_from_slice(&buf[..4]);
        }
        off += n as u64;
    }
    if h.finish()[..] != head[16..32] {
        return Ok(None);
    }
    Ok(parse(&kept, at).map(|f| (f, len)))
}

/// Where the next magic starts at or after `from`.
fn next_magic(src: &dyn Source, from: u64, total: u64) -> io::Result<Option<u64>> {
    let mut buf = vec![0u8; 1 << 20];
    let mut at = from;
    while at + 8 <= total {
        let n = src.read_at(at, &mut buf)?;
        if n < 8 {
            return Ok(None);
        }
        if let Some(i) = buf[..n].windows(8).position(|w| w == MAGIC) {
            return Ok(Some(at + i as u64));
        }
        at += (n - 7) as u64;
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::super::packet::{SliceCheck, creator_body, packet, recovery_head};
    use super::*;

    fn sample() -> (Id, Vec<u8>) {
        let fd = FileDesc {
            id: FileDesc::file_id(&[1; 16], 10, b"a/b"),
            md5: [2; 16],
            md5_16k: [1; 16],
            length: 10,
            name: b"a/b".to_vec(),
        };
        let main = Main { slice_size: 8, files: vec![fd.id], others: vec![] };
        let set = main.set_id();
        let ifsc = Ifsc { id: fd.id, checks: vec![SliceCheck::of(b"0123456789", 8)] };
        let mut bytes = packet(&set, MAIN, &main.body());
        bytes.extend(packet(&set, FILE_DESC, &fd.body()));
        bytes.extend(packet(&set, IFSC, &ifsc.body()));
        let data = [7u8; 8];
        bytes.extend_from_slice(&recovery_head(&set, 3, &data));
        bytes.extend_from_slice(&data);
        bytes.extend(packet(&set, CREATOR, &creator_body("fixity")));
        (set, bytes)
    }

    #[test]
    fn packets_round_trip() {
        let (set, bytes) = sample();
        let (found, err) = scan(&&bytes[..]);
        assert!(err.is_none());
        assert_eq!(found.len(), 5);
        assert!(found.iter().all(|f| f.set_id == set));
        let Body::FileDesc(fd) = &found[1].body else { panic!() };
        assert_eq!((fd.name.as_slice(), fd.length), (&b"a/b"[..], 10));
        let Body::Recovery { exponent, offset, len } = found[3].body else { panic!() };
        assert_eq!((exponent, len), (3, 8));
        assert_eq!(&bytes[offset as usize..offset as usize + 8], &[7u8; 8]);
        assert_eq!(found[4].body, Body::Creator(b"fixity\0\0".to_vec()));
    }

    #[test]
    fn damage_loses_only_the_packets_it_touches() {
        let (_, mut bytes) = sample();
        // A flipped byte inside the File Description, garbage in front, a cut tail.
        bytes[64 + 12 + 16 + 70] ^= 1;
        let mut damaged = b"junk PAR2\0PKT more junk".to_vec();
        damaged.extend_from_slice(&bytes[..bytes.len() - 3]);
        let (found, _) = scan(&&damaged[..]);
        let kinds: Vec<_> = found.iter().map(|f| std::mem::discriminant(&f.body)).collect();
        assert_eq!(kinds.len(), 3, "{found:?}");
        assert!(matches!(found[0].body, Body::Main(_)));
        assert!(matches!(found[1].body, Body::Ifsc(_)));
        assert!(matches!(found[2].body, Body::Recovery { .. }));
    }

    /// The scan the windows stand in for: every position in turn, a packet taken whole
    /// when its length and MD5 hold, else the next magic looked for (written here from the
    /// format, summed with the `md-5` crate).
    fn one_at_a_time(b: &[u8]) -> Vec<(u64, u64)> {
        use md5::{Digest as _, Md5};
        let mut out = Vec::new();
        let mut at = 0usize;
        while at + HEADER <= b.len() {
            let len = u64::from_le_bytes(b[at + 8..at + 16].try_into().unwrap()) as usize;
            let holds = &b[at..at + 8] == MAGIC
                && len >= HEADER
                && len.is_multiple_of(4)
                && len <= b.len() - at
                && Md5::digest(&b[at + 32..at + len])[..] == b[at + 16..at + 32];
            if holds {
                out.push((at as u64, len as u64));
                at += len;
            } else {
                match b[at + 1..].windows(8).position(|w| w == MAGIC) {
                    Some(i) => at += 1 + i,
                    None => break,
                }
            }
        }
        out
    }

    #[test]
    fn windows_find_what_a_packet_at_a_time_finds() {
        // Recovery packets of many lengths (one longer than a window), critical packets
        // between, over three windows; then damage: flipped bytes, garbage, a cut tail.
        let (set, sample) = sample();
        let mut b = Vec::new();
        let mut seed = 7u32;
        let mut lens = vec![WINDOW + 4096, 12];
        lens.extend((0..400).map(|i| 4 * ((i * 7919) % 30_000 + 1)));
        for (i, &n) in lens.iter().enumerate() {
            let data: Vec<u8> = (0..n)
                .map(|_| {
                    seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    (seed >> 16) as u8
                })
                .collect();
            b.extend_from_slice(&recovery_head(&set, i as u32, &data));
            b.extend_from_slice(&data);
            if i % 50 == 0 {
                b.extend_from_slice(&sample);
            }
        }
        assert!(b.len() > 2 * WINDOW);
        let check = |b: &[u8]| {
            let (found, err) = scan(&b);
            assert!(err.is_none());
            let got: Vec<(u64, u64)> = found
                .iter()
                .map(|f| {
                    let Body::Recovery { offset, .. } = f.body else { return (u64::MAX, f.len) };
                    (offset - HEADER as u64 - 4, f.len)
                })
                .collect();
            let want = one_at_a_time(b);
            assert_eq!(found.len(), want.len());
            // Recovery packets are where the reference finds them; the rest by count.
            for (g, w) in got.iter().zip(&want) {
                assert!(g.0 == u64::MAX || g == w, "{g:?} {w:?}");
            }
            found.len()
        };
        let whole = check(&b);
        assert_eq!(whole, lens.len() + 5 * lens.len().div_ceil(50));
        let mut damaged = b.clone();
        for at in [100, WINDOW - 10, WINDOW + 5000, 2 * WINDOW + 33, b.len() - 70_000] {
            damaged[at] ^= 0x40;
        }
        damaged.splice(WINDOW / 2..WINDOW / 2, b"PAR2\0PKT junk".iter().copied());
        damaged.truncate(damaged.len() - 5);
        assert!(check(&damaged) < whole);
    }
}
