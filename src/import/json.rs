//! A small JSON reader for other tools' index files (chkbit's). Strings come back as
//! bytes: a lone surrogate escape (`\udcff`, which Python's `surrogateescape` writes for
//! a byte of a name that is not UTF-8) is turned back into the byte it stands for, so a
//! non-UTF-8 file name round-trips. Objects keep their members in order, each with the
//! span of its value's text (chkbit digests the text of its `idx` member).

/// A JSON value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    Null,
    Bool(bool),
    /// A number, as written.
    Number(String),
    String(Vec<u8>),
    Array(Vec<Value>),
    /// Members in order: (name, value, the byte range of the value's text).
    Object(Vec<(Vec<u8>, Value, std::ops::Range<usize>)>),
}

impl Value {
    /// The member `name` of an object.
    pub(crate) fn get(&self, name: &str) -> Option<&Value> {
        self.member(name).map(|(v, _)| v)
    }

    /// The member `name` of an object, with the range of its text.
    pub(crate) fn member(&self, name: &str) -> Option<(&Value, std::ops::Range<usize>)> {
        match self {
            Value::Object(m) => {
                m.iter().find(|(k, _, _)| k == name.as_bytes()).map(|(_, v, r)| (v, r.clone()))
            }
            _ => None,
        }
    }

    /// A string's bytes.
    pub(crate) fn bytes(&self) -> Option<&[u8]> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// A number that is an integer (a fraction is cut: `1.5e3` is not one).
    pub(crate) fn integer(&self) -> Option<i128> {
        match self {
            Value::Number(n) => n.parse().ok(),
            _ => None,
        }
    }
}

