//! cfv's `.csv` checksum file (`cfv -C -t csv`): one line per file, `name,size,crc32,`,
//! with a trailing comma, the CRC32 in lowercase hex and no header. A name holding a comma
//! or a double quote is put in double quotes, its quotes doubled (`"a,""b"""` is `a,"b"`);
//! other names are written as they are. Names with a newline cannot be written (cfv
//! refuses them too: "filename invalid for this cftype").

use super::writer::{FileEntry, ManifestWriter, OutputFormat, Refusal, Unwritable, one_line};
use crate::algo::{self, Algorithm};
use crate::digest::Digest;

/// One line of a cfv `.csv` file.
#[derive(Clone, Debug)]
#[cfg_attr(test, derive(PartialEq, Eq))]
pub struct CsvRecord {
    /// The file name, unquoted.
    pub name: Vec<u8>,
    /// The size in bytes.
    pub size: u64,
    /// The CRC32.
    pub digest: Digest,
}

/// The algorithm of every `.csv` digest.
pub(crate) fn algorithm() -> &'static Algorithm {
    algo::lookup("crc32").expect("crc32 is registered")
}

/// Appends `name,size,crc32,` and a newline.
pub fn write(name: &[u8], size: u64, digest: &Digest, out: &mut Vec<u8>) {
    if name.iter().any(|&b| b == b',' || b == b'"') {
        out.push(b'"');
        for &b in name {
            if b == b'"' {
                out.push(b'"');
            }
            out.push(b);
        }
        out.push(b'"');
    } else {
        out.extend_from_slice(name);
    }
    out.push(b',');
    out.extend_from_slice(size.to_string().as_bytes());
    out.push(b',');
    out.extend_from_slice(digest.to_hex().as_bytes());
    out.extend_from_slice(b",\n");
}

/// Parses one line (a trailing CR is dropped). `None`: not a cfv `.csv` line. The name
/// field is quoted when it starts and ends with `"` (doubled quotes inside stand for one);
/// an unquoted name cannot hold a comma.
pub fn parse_line(line: &[u8]) -> Option<CsvRecord> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let body = line.strip_suffix(b",")?;
    let c2 = body.iter().rposition(|&b| b == b',')?;
    let crc = &body[c2 + 1..];
    if crc.len() != 8 {
        return None;
    }
    let digest = Digest::from_hex(crc)?;
    let rest = &body[..c2];
    let c1 = rest.iter().rposition(|&b| b == b',')?;
    let size_text = &rest[c1 + 1..];
    if size_text.is_empty() || size_text.len() > 20 || !size_text.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let size: u64 = std::str::from_utf8(size_text).ok()?.parse().ok()?;
    let field = &rest[..c1];
    let name = if field.len() >= 2 && field[0] == b'"' && field[field.len() - 1] == b'"' {
        let inner = &field[1..field.len() - 1];
        let mut name = Vec::with_capacity(inner.len());
        let mut i = 0;
        while i < inner.len() {
            name.push(inner[i]);
            i += if inner[i] == b'"' && inner.get(i + 1) == Some(&b'"') { 2 } else { 1 };
        }
        name
    } else if field.contains(&b',') {
        return None;
    } else {
        field.to_vec()
    };
    if name.is_empty() {
        return None;
    }
    Some(CsvRecord { name, size, digest })
}

/// The `cfv-csv` format's writer: CRC32 only, `name,size,crc32,` lines.
pub(crate) struct CsvWriter {
    algos: Vec<&'static Algorithm>,
}

impl CsvWriter {
    pub(crate) fn new(algos: Vec<&'static Algorithm>) -> Result<Self, Refusal> {
        if algos.len() != 1 || algos[0].name != algorithm().name {
            return Err(Refusal::Only(OutputFormat::CfvCsv, "crc32"));
        }
        Ok(CsvWriter { algos })
    }
}

impl ManifestWriter for CsvWriter {
    fn algorithms(&self) -> &[&'static Algorithm] {
        &self.algos
    }

    fn record(&mut self, file: &FileEntry, out: &mut Vec<u8>) -> Result<(), Unwritable> {
        one_line(file.name, "a cfv .csv file")?;
        write(file.name, file.size, &file.digests[0], out);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crc(data: &[u8]) -> Digest {
        algorithm().digest(data)
    }

    #[test]
    fn writes_cfvs_bytes() {
        // Lines recorded from `cfv -C -t csv` (cfv 3.2.0).
        let mut out = Vec::new();
        write(b"a.txt", 3, &crc(b"abc"), &mut out);
        write(b"empty", 0, &crc(b""), &mut out);
        write(b"quo\"te", 3, &crc(b"q\"q"), &mut out);
        write(b"with,comma.txt", 1, &crc(b"x"), &mut out);
        write(b"sp ace", 1, &crc(b"s"), &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "a.txt,3,352441c2,\nempty,0,00000000,\n\"quo\"\"te\",3,2ac2dcff,\n\
             \"with,comma.txt\",1,8cdc1683,\nsp ace,1,1b0ecf0b,\n"
        );
    }

    #[test]
    fn parses_quoted_and_plain_names() {
        let r = parse_line(b"\"quo\"\"te\",3,2ac2dcff,").unwrap();
        assert_eq!((r.name.as_slice(), r.size, r.digest), (b"quo\"te".as_slice(), 3, crc(b"q\"q")));
        let r = parse_line(b"\"with,comma.txt\",1,8cdc1683,\r").unwrap();
        assert_eq!(r.name, b"with,comma.txt");
        let r = parse_line(b"sub/sp ace,1,1B0ECF0B,").unwrap();
        assert_eq!(r.name, b"sub/sp ace");
        assert_eq!(parse_line(b"\"\"\"start\",1,1ad5be0d,").unwrap().name, b"\"start");
        assert_eq!(parse_line(b"a\"b,1,1ad5be0d,").unwrap().name, b"a\"b");
    }

    #[test]
    fn refuses_what_is_not_a_csv_line() {
        for bad in [
            &b"a.txt,3,352441c2"[..],
            b"a.txt,3,352441c,",
            b"a.txt,x,352441c2,",
            b"a.txt,-3,352441c2,",
            b"a,b,3,352441c2,",
            b",3,352441c2,",
            b"\"\",3,352441c2,",
            b"3,352441c2,",
            b"a.txt,99999999999999999999999,352441c2,",
            b"352441c2  a.txt",
            b"",
        ] {
            assert_eq!(parse_line(bad), None, "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn round_trip() {
        for name in [&b"x"[..], b"\"", b"\"\"", b"a\"\"\"b", b",", b"\"a\"", b" lead", b"trail "] {
            let mut out = Vec::new();
            write(name, 7, &crc(name), &mut out);
            out.pop();
            let r = parse_line(&out).unwrap();
            assert_eq!(r, CsvRecord { name: name.to_vec(), size: 7, digest: crc(name) });
        }
    }
}
