//! The `FieldsV1` documents a thread wrote last, kept with the field sets they encode.
//!
//! Writing a set as `FieldsV1` builds a map per level and a key per element: for a created pod
//! (~90 elements) a tenth of the create. Writes of objects of one shape, one after another (a
//! test creating its pods, a harness exploring, a controller creating from one template), give
//! equal sets again and again. A set equal to one of the last few written here takes that
//! document by a clone instead — the maps are shared copy-on-write, so a clone is a count
//! increment per map — with its fingerprint. A document is a pure function of its set, so what a
//! caller gets is the same either way; the check is an equality of the sets, not of their
//! hashes.
//!
//! Per thread, so that no lock is taken: a server's writes on another worker keep their own.

use std::cell::RefCell;
use std::collections::VecDeque;

use serde_json::{Map, Value};

use super::fieldpath::Set;

/// Sets with fewer elements than this are written each time (as cheap as a look-up).
const SMALLEST: usize = 16;

/// How many documents a thread keeps (the oldest goes first).
const KEPT: usize = 8;

/// A document written for a set, as [`fields_v1_of`] returns it.
type Document = (Map<String, Value>, u64);

/// One document kept, with its set and the set's [`Set::shape_hash`].
struct Written {
    hash: u64,
    set: Set,
    document: Document,
}

thread_local! {
    /// The documents kept, oldest first.
    static KEPT_HERE: RefCell<VecDeque<Written>> = const { RefCell::new(VecDeque::new()) };
}

/// The `FieldsV1` map of `set` and its fingerprint: the one kept for an equal set, else what
/// `write` gives (kept when the set is large enough to be worth it).
pub(super) fn fields_v1_of(set: &Set, write: impl FnOnce(&Set) -> Document) -> Document {
    let (hash, elements) = set.shape_hash();
    if elements < SMALLEST {
        return write(set);
    }
    let kept = KEPT_HERE.with(|kept| {
        kept.borrow()
            .iter()
            .find(|written| written.hash == hash && written.set == *set)
            .map(|written| written.document.clone())
    });
    if let Some(document) = kept {
        return document;
    }
    let document = write(set);
    KEPT_HERE.with(|kept| {
        let mut kept = kept.borrow_mut();
        if kept.len() == KEPT {
            kept.pop_front();
        }
        kept.push_back(Written {
            hash,
            set: set.clone(),
            document: document.clone(),
        });
    });
    document
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply::fieldpath::PathElement;
    use crate::apply::fingerprint::fingerprint;
    use serde_json::json;

    fn f(name: &str) -> PathElement {
        PathElement::Field(name.into())
    }

    /// A set of `n` fields under `spec`, the `i`-th named `{prefix}{i}`, and a keyed list.
    fn set_of(prefix: &str, n: usize) -> Set {
        let mut set = Set::new();
        for i in 0..n {
            set.insert(&[f("spec"), f(&format!("{prefix}{i}"))]);
        }
        set.insert(&[
            f("spec"),
            f("containers"),
            PathElement::Key(vec![("name".into(), json!("app"))]),
            f("image"),
        ]);
        set
    }

    /// What writing `set` gives without this module.
    fn written_afresh(set: &Set) -> Value {
        set.to_fields_v1()
    }

    #[test]
    fn an_equal_set_takes_the_kept_document_by_a_shared_clone() {
        let set = set_of("field", 20);
        let (first, first_fingerprint) = set.to_fields_v1_with_fingerprint();
        let again = set_of("field", 20);
        let (second, second_fingerprint) = again.to_fields_v1_with_fingerprint();
        assert_eq!(first, second);
        assert_eq!(first, written_afresh(&set));
        assert_eq!(first_fingerprint, second_fingerprint);
        assert_eq!(first_fingerprint, fingerprint(&first));
        let (Value::Object(first), Value::Object(second)) = (&first, &second) else {
            panic!("FieldsV1 is a map");
        };
        assert!(
            first.shares_entries(second),
            "the second write is the kept document"
        );
    }

    #[rstest::rstest]
    #[case::another_field_name(set_of("other", 20))]
    #[case::one_field_more(set_of("field", 21))]
    #[case::another_key(
        {
            let mut set = set_of("field", 20);
            set.insert(&[
                f("spec"),
                f("containers"),
                PathElement::Key(vec![("name".into(), json!("sidecar"))]),
            ]);
            set
        }
    )]
    fn a_different_set_is_written_for_itself(#[case] different: Set) {
        let kept = set_of("field", 20);
        let (kept_document, _) = kept.to_fields_v1_with_fingerprint();
        let (document, document_fingerprint) = different.to_fields_v1_with_fingerprint();
        assert_ne!(document, kept_document);
        assert_eq!(document, written_afresh(&different));
        assert_eq!(document_fingerprint, fingerprint(&document));
    }

    #[test]
    fn small_sets_are_not_kept_and_old_documents_make_room() {
        let small = set_of("x", 2);
        let (a, _) = small.to_fields_v1_with_fingerprint();
        let (b, _) = small.to_fields_v1_with_fingerprint();
        let (Value::Object(a), Value::Object(b)) = (&a, &b) else {
            panic!("FieldsV1 is a map");
        };
        assert_eq!(a, b);
        assert!(!a.shares_entries(b), "a small set is written each time");

        // More sets than are kept: each still gets its own document, the first is written
        // again once pushed out, and the last is still kept.
        let sets: Vec<Set> = (0..KEPT + 2)
            .map(|i| set_of(&format!("s{i}-"), 20))
            .collect();
        let documents: Vec<Value> = sets
            .iter()
            .map(|set| set.to_fields_v1_with_fingerprint().0)
            .collect();
        for (set, document) in sets.iter().zip(&documents) {
            assert_eq!(*document, written_afresh(set));
        }
        let shares = |set: &Set, document: &Value| {
            let (Value::Object(again), Value::Object(document)) =
                (set.to_fields_v1_with_fingerprint().0, document)
            else {
                panic!("FieldsV1 is a map");
            };
            again.shares_entries(document)
        };
        assert!(shares(&sets[KEPT + 1], &documents[KEPT + 1]));
        assert!(
            !shares(&sets[0], &documents[0]),
            "the oldest was pushed out"
        );
    }
}
