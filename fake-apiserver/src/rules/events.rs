//! Rules of Events in both APIs, from `pkg/apis/core/validation/events.go`: core `v1` Events get
//! only `legacyValidateEvent` (kept lenient for old clients); `events.k8s.io/v1` Events get the
//! strict rules of `ValidateEventCreate` / `ValidateEventUpdate` too. Both APIs store the same
//! internal Event, so causes name the internal fields (`involvedObject`, `message`, `source`, ...)
//! whichever API was used; [`internal_view`] maps an `events.k8s.io/v1` body onto them.

use serde_json::{json, Value};

use super::{same, str_of};
use crate::rules::validation::{is_dns1123_subdomain, is_qualified_name, Cause};

const REPORTING_INSTANCE_LENGTH_LIMIT: usize = 128;
const ACTION_LENGTH_LIMIT: usize = 128;
const REASON_LENGTH_LIMIT: usize = 128;
const NOTE_LENGTH_LIMIT: usize = 1024;

/// The internal (core) field names of an `events.k8s.io/v1` Event.
pub fn internal_view(event: &Value) -> Value {
    let get = |k: &str| event.get(k).cloned().unwrap_or(Value::Null);
    json!({
        "metadata": get("metadata"),
        "involvedObject": get("regarding"),
        "related": get("related"),
        "message": get("note"),
        "reason": get("reason"),
        "type": get("type"),
        "action": get("action"),
        "eventTime": get("eventTime"),
        "series": get("series"),
        "reportingController": get("reportingController"),
        "reportingInstance": get("reportingInstance"),
        "source": get("deprecatedSource"),
        "firstTimestamp": get("deprecatedFirstTimestamp"),
        "lastTimestamp": get("deprecatedLastTimestamp"),
        "count": get("deprecatedCount"),
    })
}

fn is_set(v: &Value) -> bool {
    !(v.is_null() || v.as_str() == Some(""))
}

/// `legacyValidateEvent`, on an internal-form event: the involved object's namespace agrees with
/// the event's; events with an `eventTime` need the reporting fields, within their limits.
pub fn legacy_causes(event: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let namespace = str_of(&event["metadata"], "namespace");
    let involved_ns = str_of(&event["involvedObject"], "namespace");
    let mismatch = || {
        Cause::invalid_str(
            "involvedObject.namespace",
            involved_ns,
            "does not match event.namespace",
        )
    };
    let too_long = |field: &str, limit: usize| {
        Cause::invalid_str(field, "", &format!("can have at most {limit} characters"))
    };
    if !is_set(&event["eventTime"]) {
        if involved_ns.is_empty() {
            if !namespace.is_empty() && namespace != "default" {
                causes.push(mismatch());
            }
        } else if namespace != involved_ns {
            causes.push(mismatch());
        }
    } else {
        if involved_ns.is_empty() && namespace != "default" && namespace != "kube-system" {
            causes.push(mismatch());
        }
        let controller = str_of(event, "reportingController");
        if controller.is_empty() {
            causes.push(Cause::required("reportingController", ""));
        }
        for msg in is_qualified_name(controller) {
            causes.push(Cause::invalid_str("reportingController", controller, &msg));
        }
        let instance = str_of(event, "reportingInstance");
        if instance.is_empty() {
            causes.push(Cause::required("reportingInstance", ""));
        }
        if instance.len() > REPORTING_INSTANCE_LENGTH_LIMIT {
            causes.push(too_long(
                "reportingInstance",
                REPORTING_INSTANCE_LENGTH_LIMIT,
            ));
        }
        let action = str_of(event, "action");
        if action.is_empty() {
            causes.push(Cause::required("action", ""));
        }
        if action.len() > ACTION_LENGTH_LIMIT {
            causes.push(too_long("action", ACTION_LENGTH_LIMIT));
        }
        let reason = str_of(event, "reason");
        if reason.is_empty() {
            causes.push(Cause::required("reason", ""));
        }
        if reason.len() > REASON_LENGTH_LIMIT {
            causes.push(too_long("reason", REASON_LENGTH_LIMIT));
        }
        if str_of(event, "message").len() > NOTE_LENGTH_LIMIT {
            causes.push(too_long("message", NOTE_LENGTH_LIMIT));
        }
    }
    for msg in is_dns1123_subdomain(namespace) {
        causes.push(Cause::invalid_str("namespace", namespace, &msg));
    }
    causes
}

/// `validateV1EventSeries`.
fn series_causes(event: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let series = &event["series"];
    if series.is_object() {
        if series["count"].as_i64().unwrap_or(0) < 2 {
            causes.push(Cause::invalid_str(
                "series.count",
                "",
                "should be at least 2",
            ));
        }
        if !is_set(&series["lastObservedTime"]) {
            causes.push(Cause::required("series.lastObservedTime", ""));
        }
    }
    causes
}

/// Core `v1` Event create and update: `legacyValidateEvent` only.
pub fn create_causes_core_v1(obj: &Value) -> Vec<Cause> {
    legacy_causes(obj)
}

