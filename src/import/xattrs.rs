//! Digests kept in extended attributes by other tools:
//!
//! - `user.checksum.ALGO` (`user.checksum.md5` by default), the hex digest, as cron
//!   scripts write it (`setfattr -n user.checksum.md5 -v "$(md5sum < f | cut -d' ' -f1)"
//!   f`): no size or mtime is recorded, so the file's at the import are taken;
//! - cshatag's `user.shatag.sha256` with its `user.shatag.ts` (the mtime the digest was
//!   taken at, in the layout [`crate::catalog::xattr::parse_ts`] reads): a file edited
//!   since is refused as changed.
//!
//! The tree is walked (without following symbolic links); each file with the attribute
//! is an entry, one without it is none (the import lists it as uncovered).

use super::{Entry, EntryPath, Importer, Mtime};
use crate::algo::{self, Algorithm};
use crate::catalog::ads::trim;
use crate::catalog::xattr::{CHECKSUM_PREFIX, SHATAG_TS, parse_ts};
use crate::digest::Digest;
use crate::scrub::rel_of;
use crate::sys::attrs;
use crate::walk::{Exclude, WalkEvent, walk};
use std::path::{Path, PathBuf};

/// Which attributes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Names {
    /// `user.checksum.ALGO`.
    Checksum,
    /// cshatag's `user.shatag.sha256` and `user.shatag.ts`.
    Shatag,
}

/// The attributes of the files under a root.
pub struct Xattrs {
    root: PathBuf,
    exclude: Exclude,
    names: Names,
    algo: &'static Algorithm,
}

impl Xattrs {
    /// The `names` attributes under `root` (leaving out `exclude`); with
    /// [`Names::Checksum`], those of `algo` (`None`: md5). cshatag's are SHA-256 only:
    /// another algorithm is refused with the reason.
    pub fn new(
        root: &Path,
        exclude: Exclude,
        names: Names,
        algo: Option<&'static Algorithm>,
    ) -> Result<Xattrs, String> {
        let sha256 = algo::lookup("sha256").expect("sha256 is in the registry");
        let algo = match (names, algo) {
            (Names::Checksum, a) => a.unwrap_or_else(|| algo::lookup("md5").expect("md5")),
            (Names::Shatag, Some(a)) if a.shatag.is_none() => {
                return Err(format!(
                    "cshatag's attributes hold SHA-256 digests, not {}: drop -a or pass -a sha256",
                    a.name
                ));
            }
            (Names::Shatag, _) => sha256,
        };
        Ok(Xattrs { root: root.to_path_buf(), exclude, names, algo })
    }

    /// The attribute holding the digest.
    pub fn attribute(&self) -> String {
        match self.names {
            Names::Checksum => format!("{CHECKSUM_PREFIX}{}", self.algo.name),
            Names::Shatag => self.algo.shatag.unwrap_or_default().to_string(),
        }
    }

    fn entry(&self, full: &Path, rel: &[u8], attribute: &str) -> Option<Entry> {
        let path = EntryPath::Relative(rel.to_vec());
        let bad = |why: String| Some(Entry::malformed(attribute.to_string(), path.clone(), why));
        let value = match attrs::get(full, attribute, false) {
            Ok(Some(v)) => v,
            Ok(None) => return None,
            Err(e) => {
                return bad(format!("cannot read {attribute}: {}", crate::read::io_message(&e)));
            }
        };
        let text = trim(&value);
        let Some(digest) = Digest::from_hex(text).filter(|d| d.as_bytes().len() == self.algo.len)
        else {
            let shown = String::from_utf8_lossy(text);
            return bad(format!("{attribute} holds {shown:?}, not a {} digest", self.algo.name));
        };
        let mut e = Entry::new(attribute.to_string(), path.clone(), Some((self.algo, digest)));
        if self.names == Names::Shatag {
            let ts = match attrs::get(full, SHATAG_TS, false) {
                Ok(v) => v,
                Err(e) => {
                    return bad(format!(
                        "cannot read {SHATAG_TS}: {}",
                        crate::read::io_message(&e)
                    ));
                }
            };
            let Some((ns, precision)) = ts.as_deref().and_then(parse_ts) else {
                return bad(format!("{SHATAG_TS} is missing or not a time"));
            };
            let unit_ns = 10i128.pow(9 - precision.min(9));
            e.mtime = Some(Mtime::Units { value: ns.div_euclid(unit_ns), unit_ns });
        }
        Some(e)
    }
}

impl Importer for Xattrs {
    fn name(&self) -> &'static str {
        match self.names {
            Names::Checksum => "xattr user.checksum",
            Names::Shatag => "cshatag",
        }
    }

    fn algorithm(&self) -> Option<&'static Algorithm> {
        Some(self.algo)
    }

    fn ready(&self) -> Result<(), String> {
        attributes_kept(&self.root)
    }

    fn entries(&mut self, each: &mut dyn FnMut(Entry)) -> Result<(), String> {
        let attribute = self.attribute();
        each_file(
            &self.root,
            &self.exclude,
            &mut |full, rel| self.entry(full, rel, &attribute),
            each,
        );
        Ok(())
    }
}

/// Fails, naming the file system, when the one under `root` keeps no attributes (user
/// xattrs; alternate data streams on Windows): said once, not per file.
pub(super) fn attributes_kept(root: &Path) -> Result<(), String> {
    if let Err(e) = attrs::list(root, false)
        && attrs::unsupported(&e)
    {
        let fs = crate::device::fs_type(root).unwrap_or_else(|| "unknown".into());
        return Err(format!(
            "{}: the {fs} file system here does not keep {}",
            root.display(),
            attrs::WHAT
        ));
    }
    Ok(())
}

/// Walks the files under `root` (leaving out `exclude`, not following symbolic links),
/// handing `each` the entry `entry` makes of each file (none: the file has no digest),
/// and an entry saying why for what cannot be read.
pub(super) fn each_file(
    root: &Path,
    exclude: &Exclude,
    entry: &mut dyn FnMut(&Path, &[u8]) -> Option<Entry>,
    each: &mut dyn FnMut(Entry),
) {
    let opts = super::tree_walk(exclude);
    walk(root, &opts, &mut |ev| {
        match ev {
            WalkEvent::File(full, _) => {
                if let Some(e) = entry(&full, rel_of(root, &full)) {
                    each(e);
                }
            }
            WalkEvent::Skipped(..) => {}
            WalkEvent::Error(full, err) => {
                let path = EntryPath::Relative(rel_of(root, &full).to_vec());
                let why = format!("cannot read: {}", crate::read::io_message(&err));
                each(Entry::malformed(String::new(), path, why));
            }
        }
        true
    });
}
