#[cfg(unix)]
use super::order::place_of;
use super::order::{Place, arrange};
use super::probe::{self, Facts, Probe, Timings, decide, median, plan, settled};
use super::*;
use crate::device;
use crate::read::OpenMode;
use crate::sys::MetadataExt;
use std::path::PathBuf;
use std::sync::Arc;

fn facts(fs: &str, rotational: Option<bool>, probe: Probe) -> Facts {
    Facts { device: "/dev/x".into(), fs_type: Some(fs.into()), rotational, probe, uncached: None }
}

fn timed(reads_ms: &[f64], cached: usize) -> Probe {
    Probe::Timed(Timings { reads_ms: reads_ms.to_vec(), cached, direct: true })
}

/// Timings recorded on this project's machines: a virtio disk on flash (the first read
/// slow, the rest fast) and a 7200 rpm disk (one read from the drive's own cache).
const VIRTIO: [f64; 8] = [1.250, 0.457, 0.258, 0.290, 0.244, 0.267, 0.218, 0.217];
const SPINNING: [f64; 8] = [8.1, 12.3, 0.2, 9.7, 7.5, 11.0, 10.2, 6.9];

#[test]
fn the_decision_follows_the_timings_not_the_flag() {
    let (kind, why) = decide(&facts("ext4", Some(true), timed(&VIRTIO, 0)), None);
    assert_eq!(kind, Kind::Flash);
    // (Each system's words: `device::SAYS`; Linux's are these.)
    let says = &crate::device::SAYS;
    let (direct, rotational) = (says.uncached, says.rotational);
    assert_eq!(
        why,
        format!("median random 4 KiB read 0.26 ms over 8 {direct} reads; {rotational}")
    );
    let (kind, why) = decide(&facts("ext4", Some(false), timed(&SPINNING, 0)), None);
    assert_eq!(kind, Kind::Seeking);
    assert!(why.starts_with("median random 4 KiB read 8.90 ms over 8"), "{why}");
    assert!(why.ends_with(says.not_rotational), "{why}");
    // Uncached reads without O_DIRECT say so; a disk with no flag says that.
    let mut t = Timings { reads_ms: vec![3.0, 2.5, 2.1], cached: 2, direct: false };
    let f = facts("xfs", None, Probe::Timed(t.clone()));
    let (kind, why) = decide(&f, None);
    assert_eq!(kind, Kind::Seeking);
    assert_eq!(
        why,
        format!("median random 4 KiB read 2.50 ms over 3 uncached reads; {}", says.unknown)
    );
    // Just under the line is flash.
    t.reads_ms = vec![1.9, 1.99, 1.0];
    assert_eq!(decide(&facts("xfs", None, Probe::Timed(t)), None).0, Kind::Flash);
}

#[test]
fn network_and_memory_file_systems_go_by_their_type() {
    for fs in ["nfs", "nfs4", "cifs", "smb3", "fuse.sshfs", "ceph", "lustre", "gpfs", "9p"] {
        let (kind, why) = decide(&facts(fs, Some(true), timed(&SPINNING, 0)), None);
        assert_eq!((kind, why), (Kind::Network, format!("network file system {fs}")));
    }
    let (kind, why) = decide(&facts("tmpfs", None, Probe::NotRun("not needed".into())), None);
    assert_eq!((kind, why.as_str()), (Kind::Flash, "file system tmpfs, in memory"));
}

#[test]
fn without_enough_timings_the_kernels_flag_decides_and_says_why() {
    let (kind, why) = decide(&facts("ext4", Some(true), timed(&[9.0], 7)), None);
    assert_eq!(kind, Kind::Seeking);
    let rotational = crate::device::SAYS.rotational;
    assert_eq!(
        why,
        format!(
            "not probed: 1 uncached block(s) could be timed, 7 were in the page cache; {rotational}"
        )
    );
    let denied = Probe::NotRun("cannot open /x: Permission denied (os error 13)".into());
    let (kind, why) = decide(&facts("ext4", Some(false), denied), None);
    assert_eq!(kind, Kind::Flash);
    assert!(why.starts_with("not probed: cannot open /x: Permission denied"), "{why}");
    let nothing = Probe::NotRun("no file with data to read".into());
    assert_eq!(decide(&facts("btrfs", None, nothing.clone()), None).0, Kind::Flash);
    assert_eq!(decide(&facts("ext4", Some(true), Probe::Deferred), None).0, Kind::Seeking);
    // --storage overrides everything, network file systems included.
    let (kind, why) =
        decide(&facts("nfs4", None, nothing.clone()), Some((Kind::Seeking, ForcedBy::Option)));
    assert_eq!((kind, why.as_str()), (Kind::Seeking, "--storage hdd"));
    let spinning = facts("ext4", Some(true), timed(&SPINNING, 0));
    let (kind, why) = decide(&spinning, Some((Kind::Flash, ForcedBy::Option)));
    assert_eq!((kind, why.as_str()), (Kind::Flash, "--storage ssd"));
}

