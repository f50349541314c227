//! Opening a manifest's path without leaving a directory (`check --confine`).
//!
//! A lexical test (no absolute path, no `..`) is not enough: `etclink/passwd` is a plain
//! relative name, yet reads `/etc/passwd` when `etclink` is a symlink to `/etc`. Here the
//! path is resolved beneath the directory by the kernel, `openat2(RESOLVE_BENEATH |
//! RESOLVE_NO_MAGICLINKS)`, which fails rather than follow a symlink out of it. Where that
//! call is missing (Linux before 5.6, or a sandbox that forbids it), and where it refuses
//! an absolute symlink (which it never follows, even one that points back inside), the
//! path is walked one component at a time instead: each component opened with
//! `O_NOFOLLOW` relative to the directory descriptor before it, each symlink read and
//! resolved by hand, and a `..` or an absolute target that climbs above the directory
//! refused. Symlinks that stay inside are followed, as a plain open would.

use crate::sys::MetadataExt;
use crate::sys::{OsStrExt, OsStringExt};
use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd};
use std::path::{Component, Path, PathBuf};

/// How many symlinks one path may pass through (the kernel's limit, too).
const MAX_LINKS: u32 = 40;

/// Why a confined open gave no file. The reader turns it into its own error
/// (`read::ReadError`); this module knows nothing of reading.
#[derive(Debug)]
pub(crate) enum Refused {
    /// The open, or a lookup on the way to it, failed.
    Io(io::Error),
    /// The path, through a symlink or otherwise, leads out of the directory.
    Escapes,
    /// The last component was replaced (by a symlink, say) between its check and its open.
    Swapped,
}

/// Opens `path` for reading beneath the current directory (the directory a manifest's
/// names are resolved from). `Err(Refused::Escapes)` when the path, through a symlink or
/// otherwise, leads outside it.
pub(crate) fn open_beneath(path: &Path) -> Result<File, Refused> {
    open_in(libc::AT_FDCWD, path, true)
}

/// Opens `path` for reading beneath the directory open as `dir` (a recovery set's names,
/// beneath the tree they protect).
pub(crate) fn open_under(dir: &File, path: &Path) -> Result<File, Refused> {
    open_in(dir.as_raw_fd(), path, true)
}

/// Opens `path` beneath the directory `root` (a descriptor, or `AT_FDCWD`); `kernel`: try
/// `openat2` first.
fn open_in(root: libc::c_int, path: &Path, kernel: bool) -> Result<File, Refused> {
    if kernel {
        match openat2_beneath(root, path) {
            Ok(f) => return Ok(f),
            // The kernel lacks openat2 or a sandbox refuses it, or it refused a symlink
            // (absolute ones always): walk by hand for a definite answer.
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ENOSYS | libc::EPERM | libc::EINVAL | libc::E2BIG | libc::EXDEV)
                ) => {}
            Err(e) => return Err(Refused::Io(e)),
        }
    }
    let root = open_flags(root, Path::new("."), DIR_FLAGS).map_err(Refused::Io)?;
    walk_open(&root, path)
}

/// How a directory on the way is opened: for lookups only (`O_PATH`) on Linux; macOS
/// has no such flag, and reads it.
#[cfg(target_os = "linux")]
const DIR_FLAGS: libc::c_int = libc::O_PATH | libc::O_DIRECTORY;
#[cfg(not(target_os = "linux"))]
const DIR_FLAGS: libc::c_int = libc::O_RDONLY | libc::O_DIRECTORY;

/// How each component is opened before it is looked at: never following a symlink (the
/// link itself: `O_PATH | O_NOFOLLOW` on Linux, `O_SYMLINK` on macOS).
#[cfg(target_os = "linux")]
const NODE_FLAGS: libc::c_int = libc::O_PATH | libc::O_NOFOLLOW;
#[cfg(target_os = "macos")]
const NODE_FLAGS: libc::c_int = libc::O_RDONLY | libc::O_SYMLINK | libc::O_NONBLOCK;

/// No `openat2` but on Linux: the walk by hand answers.
#[cfg(not(target_os = "linux"))]
fn openat2_beneath(_root: libc::c_int, _path: &Path) -> io::Result<File> {
    Err(io::Error::from_raw_os_error(libc::ENOSYS))
}

/// `struct open_how` of `<linux/openat2.h>` (libc's is not constructible outside it).
#[cfg(target_os = "linux")]
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

