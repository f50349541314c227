//! Never revert an edit, never widen access (issue 38): an edit that puts its mtime back
//! (by each real tool that does it: `touch -r`, `cp -p`, `rsync -t`, `tar x`, `exiftool
//! -P`) is CHANGED, found by the next scan, never repaired nor protected over; rot (real
//! rot: bytes changed beneath the file system of a loop-mounted image, so no ctime moves)
//! is CORRUPT and repaired; a chmod is no finding; a file rebuilt where none stands gets
//! its recorded mode, owner and mtime back, or 0600 when they are not known; `repair`
//! looks first when no finding stands; a catalog made before ctimes were kept behaves as
//! before and says so once.

use crate::catalog::{mtime, set_mtime};
use crate::util::{have, missing, tempdir, write};
use std::ffi::OsStr;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, SystemTime};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `fixity ARGS` in `dir`, which must exit with `code`; its output.
fn expect<S: AsRef<OsStr>>(dir: &Path, argv: &[S], code: i32) -> Output {
    let o = fx(dir).args(argv).output().expect("run fixity");
    let shown: Vec<String> = argv.iter().map(|a| a.as_ref().to_string_lossy().into()).collect();
    assert_eq!(
        o.status.code(),
        Some(code),
        "fixity {}\n--- stdout\n{}--- stderr\n{}",
        shown.join(" "),
        text(&o.stdout),
        text(&o.stderr)
    );
    o
}

/// `fixity` with ctimes trusted as a user's runs trust them (not the tests' default).
fn fx(dir: &Path) -> Command {
    let mut cmd = crate::util::fixity(dir);
    cmd.env_remove("FIXITY_CTIME");
    cmd
}

/// A 1x1 baseline JPEG with the comment `hello` (built by hand: markers SOI, COM, DQT,
/// SOF0, two DHT, SOS, one scan byte, EOI), which exiftool reads and writes.
fn jpeg() -> Vec<u8> {
    let mut b = vec![0xff, 0xd8];
    b.extend([0xff, 0xfe, 0x00, 0x07]);
    b.extend(b"hello");
    b.extend([0xff, 0xdb, 0x00, 0x43, 0x00]);
    b.extend([1u8; 64]);
    b.extend([0xff, 0xc0, 0x00, 0x0b, 0x08, 0x00, 0x01, 0x00, 0x01, 0x01, 0x01, 0x11, 0x00]);
    for class in [0x00, 0x10] {
        b.extend([0xff, 0xc4, 0x00, 0x14, class, 0x01]);
        b.extend([0u8; 16]);
    }
    b.extend([0xff, 0xda, 0x00, 0x08, 0x01, 0x01, 0x00, 0x00, 0x3f, 0x00, 0x3f, 0xff, 0xd9]);
    b
}

/// So that an edit cannot share the timestamp tick of the scan that recorded the file, on
/// a kernel whose ctimes are coarse (a few ms): the classes compare ctimes exactly.
fn next_tick() {
    std::thread::sleep(Duration::from_millis(20));
}

/// Runs a tool that must succeed.
fn tool(cmd: &mut Command) {
    let o = cmd.output().expect("run the tool");
    assert!(o.status.success(), "{cmd:?}: {}{}", text(&o.stdout), text(&o.stderr));
}

/// The edits that put the file's mtime back, each by a real tool: (name, the program it
/// needs, the edit of `file` in tree `t`, whose new content of the same size is in `new`
/// with the recorded mtime). exiftool edits the JPEG's comment in place (`hello` ->
/// `world`: the same size).
type Edit = fn(&Path, &str, &Path);

