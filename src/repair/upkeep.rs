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

/// What is wrong with the recovery files of each set in `dir` that has a problem. The
/// sets are checked side by side, over the cores.
pub fn check_sets(dir: &Path) -> Vec<(String, String)> {
    use rayon::prelude::*;
    // One read of the directory for every set (see `par2::Listing`).
    let listing = par2::Listing::read(dir).unwrap_or_default();
    let sets: Vec<(String, Sidecar)> =
        sidecars(dir).into_iter().filter(|(_, side)| !side.set.is_empty()).collect();
    sets.par_iter()
        .filter_map(|(stem, side)| {
            let why = problems(&listing, stem, side);
            (!why.is_empty()).then(|| (stem.clone(), why.join("; ")))
        })
        .collect()
}

/// What is wrong with the files of set `stem`, whose sidecar is `side` (nothing: none).
fn problems(listing: &par2::Listing, stem: &str, side: &Sidecar) -> Vec<String> {
    let files = listing.files(OsStr::new(stem));
    let (sets, volumes) = par2::load(&files);
    let mut why = Vec::new();
    if !listing.has_index(OsStr::new(stem)) {
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
    why
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
    // The redundancy of the first readable sidecar (the others are not read for it).
    let first = super::sidecar::stems(dir)
        .into_iter()
        .find_map(|stem| Sidecar::read(&super::sidecar_path(dir, &stem)).ok().flatten());
    let Some(redundancy) = first.map(|s| s.redundancy) else { return Ok(None) };
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