#[test]
fn a_probe_stops_once_the_reads_settle_it() {
    assert!(!settled(&[0.1, 0.2]));
    assert!(settled(&[0.1, 0.2, 0.1]), "three clearly fast reads");
    assert!(settled(&[5.0, 9.0, 4.5]), "three clearly slow reads");
    assert!(!settled(&[0.1, 3.0, 0.1]), "mixed: read on");
    assert!(!settled(&[2.5, 9.0, 4.5]), "one not clearly slow");
    assert!(settled(&VIRTIO) && settled(&SPINNING), "eight reads are enough");
    assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
    assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
    assert_eq!(median(&[]), None);
}

#[test]
fn probe_reads_go_round_the_files_and_spread_within_them() {
    let files: Vec<(PathBuf, u64)> = vec![
        ("big".into(), 10 << 20),
        ("page".into(), 4096),
        ("tiny".into(), 100),
        ("mid".into(), 1 << 20),
    ];
    let p = plan(&files);
    assert_eq!(
        p,
        vec![
            (0, 5 << 20),
            (1, 0),
            (2, 0),
            (3, 512 << 10),
            (0, 1280 << 10),
            (3, 128 << 10),
            (0, 8960 << 10),
            (3, 896 << 10),
        ]
    );
    assert!(p.iter().all(|&(i, off)| off < files[i].1 && off % probe::BLOCK as u64 == 0));
    assert!(plan(&[]).is_empty());
    assert_eq!(plan(&[("one".into(), 4096)]), vec![(0, 0)]);
}

/// A table over fake devices: 1 and 5 spin, 2 is a virtio disk on flash, 3 is NFS, 4
/// spins but holds only cached data before the run; every device asked is recorded.
/// The devices a fake source was asked about, and what for.
type Asked = Arc<Mutex<Vec<(u64, Want)>>>;

fn fake_devices(forced: Option<Kind>) -> (Devices, Asked) {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let log = asked.clone();
    let source = move |dev: u64, _: &Path, want: Want| {
        log.lock().unwrap().push((dev, want));
        let mut f = match dev {
            2 => facts("ext4", Some(true), timed(&VIRTIO, 0)),
            3 => facts("nfs4", None, Probe::NotRun("not needed".into())),
            4 if want == Want::IfCold => facts("ext4", Some(true), Probe::Deferred),
            6 => Facts { uncached: Some(true), ..facts("ext4", None, timed(&SPINNING, 0)) },
            7 => Facts { uncached: Some(false), ..facts("ext4", None, timed(&SPINNING, 0)) },
            _ => facts("ext4", Some(true), timed(&SPINNING, 0)),
        };
        f.device = format!("/dev/fake{dev}");
        f
    };
    (Devices::with_source(forced.map(|k| (k, ForcedBy::Option)), Box::new(source)), asked)
}

