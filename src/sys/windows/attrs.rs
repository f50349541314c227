//! A file's attributes kept as NTFS alternate data streams: attribute `user.fixity.sha256`
//! of `photo.jpg` is the stream `photo.jpg:user.fixity.sha256` (what RapidCRC-Unicode and
//! TeraCopy do with their own stream names). Writing a stream moves the file's last-write
//! time on NTFS, so [`set`] and [`remove`] put it back: an attribute
//! written is not an edit. A file system without streams (FAT, exFAT, most shares) says
//! so through [`unsupported`].

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::windows::ffi::{OsStrExt as _, OsStringExt as _};
use std::os::windows::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

/// What these attributes are called, for messages.
pub const WHAT: &str = "alternate data streams";
/// Which file systems keep them.
pub const REMEDY: &str = "NTFS and ReFS do; FAT, exFAT and many shares do not";

const FILE_FLAG_BACKUP_SEMANTICS: u32 = 0x0200_0000;
const FILE_WRITE_ATTRIBUTES: u32 = 0x0100;

/// The stream `name` of the file at `path`.
fn stream(path: &Path, name: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(":");
    s.push(name);
    PathBuf::from(s)
}

/// The value of attribute `name`, `None` when the file has no such stream.
pub fn get(path: &Path, name: &str, _follow: bool) -> io::Result<Option<Vec<u8>>> {
    let mut f = match OpenOptions::new().read(true).share_mode(7).open(stream(path, name)) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            // The file itself must exist: a missing file is its own error.
            std::fs::metadata(path)?;
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    let mut v = Vec::new();
    f.read_to_end(&mut v)?;
    Ok(Some(v))
}

/// Runs `change` on the file's streams, then puts the file's last-write time back.
fn keeping_mtime(path: &Path, change: impl FnOnce() -> io::Result<()>) -> io::Result<()> {
    let before = std::fs::metadata(path)?.modified()?;
    change()?;
    let f = OpenOptions::new()
        .access_mode(FILE_WRITE_ATTRIBUTES)
        .share_mode(7)
        .custom_flags(FILE_FLAG_BACKUP_SEMANTICS)
        .open(path)?;
    f.set_modified(before)
}

/// Sets attribute `name` (writes its stream whole).
pub fn set(path: &Path, name: &str, value: &[u8], _follow: bool) -> io::Result<()> {
    keeping_mtime(path, || {
        let mut f: File = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .share_mode(7)
            .open(stream(path, name))?;
        f.write_all(value)
    })
}

/// Removes attribute `name`; one the file does not have is not an error.
pub fn remove(path: &Path, name: &str, _follow: bool) -> io::Result<()> {
    keeping_mtime(path, || match std::fs::remove_file(stream(path, name)) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        r => r,
    })
}

/// The names of the file's streams but its content's (`FindFirstStreamW`).
#[allow(unsafe_code)]
pub fn list(path: &Path, _follow: bool) -> io::Result<Vec<OsString>> {
    use windows_sys::Win32::Foundation::{ERROR_HANDLE_EOF, INVALID_HANDLE_VALUE};
    use windows_sys::Win32::Storage::FileSystem::{
        FindClose, FindFirstStreamW, FindNextStreamW, FindStreamInfoStandard,
        WIN32_FIND_STREAM_DATA,
    };
    let wide: Vec<u16> = path.as_os_str().encode_wide().chain([0]).collect();
    // SAFETY: plain data the calls fill; `wide` is NUL-terminated; the find handle
    // is closed on every way out.
    unsafe {
        let mut data: WIN32_FIND_STREAM_DATA = std::mem::zeroed();
        let h = FindFirstStreamW(
            wide.as_ptr(),
            FindStreamInfoStandard,
            (&mut data as *mut WIN32_FIND_STREAM_DATA).cast(),
            0,
        );
        if h == INVALID_HANDLE_VALUE {
            let e = io::Error::last_os_error();
            return if e.raw_os_error() == Some(ERROR_HANDLE_EOF as i32) {
                Ok(Vec::new())
            } else {
                Err(e)
            };
        }
        let mut names = Vec::new();
        loop {
            let len = data.cStreamName.iter().position(|&c| c == 0).unwrap_or(0);
            // ":NAME:$DATA"; the content is "::$DATA".
            let full = String::from_utf16_lossy(&data.cStreamName[..len]);
            if let Some(name) = full.strip_prefix(':').and_then(|n| n.strip_suffix(":$DATA"))
                && !name.is_empty()
            {
                names.push(OsString::from_wide(&name.encode_utf16().collect::<Vec<_>>()));
            }
            if FindNextStreamW(h, (&mut data as *mut WIN32_FIND_STREAM_DATA).cast()) == 0 {
                break;
            }
        }
        FindClose(h);
        Ok(names)
    }
}

/// The alternate data stream attribute `attribute` is: every attribute here is one,
/// by its own name.
pub fn stream_name(attribute: &str) -> Option<&str> {
    Some(attribute).filter(|name| !name.is_empty())
}

/// Whether the error says the file system keeps no streams (FAT, exFAT; a share
/// whose server does not pass them).
pub fn unsupported(e: &io::Error) -> bool {
    // ERROR_INVALID_FUNCTION, ERROR_NOT_SUPPORTED, ERROR_INVALID_NAME (a `:` in a
    // name where streams are not known).
    matches!(e.raw_os_error(), Some(1 | 50 | 123)) || e.kind() == io::ErrorKind::Unsupported
}
