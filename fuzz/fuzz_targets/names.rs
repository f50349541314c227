//! Name escaping and diagnostic quoting on arbitrary bytes: escape/unescape round-trips,
//! and quoting never panics.
#![no_main]

use fixity::pathtext::{escape_into, quote, unescape};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut esc = Vec::new();
    escape_into(data, &mut esc);
    assert_eq!(unescape(&esc).as_deref(), Some(data));
    let _ = unescape(data);
    let _ = quote(data, true);
    let _ = quote(data, false);
});
