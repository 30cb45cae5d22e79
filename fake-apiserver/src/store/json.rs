//! Reading JSON into a `serde_json::Value`, faster than `serde_json::from_slice` on what the
//! server reads most (request bodies and stored objects: well-formed objects of short strings and
//! small integers), and exactly as `serde_json` reads anything.
//!
//! [`from_slice`] first tries a direct parser that validates the input's UTF-8 once (where
//! `serde_json` checks every string on its own), copies strings without escapes in one go and
//! builds the tree without going through serde's visitors. It accepts only what it is sure to
//! read as `serde_json` does: plain JSON text, strings with the standard escapes, and
//! non-negative integers that fit in a `u64`; any other number is read by `serde_json` itself
//! (its float and negative-number rules, `-0` included, stay its own). Anything else — a syntax
//! error, a lone surrogate, a control character in a string, nesting deeper than
//! [`MAX_DEPTH`] — makes it give up, and `serde_json` reads the whole input again: its value or
//! its error (message and position) is the answer. So the fast path can change the time a read
//! takes, never its result; `the_fast_path_reads_as_serde_json_does` compares the two on
//! generated and mutated documents.

use serde_json::{Map, Number, Value};

/// The nesting the direct parser handles before it leaves the input to `serde_json` (whose
/// recursion limit, 128, then decides).
pub const MAX_DEPTH: usize = 100;

/// `serde_json::from_slice::<Value>`, by the direct parser where it can.
pub fn from_slice(bytes: &[u8]) -> Result<Value, serde_json::Error> {
    match parse(bytes) {
        Some(value) => Ok(value),
        None => serde_json::from_slice(bytes),
    }
}

/// The direct parser: `None` wherever it does not read the input exactly as `serde_json` would.
fn parse(bytes: &[u8]) -> Option<Value> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut reader = Reader {
        text,
        bytes: text.as_bytes(),
        at: 0,
        spare_members: Vec::new(),
        spare_items: Vec::new(),
    };
    reader.skip_whitespace();
    let mut value = Value::Null;
    reader.value_into(0, &mut value)?;
    reader.skip_whitespace();
    (reader.at == reader.bytes.len()).then_some(value)
}

