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
                write_key(key, out);
                write(value, out);
            }
            out.push(b'}');
        }
    }
}

/// Where the text of one map of a written object sits in the written bytes, by the map's
/// identity ([`Map::entries_id`]: every clone sharing the map's entries has it); or, with the
/// identity [`NULL_CUT`], the bytes of one `null` member (and one comma beside it) that a
/// writer leaving out `null` members would not write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MapText {
    /// The map's identity ([`NULL_CUT`] for a cut).
    pub id: usize,
    /// Where its text starts in the bytes.
    pub start: usize,
    /// Where it ends.
    pub end: usize,
}

/// The identity of a [`MapText`] that is not a map's text but a `null` member's cut: no map
/// has it (a map's identity is the address of its entries). A typed client (a `k8s-openapi`
/// struct, a Go struct with `omitempty`) sends a stored object back without the members the
/// server stores as `null` (a pod condition's `lastProbeTime`); a map's text without the cuts
/// inside it is what such a client writes of it.
pub const NULL_CUT: usize = 0;

/// The texts of the maps of a written object, sorted by identity, the `null` members' cuts
/// first in the order of the bytes ([`write_sharing`]).
pub type MapTexts = std::sync::Arc<[MapText]>;

/// A written version an object shares maps with: its bytes and its maps' texts in them. The
/// maps must be alive (the version's parse held) for as long as their identities are looked
/// up: a live map's identity is no other map's.
#[derive(Debug, Clone, Copy)]
pub struct Written<'a> {
    /// The version's bytes.
    pub bytes: &'a [u8],
    /// Its maps' texts ([`write_sharing`]'s record of it).
    pub texts: &'a [MapText],
}

impl<'a> Written<'a> {
    fn text_of(&self, id: usize) -> Option<&MapText> {
        if id == NULL_CUT {
            return None;
        }
        let at = self.texts.binary_search_by_key(&id, |t| t.id).ok()?;
        self.texts.get(at)
    }

    /// The texts recorded inside `old` (one of its texts; itself included), as they sit when
    /// `old`'s text is copied to `start` of other bytes.
    pub(crate) fn texts_moved(
        &self,
        old: MapText,
        start: usize,
    ) -> impl Iterator<Item = MapText> + '_ {
        self.texts
            .iter()
            .filter(move |t| t.start >= old.start && t.end <= old.end)
            .map(move |t| MapText {
                id: t.id,
                start: t.start - old.start + start,
                end: t.end - old.start + start,
            })
    }

    /// The record of `map`'s text in the version's bytes, when it is one of the version's
    /// recorded maps.
    pub(crate) fn record_of(&self, map: &Map<String, Value>) -> Option<MapText> {
        self.text_of(map.entries_id()?).copied()
    }

    /// The text `map` was written as in the version's bytes, when it is one of the version's
    /// maps and was recorded (at least [`MIN_RECORDED`] bytes): exactly what writing `map`
    /// gives.
    pub fn text_of_map(&self, map: &Map<String, Value>) -> Option<&'a [u8]> {
        let text = self.text_of(map.entries_id()?)?;
        self.bytes.get(text.start..text.end)
    }

    /// [`Written::text_of_map`] as a writer that leaves out `null` members writes it: the
    /// pieces of the text between the cuts of the `null` members inside it, in order; `None`
    /// when it holds no `null` member (the text is then the only way it is written).
    pub fn pieces_without_nulls(
        &self,
        map: &Map<String, Value>,
    ) -> Option<impl Iterator<Item = &'a [u8]> + 'a> {
        let text = *self.text_of(map.entries_id()?)?;
        let texts: &'a [MapText] = self.texts;
        let bytes: &'a [u8] = self.bytes;
        // The cuts come first, in the order of the bytes.
        let cuts = &texts[..texts.partition_point(|t| t.id == NULL_CUT)];
        let first = cuts.partition_point(|c| c.start < text.start);
        let inside = &cuts[first..first + cuts[first..].partition_point(|c| c.end <= text.end)];
        if inside.is_empty() {
            return None;
        }
        let mut from = text.start;
        let pieces = inside
            .iter()
            .map(|c| (c.start, c.end))
            .chain(std::iter::once((text.end, text.end)))
            .map(move |(start, end)| {
                let piece = bytes.get(from..start).unwrap_or_default();
                from = end;
                piece
            });
        Some(pieces)
    }
}

