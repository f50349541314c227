//! The platform seam on Unix: the standard library's own extension traits.

use std::fs::{File, Metadata};
use std::io;
use std::path::Path;

pub use std::os::unix::ffi::{OsStrExt, OsStringExt};
pub use std::os::unix::fs::{FileExt, MetadataExt};

/// The bytes that separate a path's components.
pub const SEPARATORS: &[u8] = b"/";

/// The identity of an open file: (device, inode).
pub fn id(_file: &File, md: &Metadata) -> (u64, u64) {
    (md.dev(), md.ino())
}

/// The identity of the file at `path` (symlinks followed): (device, inode).
pub fn path_id(path: &Path) -> io::Result<(u64, u64)> {
    std::fs::metadata(path).map(|m| (m.dev(), m.ino()))
}

/// A path as the user typed it, as fixity keeps it: unchanged on Unix.
pub fn portable_arg(path: &Path) -> std::borrow::Cow<'_, Path> {
    std::borrow::Cow::Borrowed(path)
}

/// Sets how a file is opened for reading: `walked` (a walk found it; `Some(follow)`)
/// never blocks on a FIFO that replaced a file and follows a symlink only when told to;
/// no open makes a terminal the controlling one.
pub fn reading(oo: &mut std::fs::OpenOptions, walked: Option<bool>) {
    use std::os::unix::fs::OpenOptionsExt;
    let mut flags = libc::O_NOCTTY;
    if let Some(follow) = walked {
        flags |= libc::O_NONBLOCK;
        if !follow {
            flags |= libc::O_NOFOLLOW;
        }
    }
    oo.custom_flags(flags);
}

/// Whether an open with `walked: Some(false)` failed because the path is a symlink.
pub fn refused_symlink(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::ELOOP)
}

/// The error of reading a directory as a file ("Is a directory", as coreutils says).
pub fn is_a_directory() -> io::Error {
    io::Error::from_raw_os_error(libc::EISDIR)
}

/// Whether the error says another program holds the file (Windows' sharing rules):
/// never on Unix, where opening a file never waits on another's.
pub fn in_use(_e: &io::Error) -> bool {
    false
}

/// Whether the error is one of the file system refusing a write: read-only, or not
/// this user's to write.
pub fn write_refused(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EROFS | libc::EACCES))
}

/// Whether this process runs as root (the superuser's manifests say so).
#[allow(unsafe_code)]
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// This machine's host name, `None` when the system gives none.
#[allow(unsafe_code)]
pub fn hostname() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most `buf.len()` bytes into the buffer it is given.
    let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let len = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    (r == 0 && len > 0).then(|| String::from_utf8_lossy(&buf[..len]).into_owned())
}

/// Seconds east of UTC of local time at `secs` (the C library's time zone rules, `TZ`).
#[allow(unsafe_code)]
pub fn local_offset(secs: i64) -> i64 {
    // time_t, inferred from localtime_r (the alias is deprecated on musl, whose time_t
    // became 64-bit in 1.2.0; on glibc x86_64 it is 64-bit too).
    let t = secs as _;
    // SAFETY: `tm` is plain data that localtime_r fills in; both pointers are valid for
    // the call, and localtime_r is the thread-safe variant.
    unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&t, &mut tm).is_null() {
            return 0;
        }
        tm.tm_gmtoff
    }
}

/// Whether a file's permissions keep it to its owner (no group or world bits): what
/// libpq asks of a password file.
pub fn owner_only(md: &Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    md.permissions().mode() & 0o077 == 0
}

/// A directory builder that makes directories only their owner may enter (0700).
pub fn private_dirs(b: &mut std::fs::DirBuilder) -> &mut std::fs::DirBuilder {
    use std::os::unix::fs::DirBuilderExt;
    b.mode(0o700)
}

/// Flushes every file system's dirty pages to its device (`sync`).
#[allow(unsafe_code)]
pub fn sync_all() {
    // SAFETY: sync has no preconditions.
    unsafe { libc::sync() }
}

/// The identity of the file at `path` whose metadata is `md` (taken from it on Unix).
pub fn meta_id(_path: &Path, md: &Metadata) -> (u64, u64) {
    (md.dev(), md.ino())
}

/// The inode number as an ordering hint (files of a directory read in inode order on a
/// seeking disk): never an identity ([`id`] is).
pub fn inode_hint(md: &Metadata) -> u64 {
    md.ino()
}

