//! Round trips through the module: make a set of files, write it, read it back, damage
//! the files, compute the lost slices and write the files again as they were.

use super::solve::Unrepairable;
use super::*;
use std::ffi::OsStr;
use std::fs::File;
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
    let mut seen = vec![0usize; sizes.len()];
    let made = create(&members, &Params { slice, recovery, memory: 1 << 30 }, &mut |i, d| {
        seen[i] += d.len()
    })
    .unwrap();
    assert_eq!(seen, sizes, "the sink sees every byte once");
    write(&dir.join("p"), OsStr::new("set"), &made, &creator()).unwrap();
    contents
}

/// Checks every file of the set in `dir/p`, repairs what is lost, and returns how many
/// files were damaged.
pub(crate) fn repair_all(dir: &Path, memory: u64) -> Result<usize, Unrepairable> {
    let files = set_files(&dir.join("p"), OsStr::new("set")).unwrap();
    let (sets, _) = load(&files);
    assert_eq!(sets.len(), 1);
    let set = &sets[0];
    let base = File::open(dir).unwrap();
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
    let vols = set_files(&dir.join("p"), OsStr::new("set")).unwrap();
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
    let one =
        create(&members, &Params { slice: 512, recovery: 9, memory: 1 << 20 }, &mut |_, _| {})
            .unwrap();
    let three = create(&members, &Params { slice: 512, recovery: 9, memory: 1536 }, &mut |_, _| {})
        .unwrap();
    assert_eq!((one.passes, three.passes), (1, 3));
    assert_eq!(one.recovery, three.recovery);
    assert_eq!(one.descs, three.descs);
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
    let files = set_files(&dir.join("p"), OsStr::new("set")).unwrap();
    let (mut sets, _) = load(&files);
    let set = &mut sets[0];
    set.recovery.retain(|e, _| [0, 257, 258].contains(e));
    let path = dir.join("f0");
    let mut damaged = contents[0].clone();
    damaged[1] ^= 1;
    damaged[4 * k + 2] ^= 1;
    std::fs::write(&path, &damaged).unwrap();
    let base = File::open(dir).unwrap();
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
