//! A part of a plan as the scope of a catalog run (`scan|verify --plan DIR --part I`):
//! the part's entries, relative to the tree's root, and the range of records it owns
//! (from its first path to the next part's first path; see [`crate::scrub::Scope`]).
//!
//! The ranges only partition the records when the plan's names are in path order, as a
//! walk of one tree gives them; a plan made from an unsorted list is refused here. A
//! file split into pieces across parts is the catalog's one file: the part holding its
//! first piece looks at it, and its later pieces are not entries here.

use super::list::ListReader;
use super::{Entry, Plan, PlanError};
use crate::pathtext::{bytes_path, path_bytes};
use crate::scrub::{Bounds, Listed, PartOf, Scope};
use std::path::{Component, Path, PathBuf};

/// Part `i` of `plan` as the scope of a run over the tree at `base` (absolute, not
/// resolved: the plan's names, relative to the directory it was made in, are taken
/// below it). Refuses names outside `base`, and names out of path order within the part
/// or against its neighbours.
pub fn part_scope(plan: &Plan, i: usize, base: &Path) -> Result<Scope, PlanError> {
    let rel = |path: &Path, name: &[u8]| -> Result<Vec<u8>, PlanError> {
        rel_under(&plan.cwd, base, name).ok_or_else(|| {
            PlanError::Format(
                path.to_path_buf(),
                format!(
                    "{} is not under {}: the plan is not of this tree",
                    String::from_utf8_lossy(name),
                    base.display()
                ),
            )
        })
    };
    // The part's own entries: in order, under `base`; its first and last paths.
    let list = plan.list_path(i);
    let mut ends: Option<(Vec<u8>, Vec<u8>)> = None;
    for e in plan.list(i)?.filter(is_listed) {
        let r = rel(&list, entry_path(&e?))?;
        match &mut ends {
            None => ends = Some((r.clone(), r)),
            Some((_, last)) if r > *last => *last = r,
            Some((_, last)) => return Err(unsorted(&list, last, &r)),
        }
    }
    // The nearest parts with entries before and after it.
    let mut before = None;
    for j in (0..i).rev() {
        let mut last = None;
        for e in plan.list(j)?.filter(is_listed) {
            last = Some(entry_path(&e?).to_vec());
        }
        if let Some(name) = last {
            before = Some(rel(&plan.list_path(j), &name)?);
            break;
        }
    }
    let mut after = None;
    for j in i + 1..plan.parts.len() {
        if let Some(e) = plan.list(j)?.find(is_listed).transpose()? {
            after = Some(rel(&plan.list_path(j), entry_path(&e))?);
            break;
        }
    }
    let bounds = match &ends {
        Some((first, last)) => {
            if let Some(b) = before.as_ref().filter(|b| *b >= first) {
                return Err(unsorted(&list, b, first));
            }
            if let Some(a) = after.as_ref().filter(|a| *a <= last) {
                return Err(unsorted(&list, last, a));
            }
            Bounds { from: before.is_some().then(|| first.clone()), until: after }
        }
        // A part with no entries owns nothing, unless no part has any: then the first
        // owns every record (all of them gone).
        None if i == 0 && after.is_none() => Bounds::default(),
        None => Bounds::nothing(),
    };
    // Checked against the plan above: read again without digesting it again.
    let mut reader = ListReader::open(&list)?;
    let (cwd, base) = (plan.cwd.clone(), base.to_path_buf());
    let entries = std::iter::from_fn(move || {
        let e = match reader.find(is_listed)? {
            Ok(e) => e,
            Err(e) => return Some(Err(e.to_string())),
        };
        let Some(rel) = rel_under(&cwd, &base, entry_path(&e)) else {
            return Some(Err(format!(
                "{}: not under {}",
                String::from_utf8_lossy(entry_path(&e)),
                base.display()
            )));
        };
        Some(Ok(match e {
            Entry::File { .. } | Entry::Skipped { .. } => Listed::Path(rel),
            Entry::WalkError { message, .. } => Listed::Unlisted(rel, message),
        }))
    });
    Ok(Scope {
        bounds,
        entries: Box::new(entries),
        part: PartOf { plan: plan.id.clone(), part: i, parts: plan.parts.len() },
        listed_ms: plan.created,
    })
}

/// Whether a list's entry is one for a catalog run: all but the later pieces of a file
/// split across parts (the part with its first piece looks at the file).
fn is_listed(e: &Result<Entry, PlanError>) -> bool {
    !matches!(e, Ok(Entry::File { piece: Some(p), .. }) if p.start > 0)
}

/// The path an entry names, as the plan keeps it.
fn entry_path(e: &Entry) -> &[u8] {
    match e {
        Entry::File { name, .. } => name,
        Entry::Skipped { path, .. } | Entry::WalkError { path, .. } => path,
    }
}

/// `name` (relative to `cwd` unless absolute) relative to `base`, component by component
/// (`.` and doubled slashes do not count), as a tree's records name it; `None` when it is
/// not below `base` or climbs with `..`.
fn rel_under(cwd: &Path, base: &Path, name: &[u8]) -> Option<Vec<u8>> {
    let full: PathBuf = cwd.join(bytes_path(name));
    let rest = full.strip_prefix(base).ok()?;
    let mut rel = Vec::new();
    for c in rest.components() {
        match c {
            Component::Normal(n) => {
                if !rel.is_empty() {
                    rel.push(b'/');
                }
                rel.extend_from_slice(path_bytes(Path::new(n)));
            }
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(rel)
}

fn unsorted(list: &Path, before: &[u8], after: &[u8]) -> PlanError {
    PlanError::Format(
        list.to_path_buf(),
        format!(
            "{} comes after {}: the plan's names are not in path order, so its parts \
             cannot split a catalog (a plan made from an unsorted list?); make the plan \
             from the tree (fixity plan DIR), or sort the list first (LC_ALL=C sort -z)",
            String::from_utf8_lossy(after),
            String::from_utf8_lossy(before)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_taken_relative_to_the_base_by_component() {
        let (cwd, base) = (Path::new("/w"), Path::new("/w/tree"));
        assert_eq!(rel_under(cwd, base, b"tree/a/b").as_deref(), Some(&b"a/b"[..]));
        assert_eq!(rel_under(cwd, base, b"./tree//a/./b").as_deref(), Some(&b"a/b"[..]));
        assert_eq!(rel_under(cwd, base, b"/w/tree/c").as_deref(), Some(&b"c"[..]));
        assert_eq!(rel_under(cwd, base, b"tree").as_deref(), Some(&b""[..]), "the root");
        assert_eq!(rel_under(cwd, base, b"other/a"), None);
        assert_eq!(rel_under(cwd, base, b"treehouse/a"), None, "a component, not a prefix");
        assert_eq!(rel_under(cwd, base, b"tree/../x"), None);
        // A name no Windows file system can hold (not UTF-8, a newline).
        #[cfg(unix)]
        {
            let odd = b"tree/caf\xe9\nname";
            assert_eq!(rel_under(cwd, base, odd).as_deref(), Some(&b"caf\xe9\nname"[..]));
        }
    }
}
