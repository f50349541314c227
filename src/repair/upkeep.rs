//! Keeping a protected tree's sets in step after `scan` and `verify`: the sets of files
//! the run recorded as edited are re-made (the same rules as `protect`: never over rot,
//! never a set holding a finding's data), and `verify` also checks the recovery files
//! themselves: a set whose PAR2 files are damaged or missing is re-made from its files
//! (which the run has just found as recorded), or said to be damaged when it holds a
//! finding's data and cannot be re-made yet.

use super::protect::{ProtectOptions, ProtectReport, protect};
use super::sidecar::Sidecar;
use super::{DEFAULT_MEMORY, Event, RepairError};
use crate::catalog::Store;
use crate::par2;
use std::ffi::OsStr;
use std::path::Path;

/// The readable sidecars in `dir`, by stem, sorted.
fn sidecars(dir: &Path) -> Vec<(String, Sidecar)> {
    super::sidecar::all(dir).into_iter().filter_map(|(stem, s)| Some((stem, s?))).collect()
}

/// What is wrong with the recovery files of each set in `dir` that has a problem.
pub fn check_sets(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    // One read of the directory for every set (see `par2::Listing`).
    let listing = par2::Listing::read(dir).unwrap_or_default();
    for (stem, side) in sidecars(dir) {
        if side.set.is_empty() {
            continue;
        }
        let files = listing.files(OsStr::new(&stem));
        let (sets, volumes) = par2::load(&files);
        let mut why = Vec::new();
        if !listing.has_index(OsStr::new(&stem)) {
            why.push("its index file is missing".to_string());
        }
        for v in &volumes {
            let name =
                v.path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            match &v.damage {
                Ok(0) => {}
                Ok(n) => why.push(format!("{name}: {n} bytes are not intact packets")),
                Err(e) => why.push(format!("{name}: {e}")),
            }
        }
        match sets.iter().find(|s| crate::digest::hex_encode(&s.id, false) == side.set) {
            None => why.push("no intact description of the set is left".into()),
            Some(set) => {
                if set.recovery.len() < side.recovery as usize {
                    why.push(format!(
                        "{} of {} recovery slices are missing",
                        side.recovery as usize - set.recovery.len(),
                        side.recovery
                    ));
                }
                if !set.complete() {
                    why.push("descriptions of some files are lost".into());
                }
            }
        }
        if !why.is_empty() {
            out.push((stem, why.join("; ")));
        }
    }
    out
}

/// After a run over a protected tree (one with sets in `dir`): checks the sets' files when
/// `check`, then re-makes what is out of step. `None` when the tree is not protected.
pub fn upkeep(
    root: &Path,
    store: &mut dyn Store,
    dir: &Path,
    check: bool,
    on: &mut dyn FnMut(Event<'_>),
) -> Result<Option<ProtectReport>, RepairError> {
    let sides = sidecars(dir);
    let Some(redundancy) = sides.first().map(|s| s.1.redundancy) else { return Ok(None) };
    let mut remake = Vec::new();
    if check {
        for (stem, why) in check_sets(dir) {
            on(Event::SetDamaged { stem: &stem, why: &why });
            remake.push(stem);
        }
    }
    let opts =
        ProtectOptions { redundancy, memory: DEFAULT_MEMORY, par2_dir: dir.to_path_buf(), remake };
    protect(root, store, &opts, on).map(Some)
}