/// The smallest map text worth recording: copying a shorter one saves less than its record
/// costs (measured on the realistic pod: 128 bytes gives the fewest instructions for both an
/// update and a create; 64 makes an update 6% dearer, 256 a create 2%). Unit tests record
/// short maps too, so that the paths using the record run on the small documents they are
/// made of.
pub(crate) const MIN_RECORDED: usize = if cfg!(test) { 16 } else { 128 };

/// Appends `value` as [`write`] does, copying the text of every map that shares its entries
/// with a map of `written` (the same entries, so the same text) instead of writing it again,
/// and returns the texts of its maps (of at least [`MIN_RECORDED`] bytes; a copied map's
/// inner maps included), for the next write of a version sharing them. A write that changes
/// one member of a stored object so writes only the maps on the change's path.
pub fn write_sharing(value: &Value, out: &mut Vec<u8>, written: Option<Written<'_>>) -> MapTexts {
    let mut record = Record::default();
    write_recording(value, out, written.as_ref(), &mut record);
    let Record { mut maps, cuts } = record;
    maps.sort_unstable_by_key(|t| t.id);
    // One map at two places has one text.
    maps.dedup_by_key(|t| t.id);
    // The cuts were recorded in the order of the bytes (a copied text's where it was copied).
    cuts.iter().chain(&maps).copied().collect()
}

/// What [`write_sharing`] records while it writes: the maps' texts, and the `null` members'
/// cuts in the order of the bytes.
#[derive(Default)]
struct Record {
    maps: Vec<MapText>,
    cuts: Vec<MapText>,
}

fn write_recording(
    value: &Value,
    out: &mut Vec<u8>,
    written: Option<&Written<'_>>,
    record: &mut Record,
) {
    match value {
        Value::Object(map) => {
            let id = map.entries_id();
            let start = out.len();
            if let (Some(id), Some(written)) = (id, written) {
                if let Some(&old) = written.text_of(id) {
                    if let Some(text) = written.bytes.get(old.start..old.end) {
                        out.extend_from_slice(text);
                        // The maps and cuts inside it, where they now sit.
                        for text in written.texts_moved(old, start) {
                            match text.id {
                                NULL_CUT => record.cuts.push(text),
                                _ => record.maps.push(text),
                            }
                        }
                        return;
                    }
                }
            }
            write_map(map, out, written, record);
            if let Some(id) = id.filter(|_| out.len() - start >= MIN_RECORDED) {
                record.maps.push(MapText {
                    id,
                    start,
                    end: out.len(),
                });
            }
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_recording(item, out, written, record);
            }
            out.push(b']');
        }
        other => write(other, out),
    }
}

fn write_map(
    map: &Map<String, Value>,
    out: &mut Vec<u8>,
    written: Option<&Written<'_>>,
    record: &mut Record,
) {
    out.push(b'{');
    let mut members = map.iter().enumerate();
    // Up to the first `null` member, nothing to track.
    let first_null = loop {
        let Some((i, (key, value))) = members.next() else {
            out.push(b'}');
            return;
        };
        let comma = out.len();
        if i > 0 {
            out.push(b',');
        }
        let member = out.len();
        write_key(key, out);
        write_recording(value, out, written, record);
        if value.is_null() {
            break (i, comma, member);
        }
    };
    // From it on: a `null` member's cut takes the comma before it when a member that is not
    // `null` was written before it, else the comma after it (when a member follows), so that
    // the text without the cuts has one comma between members.
    let (i, comma, member) = first_null;
    let mut kept = i > 0;
    // The cut of the last member, when it waits for the comma after it.
    let mut open_cut = cut_null(kept, comma, member, out.len(), &mut record.cuts);
    for (_, (key, value)) in members {
        let comma = out.len();
        out.push(b',');
        if let Some(cut) = open_cut
            .take()
            .and_then(|at: usize| record.cuts.get_mut(at))
        {
            cut.end = out.len();
        }
        let member = out.len();
        write_key(key, out);
        write_recording(value, out, written, record);
        if value.is_null() {
            open_cut = cut_null(kept, comma, member, out.len(), &mut record.cuts);
        } else {
            kept = true;
        }
    }
    out.push(b'}');
}