fn edits() -> Vec<(&'static str, &'static str, Edit)> {
    vec![
        ("touch -r", "touch", |t, f, new| {
            let target = t.join(f);
            let reference = t.parent().unwrap().join("reference");
            std::fs::copy(&target, &reference).unwrap();
            set_mtime(&reference, mtime(&target));
            std::fs::copy(new, &target).unwrap();
            tool(Command::new("touch").arg("-r").arg(&reference).arg(&target));
        }),
        ("cp -p", "cp", |t, f, new| tool(Command::new("cp").arg("-p").arg(new).arg(t.join(f)))),
        // With the size and mtime alike rsync's quick check would copy nothing: -c
        // compares contents, as a restore from a backup that must be exact does.
        ("rsync -t -c", "rsync", |t, f, new| {
            tool(Command::new("rsync").arg("-t").arg("-c").arg(new).arg(t.join(f)))
        }),
        ("tar x", "tar", |t, f, new| {
            // `new` is DIR/f: archived under its name, with its mtime.
            let dir = new.parent().unwrap();
            let archive = dir.parent().unwrap().join("a.tar");
            tool(Command::new("tar").arg("-C").arg(dir).arg("-cf").arg(&archive).arg(f));
            tool(Command::new("tar").arg("-C").arg(t).arg("-xf").arg(&archive));
        }),
        ("exiftool -P", "exiftool", |t, f, _| {
            let target = t.join(f);
            let mut cmd = Command::new("exiftool");
            cmd.args(["-q", "-P", "-overwrite_original", "-Comment=world"]).arg(&target);
            tool(&mut cmd);
        }),
    ]
}

#[test]
fn edits_that_keep_the_mtime_are_changed_never_repaired_and_accepted_on_request() {
    for (name, program, edit) in edits() {
        if !have(program) {
            missing(&format!("the {name} edit"), &format!("{program} is not installed"));
            continue;
        }
        let d = tempdir();
        let t = d.path().join("t");
        let f = "photo.jpg";
        let old = jpeg();
        write(&t, f, &old);
        write(&t, "other.txt", b"untouched\n");
        // A whole second, as a camera or an archive gives (tar keeps no finer).
        let recorded = SystemTime::UNIX_EPOCH + Duration::from_secs(1_714_564_800);
        set_mtime(&t.join(f), recorded);
        expect(d.path(), &["scan", "-q", "t"], 0);
        expect(d.path(), &["protect", "-q", "t"], 0);
        // The new version: the same size, other bytes, the recorded mtime.
        let new_path = d.path().join("new").join(f);
        let mut new = old.clone();
        new[8] = b'j'; // the comment says "hejlo"
        write(&d.path().join("new"), f, &new);
        set_mtime(&new_path, recorded);
        next_tick();
        edit(&t, f, &new_path);
        let now = std::fs::read(t.join(f)).unwrap();
        assert_ne!(now, old, "{name}: edited");
        assert_eq!((now.len(), mtime(&t.join(f))), (old.len(), recorded), "{name}: size, mtime");

        // The next scan reads it (its ctime moved) and says what it is.
        let o = expect(d.path(), &["scan", "t"], 1);
        let out = text(&o.stdout);
        assert!(out.starts_with("CHANGED     photo.jpg (recorded "), "{name}: scan:\n{out}");
        assert!(out.contains("mtime kept, ctime moved from"), "{name}: {out}");
        assert!(out.contains("CORRUPT 0") && out.contains("CHANGED 1"), "{name}: {out}");
        let o = expect(d.path(), &["verify", "t"], 1);
        assert!(text(&o.stdout).starts_with("CHANGED     photo.jpg"), "{name}: verify");

        // Never reverted: not by repair, not by verify --repair; protect keeps the set.
        let o = expect(d.path(), &["repair", "t"], 1);
        let out = text(&o.stdout);
        assert!(out.contains("UNREPAIRED  photo.jpg: edited since the catalog"), "{name}: {out}");
        assert!(out.contains("0 repaired"), "{name}: {out}");
        expect(d.path(), &["verify", "--repair", "t"], 1);
        let o = expect(d.path(), &["protect", "t"], 0);
        assert!(text(&o.stdout).contains("kept"), "{name}: {}", text(&o.stdout));
        assert_eq!(std::fs::read(t.join(f)).unwrap(), now, "{name}: the edit stands");

        // Asked for by name: the recorded content is put back.
        let o = fx(d.path()).args(["repair", "--force"]).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "--force without a PATH is refused");
        let o = expect(d.path(), &["repair", "--force", "t", "t/photo.jpg"], 0);
        assert!(text(&o.stdout).contains("1 repaired"), "{name}: {}", text(&o.stdout));
        assert_eq!(std::fs::read(t.join(f)).unwrap(), old, "{name}: --force restores");
        expect(d.path(), &["verify", "-q", "t"], 0);

        // The same edit again, then accepted: the new content is the record.
        next_tick();
        edit(&t, f, &new_path);
        expect(d.path(), &["scan", "-q", "t"], 1);
        expect(d.path(), &["accept", "t/photo.jpg"], 0);
        expect(d.path(), &["verify", "-q", "t"], 0);
        assert_eq!(std::fs::read(t.join(f)).unwrap(), now, "{name}: accepted");
    }
}

