//! hashdeep's file format (`hashdeep -c md5,sha256 -r DIR`, also md5deep's known files):
//!
//! ```text
//! %%%% HASHDEEP-1.0
//! %%%% size,md5,sha256,filename
//! ## Invoked from: /home/user
//! ## $ hashdeep -c md5,sha256 -l -r data
//! ##
//! 3,900150983cd24fb0d6963f7d28e17f72,ba7816bf...,data/a.txt
//! ```
//!
//! The second header line names the columns in order; the file name is the rest of the
//! line and may hold commas. hashdeep writes the digest columns in a fixed order (md5,
//! sha1, sha256, tiger, whirlpool) whatever order `-c` names them in, and so does fixity.
//! hashdeep writes names raw, so a name with a newline breaks the file; fixity refuses to
//! write one (the caller reports it).

use super::writer::{
    FileEntry, Invocation, ManifestWriter, Refusal, Unwritable, WriteOptions, one_line,
};
use crate::algo::{self, Algorithm};
use crate::digest::Digest;

/// The first line of every hashdeep file.
pub(crate) const MAGIC: &[u8] = b"%%%% HASHDEEP-1.0";

/// hashdeep's column names, in the order hashdeep writes them.
pub(crate) const COLUMNS: &[&str] = &["md5", "sha1", "sha256", "tiger", "whirlpool"];

/// The algorithms hashdeep uses when `-c` is not given.
pub(crate) const DEFAULT: &[&str] = &["md5", "sha256"];

/// hashdeep's column name for `a`, if hashdeep computes it.
pub(crate) fn column_name(a: &Algorithm) -> Option<&'static str> {
    COLUMNS.iter().copied().find(|c| *c == a.name)
}

