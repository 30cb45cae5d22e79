//! The JSON bodies of the creates a thread read last, kept with their parse.
//!
//! Creates come in runs of alike bodies: a controller creating from a template sends the same
//! bytes each time (a ReplicaSet's pods, with `generateName`) or the same but for a name or a
//! label; a test or a harness exploration creates its objects one after another. A create body
//! is read like the last one of its resource this thread read: the same bytes are the same
//! value (a clone of the kept parse, its maps shared copy-on-write); other bytes are read by
//! [`crate::store::json::from_slice_recording`] against the kept value, which takes the kept
//! maps equal to the body's at the same place instead of building them: each is looked for
//! first as its text in the kept body (recorded while that body was read), one `memcmp`, and
//! compared member by member only where the text differs. Either way the value is exactly what
//! reading the body alone gives: sharing changes what is allocated, never what is read.
//!
//! A body read again byte for byte also keeps its decode ([`decoded`], [`keep_decoded`]): the
//! typed decode and the decode defaults of a built-in kind are a function of the value they are
//! given and the `fieldValidation` asked, so a value equal to the one decoded before (what
//! the same bytes give, through the same steps) takes that decode's result and warnings.
//!
//! Per thread, so that no lock is taken; at most [`KEPT`] resources.

use std::cell::RefCell;
use std::collections::VecDeque;

use bytes::Bytes;
use serde_json::Value;

use crate::http::typed::FieldValidation;
use crate::resource::ResourceInfo;
use crate::store::json_writer::{MapTexts, Written};

/// How many resources' last bodies a thread keeps (the one read longest ago goes first).
const KEPT: usize = 4;

/// The last create body read for one resource, and its parse.
struct Kept {
    group: String,
    version: String,
    plural: String,
    body: Bytes,
    value: Value,
    /// The texts of the value's maps in the body.
    texts: MapTexts,
    /// The decode of the value the body led to, once it was read again.
    decoded: Option<Decoded>,
}

/// A decode kept: what it was given and asked, what it made and warned.
struct Decoded {
    validation: FieldValidation,
    given: Value,
    made: Value,
    warnings: Vec<String>,
}

impl Kept {
    fn is_for(&self, info: &ResourceInfo) -> bool {
        self.plural == info.plural
            && crate::resource::same_group(&self.group, &info.group)
            && self.version == info.version
    }
}

thread_local! {
    static KEPT_HERE: RefCell<VecDeque<Kept>> = const { RefCell::new(VecDeque::new()) };
}