/// Flags for the file finally read: as a named file is opened elsewhere (FIFOs are read,
/// a terminal is never made the controlling one).
const READ_FLAGS: libc::c_int = libc::O_RDONLY | libc::O_NOCTTY;

#[cfg(target_os = "linux")]
fn openat2_beneath(root: libc::c_int, path: &Path) -> io::Result<File> {
    let c = cstring(path.as_os_str().as_bytes())?;
    let how = OpenHow {
        flags: (READ_FLAGS | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve: libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS,
    };
    for _ in 0..16 {
        // SAFETY: `c` is a NUL-terminated string and `how` a live `open_how` of the size
        // passed; both outlive the call. The result, when not negative, is a new
        // descriptor owned by nobody else.
        let r = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                root,
                c.as_ptr(),
                &how as *const OpenHow,
                std::mem::size_of::<OpenHow>(),
            )
        };
        if r >= 0 {
            // SAFETY: see above: a fresh descriptor, owned by the File from here on.
            return Ok(unsafe { File::from_raw_fd(r as libc::c_int) });
        }
        let e = io::Error::last_os_error();
        // EAGAIN: a rename raced with the lookup; EINTR: a signal (opening a FIFO).
        if !matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::EINTR)) {
            return Err(e);
        }
    }
    Err(io::Error::from_raw_os_error(libc::EAGAIN))
}

fn cstring(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))
}