/// Parses one JSON document (surrounding white space allowed).
pub(crate) fn parse(text: &[u8]) -> Result<Value, String> {
    let mut p = Parser { s: text, i: 0 };
    let v = p.value(0)?;
    p.space();
    if p.i != text.len() {
        return Err(p.error("text after the value"));
    }
    Ok(v)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

/// Nesting deeper than this is refused (no index nests more than a few levels).
const MAX_DEPTH: usize = 64;

impl Parser<'_> {
    fn error(&self, what: &str) -> String {
        format!("bad JSON at byte {}: {what}", self.i)
    }

    fn space(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn eat(&mut self, b: u8) -> bool {
        self.space();
        if self.s.get(self.i) == Some(&b) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        self.space();
        match self.s.get(self.i) {
            Some(b'{') => {
                self.i += 1;
                let mut members = Vec::new();
                if self.eat(b'}') {
                    return Ok(Value::Object(members));
                }
                loop {
                    self.space();
                    if self.s.get(self.i) != Some(&b'"') {
                        return Err(self.error("expected a member name"));
                    }
                    let name = self.string()?;
                    if !self.eat(b':') {
                        return Err(self.error("expected ':'"));
                    }
                    self.space();
                    let start = self.i;
                    let v = self.value(depth + 1)?;
                    members.push((name, v, start..self.i));
                    if self.eat(b',') {
                        continue;
                    }
                    if self.eat(b'}') {
                        return Ok(Value::Object(members));
                    }
                    return Err(self.error("expected ',' or '}'"));
                }
            }
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                if self.eat(b']') {
                    return Ok(Value::Array(items));
                }
                loop {
                    items.push(self.value(depth + 1)?);
                    if self.eat(b',') {
                        continue;
                    }
                    if self.eat(b']') {
                        return Ok(Value::Array(items));
                    }
                    return Err(self.error("expected ',' or ']'"));
                }
            }
            Some(b'"') => Ok(Value::String(self.string()?)),
            Some(b't') => self.word(b"true", Value::Bool(true)),
            Some(b'f') => self.word(b"false", Value::Bool(false)),
            Some(b'n') => self.word(b"null", Value::Null),
            Some(b'-' | b'0'..=b'9') => {
                let start = self.i;
                while self.i < self.s.len()
                    && matches!(self.s[self.i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                {
                    self.i += 1;
                }
                let text = std::str::from_utf8(&self.s[start..self.i]).expect("ASCII");
                if !is_number(text.as_bytes()) {
                    return Err(self.error("not a number"));
                }
                Ok(Value::Number(text.to_string()))
            }
            _ => Err(self.error("expected a value")),
        }
    }

    fn word(&mut self, w: &[u8], v: Value) -> Result<Value, String> {
        if self.s[self.i..].starts_with(w) {
            self.i += w.len();
            Ok(v)
        } else {
            Err(self.error("expected a value"))
        }
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let h = self.s.get(self.i..self.i + 4).ok_or_else(|| self.error("short \\u escape"))?;
        let text = std::str::from_utf8(h).map_err(|_| self.error("bad \\u escape"))?;
        let n = u32::from_str_radix(text, 16).map_err(|_| self.error("bad \\u escape"))?;
        self.i += 4;
        Ok(n)
    }

    /// A string at `self.i` (its opening quote), unescaped into bytes.
    fn string(&mut self) -> Result<Vec<u8>, String> {
        self.i += 1;
        let mut out = Vec::new();
        loop {
            let Some(&b) = self.s.get(self.i) else {
                return Err(self.error("unterminated string"));
            };
            self.i += 1;
            match b {
                b'"' => return Ok(out),
                b'\\' => {
                    let Some(&e) = self.s.get(self.i) else {
                        return Err(self.error("unterminated escape"));
                    };
                    self.i += 1;
                    match e {
                        b'"' | b'\\' | b'/' => out.push(e),
                        b'b' => out.push(8),
                        b'f' => out.push(12),
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            self.code_point(hi, &mut out)?;
                        }
                        _ => return Err(self.error("unknown escape")),
                    }
                }
                _ => out.push(b),
            }
        }
    }

    /// Appends the code point of a `\u` escape (`first`, and its low surrogate if it is a
    /// high one and one follows); a lone surrogate U+DC80..U+DCFF is the byte 0x80..0xFF
    /// that Python's `surrogateescape` stood it for.
    fn code_point(&mut self, first: u32, out: &mut Vec<u8>) -> Result<(), String> {
        let c = if (0xD800..0xDC00).contains(&first) && self.s[self.i..].starts_with(b"\\u") {
            let save = self.i;
            self.i += 2;
            let low = self.hex4()?;
            if (0xDC00..0xE000).contains(&low) {
                0x10000 + ((first - 0xD800) << 10) + (low - 0xDC00)
            } else {
                self.i = save;
                first
            }
        } else {
            first
        };
        match char::from_u32(c) {
            Some(ch) => out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes()),
            None if (0xDC80..0xDD00).contains(&c) => out.push((c - 0xDC00) as u8),
            None => return Err(self.error("a lone surrogate that stands for no byte")),
        }
        Ok(())
    }
}

