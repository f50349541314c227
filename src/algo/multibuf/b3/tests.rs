//! The BLAKE3 lane kernels against the official test vectors and, differentially, against
//! the `blake3` crate, for every kernel this CPU runs and the portable code.

use super::*;
use crate::algo::multibuf::tests::Rng;

/// The official test vectors (test_vectors/test_vectors.json of the BLAKE3 repository):
/// input length, and the first 32 bytes of the `hash` field. The input of length `n` is
/// the bytes `i % 251`.
const VECTORS: [(usize, &str); 22] = [
    (0, "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"),
    (1, "2d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f592e213"),
    (1023, "10108970eeda3eb932baac1428c7a2163b0e924c9a9e25b35bba72b28f70bd11"),
    (1024, "42214739f095a406f3fc83deb889744ac00df831c10daa55189b5d121c855af7"),
    (1025, "d00278ae47eb27b34faecf67b4fe263f82d5412916c1ffd97c8cb7fb814b8444"),
    (2048, "e776b6028c7cd22a4d0ba182a8bf62205d2ef576467e838ed6f2529b85fba24a"),
    (2049, "5f4d72f40d7a5f82b15ca2b2e44b1de3c2ef86c426c95c1af0b6879522563030"),
    (3072, "b98cb0ff3623be03326b373de6b9095218513e64f1ee2edd2525c7ad1e5cffd2"),
    (3073, "7124b49501012f81cc7f11ca069ec9226cecb8a2c850cfe644e327d22d3e1cd3"),
    (4096, "015094013f57a5277b59d8475c0501042c0b642e531b0a1c8f58d2163229e969"),
    (4097, "9b4052b38f1c5fc8b1f9ff7ac7b27cd242487b3d890d15c96a1c25b8aa0fb995"),
    (5120, "9cadc15fed8b5d854562b26a9536d9707cadeda9b143978f319ab34230535833"),
    (5121, "628bd2cb2004694adaab7bbd778a25df25c47b9d4155a55f8fbd79f2fe154cff"),
    (6144, "3e2e5b74e048f3add6d21faab3f83aa44d3b2278afb83b80b3c35164ebeca205"),
    (6145, "f1323a8631446cc50536a9f705ee5cb619424d46887f3c376c695b70e0f0507f"),
    (7168, "61da957ec2499a95d6b8023e2b0e604ec7f6b50e80a9678b89d2628e99ada77a"),
    (7169, "a003fc7a51754a9b3c7fae0367ab3d782dccf28855a03d435f8cfe74605e7817"),
    (8192, "aae792484c8efe4f19e2ca7d371d8c467ffb10748d8a5a1ae579948f718a2a63"),
    (8193, "bab6c09cb8ce8cf459261398d2e7aef35700bf488116ceb94a36d0f5f1b7bc3b"),
    (16384, "f875d6646de28985646f34ee13be9a576fd515f76b5b0a26bb324735041ddde4"),
    (31744, "62b6960e1a44bcc1eb1a611a8d6235b6b4b78f32e7abc4fb4c6cdcce94895c47"),
    (102400, "bc3e3d41a1146b069abffad3c0d44860cf664390afce4d9661f7902e7943e085"),
];

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Every kernel: those this CPU runs, and the portable code; one the CPU lacks the
/// instructions of is said ("skipped: ..."), and fails the test under
/// `FIXITY_REQUIRE_KERNELS=1`.
fn kernels() -> Vec<&'static Kernel> {
    let runs: Vec<&Kernel> = Kernel::every().collect();
    for k in Kernel::all() {
        if !runs.iter().any(|r| std::ptr::eq(*r, k)) {
            if crate::algo::multibuf::tests::required() {
                panic!(
                    "this CPU cannot run the BLAKE3 {} kernel (FIXITY_REQUIRE_KERNELS=1)",
                    k.name
                );
            }
            eprintln!("skipped: BLAKE3 {}: this CPU lacks its instructions", k.name);
        }
    }
    runs
}

fn vector_input(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i % 251) as u8).collect()
}

#[test]
fn b3_official_test_vectors_every_kernel() {
    let inputs: Vec<Vec<u8>> = VECTORS.iter().map(|&(n, _)| vector_input(n)).collect();
    let refs: Vec<&[u8]> = inputs.iter().map(|v| v.as_slice()).collect();
    for k in kernels() {
        // All at once (lanes of mixed lengths), and each alone.
        let together = hash_many(k, &refs);
        for ((&(n, want), got), input) in VECTORS.iter().zip(&together).zip(&refs) {
            assert_eq!(hex(got), want, "{} together, {n} bytes", k.name);
            assert_eq!(hex(&hash_many(k, &[input])[0]), want, "{} alone, {n} bytes", k.name);
        }
    }
}

/// A length concentrated around the block, chunk and parent boundaries (64, 1024, 2048,
/// 4096 and their multiples), else anywhere in 0..=64 KiB.
fn length(rng: &mut Rng) -> usize {
    const EDGES: [usize; 10] = [0, 64, 128, 1024, 2048, 3072, 4096, 8192, 16_384, 32_768];
    match rng.below(4) {
        0 => rng.below(64 * 1024 + 1),
        1 => rng.below(200),
        _ => {
            let e = EDGES[rng.below(EDGES.len())];
            (e + rng.below(5)).saturating_sub(2).min(64 * 1024)
        }
    }
}

#[test]
fn b3_random_lane_mixes_equal_the_crate_every_kernel() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let kernels = kernels();
    for round in 0..60 {
        let count = 1 + rng.below(if round % 3 == 0 { 4 } else { 40 });
        let inputs: Vec<Vec<u8>> = (0..count)
            .map(|_| {
                let n = length(&mut rng);
                rng.bytes(n)
            })
            .collect();
        let refs: Vec<&[u8]> = inputs.iter().map(|v| v.as_slice()).collect();
        for k in &kernels {
            let got = hash_many(k, &refs);
            assert_eq!(got.len(), count);
            for (input, h) in refs.iter().zip(&got) {
                let want = ::blake3::hash(input);
                assert_eq!(h, want.as_bytes(), "{} round {round}, {} bytes", k.name, input.len());
            }
        }
    }
}

#[test]
fn b3_exact_sizes_equal_the_crate() {
    let sizes = [
        0, 1, 63, 64, 65, 127, 128, 1023, 1024, 1025, 2047, 2048, 2049, 3071, 3072, 4095, 4096,
        4097, 5119, 8191, 8192, 8193, 65_535, 65_536,
    ];
    let inputs: Vec<Vec<u8>> = sizes.iter().map(|&n| vector_input(n)).collect();
    let refs: Vec<&[u8]> = inputs.iter().map(|v| v.as_slice()).collect();
    for k in kernels() {
        for (input, h) in refs.iter().zip(hash_many(k, &refs)) {
            assert_eq!(&h, ::blake3::hash(input).as_bytes(), "{} {} bytes", k.name, input.len());
        }
    }
}