#[test]
fn each_device_gets_its_own_policy_and_lock() {
    let (devices, asked) = fake_devices(None);
    let notes = Arc::new(Mutex::new(Vec::new()));
    let seen = notes.clone();
    let d = devices.observe(move |n| seen.lock().unwrap().push(n.to_string()));
    let p = Path::new("f");
    assert!(
        d.seeking(1) != Some(false) && !d.ordering(),
        "nothing decided, nothing waited for yet"
    );
    let one: *const Mutex<()> = d.wait(1, p).expect("a seeking disk has a lock");
    assert!(d.ordering(), "a read waited for a seeking disk");
    assert_eq!(d.wait(1, p).map(|l| l as *const _), Some(one), "decided once, same lock");
    let five: *const Mutex<()> = d.wait(5, p).unwrap();
    assert_ne!(one, five, "one reader per seeking disk, not one for the run");
    assert!(d.wait(2, p).is_none() && d.seeking(2) == Some(false), "flash: many reads in flight");
    assert!(d.wait(3, p).is_none() && d.seeking(3) == Some(false), "network: many reads in flight");
    // Before the run, a device whose sampled data is cached is left undecided.
    assert!(d.policy(4, p, Want::IfCold).is_none());
    assert!(d.policy(4, p, Want::IfCold).is_none());
    assert!(d.seeking(4) != Some(false));
    assert!(d.wait(4, p).is_some(), "decided at the first read that waits");
    assert_eq!(
        *asked.lock().unwrap(),
        [(1, Want::Now), (5, Want::Now), (2, Want::Now), (3, Want::Now), (4, Want::IfCold)]
            .into_iter()
            .chain([(4, Want::Now)])
            .collect::<Vec<_>>(),
        "each device probed once (the deferred one again when it has to be)"
    );
    let notes = notes.lock().unwrap().clone();
    assert_eq!(notes.len(), 6, "{notes:?}");
    assert!(notes[0].starts_with("/dev/fake1: seeking: one reader at a time"), "{notes:?}");
    assert!(notes[2].starts_with("/dev/fake2: flash-like: many reads in flight (median"));
    assert_eq!(
        notes[3],
        "/dev/fake3: network storage: many reads in flight (network file system nfs4)"
    );
    assert!(notes[4].starts_with("/dev/fake4: not decided yet (every block sampled"));
    assert!(notes[5].starts_with("/dev/fake4: seeking"));
    assert_eq!(d.notes().len(), 5, "the table's notes: every device, decided");
    assert!(!d.all_seeking() && d.any_network());
}

#[test]
fn a_seeking_disk_found_cold_before_the_run_is_read_in_physical_order_from_the_start() {
    let (d, _) = fake_devices(None);
    let p = Path::new("f");
    assert!(d.policy(7, p, Want::IfCold).is_some() && !d.ordering(), "all cached");
    assert!(d.policy(6, p, Want::IfCold).is_some() && d.ordering(), "not all cached");
    assert!(d.known(6).unwrap().cold.load(std::sync::atomic::Ordering::Relaxed));
    assert!(!d.known(7).unwrap().cold.load(std::sync::atomic::Ordering::Relaxed));
}

#[test]
fn storage_hdd_and_ssd_decide_every_device_without_probing() {
    let (d, asked) = fake_devices(Some(Kind::Seeking));
    let p = Path::new("f");
    let (a, b) = (d.wait(2, p).unwrap() as *const _, d.wait(3, p).unwrap() as *const _);
    assert_ne!(a, b, "a lock per device");
    assert!(d.all_seeking());
    // Asked only whether the data is cached (files go in physical order if it is not).
    assert!(asked.lock().unwrap().iter().all(|(_, w)| *w == Want::Cache));
    assert!(d.notes()[0].ends_with("(--storage hdd)"), "{:?}", d.notes());
    let (d, asked) = fake_devices(Some(Kind::Flash));
    assert!(d.wait(1, p).is_none() && d.seeking(1) == Some(false) && !d.all_seeking());
    assert_eq!(*asked.lock().unwrap(), [(1, Want::Name)]);
}

#[test]
fn devices_beyond_the_tables_room_are_decided_too() {
    let (d, _) = fake_devices(None);
    let p = Path::new("f");
    let locks: Vec<*const Mutex<()>> =
        (100..100 + ROOM as u64 + 3).map(|dev| d.wait(dev, p).unwrap() as *const _).collect();
    assert_eq!(d.notes().len(), ROOM + 3);
    // The first ROOM have a lock each; the rest share one.
    let mut own = locks[..ROOM].to_vec();
    own.sort();
    own.dedup();
    assert_eq!(own.len(), ROOM);
    assert!(locks[ROOM..].iter().all(|l| *l == locks[ROOM]) && !own.contains(&locks[ROOM]));
    assert!(d.wait(2 + 1000, p).is_some(), "asked again: the same answer");
    assert_eq!(d.policy(100 + ROOM as u64 + 1, p, Want::Now).unwrap().kind, Kind::Seeking);
}