/// Whether `t` is a JSON number (RFC 8259): `-? (0 | [1-9][0-9]*) (. [0-9]+)?
/// ([eE] [+-]? [0-9]+)?`.
fn is_number(t: &[u8]) -> bool {
    let digits = |i: usize| t[i..].iter().take_while(|b| b.is_ascii_digit()).count();
    let mut i = usize::from(t.first() == Some(&b'-'));
    match t.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i += digits(i),
        _ => return false,
    }
    if t.get(i) == Some(&b'.') {
        let n = digits(i + 1);
        if n == 0 {
            return false;
        }
        i += 1 + n;
    }
    if matches!(t.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(t.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let n = digits(i);
        if n == 0 {
            return false;
        }
        i += n;
    }
    i == t.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_json_numbers() {
        for good in ["0", "-0", "12", "-1.5", "1e9", "2.5E-3", "1e+2"] {
            assert!(is_number(good.as_bytes()), "{good}");
        }
        for bad in ["-", "01", "1.", ".5", "1e", "1e+", "--1", "1-2", "+1", ""] {
            assert!(!is_number(bad.as_bytes()), "{bad}");
        }
    }

    #[test]
    fn parses_objects_with_spans_and_byte_strings() {
        let text = br#" {"v": 2, "idx": {"a\nb": {"mod": 1700000000123, "h": "ab"}}, "x": [true, null, -1.5e3]} "#;
        let v = parse(text).unwrap();
        assert_eq!(v.get("v").and_then(Value::integer), Some(2));
        let (idx, span) = v.member("idx").unwrap();
        assert_eq!(&text[span], br#"{"a\nb": {"mod": 1700000000123, "h": "ab"}}"#);
        let Value::Object(files) = idx else { panic!() };
        assert_eq!(files[0].0, b"a\nb");
        assert_eq!(files[0].1.get("mod").and_then(Value::integer), Some(1_700_000_000_123));
        assert_eq!(
            v.get("x"),
            Some(&Value::Array(vec![
                Value::Bool(true),
                Value::Null,
                Value::Number("-1.5e3".into())
            ]))
        );
    }

    /// Ours as serde_json's value: strings must be UTF-8, numbers parse the same.
    fn as_serde(v: &Value) -> serde_json::Value {
        match v {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Number(n) => serde_json::from_str(n).expect("a JSON number"),
            Value::String(s) => serde_json::Value::String(String::from_utf8(s.clone()).unwrap()),
            Value::Array(a) => serde_json::Value::Array(a.iter().map(as_serde).collect()),
            Value::Object(m) => serde_json::Value::Object(
                m.iter()
                    .map(|(k, v, _)| (String::from_utf8(k.clone()).unwrap(), as_serde(v)))
                    .collect(),
            ),
        }
    }

    fn any_json() -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::Bool),
            any::<i64>().prop_map(serde_json::Value::from),
            // Floats serde_json itself reads back exactly (its reader rounds some).
            any::<f64>()
                .prop_filter("exact in serde_json", |f| {
                    f.is_finite()
                        && serde_json::from_str::<f64>(&serde_json::to_string(f).unwrap())
                            .is_ok_and(|g| g == *f)
                })
                .prop_map(serde_json::Value::from),
            ".*".prop_map(serde_json::Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
                proptest::collection::btree_map(".*", inner, 0..6)
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// Differential: whatever serde_json writes (compact or pretty, any text, any
        /// nesting the indexes use), this reader reads as the same value, and each
        /// member's span is the text serde_json wrote for it.
        #[test]
        fn reads_what_serde_json_writes(v in any_json(), pretty in proptest::bool::ANY) {
            let text = if pretty { serde_json::to_vec_pretty(&v) } else { serde_json::to_vec(&v) }.unwrap();
            let ours = parse(&text).unwrap();
            proptest::prop_assert_eq!(as_serde(&ours), v);
            if let Value::Object(m) = &ours {
                for (_, member, span) in m {
                    let from_span: serde_json::Value = serde_json::from_slice(&text[span.clone()]).unwrap();
                    proptest::prop_assert_eq!(from_span, as_serde(member));
                }
            }
        }

        /// Arbitrary bytes never panic, and UTF-8 text serde_json refuses this reader
        /// refuses too (but for `\\u` escapes: lone surrogates read as the bytes they stand
        /// for).
        #[test]
        fn refuses_what_is_not_json(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..64)) {
            let ours = parse(&bytes);
            let text = std::str::from_utf8(&bytes).is_ok() && !bytes.windows(2).any(|w| w == b"\\u");
            if text && serde_json::from_slice::<serde_json::Value>(&bytes).is_err() {
                proptest::prop_assert!(ours.is_err(), "{:?}", String::from_utf8_lossy(&bytes));
            }
        }
    }

    #[test]
    fn escapes_decode_to_the_bytes_of_the_name() {
        // Python's json.dumps of a surrogateescaped name, and of a non-BMP character.
        let v = parse(br#""caf\u00e9 \udcff \ud83d\ude00 \/""#).unwrap();
        assert_eq!(v.bytes().unwrap(), b"caf\xc3\xa9 \xff \xf0\x9f\x98\x80 /");
        assert!(parse(br#""\ud800""#).is_err(), "a lone high surrogate stands for no byte");
        for bad in [&b"{"[..], b"[1,]", b"\"x", b"{\"a\" 1}", b"1 2", b"tru"] {
            assert!(parse(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
