use super::*;

fn digest_of(name: &str, data: &[u8]) -> Vec<u8> {
    let mut h = algo::lookup(name).unwrap().hasher();
    h.update(data);
    h.finish().as_bytes().to_vec()
}

fn listed(size: u64, etag: Option<&str>) -> Listed {
    Listed { key: "k".into(), size, etag: etag.map(str::to_string), checksums: Vec::new() }
}

/// What `offers` and `judge` make of an object, with the local digests computed from
/// `data` for whatever algorithm is asked.
fn verdict(l: &Listed, head: Option<&Head>, data: &[u8]) -> (Verdict, Vec<String>) {
    let mut notes = Vec::new();
    let offers = offers(l, head, &mut notes);
    let known = |a: &'static Algorithm| Some(digest_of(a.name, data));
    (judge(&offers, &known), notes)
}

#[test]
fn etags_are_read_as_s3_writes_them() {
    let md5 = "5d41402abc4b2a76b9719d911017c592";
    assert_eq!(etag_parts(md5).map(|(_, n)| n), Some(None));
    assert_eq!(etag_parts(&format!("{md5}-3")).map(|(_, n)| n), Some(Some(3)));
    for bad in [
        "",
        "abc",
        &format!("{md5}-0"),
        &format!("{md5}-10001"),
        &format!("{md5}-x"),
        &format!("{md5}0"),
    ] {
        assert!(etag_parts(bad).is_none(), "{bad}");
    }
}

#[test]
fn part_sizes_come_from_part_1_else_from_the_common_sizes() {
    assert_eq!(part_sizes(20 * MIB, 3, None), (vec![8 * MIB], false));
    assert_eq!(part_sizes(20 * MIB, 3, Some(7 * MIB)), (vec![7 * MIB], true));
    // 12 MiB in 3 parts: only 5 MiB of the common sizes (8 MiB would be 2 parts).
    assert_eq!(part_sizes(12 * MIB, 3, None), (vec![5 * MIB], false));
    // Several fit: all are tried, most common first.
    assert_eq!(part_sizes(40 * MIB, 3, None), (vec![16 * MIB, 15 * MIB], false));
    // Past 10,000 parts s3transfer doubles the part size.
    let size = 100_000 * MIB;
    let (d, _) = part_sizes(size, size.div_ceil(16 * MIB) as u32, None);
    assert!(d.contains(&(16 * MIB)), "{d:?}");
    assert!(part_sizes(1, 7, None).0.is_empty());
}

#[test]
fn a_single_part_etag_is_the_md5() {
    let data = b"hello";
    let md5 = hex(&digest_of("md5", data));
    assert_eq!(verdict(&listed(5, Some(&md5)), None, data).0, Verdict::Same(Proof::Md5Etag));
    let (v, _) = verdict(&listed(5, Some(&md5)), None, b"jello");
    assert!(matches!(v, Verdict::Differs(Proof::Md5Etag, _)), "{v:?}");
}

#[test]
fn a_multipart_etag_of_one_part_is_the_md5_of_the_md5() {
    let data = b"one part";
    let etag = format!("{}-1", hex(&digest_of("md5", &digest_of("md5", data))));
    assert_eq!(verdict(&listed(8, Some(&etag)), None, data).0, Verdict::Same(Proof::MultipartEtag));
}

#[test]
fn a_multipart_etag_of_a_guessed_part_size_proves_no_difference() {
    let data = vec![7u8; (10 * MIB) as usize];
    // Made with 6 MiB parts: 2 parts, which 8 MiB parts also give.
    let mut h = algo::s3etag_part(6 * MIB).unwrap().hasher();
    h.update(&data);
    let etag = h.finish().encode(crate::digest::Encoding::S3Etag);
    let l = listed(10 * MIB, Some(&etag));
    let (v, _) = verdict(&l, None, &data);
    assert!(matches!(v, Verdict::Unknown(_)), "a guess that misses is no proof: {v:?}");
    // Part 1's size from a HEAD makes it exact.
    let head = Head { size: 10 * MIB, part1: Some(6 * MIB), ..Head::default() };
    assert_eq!(verdict(&l, Some(&head), &data).0, Verdict::Same(Proof::MultipartEtag));
    let (v, _) = verdict(&l, Some(&head), &vec![8u8; (10 * MIB) as usize]);
    assert!(matches!(v, Verdict::Differs(Proof::MultipartEtag, _)), "{v:?}");
}

#[test]
fn sse_kms_and_sse_c_etags_prove_nothing() {
    let data = b"secret";
    let md5 = hex(&digest_of("md5", data));
    for head in [
        Head { encryption: Some("aws:kms".into()), ..Head::default() },
        Head { encryption: Some("aws:kms:dsse".into()), ..Head::default() },
        Head { customer_key: true, ..Head::default() },
    ] {
        let (v, notes) = verdict(&listed(6, Some(&md5)), Some(&head), b"other!");
        assert_eq!(v, Verdict::Unknown(vec![]));
        assert!(notes[0].contains("not an MD5"), "{notes:?}");
    }
    // SSE-S3 (AES256) keeps MD5 ETags.
    let head = Head { encryption: Some("AES256".into()), ..Head::default() };
    assert_eq!(verdict(&listed(6, Some(&md5)), Some(&head), data).0, Verdict::Same(Proof::Md5Etag));
}