#[test]
fn the_engine_fits_its_workers_to_the_devices() {
    use crate::pipeline::Config;
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let (d, _) = fake_devices(None);
    d.wait(1, Path::new("f"));
    let c = Config::for_devices(Arc::new(d));
    assert_eq!((c.workers, c.read.buffer_size, c.serial_reads), (cores, 4 << 20, false));
    let (d, _) = fake_devices(None);
    d.wait(1, Path::new("f"));
    d.wait(2, Path::new("f"));
    assert_eq!(Config::for_devices(Arc::new(d)).workers, (cores * 4).max(8));
    let (d, _) = fake_devices(None);
    d.wait(3, Path::new("f"));
    assert!(Config::for_devices(Arc::new(d)).workers >= 32);
    let (d, _) = fake_devices(None);
    assert_eq!(Config::for_devices(Arc::new(d)).workers, (cores * 4).max(8), "nothing decided");
}

#[test]
fn held_tasks_go_out_in_physical_order_devices_taking_turns() {
    let at = |extent, ino| Place { extent, ino };
    let held = vec![
        (2, at(50, 1), "b2"),
        (1, at(30, 9), "a3"),
        (1, at(10, 8), "a1"),
        (2, at(5, 2), "b1"),
        (1, at(u64::MAX, 7), "a5"),
        (1, at(u64::MAX, 3), "a4"),
        (1, at(20, 1), "a2"),
    ];
    assert_eq!(arrange(held), ["a1", "b1", "a2", "b2", "a3", "a4", "a5"]);
    assert!(arrange::<&str>(Vec::new()).is_empty());
}

/// Writes `n` files of `size` bytes in the reverse of their names' order, each synced so
/// its blocks are allocated now; returns the names in name order.
fn write_reversed(dir: &Path, n: usize, size: usize) -> Vec<String> {
    use std::io::Write;
    let names: Vec<String> = (0..n).map(|i| format!("f{i:03}")).collect();
    for (i, name) in names.iter().enumerate().rev() {
        let mut f = std::fs::File::create(dir.join(name)).unwrap();
        f.write_all(&vec![i as u8; size]).unwrap();
        f.sync_all().unwrap();
    }
    names
}

/// A table that takes every device for a seeking disk (or flash) whose reads have waited.
fn decided(kind: Kind, dir: &Path) -> Devices {
    let probe = if kind == Kind::Seeking { timed(&SPINNING, 0) } else { timed(&VIRTIO, 0) };
    let d = Devices::with_source(None, Box::new(move |_, _, _| facts("ext4", None, probe.clone())));
    let dev = std::fs::metadata(dir).unwrap().dev();
    d.wait(dev, dir);
    d
}

type Job = (u64, PathBuf, OpenMode);

/// The order in which a dispatcher over `devices` hands on the files `names` of `dir`,
/// given to it in name order.
fn dispatched(devices: &Devices, dir: &Path, names: &[String]) -> Vec<String> {
    let mut order = Dispatch::new(Some(devices), 4096, |j: &Job| (j.0, j.1.as_path(), j.2));
    let mut out = Vec::new();
    let mut send = |j: Job| out.push(j.1.file_name().unwrap().to_string_lossy().into_owned());
    for (seq, n) in names.iter().enumerate() {
        let job = (seq as u64, dir.join(n), OpenMode::Walked { follow: false });
        order.admit(job, &mut send);
    }
    order.flush(&mut send);
    assert!(!order.holds(u64::MAX), "nothing held after a flush");
    out
}

#[cfg(unix)]
#[test]
fn files_on_a_seeking_disk_go_out_in_physical_order() {
    let dir = tempfile::tempdir().unwrap();
    let names = write_reversed(dir.path(), 40, 8192);
    // Where each file's data lies, asked here of the kernel directly.
    let mut expected: Vec<(u64, u64, String)> = names
        .iter()
        .map(|n| {
            let p = dir.path().join(n);
            let extent = device::first_extent(&std::fs::File::open(&p).unwrap());
            let ino = std::fs::metadata(&p).unwrap().ino();
            (extent.unwrap_or(u64::MAX), ino, n.clone())
        })
        .collect();
    expected.sort();
    let expected: Vec<String> = expected.into_iter().map(|e| e.2).collect();
    assert_eq!(dispatched(&decided(Kind::Seeking, dir.path()), dir.path(), &names), expected);
    // Flash, or a seeking disk no read has waited for: in the producer's order, at once.
    assert_eq!(dispatched(&decided(Kind::Flash, dir.path()), dir.path(), &names), names);
    let (fresh, _) = fake_devices(None);
    assert_eq!(dispatched(&fresh, dir.path(), &names), names);
}

