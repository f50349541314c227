//! Directories whose every recorded file is missing: an unmounted file system, or a
//! directory gone whole. Told apart from single losses so the user hears of it once.

/// The directories under which every recorded file is missing, outermost only, from the
/// catalog's (path, missing) pairs in path order: `(dir, files)`, the empty path for the
/// root itself (everything is missing). At most `limit` are listed, sorted; the second
/// value counts the rest. Memory is bounded by the depth of the tree and `limit`.
pub(crate) fn vanished_dirs(
    rows: impl Iterator<Item = (Vec<u8>, bool)>,
    limit: usize,
) -> (Vec<(Vec<u8>, u64)>, u64) {
    struct Frame {
        dir: Vec<u8>,
        all_missing: bool,
        files: u64,
        /// Subdirectories found wholly missing, reported unless this one is too.
        kids: Vec<(Vec<u8>, u64)>,
        more_kids: u64,
    }
    let frame =
        |dir: Vec<u8>| Frame { dir, all_missing: true, files: 0, kids: Vec::new(), more_kids: 0 };
    let mut out: Vec<(Vec<u8>, u64)> = Vec::new();
    let mut more = 0u64;
    let emit =
        |out: &mut Vec<(Vec<u8>, u64)>, more: &mut u64, kids: Vec<(Vec<u8>, u64)>, extra: u64| {
            for k in kids {
                if out.len() < limit {
                    out.push(k);
                } else {
                    *more += 1;
                }
            }
            *more += extra;
        };
    let mut stack = vec![frame(Vec::new())];
    let pop = |stack: &mut Vec<Frame>, out: &mut Vec<(Vec<u8>, u64)>, more: &mut u64| {
        let f = stack.pop().expect("a frame above the root");
        let parent = stack.last_mut().expect("the root frame");
        if f.all_missing {
            if parent.kids.len() < limit {
                parent.kids.push((f.dir, f.files));
            } else {
                parent.more_kids += 1;
            }
        } else {
            emit(out, more, f.kids, f.more_kids);
        }
        parent.all_missing &= f.all_missing;
        parent.files += f.files;
    };
    for (path, missing) in rows {
        while stack.len() > 1 {
            let top = &stack.last().expect("frames").dir;
            if path.starts_with(top) && path.get(top.len()) == Some(&b'/') {
                break;
            }
            pop(&mut stack, &mut out, &mut more);
        }
        let from = match stack.len() {
            1 => 0,
            _ => stack.last().expect("frames").dir.len() + 1,
        };
        for (i, &b) in path.iter().enumerate().skip(from) {
            if b == b'/' {
                stack.push(frame(path[..i].to_vec()));
            }
        }
        let top = stack.last_mut().expect("frames");
        top.all_missing &= missing;
        top.files += 1;
    }
    while stack.len() > 1 {
        pop(&mut stack, &mut out, &mut more);
    }
    let root = stack.pop().expect("the root frame");
    if root.all_missing && root.files > 0 {
        return (vec![(Vec::new(), root.files)], 0);
    }
    emit(&mut out, &mut more, root.kids, root.more_kids);
    out.sort();
    (out, more)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vanished(rows: &[(&str, bool)], limit: usize) -> (Vec<(String, u64)>, u64) {
        let rows = rows.iter().map(|(p, m)| (p.as_bytes().to_vec(), *m));
        let (dirs, more) = vanished_dirs(rows, limit);
        (dirs.into_iter().map(|(d, n)| (String::from_utf8(d).unwrap(), n)).collect(), more)
    }

    #[test]
    fn vanished_directories_are_the_outermost_wholly_missing_ones() {
        let own = |v: &[(&str, u64)]| v.iter().map(|(d, n)| (d.to_string(), *n)).collect();
        // Nothing missing; one file missing beside present ones: no directory.
        assert_eq!(vanished(&[("a", false), ("b/c", false)], 10), (vec![], 0));
        assert_eq!(vanished(&[("a", true), ("b", false)], 10), (vec![], 0));
        // Everything missing: the root (the empty path).
        assert_eq!(vanished(&[("a", true), ("d/e/f", true)], 10), (own(&[("", 2)]), 0));
        // A wholly missing directory with a wholly missing subdirectory: only the outer.
        let rows = [
            ("a.txt", false),
            ("a/b", true),
            ("a/c/d", true),
            ("a/c/e", true),
            ("m/keep", false),
            ("m/x/1", true),
            ("m/y/1", true),
            ("m/y/2", false),
            ("z", false),
        ];
        assert_eq!(vanished(&rows, 10), (own(&[("a", 3), ("m/x", 1)]), 0));
        // Byte order puts "a.b/..." and "a/..." apart from "a-..." correctly.
        let rows = [("a-1", false), ("a/1", true), ("a/2", true), ("a0", false)];
        assert_eq!(vanished(&rows, 10), (own(&[("a", 2)]), 0));
        // A limit keeps memory bounded and counts the rest.
        let rows: Vec<(String, bool)> = (0..50)
            .map(|i| (format!("d{i:02}/f",), true))
            .chain([("keep".into(), false)])
            .collect();
        let rows: Vec<(&str, bool)> = rows.iter().map(|(p, m)| (p.as_str(), *m)).collect();
        let (dirs, more) = vanished(&rows, 5);
        assert_eq!((dirs.len(), more), (5, 45));
        assert_eq!(dirs[0], ("d00".to_string(), 1));
    }
}
