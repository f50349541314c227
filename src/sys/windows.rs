//! The platform seam on Windows: the Unix extension traits fixity uses, made of what
//! Windows keeps. Names are UTF-8 (WTF-8 for one that is not valid UTF-16, the standard
//! library's encoding), permission bits come from the read-only attribute, there is no
//! owner, and a file's identity is its volume's serial number and its file index, asked
//! of an open handle (`GetFileInformationByHandle`).

use std::borrow::Cow;
use std::ffi::{OsStr, OsString};
use std::fs::{File, Metadata};
use std::io;
use std::os::windows::fs::MetadataExt as _;
use std::os::windows::fs::OpenOptionsExt as _;
use std::os::windows::io::AsRawHandle;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The bytes that separate a path's components: Windows takes both.
pub const SEPARATORS: &[u8] = b"/\\";

/// What a name that is neither UTF-8 nor WTF-8 becomes on Windows, where no file can
/// have it: a name no file system holds, so it is reported missing, never misread.
const UNREPRESENTABLE: &str = "\u{FFFD}";

/// Whether `b` is WTF-8: UTF-8, with unpaired surrogates encoded as three bytes (what
/// `OsStr::as_encoded_bytes` gives for a name that is not valid UTF-16).
fn wtf8(mut b: &[u8]) -> bool {
    let mut lead_before = false;
    loop {
        match std::str::from_utf8(b) {
            Ok(_) => return true,
            Err(e) => {
                let at = e.valid_up_to();
                let rest = &b[at..];
                // A surrogate: ED A0..BF 80..BF.
                let ok = rest.len() >= 3
                    && rest[0] == 0xED
                    && (0xA0..=0xBF).contains(&rest[1])
                    && (0x80..=0xBF).contains(&rest[2]);
                if !ok {
                    return false;
                }
                let lead = rest[1] < 0xB0;
                // A lead surrogate straight before a trail one is a pair, written as four
                // bytes in WTF-8, never as two threes.
                if !lead && at == 0 && lead_before {
                    return false;
                }
                // Only a surrogate straight after this one (`at == 0` next time) reads it.
                lead_before = lead;
                b = &rest[3..];
            }
        }
    }
}

/// Names as bytes, as on Unix.
pub trait OsStrExt {
    /// The name these bytes (UTF-8, or WTF-8) stand for.
    fn from_bytes(b: &[u8]) -> &Self;
    /// The name's bytes: its UTF-8 (WTF-8 when it is not valid UTF-16).
    fn as_bytes(&self) -> &[u8];
}

impl OsStrExt for OsStr {
    #[allow(unsafe_code)]
    fn from_bytes(b: &[u8]) -> &OsStr {
        match std::str::from_utf8(b) {
            Ok(s) => OsStr::new(s),
            // SAFETY: `b` was checked to be WTF-8, the encoding this function takes.
            Err(_) if wtf8(b) => unsafe { OsStr::from_encoded_bytes_unchecked(b) },
            Err(_) => OsStr::new(UNREPRESENTABLE),
        }
    }
    fn as_bytes(&self) -> &[u8] {
        self.as_encoded_bytes()
    }
}

/// Owned names as bytes, as on Unix.
pub trait OsStringExt {
    /// The name these bytes (UTF-8, or WTF-8) stand for.
    fn from_vec(v: Vec<u8>) -> Self;
    /// The name's bytes.
    fn into_vec(self) -> Vec<u8>;
}

impl OsStringExt for OsString {
    #[allow(unsafe_code)]
    fn from_vec(v: Vec<u8>) -> OsString {
        match String::from_utf8(v) {
            Ok(s) => OsString::from(s),
            Err(e) => {
                let v = e.into_bytes();
                if wtf8(&v) {
                    // SAFETY: `v` was checked to be WTF-8.
                    unsafe { OsString::from_encoded_bytes_unchecked(v) }
                } else {
                    OsString::from(UNREPRESENTABLE)
                }
            }
        }
    }
    fn into_vec(self) -> Vec<u8> {
        self.into_encoded_bytes()
    }
}