/// Reads the JSON create `body` of `info` with `read`, given the last create body of `info`
/// read here (its value, and its bytes with its maps' texts) when its bytes differ from
/// `body`'s, or takes that body's value when the bytes are the same (then answering `true`);
/// keeps what was read, with the texts `read` recorded, for the next one.
pub(crate) fn read<E>(
    info: &ResourceInfo,
    body: &Bytes,
    read: impl FnOnce(Option<(&Value, Written<'_>)>) -> Result<(Value, MapTexts), E>,
) -> Result<(Value, bool), E> {
    let like = KEPT_HERE.with(|kept| {
        let kept = kept.borrow();
        let found = kept.iter().find(|k| k.is_for(info))?;
        Some((found.body.clone(), found.value.clone(), found.texts.clone()))
    });
    let (value, texts) = match &like {
        Some((kept, value, _)) if kept == body => return Ok((value.clone(), true)),
        Some((kept, value, texts)) => read(Some((value, Written { bytes: kept, texts })))?,
        None => read(None)?,
    };
    KEPT_HERE.with(|kept| {
        let mut kept = kept.borrow_mut();
        if let Some(at) = kept.iter().position(|k| k.is_for(info)) {
            kept.remove(at);
        } else if kept.len() == KEPT {
            kept.pop_front();
        }
        kept.push_back(Kept {
            group: info.group.clone(),
            version: info.version.clone(),
            plural: info.plural.clone(),
            body: body.clone(),
            value: value.clone(),
            texts,
            decoded: None,
        });
    });
    Ok((value, false))
}

/// What decoding `given` (of `info`, with `validation`) made and warned, when the body kept
/// for `info` was decoded from an equal value.
pub(crate) fn decoded(
    info: &ResourceInfo,
    validation: FieldValidation,
    given: &Value,
) -> Option<(Value, Vec<String>)> {
    KEPT_HERE.with(|kept| {
        let kept = kept.borrow();
        let decoded = kept.iter().find(|k| k.is_for(info))?.decoded.as_ref()?;
        (decoded.validation == validation && decoded.given == *given)
            .then(|| (decoded.made.clone(), decoded.warnings.clone()))
    })
}

/// Keeps with the body kept for `info` that decoding `given` with `validation` made `made`
/// and warned `warnings`.
pub(crate) fn keep_decoded(
    info: &ResourceInfo,
    validation: FieldValidation,
    given: Value,
    made: &Value,
    warnings: &[String],
) {
    KEPT_HERE.with(|kept| {
        if let Some(kept) = kept.borrow_mut().iter_mut().find(|k| k.is_for(info)) {
            kept.decoded = Some(Decoded {
                validation,
                given,
                made: made.clone(),
                warnings: warnings.to_vec(),
            });
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::builtin_info;
    use serde_json::json;

    /// Reads `body` as a create of `info` would, counting the parses `read` makes and what it
    /// was given.
    fn read_counting(
        info: &ResourceInfo,
        body: &str,
        parses: &mut Vec<Option<Value>>,
    ) -> (Value, bool) {
        let body = Bytes::from(body.to_string());
        read(info, &body, |like| {
            parses.push(like.map(|(value, _)| value.clone()));
            crate::store::json::from_slice_recording(&body, like.map(|(v, w)| (v, Some(w))))
        })
        .unwrap()
    }

    fn shares_root(a: &Value, b: &Value) -> bool {
        matches!((a, b), (Value::Object(a), Value::Object(b)) if a.shares_entries(b))
    }

    #[test]
    fn the_same_bytes_are_the_kept_value_other_bytes_are_read_like_it() {
        let pods = builtin_info("", "Pod");
        let mut parses = Vec::new();
        let body = r#"{"kind":"Pod","metadata":{"generateName":"a-"},"spec":{"containers":[]}}"#;
        let (first, repeated) = read_counting(&pods, body, &mut parses);
        assert!(!repeated);
        assert_eq!(parses, [None], "nothing kept yet: read alone");
        let (second, repeated) = read_counting(&pods, body, &mut parses);
        assert!(repeated);
        assert_eq!(parses.len(), 1, "the same bytes are not read again");
        assert!(shares_root(&first, &second));
        let other = r#"{"kind":"Pod","metadata":{"name":"b"},"spec":{"containers":[]}}"#;
        let (third, repeated) = read_counting(&pods, other, &mut parses);
        assert!(!repeated);
        assert_eq!(parses[1].as_ref(), Some(&first), "read like the kept value");
        assert_eq!(third["metadata"], json!({"name": "b"}));
        let (_, repeated) = read_counting(&pods, body, &mut parses);
        assert!(!repeated, "the kept body is now the last one read");
    }

    #[test]
    fn each_resource_keeps_its_own_and_a_failed_read_keeps_nothing() {
        let pods = builtin_info("", "Pod");
        let maps = builtin_info("", "ConfigMap");
        let mut parses = Vec::new();
        let body = r#"{"kind":"X","metadata":{"name":"a"}}"#;
        read_counting(&pods, body, &mut parses);
        let (_, repeated) = read_counting(&maps, body, &mut parses);
        assert!(!repeated, "another resource's body is not this one's");
        let failed = read(&pods, &Bytes::from_static(b"{"), |_| {
            crate::store::json::from_slice_recording(b"{", None)
        });
        assert!(failed.is_err());
        let (_, repeated) = read_counting(&pods, body, &mut parses);
        assert!(repeated, "the pods' body is still the one kept");
    }

    #[test]
    fn a_decode_is_taken_for_an_equal_value_and_the_same_validation_only() {
        let pods = builtin_info("", "Pod");
        let mut parses = Vec::new();
        let body = r#"{"kind":"Pod","metadata":{"name":"a"}}"#;
        let (given, _) = read_counting(&pods, body, &mut parses);
        assert_eq!(decoded(&pods, FieldValidation::Warn, &given), None);
        let made = json!({"kind": "Pod", "metadata": {"name": "a"}, "spec": {}});
        let warned = vec!["unknown field \"x\"".to_string()];
        keep_decoded(&pods, FieldValidation::Warn, given.clone(), &made, &warned);
        assert_eq!(
            decoded(&pods, FieldValidation::Warn, &given),
            Some((made.clone(), warned))
        );
        assert_eq!(decoded(&pods, FieldValidation::Strict, &given), None);
        let mut other = given.clone();
        other["metadata"]["name"] = json!("b");
        assert_eq!(decoded(&pods, FieldValidation::Warn, &other), None);
        let configmaps = builtin_info("", "ConfigMap");
        assert_eq!(decoded(&configmaps, FieldValidation::Warn, &given), None);
        read_counting(&pods, r#"{"kind":"Pod"}"#, &mut parses);
        assert_eq!(
            decoded(&pods, FieldValidation::Warn, &given),
            None,
            "a new body drops the decode of the one before"
        );
    }
}