/// Where the first byte of `bytes` that ends a run of plain string contents is: a quote, a
/// backslash or a control character (`None`: there is none; also the bytes a JSON writer
/// escapes, see `json_writer`). Eight bytes at a time: each word is
/// tested for the three at once (the lowest flagged byte of each test is exact, so the lowest of
/// all is the first special byte), then the bytes left over one by one.
pub(crate) fn special_byte(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |w: u64| w.wrapping_sub(ONES) & !w & HIGHS;
    let mut chunks = bytes.chunks_exact(8);
    let mut at = 0;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let w = u64::from_le_bytes(word);
        let flagged = zero_byte(w ^ (ONES * u64::from(b'"')))
            | zero_byte(w ^ (ONES * u64::from(b'\\')))
            | (w.wrapping_sub(ONES * 0x20) & !w & HIGHS);
        if flagged != 0 {
            return Some(at + (flagged.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .map(|i| at + i)
}

/// What a member's slot holds until it is read: copied from constants (from read-only memory,
/// not from stores just made; see [`Reader`]).
const EMPTY_MEMBER: (String, Value) = (String::new(), Value::Null);
const EMPTY_STRING: Value = Value::String(String::new());
const NULL: Value = Value::Null;

/// The reader builds every value where it ends up (a member's or an item's slot, or the
/// caller's): a value handed back by return would be stored piece by piece (its tag byte, then
/// its fields) and copied on at once in wider loads, which the CPU cannot forward from the
/// stores that wrote it — a stall per member, a quarter of a parse in `perf annotate`.
struct Reader<'a> {
    /// The input, known to be UTF-8.
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    /// Member buffers of the objects being read (one is taken per open object and given back
    /// empty), kept from object to object so that each map is allocated once, at its size.
    spare_members: Vec<Vec<(String, Value)>>,
    /// The same for arrays' items.
    spare_items: Vec<Vec<Value>>,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.at += 1)
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.at.checked_add(word.len())?;
        (self.bytes.get(self.at..end)? == word).then(|| self.at = end)
    }

    /// Reads the value at the reader into `out`.
    fn value_into(&mut self, depth: usize, out: &mut Value) -> Option<()> {
        match self.peek()? {
            b'{' => self.object_into(depth + 1, out)?,
            b'[' => self.array_into(depth + 1, out)?,
            b'"' => self.string_value_into(out)?,
            b't' => {
                self.literal(b"true")?;
                *out = Value::Bool(true);
            }
            b'f' => {
                self.literal(b"false")?;
                *out = Value::Bool(false);
            }
            b'n' => {
                self.literal(b"null")?;
                *out = Value::Null;
            }
            b'-' | b'0'..=b'9' => self.number_into(out)?,
            _ => return None,
        }
        Some(())
    }

    fn object_into(&mut self, depth: usize, out: &mut Value) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.at += 1;
        self.skip_whitespace();
        if self.peek()? == b'}' {
            self.at += 1;
            *out = Value::Object(Map::new());
            return Some(());
        }
        let mut members = self.spare_members.pop().unwrap_or_default();
        let read = self.members_into(depth, &mut members);
        if read.is_some() {
            // One allocation of the right size, sorted once (a repeated key keeps its last
            // value, as `serde_json`'s map does).
            *out = Value::Object(Map::new());
            if let Value::Object(map) = out {
                *map = members.drain(..).collect();
            }
        }
        members.clear();
        self.spare_members.push(members);
        read
    }

    /// The members of an object after its `{`, up to and including its `}`.
    fn members_into(&mut self, depth: usize, members: &mut Vec<(String, Value)>) -> Option<()> {
        loop {
            self.skip_whitespace();
            if self.peek()? != b'"' {
                return None;
            }
            members.push(EMPTY_MEMBER);
            let (key, slot) = members.last_mut()?;
            self.string_into(key)?;
            self.skip_whitespace();
            self.expect(b':')?;
            self.skip_whitespace();
            // A string member is read here, not through `value_into`: most members are strings.
            match self.peek()? {
                b'"' => self.string_value_into(slot)?,
                _ => self.value_into(depth, slot)?,
            }
            self.skip_whitespace();
            match self.peek()? {
                b',' => self.at += 1,
                b'}' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    fn array_into(&mut self, depth: usize, out: &mut Value) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.at += 1;
        self.skip_whitespace();
        if self.peek()? == b']' {
            self.at += 1;
            *out = Value::Array(Vec::new());
            return Some(());
        }
        let mut items = self.spare_items.pop().unwrap_or_default();
        let read = self.items_into(depth, &mut items);
        if read.is_some() {
            *out = Value::Array(Vec::new());
            if let Value::Array(array) = out {
                array.reserve_exact(items.len());
                array.append(&mut items);
            }
        }
        items.clear();
        self.spare_items.push(items);
        read
    }

    /// The items of an array after its `[`, up to and including its `]`.
    fn items_into(&mut self, depth: usize, items: &mut Vec<Value>) -> Option<()> {
        loop {
            self.skip_whitespace();
            items.push(NULL);
            self.value_into(depth, items.last_mut()?)?;
            self.skip_whitespace();
            match self.peek()? {
                b',' => self.at += 1,
                b']' => {
                    self.at += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// A string value at the opening quote, into `out`: the string is built in its slot (see
    /// [`Reader`]).
    #[inline(always)]
    fn string_value_into(&mut self, out: &mut Value) -> Option<()> {
        *out = EMPTY_STRING;
        match out {
            Value::String(s) => self.string_into(s),
            _ => None,
        }
    }

    /// A string at the opening quote, written into `out`. The input is valid UTF-8 and the
    /// quotes and escapes are ASCII, so a run without escapes is a `str` slice as it is (copied
    /// by an inlined `to_owned`: through an out-of-line call the new `String` would come back
    /// through memory, see [`Reader`]). A string with escapes goes on in
    /// [`Reader::escaped_string`].
    #[inline(always)]
    fn string_into(&mut self, out: &mut String) -> Option<()> {
        self.at += 1;
        let start = self.at;
        self.at += special_byte(self.bytes.get(start..)?)?;
        match *self.bytes.get(self.at)? {
            b'"' => {
                *out = self.text.get(start..self.at)?.to_owned();
                self.at += 1;
                Some(())
            }
            b'\\' => {
                *out = self.escaped_string(start)?;
                Some(())
            }
            _ => None,
        }
    }

    /// The rest of a string that began at `start` and has an escape where the reader is.
    #[inline(never)]
    fn escaped_string(&mut self, start: usize) -> Option<String> {
        let mut out = String::with_capacity(self.at - start + 16);
        out.push_str(self.text.get(start..self.at)?);
        loop {
            let run = self.at;
            self.at += special_byte(self.bytes.get(run..)?)?;
            if *self.bytes.get(self.at)? < 0x20 {
                return None;
            }
            out.push_str(self.text.get(run..self.at)?);
            if self.peek()? == b'"' {
                self.at += 1;
                return Some(out);
            }
            self.at += 1;
            let escaped = self.peek()?;
            self.at += 1;
            match escaped {
                b'"' => out.push('"'),
                b'\\' => out.push('\\'),
                b'/' => out.push('/'),
                b'b' => out.push('\u{8}'),
                b'f' => out.push('\u{c}'),
                b'n' => out.push('\n'),
                b'r' => out.push('\r'),
                b't' => out.push('\t'),
                b'u' => out.push(self.unicode_escape()?),
                _ => return None,
            }
        }
    }

    /// The character of a `\u` escape (after the `u`), a surrogate pair read as one; a lone
    /// surrogate is left to `serde_json` (which refuses it).
    fn unicode_escape(&mut self) -> Option<char> {
        let first = self.hex4()?;
        match first {
            0xD800..=0xDBFF => {
                self.expect(b'\\')?;
                self.expect(b'u')?;
                let second = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return None;
                }
                let code = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
                char::from_u32(code)
            }
            0xDC00..=0xDFFF => None,
            _ => char::from_u32(first),
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.text.get(self.at..self.at.checked_add(4)?)?;
        if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        self.at += 4;
        u32::from_str_radix(digits, 16).ok()
    }

    /// A number: a non-negative integer without leading zeros that fits in a `u64` directly,
    /// anything else (sign, fraction, exponent, overflow) as `serde_json` reads the token.
    fn number_into(&mut self, out: &mut Value) -> Option<()> {
        let start = self.at;
        let mut plain = true;
        if self.peek()? == b'-' {
            plain = false;
            self.at += 1;
        }
        let digits = self.at;
        while let Some(b'0'..=b'9') = self.peek() {
            self.at += 1;
        }
        let integer = &self.bytes[digits..self.at];
        if integer.is_empty() || (integer.len() > 1 && integer[0] == b'0') {
            return None;
        }
        if self.peek() == Some(b'.') {
            plain = false;
            self.at += 1;
            let fraction = self.at;
            while let Some(b'0'..=b'9') = self.peek() {
                self.at += 1;
            }
            if self.at == fraction {
                return None;
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            plain = false;
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            let exponent = self.at;
            while let Some(b'0'..=b'9') = self.peek() {
                self.at += 1;
            }
            if self.at == exponent {
                return None;
            }
        }
        if plain {
            let mut n: u64 = 0;
            for &d in integer {
                n = n.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
            }
            *out = Value::Number(Number::from(n));
            return Some(());
        }
        *out = serde_json::from_str(self.text.get(start..self.at)?).ok()?;
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    /// The direct parser's answer, if it gives one, is `serde_json`'s, Number kinds included.
    fn agrees(input: &[u8]) {
        let ours = parse(input);
        let theirs = serde_json::from_slice::<Value>(input);
        if let Some(ours) = ours {
            match theirs {
                Ok(theirs) => assert_eq!(ours, theirs, "{}", String::from_utf8_lossy(input)),
                Err(e) => panic!(
                    "the fast path read what serde_json refuses ({e}): {}",
                    String::from_utf8_lossy(input)
                ),
            }
        }
        // And `from_slice` is `serde_json` either way (error messages included).
        match (from_slice(input), serde_json::from_slice::<Value>(input)) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a, b);
                assert_eq!(
                    super::super::json_writer::to_vec(&a, 0),
                    serde_json::to_vec(&b).unwrap()
                );
            }
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            (a, b) => panic!("{a:?} vs {b:?}"),
        }
    }

    #[rstest]
    #[case::object(r#"{"a": 1, "b": [true, false, null], "c": {"d": "e"}}"#, true)]
    #[case::whitespace(" \n\t{ \"a\" : [ 1 , 2 ] } \r\n", true)]
    #[case::escapes(r#"{"s": "a\"b\\c\/d\be\ff\ng\rh\ti\u00e9\ud83d\ude00"}"#, true)]
    #[case::unicode_raw(r#"{"s": "żółw 🐢"}"#, true)]
    #[case::repeated_key(r#"{"a": 1, "a": 2}"#, true)]
    #[case::big_integer("18446744073709551615", true)]
    #[case::overflow("18446744073709551616", true)]
    #[case::negative("-5", true)]
    #[case::negative_zero("-0", true)]
    #[case::float("1.5e3", true)]
    #[case::float_zero("0.0", true)]
    #[case::leading_zero("01", false)]
    #[case::trailing_comma(r#"{"a": 1,}"#, false)]
    #[case::trailing_text(r#"{"a": 1} x"#, false)]
    #[case::lone_surrogate(r#""\ud800""#, false)]
    #[case::control_char("\"a\u{1}b\"", false)]
    #[case::bad_escape(r#""\x""#, false)]
    #[case::unclosed(r#"{"a": "#, false)]
    #[case::empty("", false)]
    #[case::bare_minus("-", false)]
    #[case::dot("1.", false)]
    #[case::exponent("1e", false)]
    fn reads_as_serde_json(#[case] input: &str, #[case] valid: bool) {
        agrees(input.as_bytes());
        assert_eq!(from_slice(input.as_bytes()).is_ok(), valid);
    }

    #[test]
    fn invalid_utf8_and_deep_nesting_are_left_to_serde_json() {
        agrees(b"{\"a\": \"\xff\"}");
        let deep = format!("{}{}", "[".repeat(130), "]".repeat(130));
        assert!(parse(deep.as_bytes()).is_none());
        agrees(deep.as_bytes());
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse(ok.as_bytes()).is_some());
    }

    #[test]
    fn special_bytes_are_found_where_a_byte_by_byte_search_finds_them() {
        let naive = |bytes: &[u8]| {
            bytes
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        };
        // Every byte value at every place of strings around the word size, after plain ASCII,
        // non-ASCII or other special bytes.
        for len in 0..20usize {
            for fill in [b'a', 0xc3, b' ', 0x7f, 0x21, 0x5d, 0x1f, b'"'] {
                for at in 0..len {
                    for b in 0..=255u8 {
                        let mut bytes = vec![fill; len];
                        bytes[at] = b;
                        assert_eq!(special_byte(&bytes), naive(&bytes), "{bytes:?}");
                    }
                }
            }
        }
    }

    /// A small deterministic generator of JSON documents (and of mutations of them, most of
    /// which are not JSON): whatever either parser makes of them, they agree; and what they
    /// read is written back by `json_writer` as `serde_json` writes it.
    #[test]
    fn the_fast_path_reads_as_serde_json_does() {
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        const ATOMS: &[&str] = &[
            "0",
            "7",
            "-1",
            "-0",
            "1.25",
            "3e2",
            "1E-2",
            "18446744073709551615",
            "99999999999999999999",
            "true",
            "false",
            "null",
            "\"\"",
            "\"plain\"",
            "\"tab\\there\"",
            "\"\\u0041\\u00e9\"",
            "\"\\ud83d\\ude00\"",
            "\"żółw\"",
        ];
        fn build(next: &mut dyn FnMut(u64) -> u64, depth: u32, out: &mut String) {
            match if depth > 3 { 0 } else { next(4) } {
                0 | 1 => out.push_str(ATOMS[next(ATOMS.len() as u64) as usize]),
                2 => {
                    out.push('[');
                    for i in 0..next(4) {
                        if i > 0 {
                            out.push_str(", ");
                        }
                        build(next, depth + 1, out);
                    }
                    out.push(']');
                }
                _ => {
                    out.push('{');
                    for i in 0..next(4) {
                        if i > 0 {
                            out.push(',');
                        }
                        out.push_str(&format!("\"k{}\": ", next(3)));
                        build(next, depth + 1, out);
                    }
                    out.push('}');
                }
            }
        }
        for _ in 0..3000 {
            let mut doc = String::new();
            build(&mut next, 0, &mut doc);
            agrees(doc.as_bytes());
            let mut bytes = doc.into_bytes();
            if !bytes.is_empty() {
                let at = next(bytes.len() as u64) as usize;
                const NOISE: &[u8] = b"{}[],:\"\\-.0e \x01\xff";
                bytes[at] = NOISE[next(NOISE.len() as u64) as usize];
                agrees(&bytes);
                bytes.truncate(at);
                agrees(&bytes);
            }
        }
    }
}