/// A file's extended attributes (`user.*`), what the xattr store and `import` keep and
/// read. `follow`: a final symlink is followed (the `_deref` calls).
pub mod attrs {
    use std::ffi::OsString;

    /// What these attributes are called, for messages.
    pub const WHAT: &str = "user extended attributes";
    /// How a file system is made to keep them.
    pub const REMEDY: &str = "mount it with user_xattr";
    use std::io;
    use std::path::Path;

    /// The value of attribute `name`, `None` when the file has none.
    pub fn get(path: &Path, name: &str, follow: bool) -> io::Result<Option<Vec<u8>>> {
        if follow { xattr::get_deref(path, name) } else { xattr::get(path, name) }
    }

    /// Sets attribute `name`.
    pub fn set(path: &Path, name: &str, value: &[u8], follow: bool) -> io::Result<()> {
        if follow { xattr::set_deref(path, name, value) } else { xattr::set(path, name, value) }
    }

    /// Removes attribute `name`; one the file does not have is not an error.
    pub fn remove(path: &Path, name: &str, follow: bool) -> io::Result<()> {
        let r = if follow { xattr::remove_deref(path, name) } else { xattr::remove(path, name) };
        match r {
            Err(e) if e.raw_os_error() == Some(libc::ENODATA) => Ok(()),
            r => r,
        }
    }

    /// The names of the file's attributes.
    pub fn list(path: &Path, follow: bool) -> io::Result<Vec<OsString>> {
        Ok(if follow { xattr::list_deref(path)?.collect() } else { xattr::list(path)?.collect() })
    }

    /// Whether the error says the file system keeps no such attributes (`EOPNOTSUPP`).
    pub fn unsupported(e: &io::Error) -> bool {
        e.raw_os_error() == Some(libc::EOPNOTSUPP)
    }

    /// The NTFS alternate data stream attribute `attribute` shows, by its name: Samba's
    /// `vfs_streams_xattr` keeps a Windows client's stream `NAME` in `user.DosStream.NAME`
    /// (`:$DATA` after it by default) on the server, ntfs-3g shows an NTFS volume's as
    /// `user.NAME`. `None`: not a stream.
    pub fn stream_name(attribute: &str) -> Option<&str> {
        match attribute.strip_prefix("user.DosStream.") {
            Some(samba) => Some(samba.strip_suffix(":$DATA").unwrap_or(samba)),
            None => attribute.strip_prefix("user."),
        }
        .filter(|name| !name.is_empty())
    }
}

/// A new file made with permission bits `mode` (before the umask).
pub fn new_file_mode(oo: &mut std::fs::OpenOptions, mode: u32) -> &mut std::fs::OpenOptions {
    use std::os::unix::fs::OpenOptionsExt;
    oo.mode(mode)
}

/// Gives `file` the owner, group and mode of the file `old` describes. The owner and
/// group are set where permitted (root; or a group the user is in) and silently kept
/// otherwise, as `cp -p` does for a user; the mode always, after them (changing the
/// owner clears set-id bits).
pub fn take_access(file: &File, old: &Metadata) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let now = file.metadata()?;
    if (now.uid(), now.gid()) != (old.uid(), old.gid())
        && std::os::unix::fs::fchown(file, Some(old.uid()), Some(old.gid())).is_err()
        && now.gid() != old.gid()
    {
        let _ = std::os::unix::fs::fchown(file, None, Some(old.gid()));
    }
    file.set_permissions(std::fs::Permissions::from_mode(old.mode() & 0o7777))
}

/// Gives `file` `uid`, `gid` and `mode`, all or none: false (and the file left as it
/// is) when the owner and group cannot be set. The mode goes last.
pub fn give_access(file: &File, uid: u32, gid: u32, mode: u32) -> io::Result<bool> {
    use std::os::unix::fs::PermissionsExt;
    let now = file.metadata()?;
    if (now.uid(), now.gid()) != (uid, gid)
        && std::os::unix::fs::fchown(file, Some(uid), Some(gid)).is_err()
    {
        return Ok(false);
    }
    file.set_permissions(std::fs::Permissions::from_mode(mode & 0o7777))?;
    Ok(true)
}

