//! Writing a `serde_json::Value` as compact JSON text: byte for byte what `serde_json::to_writer`
//! writes, faster on what the server writes most (stored objects on every write: short strings
//! that need no escape).
//!
//! `serde_json` writes each string through its serializer one byte at a time, looking every byte
//! up in its escape table, and each key and value through serde's serializer traits. Here a
//! string is searched for a byte that needs an escape eight bytes at a time (the body parser's
//! `special_byte`: the bytes that end a plain run when reading are those escaped when writing),
//! and copied whole when it has none, which is nearly always; the tree is walked directly. Escapes are `serde_json`'s: `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, and `\u00xx`
//! (lower-case hex) for the other control characters; nothing else (not `/`, not DEL, not
//! non-ASCII). Integers are written by `itoa`, as `serde_json` writes them; a float is left to
//! `serde_json` itself. `writes_what_serde_json_writes` and the reader's generated documents (`store::json`) compare
//! the two.

use serde_json::{Map, Number, Value};

use super::json::special_byte;

/// Appends `value` as compact JSON text to `out`.
pub fn write(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => write_number(n, out),
        Value::String(s) => write_str(s, out),
        Value::Array(items) => {
            out.push(b'[');
            let mut items = items.iter();
            if let Some(first) = items.next() {
                write(first, out);
                for item in items {
                    out.push(b',');
                    write(item, out);
                }
            }
            out.push(b']');
        }
        Value::Object(map) => {
            out.push(b'{');
            let mut first = true;
            for (key, value) in map {
                if !first {
                    out.push(b',');
                }
                first = false;
                write_str(key, out);
                out.push(b':');
                write(value, out);
            }
            out.push(b'}');
        }
    }
}

/// Appends the object `map` as [`write`] does, recording in `spans` where each member's value
/// sits in `out` (start and end, in the map's order). A member whose text `reused` gives is
/// copied from it instead of being written: the caller vouches that it is what [`write`] would
/// write for that member's value.
pub fn write_object<'a>(
    map: &Map<String, Value>,
    out: &mut Vec<u8>,
    reused: impl Fn(&str) -> Option<&'a [u8]>,
    spans: &mut Vec<(usize, usize)>,
) {
    out.push(b'{');
    for (i, (key, value)) in map.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_str(key, out);
        out.push(b':');
        let start = out.len();
        match reused(key) {
            Some(text) => out.extend_from_slice(text),
            None => write(value, out),
        }
        spans.push((start, out.len()));
    }
    out.push(b'}');
}

/// `value` as compact JSON text (the tests compare it with `serde_json::to_vec`).
#[cfg(test)]
pub fn to_vec(value: &Value, capacity: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(capacity);
    write(value, &mut out);
    out
}

fn write_number(n: &Number, out: &mut Vec<u8>) {
    if let Some(u) = n.as_u64() {
        out.extend_from_slice(itoa::Buffer::new().format(u).as_bytes());
    } else if let Some(i) = n.as_i64() {
        out.extend_from_slice(itoa::Buffer::new().format(i).as_bytes());
    } else if serde_json::to_writer(&mut *out, n).is_err() {
        // Writing into a `Vec` cannot fail; a number that could not be written would be
        // serde_json's `null` for a non-finite float, which a `Number` never holds.
        out.extend_from_slice(b"null");
    }
}

/// Appends `s` as a JSON string.
fn write_str(s: &str, out: &mut Vec<u8>) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    match special_byte(bytes) {
        None => out.extend_from_slice(bytes),
        Some(first) => write_escaped(bytes, first, out),
    }
    out.push(b'"');
}

/// The contents of a string that has bytes to escape, the first at `first`, escaped as
/// `serde_json` escapes them.
#[cold]
fn write_escaped(bytes: &[u8], first: usize, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut run = 0;
    let mut at = first;
    while let Some(&b) = bytes.get(at) {
        out.extend_from_slice(&bytes[run..at]);
        run = at + 1;
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            _ => out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 0xf)],
            ]),
        }
        at = bytes
            .get(run..)
            .and_then(special_byte)
            .map_or(bytes.len(), |next| run + next);
    }
    out.extend_from_slice(&bytes[run..]);
}

#[cfg(test)]
mod tests {
    use rstest::rstest;
    use serde_json::json;

    use super::*;

    fn same_as_serde_json(value: &Value) {
        let ours = to_vec(value, 0);
        let theirs = serde_json::to_vec(value).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&theirs)
        );
    }

    #[rstest]
    #[case::scalars(json!([null, true, false, 0, 1, u64::MAX, -1, i64::MIN, "", "a"]))]
    #[case::floats(json!([0.0, -0.0, 1.0, 0.1, 1e300, -2.5e-300, 123456789.125, f64::MAX, f64::MIN_POSITIVE]))]
    #[case::nesting(json!({"b": {"z": [], "a": {}}, "a": [[1], {"x": [null]}], "": ""}))]
    #[case::escapes(json!({"q\"k": "a\"b\\c/d\u{7f}e\u{0}f\u{1f}g\u{8}\u{c}\n\r\t"}))]
    #[case::unicode(json!({"żółw": "🐢 \u{2028}\u{2029} é"}))]
    fn writes_what_serde_json_writes(#[case] value: Value) {
        same_as_serde_json(&value);
    }

    /// An object written member by member is what [`write`] writes; the spans find each
    /// member's text, and a member taken from elsewhere is copied as it is.
    #[test]
    fn an_object_written_by_members_records_their_spans_and_copies_reused_ones() {
        let value = json!({"b": {"x": [1, "two"]}, "a": "s\"q", "c": null, "d": {}});
        let map = value.as_object().unwrap();
        let (mut out, mut spans) = (Vec::new(), Vec::new());
        write_object(map, &mut out, |_| None, &mut spans);
        assert_eq!(out, to_vec(&value, 0));
        assert_eq!(spans.len(), map.len());
        for ((_, member), (start, end)) in map.iter().zip(&spans) {
            assert_eq!(&out[*start..*end], &to_vec(member, 0)[..]);
        }
        let (mut copied, mut again) = (Vec::new(), Vec::new());
        let reused = |key: &str| (key == "b").then_some(&b"[\"kept\"]"[..]);
        write_object(map, &mut copied, reused, &mut again);
        assert_eq!(
            String::from_utf8(copied).unwrap(),
            r#"{"a":"s\"q","b":["kept"],"c":null,"d":{}}"#
        );
        let (mut empty, mut none) = (Vec::new(), Vec::new());
        write_object(&Map::new(), &mut empty, |_| None, &mut none);
        assert_eq!((&empty[..], none.len()), (&b"{}"[..], 0));
    }

    #[test]
    fn every_byte_and_every_string_length_is_written_as_serde_json_writes_it() {
        for b in 0u8..0x80 {
            let c = char::from(b);
            for n in [1, 7, 8, 15, 16, 17, 33, 64] {
                let mut s = "x".repeat(n);
                s.insert(n / 2, c);
                same_as_serde_json(&json!({ s.clone(): s }));
            }
        }
    }
}