/// Records the cut of a `null` member written from `member` (its key's quote) to `end`, after
/// a comma at `comma`: with that comma when a member that is not `null` came before it
/// (`kept`); otherwise without, and the index of the cut is returned: it takes the comma after
/// the member, if one comes.
fn cut_null(
    kept: bool,
    comma: usize,
    member: usize,
    end: usize,
    cuts: &mut Vec<MapText>,
) -> Option<usize> {
    let waiting = (!kept).then_some(cuts.len());
    let start = if kept { comma } else { member };
    cuts.push(MapText {
        id: NULL_CUT,
        start,
        end,
    });
    waiting
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
    if !write_short(s.as_bytes(), false, out) {
        write_long(s.as_bytes(), out);
        out.push(b'"');
    }
}

/// Appends `key` as a JSON string and the colon after it.
fn write_key(key: &str, out: &mut Vec<u8>) {
    if !write_short(key.as_bytes(), true, out) {
        write_long(key.as_bytes(), out);
        out.extend_from_slice(b"\":");
    }
}

/// The longest string [`write_short`] writes.
const SHORT: usize = 16;

/// The room [`write_short`] makes: a short string, its quotes and a colon.
const SHORT_ROOM: usize = SHORT + 3;

/// Appends `bytes` as a JSON string (and a colon after it, for a key) when it is at most
/// [`SHORT`] bytes long and needs no escape, and answers whether it did.
///
/// Most strings of a stored object are keys and values this short. They are read as two
/// overlapping words (or halves, or three bytes), tested for bytes to escape eight at a time,
/// and stored as those words into room made once: no `memcpy` call, one capacity check and
/// one length set for the whole string, where pushing the quotes and copying the contents
/// checked the capacity three times and called `memcpy` for a few bytes.
#[inline(always)]
fn write_short(bytes: &[u8], colon: bool, out: &mut Vec<u8>) -> bool {
    let len = bytes.len();
    if len > SHORT {
        return false;
    }
    // The bytes as two words covering them, the same words' places in the written string,
    // and the test of both: bytes read twice where the words overlap are tested twice.
    let (first, last, last_at) = match len {
        8..=SHORT => (word(bytes, 0), word(bytes, len - 8), len - 8),
        4..=7 => {
            // Above the four bytes, spaces: no byte to escape. Stored, only the low four.
            let half = |at| u64::from(u32::from_le_bytes(bytes_at(bytes, at))) | SPACES << 32;
            (half(0), half(len - 4), len - 4)
        }
        _ => {
            // Up to three bytes as the low bytes of one word, spaces above them.
            let byte = |at: usize| bytes.get(at).copied().map_or(0, u64::from);
            let low = byte(0) | byte(1) << 8 | byte(2) << 16;
            let word = low | SPACES << (8 * len);
            (word, word, 0)
        }
    };
    if super::json::special_flags(first) | super::json::special_flags(last) != 0 {
        return false;
    }
    let at = out.len();
    out.extend_from_slice(&[0; SHORT_ROOM]);
    let room = &mut out[at..];
    room[0] = b'"';
    // Eight bytes stored from each word's place, the last word's after the first's: what the
    // first word stored past a string shorter than eight is written over or cut off below.
    room[1..9].copy_from_slice(&first.to_le_bytes());
    room[1 + last_at..9 + last_at].copy_from_slice(&last.to_le_bytes());
    // The closing quote and a colon, the colon cut off after a value.
    room[1 + len..3 + len].copy_from_slice(b"\":");
    out.truncate(at + 2 + len + usize::from(colon));
    true
}

/// Spaces in each of a word's eight places: bytes that need no escape.
const SPACES: u64 = 0x2020_2020_2020_2020;

/// The eight bytes of `bytes` from `at` as a little-endian word (`at + 8 <= bytes.len()`).
#[inline]
fn word(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes_at(bytes, at))
}

