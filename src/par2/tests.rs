//! Round trips through the module: make a set of files, write it, read it back, damage
//! the files, compute the lost slices and write the files again as they were.

use super::solve::Unrepairable;
use super::*;
use std::ffi::OsStr;
use std::path::Path;

fn random(len: usize, seed: &mut u64) -> Vec<u8> {
    (0..len)
        .map(|_| {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            (*seed >> 24) as u8
        })
        .collect()
}

/// Makes files of `sizes` under `dir` (named f0, f1, sub/f2 ...), protects them with
/// `recovery` slices of `slice` bytes, and returns their contents.
pub(crate) fn protected(dir: &Path, sizes: &[usize], slice: u64, recovery: u32) -> Vec<Vec<u8>> {
    let mut seed = 0x5eed_0000_0000_0001u64 ^ sizes.len() as u64;
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    let mut members = Vec::new();
    let mut contents = Vec::new();
    for (i, &n) in sizes.iter().enumerate() {
        let name = if i % 2 == 0 { format!("f{i}") } else { format!("sub/f{i}") };
        let data = random(n, &mut seed);
        std::fs::write(dir.join(&name), &data).unwrap();
        members.push(Member { path: dir.join(&name), name: name.into_bytes() });
        contents.push(data);
    }
    let mut seen = Seen { bytes: vec![Vec::new(); sizes.len()], whole: vec![false; sizes.len()] };
    let sizes64: Vec<u64> = sizes.iter().map(|&n| n as u64).collect();
    let p = dir.join("p");
    let made = make(&members, &sizes64, slice, recovery, 1 << 30, &p, OsStr::new("set"), &mut seen)
        .unwrap();
    assert!(seen.bytes == contents, "the sink sees every byte once, in order");
    for (i, &n) in sizes.iter().enumerate() {
        assert_eq!(seen.whole[i], n <= 16 << 10, "member {i} of {n} bytes given whole");
    }
    made.finish(&Listing::read(&p).unwrap()).unwrap();
    contents
}

/// A sink that keeps what it is given: each member's bytes, and whether they came whole.
struct Seen {
    bytes: Vec<Vec<u8>>,
    whole: Vec<bool>,
}

impl Sink for Seen {
    fn update(&mut self, i: usize, data: &[u8]) {
        assert!(!self.whole[i], "member {i} given whole, then again");
        self.bytes[i].extend_from_slice(data);
    }

    fn whole(&mut self, members: &[(usize, &[u8])]) {
        for &(i, d) in members {
            assert!(self.bytes[i].is_empty() && !self.whole[i], "member {i} given twice");
            self.bytes[i] = d.to_vec();
            self.whole[i] = true;
        }
    }
}

/// Checks every file of the set in `dir/p`, repairs what is lost, and returns how many
/// files were damaged.
pub(crate) fn repair_all(dir: &Path, memory: u64) -> Result<usize, Unrepairable> {
    let files = Listing::read(&dir.join("p")).unwrap().files(OsStr::new("set"));
    let (sets, _) = load(&files);
    assert_eq!(sets.len(), 1);
    let set = &sets[0];
    let base = crate::sys::open_dir(dir).unwrap();
    let layout = set.layout();
    let states: Vec<State> = layout
        .iter()
        .map(|(_, f, _)| {
            let (d, i) = f.unwrap();
            check_file(&base, d, i, set.main.slice_size)
        })
        .collect();
    let placed: Vec<Placed> = layout
        .iter()
        .zip(&states)
        .map(|((_, f, first), state)| Placed { desc: f.unwrap().0, first: *first, state })
        .collect();
    let solution = solve(set, &base, &placed, memory)?;
    let mut damaged = 0;
    for p in &placed {
        if *p.state == State::Intact {
            continue;
        }
        damaged += 1;
        let mut out = Vec::new();
        let md5 = solution.write_file(&base, p, &mut out).unwrap();
        assert_eq!(md5, p.desc.md5);
        let name = std::str::from_utf8(&p.desc.name).unwrap();
        std::fs::write(dir.join(name), &out).unwrap();
    }
    Ok(damaged)
}

fn flip(path: &Path, at: usize) {
    let mut d = std::fs::read(path).unwrap();
    d[at] ^= 0x40;
    std::fs::write(path, d).unwrap();
}

#[test]
fn damaged_and_missing_files_are_rebuilt() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let sizes = [10_000, 3000, 64, 20_000, 4096];
    let contents = protected(dir, &sizes, 1024, 8);
    assert_eq!(repair_all(dir, 1 << 30), Ok(0));
    flip(&dir.join("f0"), 5000);
    std::fs::remove_file(dir.join("sub/f1")).unwrap(); // 3 slices
    std::fs::write(dir.join("f2"), b"short").unwrap(); // 1 slice
    assert_eq!(repair_all(dir, 1 << 30), Ok(3));
    for (i, c) in contents.iter().enumerate() {
        let name = if i % 2 == 0 { format!("f{i}") } else { format!("sub/f{i}") };
        assert_eq!(&std::fs::read(dir.join(name)).unwrap(), c, "file {i}");
    }
}

