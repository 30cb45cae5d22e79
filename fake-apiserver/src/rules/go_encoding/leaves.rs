//! The leaf types with their own JSON encoders: what a real server writes back for the value a
//! client sent, once it went through the Go type.
//!
//! - `resource.Quantity` writes its canonical form (`1000m` → `1`, `0.5Gi` → `512Mi`, a JSON
//!   number → a string), or the text as sent where `ParseQuantity` kept it
//!   ([`crate::rules::quantity::go_json_text`]);
//! - `metav1.Time` writes RFC 3339 in UTC, whole seconds (`t.UTC().Format(time.RFC3339)`);
//! - `metav1.MicroTime` the same with six fractional digits (`RFC3339Micro`).
//!
//! A value these types would not have decoded is left as it is (the decode refuses it first).

use std::cell::RefCell;
use std::collections::HashMap;

use serde_json::Value;

/// A `Quantity` value as a real server writes it back.
pub(super) fn quantity(value: &mut Value) {
    let written = match value {
        Value::String(s) => rewritten_quantity(s),
        Value::Number(n) => {
            crate::rules::quantity::go_json_text(&n.to_string()).map(std::borrow::Cow::into_owned)
        }
        _ => None,
    };
    if let Some(text) = written {
        *value = Value::String(text);
    }
}

/// The most quantity texts [`rewritten_quantity`] remembers (per thread); when full it starts
/// over. Resource lists repeat a few texts (`100m`, `128Mi`) across every object.
const QUANTITIES_REMEMBERED: usize = 512;

thread_local! {
    /// Quantity texts met before, each with what [`rewritten_quantity`] answered.
    static REWRITTEN: RefCell<HashMap<Box<str>, Option<Box<str>>>> = RefCell::default();
}

/// What a quantity string `text` is written back as, when that differs from `text` (`None`:
/// kept as it is, or not a quantity). [`crate::rules::quantity::go_json_text`], remembered per
/// text: it parses the text and, for a canonical form it must print (`128Mi`, a multiple of
/// eight), formats it, for an answer that is mostly the text itself.
fn rewritten_quantity(text: &str) -> Option<String> {
    let compute = || {
        crate::rules::quantity::go_json_text(text)
            .filter(|written| written.as_ref() != text)
            .map(|written| written.into_owned())
    };
    REWRITTEN.with(|remembered| {
        let Ok(mut remembered) = remembered.try_borrow_mut() else {
            return compute();
        };
        if let Some(answer) = remembered.get(text) {
            return answer.as_deref().map(str::to_string);
        }
        let answer = compute();
        if remembered.len() >= QUANTITIES_REMEMBERED {
            remembered.clear();
        }
        remembered.insert(text.into(), answer.as_deref().map(Box::from));
        answer
    })
}

/// Whether [`quantity`] would change `value`.
pub(super) fn quantity_changes(value: &Value) -> bool {
    match value {
        Value::String(s) => rewritten_quantity(s).is_some(),
        // A number that is a quantity is written back as a string.
        Value::Number(n) => crate::rules::quantity::go_json_text(&n.to_string()).is_some(),
        _ => false,
    }
}

/// Whether [`time`] would change `value`: a string not in the written form that parses (what
/// it is written as then is in that form, so another string).
pub(super) fn time_changes(value: &Value, micro: bool) -> bool {
    match value {
        Value::String(s) => {
            !is_written_form(s.as_bytes(), micro) && s.parse::<jiff::Timestamp>().is_ok()
        }
        _ => false,
    }
}

/// A `Time` (`micro`: a `MicroTime`) value as a real server writes it back.
pub(super) fn time(value: &mut Value, micro: bool) {
    let Value::String(s) = value else {
        return;
    };
    if is_written_form(s.as_bytes(), micro) {
        return;
    }
    let Ok(t) = s.parse::<jiff::Timestamp>() else {
        return;
    };
    // jiff truncates to the precision asked for, as Go's formatting does.
    *s = if micro {
        format!("{t:.6}")
    } else {
        format!("{t:.0}")
    };
}

/// Whether `s` already reads as Go writes the type: `2006-01-02T15:04:05Z`, or
/// `2006-01-02T15:04:05.000000Z` for a `MicroTime` (the common case, checked without parsing).
fn is_written_form(s: &[u8], micro: bool) -> bool {
    let len = if micro { 27 } else { 20 };
    let digits = |range: std::ops::Range<usize>| s[range].iter().all(u8::is_ascii_digit);
    s.len() == len
        && digits(0..4)
        && s[4] == b'-'
        && digits(5..7)
        && s[7] == b'-'
        && digits(8..10)
        && s[10] == b'T'
        && digits(11..13)
        && s[13] == b':'
        && digits(14..16)
        && s[16] == b':'
        && digits(17..19)
        && (!micro || (s[19] == b'.' && digits(20..26)))
        && s[len - 1] == b'Z'
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    #[rstest]
    #[case(json!("2024-01-01T01:00:00+01:00"), false, json!("2024-01-01T00:00:00Z"))]
    #[case(json!("2024-01-01T01:00:00.5Z"), false, json!("2024-01-01T01:00:00Z"))]
    #[case(json!("2024-01-01T00:00:00Z"), false, json!("2024-01-01T00:00:00Z"))]
    #[case(json!("2024-01-01T01:00:00.1234567-02:00"), true, json!("2024-01-01T03:00:00.123456Z"))]
    #[case(json!("2024-01-01T00:00:00.000000Z"), true, json!("2024-01-01T00:00:00.000000Z"))]
    #[case(json!("not a time"), false, json!("not a time"))]
    #[case(json!(null), false, json!(null))]
    fn times_are_written_in_utc(#[case] sent: Value, #[case] micro: bool, #[case] written: Value) {
        let mut value = sent;
        time(&mut value, micro);
        assert_eq!(value, written);
    }

    #[rstest]
    #[case(json!("1000m"), json!("1"))]
    #[case(json!(1024), json!("1024"))]
    #[case(json!(0.5), json!("500m"))]
    #[case(json!("128Mi"), json!("128Mi"))]
    #[case(json!("nonsense"), json!("nonsense"))]
    fn quantities_are_written_canonical(#[case] sent: Value, #[case] written: Value) {
        let mut value = sent;
        quantity(&mut value);
        assert_eq!(value, written);
    }

    /// What the encoder computes for a quantity string, without its memory.
    fn computed(text: &str) -> Option<String> {
        crate::rules::quantity::go_json_text(text)
            .filter(|written| written.as_ref() != text)
            .map(|written| written.into_owned())
    }

    #[test]
    fn remembered_quantities_are_written_as_computed_ones() {
        let texts = [
            "1000m", "128Mi", "100m", " 2Gi", "+1", "0100Ki", "1E3", "0.5Gi", "1024Mi", "nonsense",
            "", "0",
        ];
        // Met for the first time, then answered from memory.
        for _ in 0..2 {
            for text in texts {
                assert_eq!(rewritten_quantity(text), computed(text), "{text:?}");
            }
        }
        // More texts than are remembered: the memory starts over and answers stay right.
        for i in 0..QUANTITIES_REMEMBERED + 10 {
            let text = format!("{i}000m");
            assert_eq!(rewritten_quantity(&text), computed(&text), "{text:?}");
        }
        REWRITTEN.with(|r| assert!(r.borrow().len() <= QUANTITIES_REMEMBERED));
        for text in texts {
            assert_eq!(rewritten_quantity(text), computed(text), "{text:?}");
        }
    }
}