#[test]
fn a_batch_goes_out_when_full_or_when_the_engine_waits_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let names = write_reversed(dir.path(), 7, 100);
    let devices = decided(Kind::Seeking, dir.path());
    let mut order = Dispatch::new(Some(&devices), 3, |j: &Job| (j.0, j.1.as_path(), j.2));
    let sent = std::cell::RefCell::new(Vec::new());
    let mut send = |j: Job| sent.borrow_mut().push(j.0);
    for (i, n) in names.iter().enumerate() {
        // Numbered from 5: the engine has emitted 0..5 (say, files on other devices).
        order.admit((5 + i as u64, dir.path().join(n), OpenMode::Named), &mut send);
    }
    // Two full batches of three went out; the seventh is held.
    let mut firsts = sent.borrow().clone();
    firsts.sort_unstable();
    assert_eq!(firsts, [5, 6, 7, 8, 9, 10]);
    assert!(!order.holds(10), "the engine can still emit up to the held task");
    assert!(order.holds(11) && order.holds(12), "the engine waits for a held task");
    order.flush(&mut send);
    assert!(!order.holds(11));
    assert_eq!(sent.borrow().len(), 7);
}

#[test]
fn where_the_file_system_gives_no_extents_inode_order_stands_in() {
    // tmpfs hands out inode numbers in creation order and has no extents.
    let shm = Path::new("/dev/shm");
    if crate::device::fs_type(shm).as_deref() != Some("tmpfs") {
        eprintln!("skipped: /dev/shm is not a tmpfs here");
        return;
    }
    let dir = tempfile::tempdir_in(shm).unwrap();
    // More files than are asked for extents before the dispatcher stops asking.
    let names = write_reversed(dir.path(), 50, 5000);
    let reversed: Vec<String> = names.iter().rev().cloned().collect();
    assert_eq!(dispatched(&decided(Kind::Seeking, dir.path()), dir.path(), &names), reversed);
}

/// A fresh ext4 image, loop-mounted (root only), unmounted when dropped.
struct Image {
    dir: tempfile::TempDir,
    _file: tempfile::NamedTempFile,
}

impl Image {
    fn mount() -> Result<Image, String> {
        let run = |cmd: &str, args: &[&str]| {
            std::process::Command::new(cmd)
                .args(args)
                .output()
                .map_err(|e| format!("{cmd}: {e}"))
                .and_then(|o| {
                    o.status.success().then_some(()).ok_or_else(|| {
                        format!("{cmd}: {}", String::from_utf8_lossy(&o.stderr).trim())
                    })
                })
        };
        // Root owns /proc/self when the test runs as root.
        if std::fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(1) != 0 {
            return Err("not root (mounting an image needs it)".into());
        }
        let file = tempfile::NamedTempFile::new().map_err(|e| e.to_string())?;
        file.as_file().set_len(64 << 20).map_err(|e| e.to_string())?;
        let img = file.path().to_str().unwrap().to_string();
        run("mkfs.ext4", &["-q", "-F", &img])?;
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        run("mount", &["-o", "loop", &img, dir.path().to_str().unwrap()])?;
        Ok(Image { dir, _file: file })
    }
}

impl Drop for Image {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(self.dir.path()).status();
    }
}