/// Reads and writes at an offset (`ReadFile`/`WriteFile` with an offset; the handle's
/// own position moves too, which nothing in fixity uses).
pub trait FileExt {
    /// Reads at `offset`: the bytes read, 0 at the end.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize>;
    /// Writes at `offset`: the bytes written.
    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<usize>;
    /// Reads exactly `buf.len()` bytes at `offset`.
    fn read_exact_at(&self, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
        while !buf.is_empty() {
            match self.read_at(buf, offset) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => {
                    buf = &mut buf[n..];
                    offset += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
    /// Writes all of `buf` at `offset`.
    fn write_all_at(&self, mut buf: &[u8], mut offset: u64) -> io::Result<()> {
        while !buf.is_empty() {
            match self.write_at(buf, offset) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    buf = &buf[n..];
                    offset += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

impl FileExt for File {
    fn read_at(&self, buf: &mut [u8], offset: u64) -> io::Result<usize> {
        std::os::windows::fs::FileExt::seek_read(self, buf, offset)
    }
    fn write_at(&self, buf: &[u8], offset: u64) -> io::Result<usize> {
        std::os::windows::fs::FileExt::seek_write(self, buf, offset)
    }
}

/// 100 ns intervals between 1601-01-01 (a `FILETIME`'s epoch) and 1970-01-01.
const EPOCH_DIFF: i64 = 116_444_736_000_000_000;

/// A `FILETIME` as seconds and nanoseconds since the Unix epoch.
fn unix_time(filetime: u64) -> (i64, i64) {
    let t = filetime as i64 - EPOCH_DIFF;
    (t.div_euclid(10_000_000), t.rem_euclid(10_000_000) * 100)
}

/// A file's metadata as the Unix trait gives it.
pub trait MetadataExt {
    /// The device: not in a Windows `Metadata` (see [`id`]); 0, one device for the
    /// storage policy.
    fn dev(&self) -> u64;
    /// Type and permission bits: a regular file 0o100644, a directory 0o040755, the write
    /// bits cleared for a read-only file.
    fn mode(&self) -> u32;
    /// No owner on Windows: 0.
    fn uid(&self) -> u32;
    /// No group on Windows: 0.
    fn gid(&self) -> u32;
    /// 512-byte blocks: the size's (NTFS sparse files are read whole).
    fn blocks(&self) -> u64;
    /// A block size for reads.
    fn blksize(&self) -> u64;
    /// Links: not in a Windows `Metadata`; 1.
    fn nlink(&self) -> u64;
    /// Last write, seconds since the Unix epoch.
    fn mtime(&self) -> i64;
    /// Last write, the nanoseconds (NTFS keeps 100 ns).
    fn mtime_nsec(&self) -> i64;
    /// No inode change time in a Windows `Metadata`: the last write's (never trusted,
    /// [`crate::device::Times::ctime_trusted`]).
    fn ctime(&self) -> i64;
    /// See [`MetadataExt::ctime`].
    fn ctime_nsec(&self) -> i64;
}

impl MetadataExt for Metadata {
    fn dev(&self) -> u64 {
        0
    }
    fn mode(&self) -> u32 {
        const READONLY: u32 = 0x1;
        let ro = self.file_attributes() & READONLY != 0;
        let (kind, bits) = if self.is_dir() {
            (0o040000, 0o755)
        } else if self.file_type().is_symlink() {
            (0o120000, 0o777)
        } else {
            (0o100000, 0o644)
        };
        kind | if ro { bits & !0o222 } else { bits }
    }
    fn uid(&self) -> u32 {
        0
    }
    fn gid(&self) -> u32 {
        0
    }
    fn blocks(&self) -> u64 {
        self.len().div_ceil(512)
    }
    fn blksize(&self) -> u64 {
        4096
    }
    fn nlink(&self) -> u64 {
        1
    }
    fn mtime(&self) -> i64 {
        unix_time(self.last_write_time()).0
    }
    fn mtime_nsec(&self) -> i64 {
        unix_time(self.last_write_time()).1
    }
    fn ctime(&self) -> i64 {
        self.mtime()
    }
    fn ctime_nsec(&self) -> i64 {
        self.mtime_nsec()
    }
}

/// An identity that equals no other: for a handle Windows would not describe.
fn unique() -> (u64, u64) {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    (u64::MAX, NEXT.fetch_add(1, Ordering::Relaxed))
}

/// The identity of an open file: its volume's serial number and its file index.
#[allow(unsafe_code)]
pub fn id(file: &File, _md: &Metadata) -> (u64, u64) {
    use windows_sys::Win32::Storage::FileSystem::{
        BY_HANDLE_FILE_INFORMATION, GetFileInformationByHandle,
    };
    // SAFETY: a zeroed BY_HANDLE_FILE_INFORMATION is a valid buffer for the call to fill;
    // the handle is open for its duration.
    let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
    let ok = unsafe { GetFileInformationByHandle(file.as_raw_handle() as _, &mut info) };
    if ok == 0 {
        return unique();
    }
    let index = (info.nFileIndexHigh as u64) << 32 | info.nFileIndexLow as u64;
    (info.dwVolumeSerialNumber as u64, index)
}

/// The identity of the file or directory at `path` (links followed), from a handle that
/// asks for no access and shares everything, so a file another program holds is still
/// described.
pub fn path_id(path: &Path) -> io::Result<(u64, u64)> {
    let file = open_dir(path)?;
    let md = file.metadata()?;
    Ok(id(&file, &md))
}

/// The identity of the file at `path` whose metadata is `md`: asked of a handle, as
/// Windows' metadata has none.
pub fn meta_id(path: &Path, _md: &Metadata) -> (u64, u64) {
    path_id(path).unwrap_or_else(|_| unique())
}

/// No inode order on Windows: 0, the names' order.
pub fn inode_hint(_md: &Metadata) -> u64 {
    0
}

/// A path as the user typed it, as fixity keeps it: without the `\\?\` prefix (the
/// standard library adds it again where a path needs it, past 260 characters), with `/`
/// between its components, so names in manifests and catalogs are the same as on Unix.
pub fn portable_arg(path: &Path) -> Cow<'_, Path> {
    let Some(text) = path.to_str() else { return Cow::Borrowed(path) };
    let text = if let Some(unc) = text.strip_prefix(r"\\?\UNC\") {
        format!(r"\\{unc}")
    } else if let Some(rest) = text.strip_prefix(r"\\?\") {
        rest.to_string()
    } else if !text.contains('\\') {
        return Cow::Borrowed(path);
    } else {
        text.to_string()
    };
    Cow::Owned(PathBuf::from(text.replace('\\', "/")))
}

/// Sets how a file is opened for reading: shared with every other program (read,
/// write, delete), so fixity never keeps another program from a file; `walked` with
/// `follow` false opens a symbolic link as itself (`FILE_FLAG_OPEN_REPARSE_POINT`), which
/// the reader then leaves out as a link.
pub fn reading(oo: &mut std::fs::OpenOptions, walked: Option<bool>) {
    const FILE_FLAG_OPEN_REPARSE_POINT: u32 = 0x0020_0000;
    oo.share_mode(7);
    if walked == Some(false) {
        oo.custom_flags(FILE_FLAG_OPEN_REPARSE_POINT);
    }
}

/// A link opened as itself is not an error on Windows: never.
pub fn refused_symlink(_e: &io::Error) -> bool {
    false
}

/// The error of reading a directory as a file.
pub fn is_a_directory() -> io::Error {
    io::ErrorKind::IsADirectory.into()
}

/// Whether the error says another program holds the file without sharing it
/// (`ERROR_SHARING_VIOLATION`, `ERROR_LOCK_VIOLATION`).
pub fn in_use(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(32 | 33))
}

/// Whether the error is one of the file system refusing a write.
pub fn write_refused(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::PermissionDenied | io::ErrorKind::ReadOnlyFilesystem)
}

/// No superuser whose manifests say so on Windows.
pub fn is_root() -> bool {
    false
}

/// This machine's name (`COMPUTERNAME`).
pub fn hostname() -> Option<String> {
    std::env::var("COMPUTERNAME").ok().filter(|h| !h.is_empty())
}

/// Seconds east of UTC of local time at `secs`, by Windows' time zone rules for that
/// date (`SystemTimeToTzSpecificLocalTime`, daylight saving time included).
pub fn local_offset(secs: i64) -> i64 {
    use windows_sys::Win32::Foundation::{FILETIME, SYSTEMTIME};
    use windows_sys::Win32::System::Time::{
        FileTimeToSystemTime, SystemTimeToFileTime, SystemTimeToTzSpecificLocalTime,
    };
    let ft = (secs as i128 * 10_000_000 + EPOCH_DIFF as i128) as u64;
    let ft = FILETIME { dwLowDateTime: ft as u32, dwHighDateTime: (ft >> 32) as u32 };
    // SAFETY: plain data filled by the calls; every pointer is valid for its call.
    unsafe {
        let (mut utc, mut local): (SYSTEMTIME, SYSTEMTIME) = std::mem::zeroed();
        let mut back: FILETIME = std::mem::zeroed();
        if FileTimeToSystemTime(&ft, &mut utc) == 0
            || SystemTimeToTzSpecificLocalTime(std::ptr::null(), &utc, &mut local) == 0
            || SystemTimeToFileTime(&local, &mut back) == 0
        {
            return 0;
        }
        let back = (back.dwHighDateTime as i64) << 32 | back.dwLowDateTime as i64;
        let ft = (ft.dwHighDateTime as i64) << 32 | ft.dwLowDateTime as i64;
        (back - ft).div_euclid(10_000_000)
    }
}

/// Windows keeps a file's access in its security descriptor, not in mode bits: a
/// password file is taken as libpq takes it there, without a check.
pub fn owner_only(_md: &Metadata) -> bool {
    true
}

/// Directories as Windows makes them (they inherit their parent's access).
pub fn private_dirs(b: &mut std::fs::DirBuilder) -> &mut std::fs::DirBuilder {
    b
}

/// Nothing to flush system-wide on Windows (each file is flushed when written).
pub fn sync_all() {}

/// New files are made as Windows makes them (their folder's access is inherited).
pub fn new_file_mode(oo: &mut std::fs::OpenOptions, _mode: u32) -> &mut std::fs::OpenOptions {
    oo
}

/// A file's access on Windows is its folder's, inherited: nothing to take over (a
/// read-only file replaced stays writable, as its replacement must be renamed over it).
pub fn take_access(_file: &File, _old: &Metadata) -> io::Result<()> {
    Ok(())
}

/// No owner nor group to give on Windows; a mode without write bits makes the file
/// read-only once it is in place ([`MetadataExt::mode`]'s inverse).
pub fn give_access(file: &File, _uid: u32, _gid: u32, mode: u32) -> io::Result<bool> {
    if mode & 0o222 == 0 {
        let mut p = file.metadata()?.permissions();
        p.set_readonly(true);
        file.set_permissions(p)?;
    }
    Ok(true)
}

/// Makes `link` a symbolic link to `target` (a directory link when `target` is a
/// directory; Windows needs the privilege, or developer mode, to make either).
pub fn symlink(target: &Path, link: &Path) -> io::Result<()> {
    let resolved = link.parent().map_or_else(|| target.to_path_buf(), |d| d.join(target));
    if resolved.is_dir() {
        std::os::windows::fs::symlink_dir(target, link)
    } else {
        std::os::windows::fs::symlink_file(target, link)
    }
}

/// The C runtime's buffer size for standard output on Windows (4096 bytes).
pub fn stdout_block() -> Option<usize> {
    Some(4096)
}

/// No SIGPIPE on Windows: a write to a closed pipe fails, and the writer ends on it.
pub fn default_sigpipe() {}

/// `dir` joined with `name` by `/`, as fixity writes names on every system (a bare
/// drive, `C:`, is joined without one: `C:name` is relative to that drive's directory).
pub fn join(dir: &Path, name: &OsStr) -> PathBuf {
    let d = dir.as_os_str();
    let b = d.as_encoded_bytes();
    if b.is_empty() || b.ends_with(b"/") || b.ends_with(b"\\") || b.ends_with(b":") {
        return dir.join(name);
    }
    let mut s = OsString::with_capacity(b.len() + 1 + name.len());
    s.push(d);
    s.push("/");
    s.push(name);
    PathBuf::from(s)
}

/// The files a path argument with wildcards (`*`, `?`, `[...]` in its last component)
/// names, sorted; the argument itself when it has none or matches nothing (then it is
/// reported as a missing file). Windows' shells leave wildcards to the program, as the
/// C runtime's `setargv` expands them; names are matched without regard to case.
pub fn expand_wildcards(arg: &OsStr) -> Vec<OsString> {
    let keep = || vec![arg.to_owned()];
    let Some(text) = arg.to_str() else { return keep() };
    if !text.contains(['*', '?', '[']) || Path::new(text).exists() {
        return keep();
    }
    let cut = text.rfind(['/', '\\']).map_or(0, |i| i + 1);
    let (dir, pattern) = text.split_at(cut);
    if dir.contains(['*', '?', '[']) {
        return keep();
    }
    let Ok(glob) =
        globset::GlobBuilder::new(pattern).case_insensitive(true).literal_separator(true).build()
    else {
        return keep();
    };
    let matcher = glob.compile_matcher();
    let Ok(entries) = std::fs::read_dir(if dir.is_empty() { "." } else { dir }) else {
        return keep();
    };
    let mut found: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| matcher.is_match(n))
        .map(|n| format!("{dir}{n}"))
        .collect();
    if found.is_empty() {
        return keep();
    }
    found.sort();
    found.into_iter().map(OsString::from).collect()
}

/// The absolute path of `path`, links resolved, in fixity's form: `C:/Photos/x`, not
/// the `\\?\C:\Photos\x` Windows gives (see [`portable_arg`]).
pub fn canonicalize(path: &Path) -> io::Result<PathBuf> {
    Ok(portable_arg(&std::fs::canonicalize(path)?).into_owned())
}

/// The absolute path of `path`, in fixity's form.
pub fn absolute(path: &Path) -> io::Result<PathBuf> {
    Ok(portable_arg(&std::path::absolute(path)?).into_owned())
}

/// An exclusive hold of a directory ([`hold_dir`]), kept until dropped.
pub struct DirHold {
    _held: std::os::windows::io::OwnedHandle,
}

/// Takes an exclusive hold of the directory at `path`, kept until the returned hold is
/// dropped (or the process ends); `Ok(None)` when another process holds it. Windows locks
/// no byte of a directory, and a share mode that kept a second holder out would keep out
/// programs listing it too: the hold is a named mutex of the directory's identity
/// (volume serial, file index), in the global namespace where this user may make one,
/// else in the session's.
#[allow(unsafe_code)]
pub fn hold_dir(path: &Path) -> io::Result<Option<DirHold>> {
    use std::os::windows::io::{FromRawHandle, OwnedHandle};
    use windows_sys::Win32::Foundation::{ERROR_ALREADY_EXISTS, GetLastError};
    use windows_sys::Win32::System::Threading::CreateMutexW;
    let (volume, index) = path_id(path)?;
    for space in ["Global", "Local"] {
        let name = format!("{space}\\fixity-hold-{volume:x}-{index:x}");
        let wide: Vec<u16> = name.encode_utf16().chain([0]).collect();
        // SAFETY: `wide` is NUL-terminated and outlives the call; no security attributes;
        // the handle returned is owned here (closed when the hold drops).
        let handle = unsafe { CreateMutexW(std::ptr::null(), 0, wide.as_ptr()) };
        let exists = unsafe { GetLastError() } == ERROR_ALREADY_EXISTS;
        if handle.is_null() {
            continue; // no right to the global namespace: the session's
        }
        // SAFETY: a handle CreateMutexW just returned, owned by no one else.
        let owned = unsafe { OwnedHandle::from_raw_handle(handle) };
        return Ok(if exists { None } else { Some(DirHold { _held: owned }) });
    }
    Err(io::Error::last_os_error())
}

/// Opens the directory (or file) at `path` to ask about it or to open names beneath it
/// ([`crate::confine`]): a handle with no access asked and everything shared
/// (`FILE_FLAG_BACKUP_SEMANTICS`, without which Windows opens no directory).
pub fn open_dir(path: &Path) -> io::Result<File> {
    const FILE_FLAG_BACKUP_SEMANTICS: u32 = 0x0200_0000;
    std::fs::OpenOptions::new()
        .access_mode(0)
        .share_mode(7)
        .custom_flags(FILE_FLAG_BACKUP_SEMANTICS)
        .open(path)
}

/// Whether a name starts with a drive (`C:`), which makes it absolute (`C:/x`) or
/// relative to that drive's own directory (`C:x`): either way, not beneath the
/// directory a manifest is checked from.
pub fn drive_prefix(name: &[u8]) -> bool {
    name.len() >= 2 && name[0].is_ascii_alphabetic() && name[1] == b':'
}

/// Whether a name is one the system writes beside a user's files: none that a walk
/// leaves out on Windows (`Thumbs.db` and `desktop.ini` are files people copy and keep).
pub fn system_file(_name: &[u8]) -> bool {
    false
}

/// A file's attributes, kept as NTFS alternate data streams.
pub mod attrs;

/// The console's echo turned off while held (a password typed at a prompt), back as it
/// was when dropped; nothing when standard input is no console.
pub struct EchoOff {
    saved: Option<(windows_sys::Win32::Foundation::HANDLE, u32)>,
}

impl EchoOff {
    pub fn begin() -> EchoOff {
        use windows_sys::Win32::System::Console::{
            ENABLE_ECHO_INPUT, GetConsoleMode, GetStdHandle, STD_INPUT_HANDLE, SetConsoleMode,
        };
        // SAFETY: the handle is the process's standard input; the mode is a plain u32.
        unsafe {
            let h = GetStdHandle(STD_INPUT_HANDLE);
            let mut mode = 0u32;
            if GetConsoleMode(h, &mut mode) == 0
                || SetConsoleMode(h, mode & !ENABLE_ECHO_INPUT) == 0
            {
                return EchoOff { saved: None };
            }
            EchoOff { saved: Some((h, mode)) }
        }
    }
}

impl Drop for EchoOff {
    fn drop(&mut self) {
        if let Some((h, mode)) = self.saved {
            // SAFETY: puts back the mode read in `new`.
            unsafe { windows_sys::Win32::System::Console::SetConsoleMode(h, mode) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wtf8_takes_utf8_and_lone_surrogates_only() {
        assert!(wtf8("plain é 日本".as_bytes()));
        assert!(wtf8(b"a\xED\xA0\x80b")); // lone lead surrogate
        assert!(wtf8(b"\xED\xB0\x80")); // lone trail surrogate
        assert!(!wtf8(b"\xED\xA0\x80\xED\xB0\x80")); // a pair as two threes
        assert!(!wtf8(b"\xff"));
        assert!(!wtf8(b"a\xC3"));
    }

    #[test]
    fn names_round_trip_through_bytes() {
        for name in ["a.txt", "Fotos/été.jpg", "日本語"] {
            let os = OsStr::new(name);
            assert_eq!(OsStr::from_bytes(os.as_bytes()), os);
            assert_eq!(OsString::from_vec(os.as_bytes().to_vec()), os);
        }
        assert_eq!(OsStr::from_bytes(b"\xff"), OsStr::new(UNREPRESENTABLE));
    }

    #[test]
    fn typed_paths_keep_slashes_and_lose_the_verbatim_prefix() {
        let p = |s: &str| portable_arg(Path::new(s)).into_owned();
        assert_eq!(p(r"D:\Photos\2024"), PathBuf::from("D:/Photos/2024"));
        assert_eq!(p(r"\\?\D:\Photos"), PathBuf::from("D:/Photos"));
        assert_eq!(p(r"\\?\UNC\nas\archive\x"), PathBuf::from("//nas/archive/x"));
        assert_eq!(p(r"\\nas\archive"), PathBuf::from("//nas/archive"));
        assert_eq!(p("plain/rel"), PathBuf::from("plain/rel"));
    }

    #[test]
    fn filetimes_are_unix_times() {
        assert_eq!(unix_time(EPOCH_DIFF as u64), (0, 0));
        assert_eq!(unix_time(EPOCH_DIFF as u64 + 10_000_001), (1, 100));
        assert_eq!(unix_time(EPOCH_DIFF as u64 - 1), (-1, 999_999_900));
    }
}