#[test]
fn checksums_full_and_composite() {
    let data: Vec<u8> = (0..3000u32).map(|i| (i * 7) as u8).collect();
    let kms = |checksums| Head {
        encryption: Some("aws:kms".into()),
        checksums,
        part1: Some(1000),
        ..Head::default()
    };
    let c = |algo, value, parts, stated| Checksum { algo, value, parts, stated };
    for (algo, proof) in [
        ("sha256", Proof::Sha256),
        ("sha1", Proof::Sha1),
        ("crc64nvme", Proof::Crc64nvme),
        ("crc32c", Proof::Crc32c),
        ("crc32", Proof::Crc32),
    ] {
        let full = kms(vec![c(algo, digest_of(algo, &data), None, true)]);
        assert_eq!(
            verdict(&listed(3000, None), Some(&full), &data).0,
            Verdict::Same(proof),
            "{algo}"
        );
        let (v, _) = verdict(&listed(3000, None), Some(&full), &[0u8; 3000]);
        assert!(matches!(v, Verdict::Differs(p, _) if p == proof), "{algo}: {v:?}");
    }
    // Composite of 3 parts of 1000 bytes (part 1's size from the HEAD).
    let composite = digest_of("s3parts-sha256-1000", &data);
    let head = kms(vec![c("sha256", composite.clone(), Some(3), true)]);
    let etag = "00000000000000000000000000000000-3";
    assert_eq!(
        verdict(&listed(3000, Some(etag)), Some(&head), &data).0,
        Verdict::Same(Proof::CompositeSha)
    );
    // A composite whose kind the server did not state, on a multipart object: either
    // form may match, and a mismatch of both proves nothing.
    let head = kms(vec![c("sha256", composite, None, false)]);
    assert_eq!(
        verdict(&listed(3000, Some(etag)), Some(&head), &data).0,
        Verdict::Same(Proof::CompositeSha)
    );
    let (v, _) = verdict(&listed(3000, Some(etag)), Some(&head), &[1u8; 3000]);
    assert!(matches!(v, Verdict::Unknown(_)), "{v:?}");
    // A composite of one part: the checksum of the checksum.
    let once = digest_of("crc32", &digest_of("crc32", &data));
    let head = kms(vec![c("crc32", once, Some(1), true)]);
    assert_eq!(
        verdict(&listed(3000, None), Some(&head), &data).0,
        Verdict::Same(Proof::CompositeCrc)
    );
    // A value of the wrong length (moto without awscrt gives a CRC32 as CRC64NVME).
    let head = kms(vec![c("crc64nvme", vec![1, 2, 3, 4], None, true)]);
    let (v, notes) = verdict(&listed(3000, None), Some(&head), &data);
    assert_eq!(v, Verdict::Unknown(vec![]));
    assert!(notes.iter().any(|n| n.contains("4 bytes, not 8")), "{notes:?}");
}

#[test]
fn the_strongest_match_is_the_proof_and_any_exact_mismatch_wins() {
    let data = b"content";
    let md5 = hex(&digest_of("md5", data));
    let head = Head {
        checksums: vec![Checksum {
            algo: "sha256",
            value: digest_of("sha256", data),
            parts: None,
            stated: true,
        }],
        ..Head::default()
    };
    assert_eq!(verdict(&listed(7, Some(&md5)), Some(&head), data).0, Verdict::Same(Proof::Sha256));
    let bad = Head {
        checksums: vec![Checksum { algo: "crc32", value: vec![0; 4], parts: None, stated: true }],
        ..Head::default()
    };
    let (v, _) = verdict(&listed(7, Some(&md5)), Some(&bad), data);
    assert!(matches!(v, Verdict::Differs(Proof::Crc32, _)), "{v:?}");
}

#[test]
fn unknown_lists_each_needed_digest_once() {
    let l = listed(20 * MIB, Some("00000000000000000000000000000000-3"));
    let head = Head { part1: Some(8 * MIB), ..Head::default() };
    let mut notes = Vec::new();
    let o = offers(&l, Some(&head), &mut notes);
    match judge(&o, &|_| None) {
        Verdict::Unknown(need) => {
            assert_eq!(need.iter().map(|a| a.name).collect::<Vec<_>>(), ["s3etag"])
        }
        v => panic!("{v:?}"),
    }
}

#[test]
fn checksum_values_and_composites() {
    let c = checksum_header("crc32", Some("A2P6Tg==-3"), None).unwrap();
    assert_eq!((c.value, c.parts, c.stated), (vec![0x03, 0x63, 0xfa, 0x4e], Some(3), true));
    let c = checksum_header("crc64nvme", Some("7ljLeg=="), None).unwrap();
    assert_eq!((c.parts, c.stated), (None, false));
    let c = checksum_header("sha256", Some("BhrSTA=="), Some(true)).unwrap();
    assert_eq!((c.parts, c.stated), (Some(0), true));
    let c = checksum_header("sha256", Some("BhrSTA=="), Some(false)).unwrap();
    assert_eq!((c.parts, c.stated), (None, true));
    assert!(checksum_header("crc32", Some("A2P6Tg==-x"), None).is_none());
    assert!(checksum_header("crc32", Some("!!"), None).is_none());
    assert!(checksum_header("crc32", None, None).is_none());
}

fn hex(b: &[u8]) -> String {
    Digest::new(b).to_hex()
}