#[test]
fn on_a_fresh_ext4_disk_files_written_in_reverse_come_back_reversed() {
    let image = match Image::mount() {
        Ok(i) => i,
        Err(why) => {
            eprintln!("skipped: no fresh ext4 image: {why}");
            return;
        }
    };
    let dir = image.dir.path();
    // 128 KiB files are placed one after another in the order they are written (smaller
    // ones go to per-CPU pools, whose order depends on where the writer ran).
    let names = write_reversed(dir, 24, 128 << 10);
    for n in &names {
        let f = std::fs::File::open(dir.join(n)).unwrap();
        assert!(device::first_extent(&f).is_some(), "ext4 places {n}");
    }
    let reversed: Vec<String> = names.iter().rev().cloned().collect();
    assert_eq!(dispatched(&decided(Kind::Seeking, dir), dir, &names), reversed);
}

#[cfg(unix)]
#[test]
fn only_regular_files_are_placed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("f"), b"data").unwrap();
    std::os::unix::fs::symlink("f", d.join("link")).unwrap();
    let made = std::process::Command::new("mkfifo").arg(d.join("fifo")).status().unwrap();
    assert!(made.success());
    let walked = OpenMode::Walked { follow: false };
    assert_eq!(place_of(&d.join("f"), walked, true).map(|(_, size)| size), Some(4));
    assert!(place_of(&d.join("link"), walked, true).is_none(), "a symlink not followed");
    assert!(place_of(&d.join("link"), OpenMode::Named, true).is_some(), "named: followed");
    assert!(place_of(&d.join("fifo"), OpenMode::Named, true).is_none(), "never opened");
    assert!(place_of(d, OpenMode::Named, true).is_none());
    let (place, _) = place_of(&d.join("f"), OpenMode::Beneath, true).unwrap();
    assert_eq!(place.extent, u64::MAX, "confined paths are not opened, only looked at");
    let (place, size) = place_of(&d.join("f"), walked, false).unwrap();
    assert_eq!((place.extent, size), (u64::MAX, 4), "not asked for its extent");
}

#[test]
fn the_engine_gives_results_in_path_order_whatever_order_it_reads() {
    use crate::algo::{Algorithm, lookup};
    use crate::pipeline::{Config, Task, Work, run};
    let dir = tempfile::tempdir().unwrap();
    let names = write_reversed(dir.path(), 150, 3000);
    let devices = Arc::new(decided(Kind::Seeking, dir.path()));
    // A small window: the producer hands held files on before it waits.
    let cfg = Config { window: 16, ..Config::for_devices(devices) };
    let md5: Arc<[&'static Algorithm]> = Arc::from(vec![lookup("md5").unwrap()]);
    let mut seen = Vec::new();
    run(
        &cfg,
        |push| {
            for (i, n) in names.iter().enumerate() {
                let path = dir.path().join(n);
                let work = Work { path, mode: OpenMode::Named, algos: md5.clone() };
                if !push(Task { payload: i, work: Some(work) }) {
                    return;
                }
            }
        },
        |i, outcome| {
            let h = outcome.unwrap().unwrap();
            assert!(h.digests[0].ct_eq(&md5[0].digest(&vec![i as u8; 3000])));
            seen.push(i);
            true
        },
    );
    assert_eq!(seen, (0..150).collect::<Vec<_>>());
}

#[test]
fn the_probe_samples_the_largest_files_near_the_seed_even_deep_down() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Like D3: many directories on top, files only two levels down.
    for i in 0..100 {
        for j in 0..3 {
            let sub = d.join(format!("d{i:03}/s{j}"));
            std::fs::create_dir_all(&sub).unwrap();
            write_file(&sub.join("f"), i * 10 + j + 1);
            write_file(&sub.join("empty"), 0);
        }
    }
    for (k, size) in [(0, 5000), (1, 9000), (2, 100)] {
        write_file(&d.join(format!("d001/s1/f{k}")), size);
    }
    let dev = std::fs::metadata(d).unwrap().dev();
    let files = probe::sample_files(dev, d);
    let sizes: Vec<u64> = files.iter().map(|f| f.1).collect();
    // Readdir order decides which directories are visited; what is found is sorted.
    assert_eq!(files.len(), 8, "files two levels down are found: {sizes:?}");
    assert!(sizes.windows(2).all(|w| w[0] >= w[1]) && !sizes.contains(&0), "{sizes:?}");
    // A file seed brings its own directory's files, itself first among equals.
    let seed = d.join("d001/s1/f2");
    let files = probe::sample_files(dev, &seed);
    let names: Vec<String> =
        files.iter().map(|f| f.0.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["f1", "f0", "f2", "f"]);
    assert!(probe::sample_files(dev, &d.join("missing")).is_empty());
    assert!(probe::sample_files(dev + 1, d).is_empty(), "files of another device are left out");
}