/// A chmod, a chown, a rename's ctime: no finding, and not read again after once.
#[test]
fn a_change_of_the_inode_alone_is_no_finding() {
    let d = tempdir();
    let t = d.path().join("t");
    write(&t, "a", b"alpha\n");
    write(&t, "b", b"bravo\n");
    expect(d.path(), &["scan", "-q", "t"], 0);
    next_tick();
    std::fs::set_permissions(t.join("a"), std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::hard_link(t.join("b"), d.path().join("b-link")).unwrap();
    let o = expect(d.path(), &["scan", "t"], 0);
    let out = text(&o.stdout);
    assert!(out.contains(": 2 files read"), "both read once (their ctimes moved): {out}");
    let o = expect(d.path(), &["scan", "t"], 0);
    assert!(text(&o.stdout).contains(": 0 files read"), "their new ctimes recorded");
}

/// Repairs a file rebuilt where none stands with its recorded mode, owner and mtime.
#[test]
fn a_deleted_file_comes_back_with_its_mode_owner_and_mtime() {
    let d = tempdir();
    let t = d.path().join("t");
    let key = write(&t, "key", b"secret key material\n");
    write(&t, "shared/notes.txt", b"notes\n");
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(t.join("shared/notes.txt"), std::fs::Permissions::from_mode(0o640))
        .unwrap();
    let recorded = mtime(&key);
    let owner = std::fs::metadata(&key).unwrap();
    expect(d.path(), &["scan", "-q", "t"], 0);
    expect(d.path(), &["protect", "-q", "--redundancy", "100%", "t"], 0);
    std::fs::remove_file(&key).unwrap();
    std::fs::remove_file(t.join("shared/notes.txt")).unwrap();
    expect(d.path(), &["verify", "-q", "t"], 1);
    let o = expect(d.path(), &["repair", "t"], 0);
    assert!(text(&o.stdout).contains("2 repaired"), "{}", text(&o.stdout));
    let m = std::fs::metadata(&key).unwrap();
    assert_eq!(m.mode() & 0o7777, 0o600, "never wider than recorded");
    assert_eq!((m.uid(), m.gid()), (owner.uid(), owner.gid()));
    assert_eq!(m.modified().unwrap(), recorded);
    let notes = std::fs::metadata(t.join("shared/notes.txt")).unwrap();
    assert_eq!(notes.mode() & 0o7777, 0o640);
    assert_eq!(std::fs::read(&key).unwrap(), b"secret key material\n");

    // From a replica: the catalog's mode, not the replica's copy's.
    let r = d.path().join("replica");
    write(&r, "key", b"secret key material\n");
    std::fs::set_permissions(r.join("key"), std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::remove_file(&key).unwrap();
    expect(d.path(), &["verify", "-q", "t"], 1);
    let o = expect(d.path(), &["repair", "--from", "replica", "t"], 0);
    assert!(text(&o.stdout).contains("1 repaired"), "{}", text(&o.stdout));
    assert_eq!(std::fs::metadata(&key).unwrap().mode() & 0o7777, 0o600);
}

/// A file with an access control list comes back 0600 (its ACL is not restored: the
/// mode's group bits, the ACL's mask, could let in more than the list did), and one with
/// other extended attributes comes back with its mode, its attributes said not restored.
#[test]
fn a_file_with_an_acl_comes_back_0600_and_one_with_attributes_says_so() {
    for t in ["setfacl", "setfattr"] {
        if !have(t) {
            missing("ACLs and attributes of a repaired file", &format!("{t} is not installed"));
            return;
        }
    }
    let d = tempdir();
    let t = d.path().join("t");
    let listed = write(&t, "listed.txt", b"for the owner and user 65534\n");
    let tagged = write(&t, "tagged.txt", b"with a comment attribute\n");
    std::fs::set_permissions(&listed, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(&tagged, std::fs::Permissions::from_mode(0o640)).unwrap();
    let acl = Command::new("setfacl").args(["-m", "u:65534:r"]).arg(&listed).output().unwrap();
    if !acl.status.success() {
        missing("ACLs of a repaired file", "this file system takes no ACL");
        return;
    }
    tool(Command::new("setfattr").args(["-n", "user.comment", "-v", "x"]).arg(&tagged));
    expect(d.path(), &["scan", "-q", "t"], 0);
    expect(d.path(), &["protect", "-q", "--redundancy", "100%", "t"], 0);
    let sides = std::fs::read_dir(t.join(".fixity/par2")).unwrap();
    let side = sides
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "fixity"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .unwrap();
    assert!(side.contains(" 0640:") && side.contains("+acl listed.txt"), "{side}");
    assert!(side.contains("+xattrs tagged.txt"), "{side}");
    std::fs::remove_file(&listed).unwrap();
    std::fs::remove_file(&tagged).unwrap();
    let o = expect(d.path(), &["repair", "t"], 0);
    let out = text(&o.stdout);
    assert!(
        out.contains("listed.txt (from recovery set")
            && out.contains("made 0600, not 0640: it had an access control list"),
        "{out}"
    );
    assert!(
        out.contains("tagged.txt (from recovery set")
            && out.contains("its extended attributes are not restored"),
        "{out}"
    );
    assert_eq!(std::fs::metadata(&listed).unwrap().mode() & 0o7777, 0o600);
    assert_eq!(std::fs::metadata(&tagged).unwrap().mode() & 0o7777, 0o640);
}

/// A record that does not know the file's access (a catalog from before): made 0600,
/// and said.
#[test]
fn a_file_whose_access_is_not_recorded_comes_back_0600_and_says_so() {
    let d = tempdir();
    let t = d.path().join("t");
    let f = write(&t, "public.txt", b"anyone may read this\n");
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
    expect(d.path(), &["scan", "-q", "t"], 0);
    expect(d.path(), &["protect", "-q", "t"], 0);
    let db = rusqlite::Connection::open(t.join(".fixity/catalog.db")).unwrap();
    db.execute("UPDATE files SET mode = NULL, uid = NULL, gid = NULL", []).unwrap();
    drop(db);
    std::fs::remove_file(&f).unwrap();
    // The set's sidecar says who could read it: that, then.
    let o = expect(d.path(), &["repair", "t"], 0);
    assert!(!text(&o.stdout).contains("made 0600"), "{}", text(&o.stdout));
    assert_eq!(std::fs::metadata(&f).unwrap().mode() & 0o7777, 0o644);
    // A sidecar from before the access column (version 2) does not: 0600, said.
    let sets = t.join(".fixity/par2");
    for e in std::fs::read_dir(&sets).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "fixity") {
            let side = std::fs::read_to_string(&p).unwrap();
            let mut lines: Vec<String> = side.lines().map(str::to_string).collect();
            assert_eq!(lines[0], "fixity-par2-set 3");
            lines[0] = "fixity-par2-set 2".into();
            for l in &mut lines[5..] {
                let mut f: Vec<&str> = l.splitn(6, ' ').collect();
                f.remove(4);
                *l = f.join(" ");
            }
            std::fs::write(&p, lines.join("\n") + "\n").unwrap();
        }
    }
    std::fs::remove_file(&f).unwrap();
    let o = expect(d.path(), &["repair", "t"], 0);
    let out = text(&o.stdout);
    assert!(
        out.contains("repaired    public.txt (from recovery set")
            && out.contains("made 0600: the catalog does not record its mode and owner"),
        "{out}"
    );
    assert_eq!(std::fs::metadata(&f).unwrap().mode() & 0o7777, 0o600);
}

/// `repair` with nothing standing looks first: a deleted file is found and rebuilt
/// without a verify before; with nothing wrong it says so and exits 0.
#[test]
fn repair_looks_before_it_repairs() {
    let d = tempdir();
    let t = d.path().join("t");
    write(&t, "a.txt", b"alpha\n");
    write(&t, "b.txt", b"bravo\n");
    expect(d.path(), &["scan", "-q", "t"], 0);
    expect(d.path(), &["protect", "-q", "t"], 0);
    let o = expect(d.path(), &["repair", "t"], 0);
    let out = text(&o.stdout);
    assert!(out.contains("0 files with findings") && out.contains("found now"), "{out}");
    std::fs::remove_file(t.join("a.txt")).unwrap();
    let o = expect(d.path(), &["repair", "t"], 0);
    let out = text(&o.stdout);
    assert!(out.contains("repaired    a.txt"), "{out}");
    assert!(out.contains("1 repaired") && out.contains("found now"), "{out}");
    assert!(out.contains("a scan looked at 1 file"), "{out}");
    assert_eq!(std::fs::read(t.join("a.txt")).unwrap(), b"alpha\n");
    // A finding a verify made: repaired, and the summary names that run.
    std::fs::remove_file(t.join("b.txt")).unwrap();
    expect(d.path(), &["verify", "-q", "t"], 1);
    let o = expect(d.path(), &["repair", "t"], 0);
    assert!(text(&o.stdout).contains("found by the verify of "), "{}", text(&o.stdout));
    // Damage that cannot be repaired (no set holds the file any more): exit 1.
    write(&t, "c.txt", b"charlie\n");
    expect(d.path(), &["scan", "-q", "t"], 0);
    std::fs::remove_dir_all(t.join(".fixity/par2")).unwrap();
    std::fs::remove_file(t.join("c.txt")).unwrap();
    let o = expect(d.path(), &["repair", "--json", "t"], 1);
    let last = text(&o.stdout).lines().last().unwrap().to_string();
    let v: serde_json::Value = serde_json::from_str(&last).unwrap();
    assert_eq!((v["found"].as_str(), v["unrepaired"].as_u64()), (Some("now"), Some(1)), "{v}");
}

/// A catalog of schema 8 (no ctimes): opened, upgraded, said once; an edit that kept the
/// mtime is taken for rot as before until the file's record is written again.
#[test]
fn a_catalog_from_before_ctimes_behaves_as_before_and_says_so_once() {
    let d = tempdir();
    let t = d.path().join("t");
    let a = write(&t, "a", b"alpha\n");
    write(&t, "b", b"bravo\n");
    expect(d.path(), &["scan", "-q", "t"], 0);
    let db = rusqlite::Connection::open(t.join(".fixity/catalog.db")).unwrap();
    for c in ["ctime_ns", "mode", "uid", "gid"] {
        db.execute_batch(&format!("ALTER TABLE files DROP COLUMN {c}")).unwrap();
    }
    db.execute_batch("PRAGMA user_version = 8").unwrap();
    drop(db);
    let recorded = mtime(&a);
    next_tick();
    std::fs::write(&a, b"ALPHA\n").unwrap();
    set_mtime(&a, recorded);
    let o = expect(d.path(), &["verify", "t"], 1);
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(out.starts_with("CORRUPT     a (recorded "), "no ctime on record: as before\n{out}");
    assert!(err.contains("upgraded") && err.contains("ctime"), "said: {err}");
    let o = expect(d.path(), &["verify", "t"], 1);
    assert!(!text(&o.stderr).contains("upgraded"), "said once: {}", text(&o.stderr));
    // b's record got its ctime from the verify that found it ok: an edit of b is known.
    let b = t.join("b");
    let recorded = mtime(&b);
    next_tick();
    std::fs::write(&b, b"BRAVO\n").unwrap();
    set_mtime(&b, recorded);
    let o = expect(d.path(), &["scan", "t"], 1);
    assert!(text(&o.stdout).contains("CHANGED     b (recorded "), "{}", text(&o.stdout));
}

/// An ext4 image mounted through a loop device, unmounted when dropped.
struct Loop {
    image: std::path::PathBuf,
    mnt: std::path::PathBuf,
    mounted: bool,
}

/// A system tool by its name: from PATH, else /usr/sbin or /sbin (not on every user's
/// PATH).
fn sbin(name: &str) -> Option<std::path::PathBuf> {
    if have(name) {
        return Some(name.into());
    }
    ["/usr/sbin", "/sbin"].iter().map(|d| Path::new(d).join(name)).find(|p| p.exists())
}

impl Loop {
    fn make(dir: &Path) -> Option<Loop> {
        for t in ["mkfs.ext4", "debugfs", "mount", "umount"] {
            if sbin(t).is_none() {
                missing("rot beneath a file system", &format!("{t} is not installed"));
                return None;
            }
        }
        let image = dir.join("disk.img");
        let mnt = dir.join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        let f = std::fs::File::create(&image).unwrap();
        f.set_len(32 << 20).unwrap();
        let mkfs =
            Command::new(sbin("mkfs.ext4")?).args(["-q", "-F", "-b", "4096"]).arg(&image).output();
        if !mkfs.is_ok_and(|o| o.status.success()) {
            missing("rot beneath a file system", "mkfs.ext4 failed");
            return None;
        }
        let mut l = Loop { image, mnt, mounted: false };
        if !l.mount() {
            missing("rot beneath a file system", "cannot mount a loop device (not root?)");
            return None;
        }
        Some(l)
    }

    fn mount(&mut self) -> bool {
        let o = Command::new(sbin("mount").unwrap())
            .args(["-o", "loop"])
            .arg(&self.image)
            .arg(&self.mnt)
            .output();
        self.mounted = o.is_ok_and(|o| o.status.success());
        self.mounted
    }

    fn umount(&mut self) {
        tool(Command::new(sbin("umount").unwrap()).arg(&self.mnt));
        self.mounted = false;
    }

    /// Flips a byte of `rel` (a path in the file system) in the image itself, the file
    /// system unmounted: its inode (size, mtime, ctime) is not touched.
    fn rot(&mut self, rel: &str, at: u64) {
        self.umount();
        let mut debugfs = Command::new(sbin("debugfs").unwrap());
        let o = debugfs.arg("-R").arg(format!("blocks /{rel}")).arg(&self.image).output().unwrap();
        let first: u64 = text(&o.stdout).split_whitespace().next().unwrap().parse().unwrap();
        use std::io::{Read, Seek, SeekFrom, Write};
        let mut img = std::fs::File::options().read(true).write(true).open(&self.image).unwrap();
        let offset = first * 4096 + at;
        let mut byte = [0u8];
        img.seek(SeekFrom::Start(offset)).unwrap();
        img.read_exact(&mut byte).unwrap();
        byte[0] ^= 0xff;
        img.seek(SeekFrom::Start(offset)).unwrap();
        img.write_all(&byte).unwrap();
        img.sync_all().unwrap();
        assert!(self.mount(), "mounted again");
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        if let Some(umount) = sbin("umount").filter(|_| self.mounted) {
            let _ = Command::new(umount).arg(&self.mnt).status();
        }
    }
}

/// Real rot: bytes changed beneath the file system, no ctime moved: CORRUPT, and repaired;
/// an edit that kept its mtime beside it: CHANGED, and left alone.
#[test]
fn rot_beneath_the_file_system_is_corrupt_and_repaired() {
    let d = tempdir();
    let Some(mut disk) = Loop::make(d.path()) else { return };
    let t = disk.mnt.join("t");
    let mut data = vec![0u8; 64 << 10];
    let mut rng = crate::util::Rng(38);
    for b in data.iter_mut() {
        *b = rng.next() as u8;
    }
    write(&t, "rot.bin", &data);
    write(&t, "edit.bin", &data[..4096]);
    let sets = d.path().join("sets");
    let cat = d.path().join("c.db");
    let (cat, sets) = (cat.to_str().unwrap(), sets.to_str().unwrap());
    let mnt = disk.mnt.clone();
    expect(&mnt, &["scan", "-q", "--catalog", cat, "t"], 0);
    expect(&mnt, &["protect", "-q", "--catalog", cat, "--par2-dir", sets, "t"], 0);
    let before = std::fs::metadata(t.join("rot.bin")).unwrap();
    next_tick();
    let e = t.join("edit.bin");
    let recorded = mtime(&e);
    let mut edited = data[..4096].to_vec();
    edited[0] ^= 1;
    std::fs::write(&e, &edited).unwrap();
    set_mtime(&e, recorded);
    disk.rot("t/rot.bin", 1000);
    let t = disk.mnt.join("t");
    let after = std::fs::metadata(t.join("rot.bin")).unwrap();
    assert_eq!((after.ctime(), after.ctime_nsec()), (before.ctime(), before.ctime_nsec()));
    assert_ne!(std::fs::read(t.join("rot.bin")).unwrap(), data, "rotted");
    let o = expect(&mnt, &["verify", "--catalog", cat, "t"], 1);
    let out = text(&o.stdout);
    assert!(out.contains("CHANGED     edit.bin (recorded "), "{out}");
    assert!(out.contains("CORRUPT     rot.bin (recorded "), "{out}");
    let o = expect(&mnt, &["repair", "--catalog", cat, "--par2-dir", sets, "t"], 1);
    let out = text(&o.stdout);
    assert!(out.contains("repaired    rot.bin") && out.contains("UNREPAIRED  edit.bin"), "{out}");
    assert_eq!(std::fs::read(t.join("rot.bin")).unwrap(), data);
    assert_eq!(std::fs::read(&e).unwrap(), edited, "the edit stands");
}

/// The same in a PostgreSQL catalog: ctimes and access kept (schema 9), an edit that kept
/// its mtime CHANGED and not reverted, a chmod recorded (read once), a deleted 0600 file
/// back as 0600; a catalog of schema 8 upgraded and said once.
#[test]
fn a_postgresql_catalog_keeps_ctimes_and_access() {
    let Some(db) = crate::util::pg::database() else { return };
    let d = tempdir();
    let t = d.path().join("t");
    let key = write(&t, "key", b"secret\n");
    let doc = write(&t, "doc.txt", b"version 1\n");
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    let url = db.url.as_str();
    expect(d.path(), &["scan", "-q", "--catalog", url, "t"], 0);
    expect(d.path(), &["protect", "-q", "--catalog", url, "t"], 0);
    let mut c = db.client();
    let n: i64 = c
        .query_one(
            "SELECT count(*) FROM fixity.files WHERE ctime_ns IS NOT NULL AND mode IS NOT NULL",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(n, 2, "every row keeps its ctime and mode");

    next_tick();
    let recorded = mtime(&doc);
    std::fs::write(&doc, b"version 2\n").unwrap();
    set_mtime(&doc, recorded);
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o400)).unwrap();
    let o = expect(d.path(), &["scan", "--catalog", url, "t"], 1);
    let out = text(&o.stdout);
    assert!(out.starts_with("CHANGED     doc.txt (recorded "), "{out}");
    assert!(out.contains(": 2 files read"), "{out}");
    let o = expect(d.path(), &["repair", "--catalog", url, "t"], 1);
    assert!(text(&o.stdout).contains("UNREPAIRED  doc.txt: edited"), "{}", text(&o.stdout));
    assert_eq!(std::fs::read(&doc).unwrap(), b"version 2\n", "never reverted");
    expect(d.path(), &["accept", "--catalog", url, "--tree", "t", "t/doc.txt"], 0);
    let o = expect(d.path(), &["scan", "--catalog", url, "t"], 0);
    assert!(text(&o.stdout).contains(": 0 files read"), "{}", text(&o.stdout));

    std::fs::remove_file(&key).unwrap();
    expect(d.path(), &["verify", "-q", "--catalog", url, "t"], 1);
    let o = expect(d.path(), &["repair", "--catalog", url, "t"], 0);
    assert!(text(&o.stdout).contains("repaired    key"), "{}", text(&o.stdout));
    assert_eq!(std::fs::metadata(&key).unwrap().mode() & 0o7777, 0o400, "its chmod recorded");

    // Schema 8: the columns gone, the version set back.
    c.batch_execute(
        "ALTER TABLE fixity.files DROP COLUMN ctime_ns, DROP COLUMN mode, DROP COLUMN uid,
             DROP COLUMN gid;
         UPDATE fixity.meta SET value = '8' WHERE key = 'schema_version'",
    )
    .unwrap();
    let o = expect(d.path(), &["verify", "--catalog", url, "t"], 0);
    assert!(text(&o.stderr).contains("catalog upgraded"), "{}", text(&o.stderr));
    let o = expect(d.path(), &["verify", "--catalog", url, "t"], 0);
    assert!(!text(&o.stderr).contains("upgraded"), "once: {}", text(&o.stderr));
}
