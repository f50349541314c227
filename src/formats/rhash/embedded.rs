//! The CRC32 embedded in file names: `rhash -k` finds it, `rhash -e` puts it there.

use super::file_name;

/// The CRC32 embedded in a file name, as `rhash -k` finds it: the last `[XXXXXXXX]` or
/// `(XXXXXXXX)` (eight hex digits, either case) in the name's last component.
pub fn embedded_crc(path: &[u8]) -> Option<u32> {
    let name = file_name(path);
    (0..name.len().saturating_sub(9)).rev().find_map(|i| {
        let w = &name[i..i + 10];
        let closing = match w[0] {
            b'[' => b']',
            b'(' => b')',
            _ => return None,
        };
        if w[9] != closing || !w[1..9].iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        u32::from_str_radix(std::str::from_utf8(&w[1..9]).ok()?, 16).ok()
    })
}

/// The name `rhash -e` renames a file to: ` [CRC32]` (uppercase hex) inserted before the
/// last extension of the last component, or appended when it has none. `None` when the
/// name already carries a CRC32.
pub fn embed_crc(path: &[u8], crc: u32, delimiter: &[u8]) -> Option<Vec<u8>> {
    if embedded_crc(path).is_some() {
        return None;
    }
    let start = path.len() - file_name(path).len();
    let name = &path[start..];
    let dot =
        name.iter().rposition(|&b| b == b'.').filter(|&i| i > 0).map_or(path.len(), |i| start + i);
    let mut out = path[..dot].to_vec();
    out.extend_from_slice(delimiter);
    out.extend_from_slice(format!("[{crc:08X}]").as_bytes());
    out.extend_from_slice(&path[dot..]);
    Some(out)
}