#[test]
fn the_probe_never_reads_the_catalog() {
    // Closing a descriptor of the catalog drops SQLite's locks on it in this process;
    // another process could then reset the shared-memory index under the run (SIGBUS).
    let d = tempfile::tempdir().unwrap();
    let d = d.path();
    std::fs::create_dir_all(d.join(".fixity")).unwrap();
    for name in ["catalog.db", "catalog.db-wal", "catalog.db-shm"] {
        write_file(&d.join(".fixity").join(name), 1 << 20);
    }
    write_file(&d.join("small"), 10);
    let dev = std::fs::metadata(d).unwrap().dev();
    let files = probe::sample_files(dev, d);
    let names: Vec<_> = files.iter().map(|f| f.0.clone()).collect();
    assert_eq!(names, [d.join("small")]);
}

fn write_file(p: &Path, size: usize) {
    std::fs::write(p, vec![7u8; size]).unwrap();
}

#[test]
fn a_device_not_decided_yet_is_neither_parallel_nor_serialized() {
    let (d, _) = fake_devices(None);
    let p = Path::new("f");
    assert!(d.seeking(4).is_none(), "undecided: the lanes may take its files");
    assert!(d.policy(4, p, Want::IfCold).is_none());
    assert!(d.seeking(4).is_none(), "deferred: still undecided");
    d.wait(4, p);
    assert!(d.seeking(4) == Some(true), "decided seeking: one reader");
    d.wait(2, p);
    assert!(d.seeking(2) == Some(false), "decided flash");
    let lock = Mutex::new(());
    assert!(lock.seeking(9) == Some(true), "one lock for every file");
}

#[test]
fn the_first_read_that_waits_decides_a_device_left_undecided() {
    use crate::algo::{Algorithm, lookup};
    use crate::pipeline::{Config, Task, Work, run};
    let dir = tempfile::tempdir().unwrap();
    if crate::device::fs_type(dir.path()).as_deref() == Some("tmpfs") {
        eprintln!("skipped: a tmpfs keeps every page; nothing here would wait for a device");
        return;
    }
    let names = write_reversed(dir.path(), 40, 20000);
    let dev = std::fs::metadata(dir.path()).unwrap().dev();
    let asked: Asked = Arc::default();
    let log = asked.clone();
    let source = move |d: u64, _: &Path, want: Want| {
        log.lock().unwrap().push((d, want));
        facts("ext4", None, if want == Want::IfCold { Probe::Deferred } else { timed(&VIRTIO, 0) })
    };
    let devices = Arc::new(Devices::with_source(None, Box::new(source)));
    assert!(devices.policy(dev, dir.path(), Want::IfCold).is_none(), "deferred before the run");
    for n in &names {
        // Out of the page cache: the first read of each file has to wait for the device.
        let f = std::fs::File::open(dir.path().join(n)).unwrap();
        crate::device::advise(&f, 0, 0, crate::device::Advice::DontNeed);
    }
    // MD5 goes through the lanes, SHA-512 through the one-file reader: both decide.
    for algo in ["md5", "sha512"] {
        let a: Arc<[&'static Algorithm]> = Arc::from(vec![lookup(algo).unwrap()]);
        let cfg = Config::for_devices(devices.clone());
        let mut hashed = 0;
        run(
            &cfg,
            |push| {
                for (i, n) in names.iter().enumerate() {
                    let work =
                        Work { path: dir.path().join(n), mode: OpenMode::Named, algos: a.clone() };
                    if !push(Task { payload: i, work: Some(work) }) {
                        return;
                    }
                }
            },
            |i, outcome| {
                let h = outcome.unwrap().unwrap();
                assert!(h.digests[0].ct_eq(&a[0].digest(&vec![i as u8; 20000])));
                hashed += 1;
                true
            },
        );
        assert_eq!(hashed, names.len());
    }
    assert!(devices.seeking(dev) == Some(false), "decided flash-like: {:?}", devices.notes());
    assert_eq!(asked.lock().unwrap().last(), Some(&(dev, Want::Now)));
}