/// `ValidateEventCreate` for `events.k8s.io/v1` (metadata is checked by [`super::meta`]).
pub fn create_causes_events_v1(obj: &Value) -> Vec<Cause> {
    let event = internal_view(obj);
    let mut causes = legacy_causes(&event);
    causes.extend(series_causes(&event));
    if !is_set(&event["eventTime"]) {
        causes.push(Cause::required("eventTime", ""));
    }
    let kind = str_of(&event, "type");
    if kind != "Normal" && kind != "Warning" {
        causes.push(Cause::invalid_str(
            "type",
            "",
            &format!("has invalid value: {kind}"),
        ));
    }
    for field in ["firstTimestamp", "lastTimestamp"] {
        if is_set(&event[field]) {
            causes.push(Cause::invalid_str(field, "", "needs to be unset"));
        }
    }
    if event["count"].as_i64().unwrap_or(0) != 0 {
        causes.push(Cause::invalid_str("count", "", "needs to be unset"));
    }
    if is_set(&event["source"]["component"]) || is_set(&event["source"]["host"]) {
        causes.push(Cause::invalid_str("source", "", "needs to be unset"));
    }
    causes
}

/// `ValidateEventUpdate` for `events.k8s.io/v1`: the new event passes the legacy rules, a changed
/// series is valid, and everything but the series (and metadata) is immutable.
pub fn update_causes_events_v1(old: &Value, new: &Value) -> Vec<Cause> {
    let (old, new) = (internal_view(old), internal_view(new));
    let mut causes = legacy_causes(&new);
    if !same(old.get("series"), new.get("series")) {
        causes.extend(series_causes(&new));
    }
    for field in [
        "involvedObject",
        "reason",
        "message",
        "source",
        "firstTimestamp",
        "lastTimestamp",
        "count",
        "reason",
        "type",
        "eventTime",
        "action",
        "related",
        "reportingController",
        "reportingInstance",
    ] {
        let (o, n) = (&old[field], &new[field]);
        if !(same(Some(o), Some(n)) || (!is_set(o) && !is_set(n))) {
            causes.push(Cause::invalid(field, n, "field is immutable"));
        }
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    use crate::rules::validation::error_texts as texts;

    #[rstest]
    #[case::same_namespace(json!({"metadata": {"namespace": "a"}, "involvedObject": {"namespace": "a"}}), vec![])]
    #[case::cluster_object_in_default(json!({"metadata": {"namespace": "default"}, "involvedObject": {"kind": "Node"}}), vec![])]
    #[case::other_namespace(json!({"metadata": {"namespace": "a"}, "involvedObject": {"namespace": "b"}}), vec!["involvedObject.namespace: Invalid value: \"b\": does not match event.namespace"])]
    #[case::cluster_object_elsewhere(json!({"metadata": {"namespace": "a"}, "involvedObject": {}}), vec!["involvedObject.namespace: Invalid value: \"\": does not match event.namespace"])]
    #[case::new_style_needs_reporter(
        json!({"metadata": {"namespace": "a"}, "involvedObject": {"namespace": "a"}, "eventTime": "2026-01-01T00:00:00.000000Z", "reason": "R", "action": "A"}),
        vec![
            "reportingController: Required value",
            "reportingController: Invalid value: \"\": name part must be non-empty",
            "reportingController: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            "reportingInstance: Required value",
        ]
    )]
    fn core_v1(#[case] event: Value, #[case] errors: Vec<&str>) {
        assert_eq!(texts(create_causes_core_v1(&event)), errors);
    }

    fn events_v1() -> Value {
        json!({"metadata": {"name": "e", "namespace": "a"}, "regarding": {"kind": "Pod", "namespace": "a", "name": "p"},
            "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "example.com/ctl",
            "reportingInstance": "ctl-1", "action": "Bind", "reason": "Scheduled", "type": "Normal", "note": "ok"})
    }

    #[test]
    fn events_v1_accepts_a_complete_event() {
        assert!(create_causes_events_v1(&events_v1()).is_empty());
    }

    #[rstest]
    #[case::bad_type("type", json!("Info"), "type: Invalid value: \"\": has invalid value: Info")]
    #[case::deprecated_count("deprecatedCount", json!(3), "count: Invalid value: \"\": needs to be unset")]
    #[case::short_series("series", json!({"count": 1, "lastObservedTime": "2026-01-01T00:00:00.000000Z"}), "series.count: Invalid value: \"\": should be at least 2")]
    #[case::long_note("note", json!("x".repeat(1025)), "message: Invalid value: \"\": can have at most 1024 characters")]
    fn events_v1_refuses(#[case] field: &str, #[case] value: Value, #[case] error: &str) {
        let mut e = events_v1();
        e[field] = value;
        assert_eq!(texts(create_causes_events_v1(&e)), vec![error]);
    }

    #[test]
    fn events_v1_note_is_immutable_but_series_may_grow() {
        let old = events_v1();
        let mut new = old.clone();
        new["series"] = json!({"count": 2, "lastObservedTime": "2026-01-01T00:01:00.000000Z"});
        assert!(update_causes_events_v1(&old, &new).is_empty());
        new["note"] = json!("changed");
        assert_eq!(
            texts(update_causes_events_v1(&old, &new)),
            vec!["message: Invalid value: \"changed\": field is immutable"]
        );
    }
}