/// `N` bytes of `bytes` from `at` (zeros past its end, which the callers never read).
#[inline]
fn bytes_at<const N: usize>(bytes: &[u8], at: usize) -> [u8; N] {
    bytes
        .get(at..at + N)
        .and_then(|b| b.try_into().ok())
        .unwrap_or([0; N])
}

/// Appends the opening quote and the contents of `bytes` as a JSON string, escaped where
/// needed (a string [`write_short`] did not write).
fn write_long(bytes: &[u8], out: &mut Vec<u8>) {
    out.reserve(bytes.len() + 3);
    out.push(b'"');
    match special_byte(bytes) {
        None => out.extend_from_slice(bytes),
        Some(first) => write_escaped(bytes, first, out),
    }
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
    use crate::patch::pruned_nulls;

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

    /// A long string, so that the maps holding it are worth a record.
    fn long(tag: &str) -> String {
        format!("{tag}-{}", "x".repeat(260))
    }

    /// Written with sharing, a value is what [`write`] writes, and the record finds each
    /// recorded map's text.
    fn written_and_recorded(value: &Value, written: Option<Written<'_>>) -> (Vec<u8>, MapTexts) {
        let mut out = Vec::new();
        let texts = write_sharing(value, &mut out, written);
        assert_eq!(out, to_vec(value, 0));
        assert!(
            texts
                .windows(2)
                .all(|w| w[0].id < w[1].id || (w[0].id == NULL_CUT && w[0].end <= w[1].start)),
            "sorted, one per map; the cuts first, in order, apart"
        );
        (out, texts)
    }

    #[test]
    fn maps_shared_with_a_written_version_are_copied_from_its_text() {
        let first = json!({"metadata": {"name": "a", "labels": {"l": long("l")}},
            "spec": {"containers": [{"name": long("c")}, {"name": long("d")}]},
            "status": {"phase": long("p")}});
        let (bytes, texts) = written_and_recorded(&first, None);
        // Every map of `MIN_RECORDED` bytes or more is on record, at its text.
        let recorded = |v: &Value| {
            let id = v.as_object().and_then(Map::entries_id).unwrap();
            texts.iter().find(|t| t.id == id).copied()
        };
        for path in [
            "",
            "/metadata",
            "/metadata/labels",
            "/spec",
            "/spec/containers/1",
            "/status",
        ] {
            let map = first.pointer(path).unwrap();
            let text = recorded(map).unwrap_or_else(|| panic!("{path} is on record"));
            assert_eq!(&bytes[text.start..text.end], &to_vec(map, 0)[..], "{path}");
        }
        // A changed copy shares what it did not change; its maps are written as before, the
        // shared ones copied: shown here by handing over a text that is not theirs.
        let mut second = first.clone();
        second["metadata"]["labels"]["m"] = json!("n");
        let mut doctored = bytes.clone();
        let status = recorded(&first["status"]).unwrap();
        let marked = long("q");
        let at = status.start + 10;
        doctored[at..at + marked.len()].copy_from_slice(marked.as_bytes());
        let mut out = Vec::new();
        let written = Written {
            bytes: &doctored,
            texts: &texts,
        };
        let again = write_sharing(&second, &mut out, Some(written));
        let out = String::from_utf8(out).unwrap();
        assert!(out.contains(&marked), "the status text was copied: {out}");
        // Copied maps keep their inner maps on record, where they now sit.
        let (bytes2, _) = written_and_recorded(
            &second,
            Some(Written {
                bytes: &bytes,
                texts: &texts,
            }),
        );
        for path in ["/spec", "/spec/containers/0", "/status", "/metadata/labels"] {
            let map = second.pointer(path).unwrap();
            let id = map.as_object().and_then(Map::entries_id).unwrap();
            let text = again
                .iter()
                .find(|t| t.id == id)
                .unwrap_or_else(|| panic!("{path}"));
            assert_eq!(&bytes2[text.start..text.end], &to_vec(map, 0)[..], "{path}");
        }
        // Nothing on record, or nothing shared: written in full, the same text.
        written_and_recorded(
            &second,
            Some(Written {
                bytes: &bytes,
                texts: &[],
            }),
        );
        let parsed: Value = serde_json::from_slice(&bytes).unwrap();
        written_and_recorded(
            &parsed,
            Some(Written {
                bytes: &bytes,
                texts: &texts,
            }),
        );
    }

    /// Every recorded map of `value`, written with `texts` into `bytes`, is without its cuts
    /// what writing it without its `null` members gives; a map without one has no pieces.
    /// Returns how many maps had pieces.
    fn check_pieces(value: &Value, bytes: &[u8], texts: &[MapText]) -> usize {
        let written = Written { bytes, texts };
        let mut checked = 0;
        let mut stack = vec![value];
        while let Some(v) = stack.pop() {
            match v {
                Value::Object(map) => {
                    stack.extend(map.values());
                    if written.text_of_map(map).is_none() {
                        continue;
                    }
                    match written.pieces_without_nulls(map) {
                        Some(pieces) => {
                            let joined: Vec<u8> = pieces.flatten().copied().collect();
                            assert_eq!(
                                String::from_utf8_lossy(&joined),
                                String::from_utf8_lossy(&to_vec(&pruned_nulls(v), 0)),
                            );
                            checked += 1;
                        }
                        // Without a `null` member anywhere, it is what pruning them leaves.
                        None => assert_eq!(&pruned_nulls(v), v),
                    }
                }
                Value::Array(items) => stack.extend(items),
                _ => {}
            }
        }
        checked
    }

    /// The cuts of `null` members: a map's text without them is that map written without its
    /// `null` members (the comma beside a cut goes with it), for nulls first, last, in runs,
    /// alone and nested, also where a map's text was copied from a version sharing it.
    #[rstest]
    #[case::first(json!({"a": null, "b": 1, "c": "some text"}))]
    #[case::middle(json!({"a": 1, "b": null, "c": "some text"}))]
    #[case::last(json!({"a": 1, "b": "some text", "c": null}))]
    #[case::only(json!({"a-longer-key-than-that": null}))]
    #[case::all(json!({"a": null, "b": null, "c": null}))]
    #[case::runs(json!({"a": null, "b": null, "c": 1, "d": null, "e": null, "f": 2, "g": null}))]
    #[case::nested(json!({"status": {"conditions": [{"lastProbeTime": null, "type": "Ready"},
        {"a": null, "b": {"c": null}}], "phase": null}, "z": [null, {"n": null, "m": 1}]}))]
    fn a_map_without_its_null_cuts_is_written_without_its_null_members(#[case] value: Value) {
        let (bytes, texts) = written_and_recorded(&value, None);
        assert!(check_pieces(&value, &bytes, &texts) > 0);
        // Beside a long member, so that the maps are copied into a changed copy's text.
        let first = json!({"held": value, "long": long("l")});
        let (bytes, texts) = written_and_recorded(&first, None);
        check_pieces(&first, &bytes, &texts);
        let mut second = first.clone();
        second["changed"] = json!(long("c"));
        let mut out = Vec::new();
        let known = Written {
            bytes: &bytes,
            texts: &texts,
        };
        let again = write_sharing(&second, &mut out, Some(known));
        assert_eq!(out, to_vec(&second, 0));
        assert!(check_pieces(&second, &out, &again) > 0);
        // No null member anywhere: no cut, no pieces.
        let plain = pruned_nulls(&first);
        let (bytes, texts) = written_and_recorded(&plain, None);
        assert!(texts.iter().all(|t| t.id != NULL_CUT));
        assert_eq!(check_pieces(&plain, &bytes, &texts), 0);
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
        // Around the short strings' limit, every ASCII byte (and some that are not) at every
        // place, as a key and as a value: the short path reads them as overlapping words.
        for len in 0..=SHORT + 2 {
            for at in 0..len.max(1) {
                for c in (0u8..0x80).map(char::from).chain(['é', '€', '😀']) {
                    let mut s: String = "abcdefghijklmnopqrstu".chars().take(len).collect();
                    if len > 0 {
                        s.replace_range(at..=at, c.encode_utf8(&mut [0; 4]));
                    }
                    same_as_serde_json(&json!({ s.clone(): s, "k": [s.clone()] }));
                }
            }
        }
    }
}