fn open_flags(dir: libc::c_int, name: &Path, flags: libc::c_int) -> io::Result<File> {
    let c = cstring(name.as_os_str().as_bytes())?;
    loop {
        // SAFETY: `c` is NUL-terminated and outlives the call.
        let fd = unsafe { libc::openat(dir, c.as_ptr(), flags | libc::O_CLOEXEC) };
        if fd >= 0 {
            // SAFETY: a fresh descriptor, owned by the File from here on.
            return Ok(unsafe { File::from_raw_fd(fd) });
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// The target of the symlink `link` (an `O_PATH | O_NOFOLLOW` descriptor of it).
fn read_link(link: &File) -> io::Result<PathBuf> {
    let mut buf = vec![0u8; libc::PATH_MAX as usize];
    // SAFETY: `buf` is writable for its length; the empty path names `link` itself.
    let n = unsafe {
        libc::readlinkat(link.as_raw_fd(), c"".as_ptr(), buf.as_mut_ptr().cast(), buf.len())
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    buf.truncate(n as usize);
    Ok(PathBuf::from(std::ffi::OsString::from_vec(buf)))
}

/// The component-by-component walk (see the module's notes).
fn walk_open(root: &File, path: &Path) -> Result<File, Refused> {
    // Where `root` is, for symlinks with an absolute target.
    let root_path = std::fs::read_link(format!("/proc/self/fd/{}", root.as_raw_fd())).ok();
    // Directories entered so far (the root first): a `..` steps back to the one before.
    let mut dirs: Vec<File> = Vec::new();
    // Components still to resolve, the next one last.
    let mut todo: Vec<std::ffi::OsString> = Vec::new();
    let push_path = |todo: &mut Vec<std::ffi::OsString>, p: &Path| -> Result<(), Refused> {
        for c in p.components().rev() {
            match c {
                Component::Normal(n) => todo.push(n.to_os_string()),
                Component::ParentDir => todo.push("..".into()),
                Component::CurDir => {}
                // Handled by the caller (an absolute path starts again at the root).
                Component::RootDir | Component::Prefix(_) => return Err(Refused::Escapes),
            }
        }
        Ok(())
    };
    let relative = |p: &Path| -> Result<PathBuf, Refused> {
        if !p.is_absolute() {
            return Ok(p.to_path_buf());
        }
        // An absolute target is inside only when it names the root's own path or below.
        let base = root_path.as_deref().ok_or(Refused::Escapes)?;
        p.strip_prefix(base).map(Path::to_path_buf).map_err(|_| Refused::Escapes)
    };
    push_path(&mut todo, &relative(path)?)?;
    let mut links = 0u32;
    loop {
        let cur = dirs.last().unwrap_or(root);
        let Some(name) = todo.pop() else {
            // The path named the root itself (or `.`): open it; reading it says EISDIR.
            return open_flags(cur.as_raw_fd(), Path::new("."), READ_FLAGS).map_err(Refused::Io);
        };
        if name == ".." {
            if dirs.pop().is_none() {
                return Err(Refused::Escapes);
            }
            continue;
        }
        let name = Path::new(&name);
        let node = open_flags(cur.as_raw_fd(), name, NODE_FLAGS).map_err(Refused::Io)?;
        let md = node.metadata().map_err(Refused::Io)?;
        if md.file_type().is_symlink() {
            links += 1;
            if links > MAX_LINKS {
                return Err(Refused::Io(io::Error::from_raw_os_error(libc::ELOOP)));
            }
            let target = read_link(&node).map_err(Refused::Io)?;
            if target.is_absolute() {
                dirs.clear();
            }
            push_path(&mut todo, &relative(&target)?)?;
            continue;
        }
        if todo.is_empty() {
            // The last component: open it for reading, and make sure it is still the
            // entry just examined (not swapped for a symlink in between).
            let f = open_flags(cur.as_raw_fd(), name, READ_FLAGS | libc::O_NOFOLLOW)
                .map_err(Refused::Io)?;
            let got = f.metadata().map_err(Refused::Io)?;
            if (got.dev(), got.ino()) != (md.dev(), md.ino()) {
                return Err(Refused::Swapped);
            }
            return Ok(f);
        }
        if !md.is_dir() {
            return Err(Refused::Io(io::Error::from_raw_os_error(libc::ENOTDIR)));
        }
        dirs.push(node);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::unix::fs::symlink;

    fn read(root: &File, p: &str, kernel: bool) -> Result<String, String> {
        match open_in(root.as_raw_fd(), Path::new(p), kernel) {
            Ok(mut f) => {
                let mut s = String::new();
                f.read_to_string(&mut s).map_err(|e| e.to_string())?;
                Ok(s)
            }
            Err(Refused::Escapes) => Err("escapes".into()),
            Err(Refused::Io(e)) => Err(crate::read::io_message(&e)),
            Err(Refused::Swapped) => Err("swapped".into()),
        }
    }

    #[test]
    fn symlinks_are_followed_only_while_they_stay_inside() {
        let outer = tempfile::tempdir().unwrap();
        let top = outer.path().join("tree");
        std::fs::create_dir_all(top.join("sub/deep")).unwrap();
        std::fs::write(outer.path().join("secret"), "secret").unwrap();
        std::fs::write(top.join("sub/deep/f"), "f").unwrap();
        std::fs::write(top.join("g"), "g").unwrap();
        symlink(outer.path(), top.join("up")).unwrap();
        symlink("../secret", top.join("rel_out")).unwrap();
        symlink("deep/f", top.join("sub/to_f")).unwrap();
        symlink("../g", top.join("sub/to_g")).unwrap();
        symlink(top.join("g"), top.join("abs_in")).unwrap();
        symlink(top.join("sub"), top.join("abs_sub")).unwrap();
        symlink("sub/../../secret", top.join("climb")).unwrap();
        symlink("loop", top.join("loop")).unwrap();
        let root = File::open(&top).unwrap();
        // The kernel's answer itself, where this kernel has openat2.
        match openat2_beneath(root.as_raw_fd(), Path::new("sub/to_f")) {
            Ok(_) => {
                let e = openat2_beneath(root.as_raw_fd(), Path::new("up/secret")).unwrap_err();
                assert_eq!(e.raw_os_error(), Some(libc::EXDEV));
            }
            Err(e) => assert!(matches!(e.raw_os_error(), Some(libc::ENOSYS | libc::EPERM))),
        }
        for kernel in [true, false] {
            let r = |p| read(&root, p, kernel);
            assert_eq!(r("g"), Ok("g".into()));
            assert_eq!(r("sub/deep/f"), Ok("f".into()));
            assert_eq!(r("sub/to_f"), Ok("f".into()), "relative link inside");
            assert_eq!(r("sub/to_g"), Ok("g".into()), "link with .. that stays inside");
            assert_eq!(r("abs_in"), Ok("g".into()), "absolute link to inside");
            assert_eq!(r("abs_sub/deep/f"), Ok("f".into()), "absolute link to a directory");
            assert_eq!(r("up/secret"), Err("escapes".into()));
            assert_eq!(r("rel_out"), Err("escapes".into()));
            assert_eq!(r("climb"), Err("escapes".into()));
            assert_eq!(r("../secret"), Err("escapes".into()));
            assert_eq!(r("missing"), Err("No such file or directory".into()));
            assert_eq!(r("g/x"), Err("Not a directory".into()));
            assert!(r("loop").is_err_and(|e| e.contains("symbolic links")), "{kernel}");
        }
    }
}
