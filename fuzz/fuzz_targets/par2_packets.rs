//! The PAR2 packet scanner that reads any client's recovery files (fixity's, par2cmdline's,
//! damaged ones). On arbitrary bytes it never panics, finds no more intact packets than
//! 64-byte headers allow, and finds the same packets behind a prefix of junk (a packet is
//! found wherever it starts). The input is also wrapped as the body of a packet of each
//! type with a valid header (length, MD5; a Main packet's set ID its own), so the body
//! parsers see arbitrary bodies and not only the rare input whose MD5 holds.
#![no_main]

use fixity::par2::scan_packets;
use libfuzzer_sys::fuzz_target;

const TYPES: [&[u8; 16]; 6] = [
    b"PAR 2.0\0Main\0\0\0\0",
    b"PAR 2.0\0FileDesc",
    b"PAR 2.0\0IFSC\0\0\0\0",
    b"PAR 2.0\0RecvSlic",
    b"PAR 2.0\0Creator\0",
    b"PAR 2.0\0UniFileN",
];

fn md5(data: &[u8]) -> Vec<u8> {
    fixity::algo::lookup("md5").unwrap().digest(data).as_bytes().to_vec()
}

/// A packet with a valid header around `body` (padded to a multiple of 4).
fn packet(kind: &[u8; 16], set_id: &[u8], body: &[u8]) -> Vec<u8> {
    let mut tail = set_id.to_vec();
    tail.extend_from_slice(kind);
    tail.extend_from_slice(body);
    while tail.len() % 4 != 0 {
        tail.push(0);
    }
    let mut p = b"PAR2\0PKT".to_vec();
    p.extend_from_slice(&(32 + tail.len() as u64).to_le_bytes());
    p.extend_from_slice(&md5(&tail));
    p.extend_from_slice(&tail);
    p
}

/// Scans `data`, checking what holds of any input.
fn check(data: &[u8]) -> usize {
    let n = scan_packets(data);
    assert!(n <= data.len() / 64, "{n} packets in {} bytes", data.len());
    let mut shifted = b"junk".to_vec();
    shifted.extend_from_slice(data);
    assert_eq!(scan_packets(&shifted), n);
    n
}

fuzz_target!(|data: &[u8]| {
    check(data);
    let Some((&pick, body)) = data.split_first() else { return };
    let kind = TYPES[pick as usize % TYPES.len()];
    // A Main packet's set ID is the MD5 of its body; the others name a set of their own.
    let set_id = if pick as usize % TYPES.len() == 0 { md5(body) } else { vec![0x5a; 16] };
    let one = packet(kind, &set_id, body);
    assert!(check(&one) <= 1);
    // Behind a valid Main packet of the same set, and followed by the input's bytes.
    let mut stream = packet(TYPES[0], &md5(&[0; 12]), &[0; 12]);
    stream.extend_from_slice(&one);
    stream.extend_from_slice(data);
    check(&stream);
});
