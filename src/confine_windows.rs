//! Opening a manifest's path without leaving a directory (`check --confine`), on
//! Windows: the path is opened (following links and junctions, as a plain open would),
//! then the file actually opened is asked where it is (`GetFinalPathNameByHandleW`: the
//! path with every link and junction resolved, of the open handle, so nothing can swap
//! it between the check and the read); a file outside the directory is refused. The same
//! answer as the kernel's beneath-resolution on Linux (src/confine.rs): links that stay
//! inside are followed, any way out is refused.

use std::fs::File;
use std::io;
use std::os::windows::ffi::OsStringExt as _;
use std::os::windows::fs::OpenOptionsExt as _;
use std::os::windows::io::AsRawHandle;
use std::path::{Path, PathBuf};

/// Why a confined open gave no file. The reader turns it into its own error
/// (`read::ReadError`); this module knows nothing of reading.
#[derive(Debug)]
pub(crate) enum Refused {
    /// The open, or a lookup on the way to it, failed.
    Io(io::Error),
    /// The path, through a link or otherwise, leads out of the directory.
    Escapes,
    /// The last component was replaced between its check and its open (never here: the
    /// open handle is what is checked).
    #[allow(dead_code)]
    Swapped,
}

/// Where the open `file` is: its final path, links and junctions resolved.
#[allow(unsafe_code)]
fn final_path(file: &File) -> io::Result<PathBuf> {
    use windows_sys::Win32::Storage::FileSystem::GetFinalPathNameByHandleW;
    let mut buf = vec![0u16; 512];
    loop {
        // SAFETY: the buffer's length is passed; the handle is open for the call.
        let n = unsafe {
            GetFinalPathNameByHandleW(
                file.as_raw_handle() as _,
                buf.as_mut_ptr(),
                buf.len() as u32,
                0,
            )
        } as usize;
        if n == 0 {
            return Err(io::Error::last_os_error());
        }
        if n < buf.len() {
            return Ok(PathBuf::from(std::ffi::OsString::from_wide(&buf[..n])));
        }
        buf.resize(n + 1, 0);
    }
}

/// Opens `base/path` for reading and refuses it unless its final path lies beneath
/// `inside` (the final path of `base`).
fn open_in(base: &Path, inside: &Path, path: &Path) -> Result<File, Refused> {
    if path.is_absolute() || path.has_root() {
        return Err(Refused::Escapes);
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .share_mode(7)
        .open(base.join(path))
        .map_err(Refused::Io)?;
    let at = final_path(&file).map_err(Refused::Io)?;
    if at.starts_with(inside) && at != inside { Ok(file) } else { Err(Refused::Escapes) }
}

/// Opens `path` for reading beneath the current directory (the directory a manifest's
/// names are resolved from). `Err(Refused::Escapes)` when the path, through a link or
/// otherwise, leads outside it.
pub(crate) fn open_beneath(path: &Path) -> Result<File, Refused> {
    let cwd = std::env::current_dir().map_err(Refused::Io)?;
    let dir = crate::sys::open_dir(&cwd).map_err(Refused::Io)?;
    open_in(&cwd, &final_path(&dir).map_err(Refused::Io)?, path)
}

/// Opens `path` for reading beneath the directory open as `dir` (a recovery set's names,
/// beneath the tree they protect).
pub(crate) fn open_under(dir: &File, path: &Path) -> Result<File, Refused> {
    let base = final_path(dir).map_err(Refused::Io)?;
    open_in(&base, &base, path)
}
