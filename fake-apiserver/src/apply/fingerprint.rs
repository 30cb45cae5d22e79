//! Fingerprints of `FieldsV1` documents: a multiplicative hash of their keys and structure,
//! recorded with the field set a document encodes and checked before that set stands in for a
//! stored document (`managed::Known`).
//!
//! A map's fingerprint combines its size with the *sum* of its entries' hashes, so the entries
//! may be hashed in any order: [`super::fieldpath::Set`] fingerprints a document while it writes
//! it, inserting keys in its elements' order, which is not always their text order.

use serde_json::{Map, Value};

const K: u64 = 0x517c_c1b7_2722_0a95;

pub(super) const fn mix(hash: u64, word: u64) -> u64 {
    (hash.rotate_left(5) ^ word).wrapping_mul(K)
}

/// Up to eight bytes as a little-endian word, zero-padded.
fn word(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(word)
}

/// The bytes mixed eight at a time, their length in the last word.
pub(super) fn bytes_hash(bytes: &[u8]) -> u64 {
    let mut hash = 0;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        hash = mix(hash, word(chunk));
    }
    mix(
        hash,
        word(chunks.remainder()) ^ ((bytes.len() as u64) << 56),
    )
}

/// A quick hash of a name: its length and its first and last eight bytes (names that differ
/// only in between hash alike: for hashes that only choose what to compare).
pub(super) fn head_tail_hash(name: &[u8]) -> u64 {
    let len = name.len();
    let (head, tail) = if len <= 8 {
        (word(name), 0)
    } else {
        (word(&name[..8]), word(&name[len - 8..]))
    };
    mix(mix(len as u64, head), tail)
}

/// One map entry's share of its map's fingerprint.
pub(super) fn entry_hash(key: &[u8], value: u64) -> u64 {
    mix(bytes_hash(key), value)
}

/// A map's fingerprint from its size and the sum of its entries' hashes (a sum: the entries
/// may be hashed in any order, so a map is fingerprinted while it is built).
pub(super) const fn map_hash(len: usize, entries: u64) -> u64 {
    mix(mix(0x7b00, len as u64), entries)
}

/// The fingerprint of `{}`.
pub(super) const EMPTY_MAP_FINGERPRINT: u64 = map_hash(0, 0);

pub(super) fn map_fingerprint(map: &Map<String, Value>) -> u64 {
    let entries = map.iter().fold(0u64, |sum, (key, value)| {
        sum.wrapping_add(entry_hash(key.as_bytes(), fingerprint(value)))
    });
    map_hash(map.len(), entries)
}

/// A fingerprint of a `FieldsV1` document (a multiplicative hash of its keys and structure):
/// recorded with the set it encodes, checked before that set stands in for a stored document.
/// [`super::fieldpath::Set::to_fields_v1_with_fingerprint`] gives the same for the document it writes.
pub fn fingerprint(fields: &Value) -> u64 {
    match fields {
        Value::Object(map) => map_fingerprint(map),
        other => bytes_hash(other.to_string().as_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    #[rstest]
    #[case::a_key_renamed(json!({"f:a": {}}), json!({"f:b": {}}))]
    #[case::a_marker_added(json!({"f:a": {"f:x": {}}}), json!({"f:a": {".": {}, "f:x": {}}}))]
    #[case::a_level_moved(json!({"f:a": {"f:b": {}}}), json!({"f:a": {}, "f:b": {}}))]
    #[case::a_key_moved_down(json!({"f:a": {"f:x": {}}, "f:b": {}}), json!({"f:a": {}, "f:b": {"f:x": {}}}))]
    #[case::an_entry_dropped(json!({"f:a": {}, "f:b": {}}), json!({"f:a": {}}))]
    #[case::emptied(json!({"f:a": {}}), json!({}))]
    fn different_documents_have_different_fingerprints(#[case] a: Value, #[case] b: Value) {
        assert_ne!(fingerprint(&a), fingerprint(&b));
    }

    #[test]
    fn a_map_is_the_sum_of_its_entries_in_any_order() {
        let doc = json!({"f:a": {}, "f:b": {".": {}}, "i:10": {}});
        let Value::Object(map) = &doc else {
            unreachable!()
        };
        let mut sum = 0u64;
        for (key, value) in map.iter().rev() {
            sum = sum.wrapping_add(entry_hash(key.as_bytes(), fingerprint(value)));
        }
        assert_eq!(map_hash(map.len(), sum), fingerprint(&doc));
        assert_eq!(fingerprint(&json!({})), EMPTY_MAP_FINGERPRINT);
    }
}