#[test]
fn more_damage_than_recovery_is_said_with_the_count() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    protected(dir, &[8192, 8192], 1024, 3);
    std::fs::remove_file(dir.join("f0")).unwrap();
    assert_eq!(repair_all(dir, 1 << 30), Err(Unrepairable::TooFew { lost: 8, available: 3 }));
    assert!(Unrepairable::TooFew { lost: 8, available: 3 }.to_string().contains("5 more needed"));
}

#[test]
fn a_damaged_volume_loses_only_its_damaged_slices() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let contents = protected(dir, &[30_000], 1024, 6);
    let vols = Listing::read(&dir.join("p")).unwrap().files(OsStr::new("set"));
    // Damage the first recovery packet of the first volume.
    flip(&vols[1], 100);
    let (sets, volumes) = load(&vols);
    assert_eq!(sets[0].recovery.len(), 5);
    assert!(volumes.iter().any(|v| v.damage.as_ref().is_ok_and(|&d| d > 0)));
    flip(&dir.join("f0"), 10);
    flip(&dir.join("f0"), 20_000);
    assert_eq!(repair_all(dir, 1 << 30), Ok(1));
    assert_eq!(std::fs::read(dir.join("f0")).unwrap(), contents[0]);
}

#[test]
fn repair_beyond_the_memory_allowed_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    protected(dir, &[8192], 1024, 4);
    flip(&dir.join("f0"), 0);
    assert_eq!(repair_all(dir, 100), Err(Unrepairable::Memory(2048)));
}

#[test]
fn recovery_in_passes_equals_recovery_in_one() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    std::fs::write(dir.join("a"), random(50_000, &mut 7)).unwrap();
    let members = [Member { path: dir.join("a"), name: b"a".to_vec() }];
    let run = |passes: Vec<std::ops::Range<u32>>| {
        let mut out = Vec::new();
        let mut descs = Vec::new();
        let params = create::Params { slice: 512, passes };
        create::create(&members, &params, &mut |_: usize, _: &[u8]| {}, &mut |d, rec| {
            descs = d.descs.clone();
            out.push(rec);
            Ok(())
        })
        .unwrap();
        (out, descs)
    };
    let (one, d1) = run(std::iter::once(0..9).collect());
    let (three, d3) = run(vec![0..3, 3..6, 6..9]);
    assert_eq!((one.len(), three.len()), (1, 3));
    assert_eq!(one.concat(), three.concat());
    assert_eq!(d1, d3);
}

#[test]
fn the_memory_allowed_bounds_each_pass_and_volume() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    std::fs::write(dir.join("a"), random(50_000, &mut 9)).unwrap();
    let members = [Member { path: dir.join("a"), name: b"a".to_vec() }];
    // 10 recovery slices of 512 bytes, 2 KiB at a time: 3 passes, and volumes of at most 4.
    let p = dir.join("p");
    let made =
        make(&members, &[50_000], 512, 10, 2048, &p, OsStr::new("s"), &mut |_: usize, _: &[u8]| {})
            .unwrap();
    assert_eq!(made.passes, 3);
    let names = |d: &Path| {
        let mut n: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        n.sort();
        n
    };
    assert!(names(&p).iter().all(|n| n.contains("fixity-tmp")), "{:?}", names(&p));
    made.finish(&Listing::read(&p).unwrap()).unwrap();
    assert_eq!(names(&p), ["s.par2", "s.vol00+04.par2", "s.vol04+03.par2", "s.vol07+03.par2"]);
    // A set not finished leaves nothing.
    let q = dir.join("q");
    drop(
        make(&members, &[50_000], 512, 10, 2048, &q, OsStr::new("s"), &mut |_: usize, _: &[u8]| {})
            .unwrap(),
    );
    assert!(names(&q).is_empty());
}

#[test]
fn a_choice_of_recovery_slices_that_does_not_invert_is_replaced() {
    // Input slices 0 and k have the constants 2^1 and 2^256: raised to the exponent 257
    // both are 2^(257 * ...) with 255 * 257 = 65535, the group's order, so they are equal
    // and the recovery slices 0 and 257 cannot tell the two lost slices apart.
    let constants = super::gf16::input_constants(200);
    let k = constants.iter().position(|&c| c == super::gf16::pow(2, 256)).unwrap();
    assert_eq!(super::gf16::pow(constants[0], 257), super::gf16::pow(constants[k], 257));
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let contents = protected(dir, &[4 * (k + 1)], 4, 259);
    let files = Listing::read(&dir.join("p")).unwrap().files(OsStr::new("set"));
    let (mut sets, _) = load(&files);
    let set = &mut sets[0];
    set.recovery.retain(|e, _| [0, 257, 258].contains(e));
    let path = dir.join("f0");
    let mut damaged = contents[0].clone();
    damaged[1] ^= 1;
    damaged[4 * k + 2] ^= 1;
    std::fs::write(&path, &damaged).unwrap();
    let base = crate::sys::open_dir(dir).unwrap();
    let layout = set.layout();
    let (d, i) = layout[0].1.unwrap();
    let state = check_file(&base, d, i, 4);
    let placed = [Placed { desc: d, first: 0, state: &state }];
    let solution = solve(set, &base, &placed, 1 << 20).unwrap();
    assert_eq!(solution.exponents, vec![257, 258], "the first choice (0, 257) was replaced");
    let mut out = Vec::new();
    solution.write_file(&base, &placed[0], &mut out).unwrap();
    assert_eq!(out, contents[0]);
}
