//! rhash's layouts (and, through [`rhash_file`], its printf templates) as
//! [`ManifestWriter`]s. rhash's SFV header lists every file before the first line, so that
//! layout keeps its lines and writes header and lines in the footer.

use super::{FileInfo, HeaderEntry, Layout, Style, algorithm, sfv_header, sort_rhash_order, write};
use crate::algo::Algorithm;
use crate::digest::Digest;
use crate::formats::writer::{
    FileEntry, ManifestWriter, Stdin, Unwritable, WriteOptions, one_line,
};

/// The algorithms `layout` computes when `asked` (empty: none asked for), in rhash's
/// order: ed2k links always ED2K and AICH, the others what was asked or their default.
pub(crate) fn layout_algorithms(
    layout: Layout,
    asked: Vec<&'static Algorithm>,
) -> Vec<&'static Algorithm> {
    let find = |name: &str| algorithm(name).expect("rhash's default algorithms are registered");
    let mut algos = match layout {
        Layout::Ed2kLink => vec![find("ed2k"), find("aich")],
        _ if !asked.is_empty() => asked,
        _ => layout.default_algorithms().iter().map(|n| find(n)).collect(),
    };
    sort_rhash_order(&mut algos);
    algos
}

/// What rhash prints about `file`: its name (`(stdin)` for standard input), and the
/// digests of `shown` out of the `computed` ones; `None` for the name when it was
/// standard input.
pub(crate) fn rhash_file<'a>(
    file: &FileEntry<'a>,
    computed: &[&'static Algorithm],
    shown: &[&'static Algorithm],
    stdin: Stdin,
) -> (bool, &'a [u8], Vec<(&'static Algorithm, Digest)>) {
    let digests = computed
        .iter()
        .copied()
        .zip(file.digests.iter().copied())
        .filter(|(a, _)| shown.contains(a))
        .collect();
    let is_stdin = stdin != Stdin::Never && file.name == b"-";
    let name: &'a [u8] = if is_stdin { b"(stdin)" } else { file.name };
    (is_stdin, name, digests)
}

/// The writer of one of rhash's layouts.
pub(crate) struct RhashWriter {
    layout: Layout,
    style: Style,
    algos: Vec<&'static Algorithm>,
    stdin: Stdin,
    /// SFV: (path, size, mtime) for the header, and the lines after it.
    header: Option<Vec<HeaderEntry>>,
    body: Vec<u8>,
}

impl RhashWriter {
    /// `algos` as [`layout_algorithms`] chose them.
    pub(crate) fn new(layout: Layout, algos: Vec<&'static Algorithm>, opts: &WriteOptions) -> Self {
        let layout = layout.resolve(&algos);
        let header = (layout == Layout::Sfv && !opts.no_header).then(Vec::new);
        RhashWriter {
            layout,
            style: opts.rhash,
            algos,
            stdin: opts.stdin,
            header,
            body: Vec::new(),
        }
    }
}

impl ManifestWriter for RhashWriter {
    fn algorithms(&self) -> &[&'static Algorithm] {
        &self.algos
    }

    fn record(&mut self, file: &FileEntry, out: &mut Vec<u8>) -> Result<(), Unwritable> {
        let (stdin, name, digests) = rhash_file(file, &self.algos, &self.algos, self.stdin);
        if self.layout.needs_one_line_names() {
            one_line(name, "rhash's line formats")?;
        }
        let info = FileInfo { path: name, size: file.size, mtime: file.mtime, digests: &digests };
        match self.header.as_mut() {
            Some(h) => {
                if !stdin {
                    h.push((name.to_vec(), file.size, file.mtime));
                }
                write(self.layout, self.style, &info, &mut self.body);
            }
            None => write(self.layout, self.style, &info, out),
        }
        Ok(())
    }

    fn footer(&mut self, out: &mut Vec<u8>) {
        if let Some(files) = &self.header {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64);
            out.extend_from_slice(&sfv_header(now, files));
        }
        out.append(&mut self.body);
    }
}