/// Makes `link` a symbolic link to `target`.
pub fn symlink(target: &Path, link: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

/// The block size of what standard output is (a file, a pipe): how much C's stdio
/// would buffer before writing, as the drop-ins that mimic it do.
pub fn stdout_block() -> Option<usize> {
    use std::os::fd::AsFd;
    let f = std::fs::File::from(io::stdout().as_fd().try_clone_to_owned().ok()?);
    f.metadata().ok().map(|m| m.blksize() as usize)
}

/// Restores the default SIGPIPE action (Rust ignores it), so `fixity ... | head` ends
/// the way `sha256sum ... | head` does.
#[allow(unsafe_code)]
pub fn default_sigpipe() {
    // SAFETY: setting a signal disposition to its default at startup, before any threads.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// `dir` joined with `name` by `/`.
pub fn join(dir: &Path, name: &std::ffi::OsStr) -> std::path::PathBuf {
    dir.join(name)
}

/// A path argument as the program gets it: the shell has expanded its wildcards.
pub fn expand_wildcards(arg: &std::ffi::OsStr) -> Vec<std::ffi::OsString> {
    vec![arg.to_owned()]
}

/// The absolute path of `path`, every symlink resolved (`realpath`).
pub fn canonicalize(path: &Path) -> io::Result<std::path::PathBuf> {
    std::fs::canonicalize(path)
}

/// The absolute path of `path`, symlinks left as they are.
pub fn absolute(path: &Path) -> io::Result<std::path::PathBuf> {
    std::path::absolute(path)
}

/// An exclusive hold of a directory ([`hold_dir`]), kept until dropped.
pub struct DirHold {
    _held: File,
}

/// Takes an exclusive hold of the directory at `path`, kept until the returned hold is
/// dropped (an `flock` on the directory itself); `Ok(None)` when another process holds it.
pub fn hold_dir(path: &Path) -> io::Result<Option<DirHold>> {
    let f = File::open(path)?;
    match f.try_lock() {
        Ok(()) => Ok(Some(DirHold { _held: f })),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

/// Opens the directory at `path` (to open names beneath it, [`crate::confine`]).
pub fn open_dir(path: &Path) -> io::Result<File> {
    File::open(path)
}

/// Whether a name starts with a drive (`C:`): never on Unix.
pub fn drive_prefix(_name: &[u8]) -> bool {
    false
}

/// Whether a name is one the system writes beside a user's files, which a walk leaves
/// out unless told to keep them (`FIXITY_KEEP_SYSTEM_FILES=1`): on macOS, `.DS_Store`
/// (Finder's view settings) and `._NAME` (AppleDouble: a file's resource fork and
/// attributes on a file system without them: SMB shares, FAT, exFAT); nothing on Linux.
pub fn system_file(name: &[u8]) -> bool {
    cfg!(target_os = "macos") && apple_file(name)
}

/// `.DS_Store` and AppleDouble `._NAME` files.
pub(crate) fn apple_file(name: &[u8]) -> bool {
    name == b".DS_Store" || (name.starts_with(b"._") && name.len() > 2)
}

/// The terminal's echo turned off while held (a password typed at a prompt), back as it
/// was when dropped; nothing when standard input is no terminal.
pub struct EchoOff {
    saved: Option<libc::termios>,
}

impl EchoOff {
    pub fn begin() -> EchoOff {
        // SAFETY: tcgetattr fills the termios it is given; tcsetattr reads it.
        unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(0, &mut t) != 0 {
                return EchoOff { saved: None };
            }
            let saved = t;
            t.c_lflag &= !libc::ECHO;
            t.c_lflag |= libc::ECHONL;
            if libc::tcsetattr(0, libc::TCSANOW, &t) != 0 {
                return EchoOff { saved: None };
            }
            EchoOff { saved: Some(saved) }
        }
    }
}

impl Drop for EchoOff {
    fn drop(&mut self) {
        if let Some(t) = &self.saved {
            // SAFETY: puts back the attributes read in `new`.
            unsafe { libc::tcsetattr(0, libc::TCSANOW, t) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apple_files_are_finders_and_appledouble_only() {
        for name in [&b".DS_Store"[..], b"._photo.jpg", b"._x"] {
            assert!(apple_file(name), "{}", String::from_utf8_lossy(name));
        }
        for name in [&b"._"[..], b".DS_Store2", b"a._b", b"photo.jpg", b".fixity"] {
            assert!(!apple_file(name), "{}", String::from_utf8_lossy(name));
        }
        // Left out by walks on macOS only.
        assert_eq!(system_file(b".DS_Store"), cfg!(target_os = "macos"));
    }
}