/// The algorithms `algos` in hashdeep's column order, or the name of one hashdeep lacks.
pub(crate) fn column_order(
    algos: &[&'static Algorithm],
) -> Result<Vec<&'static Algorithm>, &'static str> {
    if let Some(a) = algos.iter().find(|a| column_name(a).is_none()) {
        return Err(a.name);
    }
    let mut v: Vec<&'static Algorithm> =
        COLUMNS.iter().filter_map(|c| algos.iter().copied().find(|a| a.name == *c)).collect();
    v.dedup();
    Ok(v)
}

/// Appends the five header lines: the magic, the columns, `## Invoked from: DIR`, the
/// command line after `## $ ` (or `## # ` for root), and `## `.
pub(crate) fn write_header(
    algos: &[&Algorithm],
    invoked_from: &[u8],
    command: &[u8],
    root: bool,
    out: &mut Vec<u8>,
) {
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(b"\n%%%% size,");
    for a in algos {
        out.extend_from_slice(a.name.as_bytes());
        out.push(b',');
    }
    out.extend_from_slice(b"filename\n## Invoked from: ");
    out.extend_from_slice(invoked_from);
    out.extend_from_slice(if root { b"\n## # " } else { b"\n## $ " });
    out.extend_from_slice(command);
    out.extend_from_slice(b"\n## \n");
}

/// Appends `size,digest,...,name`. `digests` are in the header's column order.
pub fn write(size: u64, digests: &[Digest], name: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(size.to_string().as_bytes());
    for d in digests {
        out.push(b',');
        out.extend_from_slice(d.to_hex().as_bytes());
    }
    out.push(b',');
    out.extend_from_slice(name);
    out.push(b'\n');
}

/// One file line of a hashdeep file.
#[derive(Clone, Debug)]
#[cfg_attr(test, derive(PartialEq, Eq))]
pub struct FileRecord {
    /// The size in bytes.
    pub size: u64,
    /// Every digest column, in the header's order.
    pub digests: Vec<(&'static Algorithm, Digest)>,
    /// The file name (the rest of the line, commas and all).
    pub name: Vec<u8>,
}

/// Parses the column line `%%%% size,md5,...,filename` into the digest algorithms, in
/// order. `Ok(None)`: not a column line. An unknown column, or one out of place, is an
/// error naming it.
pub fn parse_header(line: &[u8]) -> Result<Option<Vec<&'static Algorithm>>, String> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let Some(rest) = line.strip_prefix(b"%%%% ") else { return Ok(None) };
    if rest == &MAGIC[5..] {
        return Ok(None);
    }
    let text = std::str::from_utf8(rest).map_err(|_| "the column line is not text".to_string())?;
    let cols: Vec<&str> = text.split(',').collect();
    if cols.first() != Some(&"size") {
        return Err(format!("the column line must start with 'size', not '{}'", cols[0]));
    }
    if cols.last() != Some(&"filename") || cols.len() < 3 {
        return Err(
            "the column line must name at least one digest and end with 'filename'".to_string()
        );
    }
    let mut algos: Vec<&'static Algorithm> = Vec::with_capacity(cols.len() - 2);
    for c in &cols[1..cols.len() - 1] {
        let a = COLUMNS.contains(c).then(|| algo::lookup(c)).flatten().ok_or_else(|| {
            format!("unknown column '{c}' (hashdeep's are md5, sha1, sha256, tiger, whirlpool)")
        })?;
        if algos.contains(&a) {
            return Err(format!("column '{c}' appears twice"));
        }
        algos.push(a);
    }
    Ok(Some(algos))
}

/// Parses one file line (without its line ending: [`Parser::line`] drops a CR) against the
/// header's digest columns.
pub fn parse_line(columns: &[&'static Algorithm], line: &[u8]) -> Result<FileRecord, String> {
    let mut rest = line;
    let mut field = || -> Option<&[u8]> {
        let comma = rest.iter().position(|&b| b == b',')?;
        let f = &rest[..comma];
        rest = &rest[comma + 1..];
        Some(f)
    };
    let want = columns.len() + 2;
    let size_text = field().ok_or_else(|| format!("expected {want} comma-separated fields"))?;
    let size = parse_size(size_text).ok_or_else(|| {
        format!("'{}' is not a size in bytes", String::from_utf8_lossy(size_text))
    })?;
    let mut digests = Vec::with_capacity(columns.len());
    for a in columns {
        let text = field().ok_or_else(|| format!("expected {want} comma-separated fields"))?;
        let d = (text.len() == a.hex_len()).then(|| Digest::from_hex(text)).flatten().ok_or_else(
            || {
                format!(
                    "'{}' is not a {} digest ({} hex digits)",
                    String::from_utf8_lossy(text),
                    a.name,
                    a.hex_len()
                )
            },
        )?;
        digests.push((*a, d));
    }
    if rest.is_empty() {
        return Err("the file name is empty".to_string());
    }
    Ok(FileRecord { size, digests, name: rest.to_vec() })
}

fn parse_size(text: &[u8]) -> Option<u64> {
    if text.is_empty() || text.len() > 20 || !text.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(text).ok()?.parse().ok()
}

/// What a line of a hashdeep file is.
#[derive(Clone, Debug)]
#[cfg_attr(test, derive(PartialEq, Eq))]
pub enum Line {
    /// A header or comment line (`%%%%`, `##`) or a blank line.
    Header,
    /// A file.
    File(FileRecord),
}

/// Reads a hashdeep file line by line: the magic must come first, the column line before
/// any file line.
#[derive(Clone, Debug, Default)]
pub struct Parser {
    magic: bool,
    columns: Option<Vec<&'static Algorithm>>,
}

impl Parser {
    /// A parser at the start of a file.
    pub fn new() -> Parser {
        Parser::default()
    }

    /// The digest columns, once the column line has been read.
    pub fn columns(&self) -> Option<&[&'static Algorithm]> {
        self.columns.as_deref()
    }

    /// Parses the next line (without its newline). Errors name the cause; the caller
    /// adds the file name and line number.
    pub fn line(&mut self, line: &[u8]) -> Result<Line, String> {
        let trimmed = line.strip_suffix(b"\r").unwrap_or(line);
        if !self.magic {
            if trimmed != MAGIC {
                return Err(format!(
                    "not a hashdeep file (the first line must be '{}')",
                    String::from_utf8_lossy(MAGIC)
                ));
            }
            self.magic = true;
            return Ok(Line::Header);
        }
        if trimmed.is_empty() || trimmed.starts_with(b"##") {
            return Ok(Line::Header);
        }
        if trimmed.starts_with(b"%%%%") {
            match parse_header(trimmed)? {
                Some(cols) => self.columns = Some(cols),
                None if trimmed == MAGIC => {}
                None => return Err("malformed '%%%%' header line".to_string()),
            }
            return Ok(Line::Header);
        }
        let cols = self.columns.as_deref().ok_or("a file line before the column line")?;
        parse_line(cols, trimmed).map(Line::File)
    }
}

/// The `hashdeep` format's writer: its five header lines, then `size,d1,...,name` lines
/// with the digests in hashdeep's column order.
pub(crate) struct HashdeepWriter {
    algos: Vec<&'static Algorithm>,
    invocation: Invocation,
}

impl HashdeepWriter {
    pub(crate) fn new(algos: Vec<&'static Algorithm>, opts: WriteOptions) -> Result<Self, Refusal> {
        let algos = column_order(&algos).map_err(Refusal::Hashdeep)?;
        if opts.zero {
            return Err(Refusal::HashdeepZero);
        }
        Ok(HashdeepWriter { algos, invocation: opts.invocation })
    }
}

impl ManifestWriter for HashdeepWriter {
    fn algorithms(&self) -> &[&'static Algorithm] {
        &self.algos
    }

    fn header(&mut self, out: &mut Vec<u8>) {
        let i = &self.invocation;
        write_header(&self.algos, &i.dir, &i.command, i.root, out);
    }

    fn record(&mut self, file: &FileEntry, out: &mut Vec<u8>) -> Result<(), Unwritable> {
        one_line(file.name, "a hashdeep file")?;
        write(file.size, file.digests, file.name, out);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(n: &str) -> &'static Algorithm {
        algo::lookup(n).unwrap()
    }

    #[test]
    fn header_and_line_round_trip() {
        let algos = [a("md5"), a("sha256")];
        let mut out = Vec::new();
        write_header(&algos, b"/tmp/x", b"fixity hash --format hashdeep d", false, &mut out);
        let md5 = a("md5").digest(b"abc");
        let sha = a("sha256").digest(b"abc");
        write(3, &[md5, sha], b"d/a,b.txt", &mut out);
        let text = String::from_utf8(out.clone()).unwrap();
        assert_eq!(
            text,
            "%%%% HASHDEEP-1.0\n%%%% size,md5,sha256,filename\n## Invoked from: /tmp/x\n\
             ## $ fixity hash --format hashdeep d\n## \n\
             3,900150983cd24fb0d6963f7d28e17f72,\
             ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad,d/a,b.txt\n"
        );
        let mut p = Parser::new();
        let mut files = Vec::new();
        for l in out.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            if let Line::File(f) = p.line(l).unwrap() {
                files.push(f);
            }
        }
        assert_eq!(
            files,
            vec![FileRecord {
                size: 3,
                digests: vec![(a("md5"), md5), (a("sha256"), sha)],
                name: b"d/a,b.txt".to_vec()
            }]
        );
    }

    #[test]
    fn root_marks_the_command_with_hash() {
        let mut out = Vec::new();
        write_header(&[a("sha1")], b"/", b"cmd", true, &mut out);
        assert!(out.ends_with(b"## # cmd\n## \n"));
    }

    #[test]
    fn column_order_is_hashdeeps() {
        let v = column_order(&[a("whirlpool"), a("sha256"), a("md5")]).unwrap();
        assert_eq!(v, vec![a("md5"), a("sha256"), a("whirlpool")]);
        assert_eq!(column_order(&[a("blake3")]), Err("blake3"));
    }

    #[test]
    fn header_errors() {
        assert_eq!(parse_header(b"%%%% size,md5,filename").unwrap(), Some(vec![a("md5")]));
        assert_eq!(parse_header(b"%%%% HASHDEEP-1.0").unwrap(), None);
        assert_eq!(parse_header(b"## x").unwrap(), None);
        let e = parse_header(b"%%%% size,md5,blake3,filename").unwrap_err();
        assert!(e.contains("unknown column 'blake3'"), "{e}");
        assert!(parse_header(b"%%%% md5,filename").is_err());
        assert!(parse_header(b"%%%% size,md5").is_err());
        assert!(parse_header(b"%%%% size,filename").is_err());
        assert!(parse_header(b"%%%% size,md5,md5,filename").is_err());
        assert!(parse_header(b"%%%% size,\xff,filename").is_err());
    }

    #[test]
    fn line_errors() {
        let cols = [a("md5")];
        assert!(parse_line(&cols, b"3,900150983cd24fb0d6963f7d28e17f72").is_err());
        assert!(parse_line(&cols, b"x,900150983cd24fb0d6963f7d28e17f72,n").is_err());
        assert!(parse_line(&cols, b"-1,900150983cd24fb0d6963f7d28e17f72,n").is_err());
        assert!(parse_line(&cols, b"3,90015098,n").is_err());
        assert!(parse_line(&cols, b"3,900150983cd24fb0d6963f7d28e17f72,").is_err());
        assert!(
            parse_line(&cols, b"99999999999999999999999,900150983cd24fb0d6963f7d28e17f72,n")
                .is_err()
        );
        let r = parse_line(&cols, b"3,900150983cd24fb0d6963f7d28e17f72,a, b ,c").unwrap();
        assert_eq!(r.name, b"a, b ,c");
    }

    #[test]
    fn parser_requires_magic_then_columns() {
        let mut p = Parser::new();
        assert!(p.line(b"3,abc,x").unwrap_err().contains("not a hashdeep file"));
        let mut p = Parser::new();
        p.line(MAGIC).unwrap();
        assert!(p.line(b"3,900150983cd24fb0d6963f7d28e17f72,x").is_err());
        p.line(b"%%%% size,md5,filename").unwrap();
        assert_eq!(p.line(b"## Invoked from: /").unwrap(), Line::Header);
        assert_eq!(p.line(b"").unwrap(), Line::Header);
        assert!(matches!(p.line(b"3,900150983cd24fb0d6963f7d28e17f72,x").unwrap(), Line::File(_)));
        assert!(p.line(b"%%%% something").is_err());
    }

    #[test]
    fn crlf_files_parse() {
        let mut p = Parser::new();
        p.line(b"%%%% HASHDEEP-1.0\r").unwrap();
        assert_eq!(p.line(b"%%%% size,sha1,filename\r").unwrap(), Line::Header);
        let Line::File(r) = p.line(b"3,a9993e364706816aba3e25717850c26c9cd0d89d,x y\r").unwrap()
        else {
            panic!("a file line")
        };
        assert_eq!((r.size, r.name.as_slice()), (3, b"x y".as_slice()));
        assert_eq!(r.digests, vec![(a("sha1"), a("sha1").digest(b"abc"))]);
    }
}
