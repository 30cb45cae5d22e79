//! `metav1.LabelSelector` in JSON form: its validation (`ValidateLabelSelector` in
//! `staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/validation`) and whether it matches a label
//! set (`LabelSelectorAsSelector(...).Matches`); a label set printed as `labels.Set.String`.

use serde_json::Value;

use crate::rules::validation::{is_label_value, is_qualified_name, validate_labels, Cause};

/// A label map as `labels.Set.String` (and `SelectorFromSet(...).String`) prints it: `k=v`
/// pairs sorted by key, joined with commas; empty for no labels.
pub fn format_label_set(labels: &Value) -> String {
    labels
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default()
}

/// `ValidateLabelSelector` with `AllowInvalidLabelValueInSelector: false`.
pub fn causes(selector: &Value, field: &str) -> Vec<Cause> {
    causes_with(selector, field, false)
}

/// `ValidateLabelSelector`; `allow_invalid_label_value` is the option of that name (the values
/// of `matchExpressions` are then not checked as label values).
pub fn causes_with(selector: &Value, field: &str, allow_invalid_label_value: bool) -> Vec<Cause> {
    let mut causes = Vec::new();
    let expressions = selector["matchExpressions"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (i, req) in expressions.iter().enumerate() {
        let at = format!("{field}.matchExpressions[{i}]");
        let values = req["values"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        let operator = req["operator"].as_str().unwrap_or_default();
        match operator {
            "In" | "NotIn" if values.is_empty() => causes.push(Cause::required(
                format!("{at}.values"),
                "must be specified when `operator` is 'In' or 'NotIn'",
            )),
            "Exists" | "DoesNotExist" if !values.is_empty() => causes.push(Cause::forbidden(
                format!("{at}.values"),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            _ => causes.push(Cause::invalid_str(
                format!("{at}.operator"),
                operator,
                "not a valid selector operator",
            )),
        }
        let key = req["key"].as_str().unwrap_or_default();
        for msg in is_qualified_name(key) {
            causes.push(Cause::invalid_str(format!("{at}.key"), key, &msg));
        }
        for (j, v) in values.iter().enumerate() {
            if allow_invalid_label_value {
                break;
            }
            let v = v.as_str().unwrap_or_default();
            for msg in is_label_value(v) {
                causes.push(Cause::invalid_str(format!("{at}.values[{j}]"), v, &msg));
            }
        }
    }
    causes.extend(validate_labels(
        selector.get("matchLabels"),
        &format!("{field}.matchLabels"),
    ));
    causes
}

/// Whether `LabelSelectorAsSelector` accepts the selector (known operators, values as the
/// operator needs them).
pub fn parses(selector: &Value) -> bool {
    let expressions = selector["matchExpressions"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    expressions.iter().all(|req| {
        let n = req["values"].as_array().map_or(0, Vec::len);
        match req["operator"].as_str().unwrap_or_default() {
            "In" | "NotIn" => n > 0,
            "Exists" | "DoesNotExist" => n == 0,
            _ => false,
        }
    })
}

/// Whether the selector has no requirement (it then selects everything).
pub fn is_empty(selector: &Value) -> bool {
    selector["matchLabels"]
        .as_object()
        .is_none_or(|m| m.is_empty())
        && selector["matchExpressions"]
            .as_array()
            .is_none_or(Vec::is_empty)
}

/// Whether the selector matches `labels` (a JSON object of strings, or absent).
pub fn matches(selector: &Value, labels: &Value) -> bool {
    let label = |k: &str| labels.get(k).and_then(Value::as_str);
    let match_labels = selector["matchLabels"].as_object();
    let labels_ok = match_labels.is_none_or(|m| {
        m.iter()
            .all(|(k, v)| label(k).is_some() && label(k) == v.as_str())
    });
    let expressions = selector["matchExpressions"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    labels_ok
        && expressions.iter().all(|req| {
            let key = req["key"].as_str().unwrap_or_default();
            let values: Vec<&str> = req["values"]
                .as_array()
                .map(|vs| vs.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            match req["operator"].as_str().unwrap_or_default() {
                "In" => label(key).is_some_and(|v| values.contains(&v)),
                "NotIn" => label(key).is_none_or(|v| !values.contains(&v)),
                "Exists" => label(key).is_some(),
                "DoesNotExist" => label(key).is_none(),
                _ => false,
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    #[rstest]
    #[case::labels(json!({"matchLabels": {"app": "a"}}), json!({"app": "a", "x": "y"}), true)]
    #[case::labels_differ(json!({"matchLabels": {"app": "a"}}), json!({"app": "b"}), false)]
    #[case::in_(json!({"matchExpressions": [{"key": "t", "operator": "In", "values": ["a", "b"]}]}), json!({"t": "b"}), true)]
    #[case::not_in_absent(json!({"matchExpressions": [{"key": "t", "operator": "NotIn", "values": ["a"]}]}), json!({}), true)]
    #[case::exists(json!({"matchExpressions": [{"key": "t", "operator": "Exists"}]}), json!({}), false)]
    #[case::does_not_exist(json!({"matchExpressions": [{"key": "t", "operator": "DoesNotExist"}]}), json!({}), true)]
    fn matching(#[case] selector: Value, #[case] labels: Value, #[case] expected: bool) {
        assert_eq!(matches(&selector, &labels), expected);
    }

    #[rstest]
    #[case::no_values(json!({"matchExpressions": [{"key": "t", "operator": "In"}]}), "s.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'")]
    #[case::values_with_exists(json!({"matchExpressions": [{"key": "t", "operator": "Exists", "values": ["a"]}]}), "s.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'")]
    #[case::operator(json!({"matchExpressions": [{"key": "t", "operator": "Equals", "values": ["a"]}]}), "s.matchExpressions[0].operator: Invalid value: \"Equals\": not a valid selector operator")]
    fn refused(#[case] selector: Value, #[case] first: &str) {
        let c = causes(&selector, "s");
        assert_eq!(c[0].error_text(), first);
        assert!(!parses(&selector));
    }
}
