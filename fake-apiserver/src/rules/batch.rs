//! Rules of `batch` Jobs and CronJobs, from `pkg/apis/batch/validation/validation.go` and
//! `pkg/registry/batch/job/strategy.go`: a Job's restart policy, immutable selector and template;
//! a CronJob's name length, schedule and policies. (The generated selector and labels of a new
//! Job are in [`crate::rules::defaults`], with the other create-time changes.)

use serde_json::Value;

use super::core::{nonnegative_fields, pod_template};
use super::{same, same_at, selector, str_of, Target};
use crate::rules::validation::Cause;

/// The causes of creating a `batch` object of `kind` (beyond metadata).
pub fn create_causes(kind: &str, obj: &Value) -> Vec<Cause> {
    match kind {
        "Job" => job(obj),
        "CronJob" => cron_job(obj),
        _ => Vec::new(),
    }
}

/// The causes of updating a `batch` object of `kind` (beyond metadata).
pub fn update_causes(kind: &str, old: &Value, new: &Value, target: Target) -> Vec<Cause> {
    if target == Target::Status {
        let mut causes = Vec::new();
        if kind == "Job" {
            nonnegative_fields(
                &mut causes,
                &new["status"],
                "status",
                &["active", "succeeded", "failed", "ready", "terminating"],
            );
        }
        return causes;
    }
    match kind {
        "Job" => {
            let mut causes = job(new);
            // `ValidateJobSpecUpdate`: completions are fixed unless the Job is Indexed, where they
            // change together with parallelism (elastic Indexed Jobs).
            let indexed = str_of(&new["spec"], "completionMode") == "Indexed";
            let (old_c, new_c) = (
                old["spec"].get("completions"),
                new["spec"].get("completions"),
            );
            if !same(old_c, new_c) {
                if !indexed {
                    causes.push(Cause::invalid(
                        "spec.completions",
                        new_c.unwrap_or(&Value::Null),
                        "field is immutable",
                    ));
                } else if !same(new_c, new["spec"].get("parallelism")) {
                    causes.push(Cause::invalid(
                        "spec.completions",
                        new_c.unwrap_or(&Value::Null),
                        "can only be modified in tandem with spec.parallelism",
                    ));
                }
            }
            for field in ["selector", "completionMode"] {
                if !same_at("batch", "Job", &["spec", field], old, new) {
                    causes.push(Cause::invalid(
                        format!("spec.{field}"),
                        new["spec"].get(field).unwrap_or(&Value::Null),
                        "field is immutable",
                    ));
                }
            }
            let suspended = new["spec"]["suspend"].as_bool() == Some(true);
            if !suspended && !same_at("batch", "Job", &["spec", "template"], old, new) {
                causes.push(Cause::invalid(
                    "spec.template",
                    &new["spec"]["template"],
                    "field is immutable",
                ));
            }
            causes
        }
        "CronJob" => cron_job_spec(&new["spec"]),
        _ => Vec::new(),
    }
}

/// `ValidateJob` (with the generated selector in place).
fn job(obj: &Value) -> Vec<Cause> {
    let spec = &obj["spec"];
    // `ValidateJobSpec`: `validateJobSpec`, then the selector.
    let mut causes = job_spec(spec, "spec");
    match spec.get("selector").filter(|s| !s.is_null()) {
        None => causes.push(Cause::required("spec.selector", "")),
        Some(sel) => {
            causes.extend(selector::causes(sel, "spec.selector"));
            if selector::parses(sel)
                && !selector::matches(sel, &spec["template"]["metadata"]["labels"])
            {
                causes.push(Cause::invalid(
                    "spec.template.metadata.labels",
                    &spec["template"]["metadata"]["labels"],
                    "`selector` does not match template `labels`",
                ));
            }
        }
    }
    // `ValidateJob`: an Indexed Job's pods get `<name>-<index>` as their host name.
    let completions = spec["completions"].as_i64().unwrap_or(0);
    if str_of(spec, "completionMode") == "Indexed" && completions > 0 {
        let name = str_of(&obj["metadata"], "name");
        let host = format!("{name}-{}", completions - 1);
        if !crate::rules::validation::is_dns1123_label(&host).is_empty() {
            causes.push(Cause::invalid_str(
                "metadata.name",
                name,
                &format!("will not able to create pod with invalid DNS label: {host}"),
            ));
        }
    }
    causes
}

/// `validateJobSpec`: counts, deadlines, completion mode and per-index limits, the pod failure,
/// success and replacement policies, and the pod template, whose pods must not restart `Always`
/// (the pod default, so an unset policy is refused too).
fn job_spec(spec: &Value, path: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    nonnegative_fields(&mut causes, spec, path, &["parallelism", "completions"]);
    if let Some(n) = spec["activeDeadlineSeconds"].as_i64() {
        if n <= 0 {
            causes.push(Cause::invalid(
                format!("{path}.activeDeadlineSeconds"),
                &Value::from(n),
                "must be greater than 0",
            ));
        }
    }
    nonnegative_fields(
        &mut causes,
        spec,
        path,
        &[
            "backoffLimit",
            "ttlSecondsAfterFinished",
            "backoffLimitPerIndex",
            "maxFailedIndexes",
        ],
    );
    let present = |k: &str| spec.get(k).is_some_and(|v| !v.is_null());
    if present("maxFailedIndexes") && !present("backoffLimitPerIndex") {
        causes.push(Cause::required(
            format!("{path}.backoffLimitPerIndex"),
            "when maxFailedIndexes is specified",
        ));
    }
    if let Some(managed_by) = spec.get("managedBy").and_then(Value::as_str) {
        causes.extend(domain_prefixed_path(
            managed_by,
            &format!("{path}.managedBy"),
        ));
        if managed_by.len() > 63 {
            causes.push(Cause::too_long(format!("{path}.managedBy"), 63));
        }
    }
    let mode = spec.get("completionMode").and_then(Value::as_str);
    let completions = spec["completions"].as_i64();
    let parallelism = spec["parallelism"].as_i64();
    let max_failed = spec["maxFailedIndexes"].as_i64();
    if let Some(mode) = mode {
        if !matches!(mode, "NonIndexed" | "Indexed") {
            causes.push(Cause::not_supported(
                format!("{path}.completionMode"),
                &Value::from(mode),
                &["NonIndexed".into(), "Indexed".into()],
            ));
        }
        if mode == "Indexed" {
            if completions.is_none() {
                causes.push(Cause::required(
                    format!("{path}.completions"),
                    "when completion mode is Indexed",
                ));
            }
            if let Some(p) = parallelism.filter(|p| *p > 100_000) {
                causes.push(Cause::invalid(
                    format!("{path}.parallelism"),
                    &Value::from(p),
                    "must be less than or equal to 100000 when completion mode is Indexed",
                ));
            }
            if let (Some(c), Some(m)) = (completions, max_failed) {
                if m > c {
                    causes.push(Cause::invalid(
                        format!("{path}.maxFailedIndexes"),
                        &Value::from(m),
                        "must be less than or equal to completions",
                    ));
                }
            }
            if let Some(m) = max_failed.filter(|m| *m > 100_000) {
                causes.push(Cause::invalid(
                    format!("{path}.maxFailedIndexes"),
                    &Value::from(m),
                    "must be less than or equal to 100000",
                ));
            }
        }
    }
    if mode.is_none_or(|m| m == "NonIndexed") {
        for field in ["backoffLimitPerIndex", "maxFailedIndexes"] {
            if let Some(v) = spec.get(field).filter(|v| !v.is_null()) {
                causes.push(Cause::invalid(
                    format!("{path}.{field}"),
                    v,
                    "requires indexed completion mode",
                ));
            }
        }
    }
    let failure_policy = spec.get("podFailurePolicy").filter(|v| !v.is_null());
    if let Some(policy) = failure_policy {
        causes.extend(pod_failure_policy(
            spec,
            policy,
            &format!("{path}.podFailurePolicy"),
        ));
    }
    if let Some(success) = spec.get("successPolicy").filter(|v| !v.is_null()) {
        if mode != Some("Indexed") {
            causes.push(Cause::invalid(
                format!("{path}.successPolicy"),
                success,
                "requires indexed completion mode",
            ));
        } else if success["rules"].as_array().is_none_or(Vec::is_empty) {
            causes.push(Cause::required(
                format!("{path}.successPolicy.rules"),
                "at least one rules must be specified when the successPolicy is specified",
            ));
        }
    }
    if let Some(replacement) = spec.get("podReplacementPolicy").and_then(Value::as_str) {
        // `validatePodReplacementPolicy`.
        let at = format!("{path}.podReplacementPolicy");
        if failure_policy.is_some() {
            if replacement != "Failed" {
                causes.push(Cause::not_supported(
                    at,
                    &Value::from(replacement),
                    &["Failed".into()],
                ));
            }
        } else if !matches!(replacement, "Failed" | "TerminatingOrFailed") {
            causes.push(Cause::not_supported(
                at,
                &Value::from(replacement),
                &["Failed".into(), "TerminatingOrFailed".into()],
            ));
        }
    }
    let template = &spec["template"];
    causes.extend(pod_template(template, &format!("{path}.template")));
    let restart_path = format!("{path}.template.spec.restartPolicy");
    match str_of(&template["spec"], "restartPolicy") {
        "" | "Always" => causes.push(Cause::required(
            restart_path,
            "valid values: \"OnFailure\", \"Never\"",
        )),
        "OnFailure" if failure_policy.is_some() => causes.push(Cause::invalid_str(
            restart_path,
            "OnFailure",
            "only \"Never\" is supported when podFailurePolicy is specified",
        )),
        "OnFailure" | "Never" => {}
        other => causes.push(Cause::not_supported(
            restart_path,
            &Value::from(other),
            &["OnFailure".into(), "Never".into()],
        )),
    }
    causes
}

/// `IsDomainPrefixedPath`.
fn domain_prefixed_path(value: &str, path: &str) -> Vec<Cause> {
    if value.is_empty() {
        return vec![Cause::required(path, "")];
    }
    match value.split_once('/') {
        Some((host, rest)) if !host.is_empty() && !rest.is_empty() => {
            let mut causes: Vec<Cause> = crate::rules::validation::is_dns1123_subdomain(host)
                .into_iter()
                .map(|msg| Cause::invalid_str(path, host, &msg))
                .collect();
            let ok = rest
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "/-._~%!$&'()*+,;=:".contains(c));
            if !ok {
                causes.push(Cause::invalid_str(
                    path,
                    rest,
                    &crate::rules::validation::regex_error(
                        "Invalid path",
                        "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+",
                        &[],
                    ),
                ));
            }
            causes
        }
        _ => vec![Cause::invalid_str(
            path,
            value,
            "must be a domain-prefixed path (such as \"acme.io/foo\")",
        )],
    }
}

/// `validatePodFailurePolicy` and its rules.
fn pod_failure_policy(spec: &Value, policy: &Value, path: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    let rules = policy["rules"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let rules_path = format!("{path}.rules");
    if rules.len() > 20 {
        causes.push(Cause::too_many(&rules_path, rules.len() as i64, 20));
    }
    let containers: Vec<&str> = ["containers", "initContainers"]
        .iter()
        .flat_map(|l| spec["template"]["spec"][l].as_array().into_iter().flatten())
        .map(|c| str_of(c, "name"))
        .collect();
    for (i, rule) in rules.iter().enumerate() {
        let at = format!("{rules_path}[{i}]");
        let action = str_of(rule, "action");
        match action {
            "" => causes.push(Cause::required(
                format!("{at}.action"),
                "valid values: [\"Count\" \"FailIndex\" \"FailJob\" \"Ignore\"]",
            )),
            "FailIndex" => {
                if spec.get("backoffLimitPerIndex").is_none_or(Value::is_null) {
                    causes.push(Cause::invalid_str(
                        format!("{at}.action"),
                        action,
                        "requires the backoffLimitPerIndex to be set",
                    ));
                }
            }
            "Count" | "FailJob" | "Ignore" => {}
            other => causes.push(Cause::not_supported(
                format!("{at}.action"),
                &Value::from(other),
                &[
                    "Count".into(),
                    "FailIndex".into(),
                    "FailJob".into(),
                    "Ignore".into(),
                ],
            )),
        }
        let exit_codes = rule.get("onExitCodes").filter(|v| !v.is_null());
        let conditions = rule["onPodConditions"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        if let Some(ec) = exit_codes {
            causes.extend(on_exit_codes(ec, &format!("{at}.onExitCodes"), &containers));
        }
        for (j, pattern) in conditions.iter().enumerate() {
            let pp = format!("{at}.onPodConditions[{j}]");
            let t = str_of(pattern, "type");
            for msg in crate::rules::validation::is_qualified_name(t) {
                causes.push(Cause::invalid_str(format!("{pp}.type"), t, &msg));
            }
            match str_of(pattern, "status") {
                // `status` defaults to `True`.
                "" | "True" | "False" | "Unknown" => {}
                other => causes.push(Cause::not_supported(
                    format!("{pp}.status"),
                    &Value::from(other),
                    &["False".into(), "True".into(), "Unknown".into()],
                )),
            }
        }
        // Upstream omits the value (`field.OmitValueType`).
        if exit_codes.is_some() && !conditions.is_empty() {
            causes.push(Cause::new(
                crate::rules::validation::FieldErrorType::Invalid,
                &at,
                None,
                "specifying both OnExitCodes and OnPodConditions is not supported",
            ));
        }
        if exit_codes.is_none() && conditions.is_empty() {
            causes.push(Cause::new(
                crate::rules::validation::FieldErrorType::Invalid,
                &at,
                None,
                "specifying one of OnExitCodes and OnPodConditions is required",
            ));
        }
    }
    causes
}

/// `validatePodFailurePolicyRuleOnExitCodes`.
fn on_exit_codes(ec: &Value, path: &str, containers: &[&str]) -> Vec<Cause> {
    let mut causes = Vec::new();
    let operator = str_of(ec, "operator");
    match operator {
        "" => causes.push(Cause::required(
            format!("{path}.operator"),
            "valid values: [\"In\" \"NotIn\"]",
        )),
        "In" | "NotIn" => {}
        other => causes.push(Cause::not_supported(
            format!("{path}.operator"),
            &Value::from(other),
            &["In".into(), "NotIn".into()],
        )),
    }
    if let Some(name) = ec.get("containerName").and_then(Value::as_str) {
        if !containers.contains(&name) {
            causes.push(Cause::invalid_str(
                format!("{path}.containerName"),
                name,
                "must be one of the container or initContainer names in the pod template",
            ));
        }
    }
    let values: Vec<i64> = ec["values"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_i64)
        .collect();
    let values_path = format!("{path}.values");
    // Upstream prints the list with `%#v`.
    let raw = if values.is_empty() {
        "[]int32(nil)".to_string()
    } else {
        let items: Vec<String> = values.iter().map(i64::to_string).collect();
        format!("[]int32{{{}}}", items.join(", "))
    };
    let invalid_values = |detail: &str| {
        Cause::new(
            crate::rules::validation::FieldErrorType::Invalid,
            &values_path,
            Some(raw.clone()),
            detail,
        )
    };
    if values.is_empty() {
        causes.push(invalid_values("at least one value is required"));
    } else if values.len() > 255 {
        causes.push(Cause::too_many(&values_path, values.len() as i64, 255));
    }
    let mut seen = std::collections::BTreeSet::new();
    for (j, v) in values.iter().enumerate() {
        if operator == "In" && *v == 0 {
            causes.push(Cause::invalid(
                format!("{values_path}[{j}]"),
                &Value::from(*v),
                "must not be 0 for the In operator",
            ));
        }
        if !seen.insert(*v) {
            causes.push(Cause::duplicate(
                format!("{values_path}[{j}]"),
                &Value::from(*v),
            ));
        }
    }
    if values.windows(2).any(|w| w[0] > w[1]) {
        causes.push(invalid_values("must be ordered"));
    }
    causes
}

/// `ValidateCronJobCreate`: the name leaves room for the 11-character suffix of its jobs.
fn cron_job(obj: &Value) -> Vec<Cause> {
    let mut causes = cron_job_spec(&obj["spec"]);
    let name = str_of(&obj["metadata"], "name");
    if name.len() > 52 {
        causes.push(Cause::invalid_str(
            "metadata.name",
            name,
            "must be no more than 52 characters",
        ));
    }
    causes
}

/// `validateCronJobSpec`: a schedule, a known concurrency policy, non-negative limits, and the
/// job template (whose selector is generated, so it may not be given).
fn cron_job_spec(spec: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let schedule = str_of(spec, "schedule");
    if schedule.is_empty() {
        causes.push(Cause::required("spec.schedule", ""));
    } else if let Some(err) = schedule_error(schedule) {
        causes.push(Cause::invalid_str("spec.schedule", schedule, &err));
    }
    nonnegative_fields(
        &mut causes,
        spec,
        "spec",
        &[
            "startingDeadlineSeconds",
            "successfulJobsHistoryLimit",
            "failedJobsHistoryLimit",
        ],
    );
    let policy = str_of(spec, "concurrencyPolicy");
    if !matches!(policy, "" | "Allow" | "Forbid" | "Replace") {
        causes.push(Cause::not_supported(
            "spec.concurrencyPolicy",
            &Value::from(policy),
            &["Allow".into(), "Forbid".into(), "Replace".into()],
        ));
    }
    let job_spec_value = &spec["jobTemplate"]["spec"];
    if let Some(sel) = job_spec_value.get("selector").filter(|s| !s.is_null()) {
        causes.push(Cause::invalid(
            "spec.jobTemplate.spec.selector",
            sel,
            "`selector` will be auto-generated",
        ));
    }
    if job_spec_value["manualSelector"].as_bool() == Some(true) {
        causes.push(Cause::not_supported(
            "spec.jobTemplate.spec.manualSelector",
            &Value::Bool(true),
            &["nil".into(), "false".into()],
        ));
    }
    causes.extend(job_spec(job_spec_value, "spec.jobTemplate.spec"));
    causes
}

/// The field-count error of `cron.ParseStandard` (descriptors such as `@hourly` aside).
fn schedule_error(schedule: &str) -> Option<String> {
    let trimmed = schedule.trim();
    let without_tz = match trimmed
        .strip_prefix("TZ=")
        .or_else(|| trimmed.strip_prefix("CRON_TZ="))
    {
        Some(rest) => rest.split_once(' ').map_or("", |(_, s)| s).trim(),
        None => trimmed,
    };
    if without_tz.starts_with('@') {
        return None;
    }
    let fields: Vec<&str> = without_tz.split_whitespace().collect();
    (fields.len() != 5).then(|| {
        format!(
            "expected exactly 5 fields, found {}: [{}]",
            fields.len(),
            fields.join(" ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    use crate::rules::validation::error_texts as texts;

    fn new_job(restart: Option<&str>) -> Value {
        let mut job = json!({"metadata": {"name": "pi", "uid": "u-1"}, "spec": {"template": {"spec": {
            "containers": [{"name": "pi", "image": "perl"}]}}}});
        if let Some(r) = restart {
            job["spec"]["template"]["spec"]["restartPolicy"] = json!(r);
        }
        crate::rules::defaults::batch::generate_selector(&mut job);
        job
    }

    #[test]
    fn the_generated_selector_matches_the_generated_labels() {
        let job = new_job(Some("Never"));
        assert_eq!(
            job["spec"]["selector"],
            json!({"matchLabels": {"batch.kubernetes.io/controller-uid": "u-1"}})
        );
        assert_eq!(
            job["spec"]["template"]["metadata"]["labels"]["job-name"],
            "pi"
        );
        assert!(create_causes("Job", &job).is_empty());
    }

    #[rstest]
    #[case::unset(
        None,
        "spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\""
    )]
    #[case::always(
        Some("Always"),
        "spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\""
    )]
    fn jobs_may_not_restart_always(#[case] restart: Option<&str>, #[case] error: &str) {
        assert_eq!(texts(create_causes("Job", &new_job(restart))), vec![error]);
    }

    #[test]
    fn a_running_jobs_template_and_selector_are_immutable() {
        let old = new_job(Some("Never"));
        let mut new = old.clone();
        new["spec"]["template"]["spec"]["containers"][0]["image"] = json!("perl:2");
        new["spec"]["selector"]["matchLabels"]["x"] = json!("y");
        let fields: Vec<String> = update_causes("Job", &old, &new, Target::Main)
            .into_iter()
            .map(|c| c.field)
            .collect();
        assert!(fields.contains(&"spec.selector".to_string()), "{fields:?}");
        assert!(fields.contains(&"spec.template".to_string()), "{fields:?}");
    }

    #[rstest]
    #[case::indexed_needs_completions(json!({"completionMode": "Indexed"}),
        vec!["spec.completions: Required value: when completion mode is Indexed"])]
    #[case::bad_mode(json!({"completionMode": "Sometimes"}),
        vec!["spec.completionMode: Unsupported value: \"Sometimes\": supported values: \"NonIndexed\", \"Indexed\""])]
    #[case::per_index_needs_indexed(json!({"backoffLimitPerIndex": 1}),
        vec!["spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode"])]
    #[case::negative_backoff(json!({"backoffLimit": -1}),
        vec!["spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0"])]
    #[case::failure_policy_on_failure(json!({"podFailurePolicy": {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [1]}}]}}),
        vec![])]
    #[case::failure_policy_rule(json!({"podFailurePolicy": {"rules": [{"action": "FailJob"}]}}),
        vec!["spec.podFailurePolicy.rules[0]: Invalid value: specifying one of OnExitCodes and OnPodConditions is required"])]
    #[case::exit_codes(json!({"podFailurePolicy": {"rules": [{"action": "Ignore", "onExitCodes": {"operator": "In", "values": [0, 2, 1]}}]}}),
        vec!["spec.podFailurePolicy.rules[0].onExitCodes.values[0]: Invalid value: 0: must not be 0 for the In operator",
             "spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: []int32{0, 2, 1}: must be ordered"])]
    fn job_specs(#[case] extra: Value, #[case] errors: Vec<&str>) {
        let mut job = new_job(Some("Never"));
        for (k, v) in extra.as_object().unwrap() {
            job["spec"][k] = v.clone();
        }
        assert_eq!(texts(create_causes("Job", &job)), errors);
    }

    #[test]
    fn a_failure_policy_needs_never() {
        let mut job = new_job(Some("OnFailure"));
        job["spec"]["podFailurePolicy"] = json!({"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]});
        assert_eq!(
            texts(create_causes("Job", &job)),
            vec!["spec.template.spec.restartPolicy: Invalid value: \"OnFailure\": only \"Never\" is supported when podFailurePolicy is specified"]
        );
    }

    #[test]
    fn completions_are_immutable_unless_indexed_with_parallelism() {
        let old = new_job(Some("Never"));
        let mut new = old.clone();
        new["spec"]["completions"] = json!(3);
        assert_eq!(
            texts(update_causes("Job", &old, &new, Target::Main)),
            vec!["spec.completions: Invalid value: 3: field is immutable"]
        );
    }

    fn cron(name: &str, schedule: &str) -> Value {
        json!({"metadata": {"name": name}, "spec": {"schedule": schedule, "jobTemplate": {"spec": {"template": {"spec": {
            "restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "busybox"}]}}}}}})
    }

    #[rstest]
    #[case::ok("nightly", "0 3 * * *", vec![])]
    #[case::descriptor("hourly", "@hourly", vec![])]
    #[case::fields("bad", "* * *", vec!["spec.schedule: Invalid value: \"* * *\": expected exactly 5 fields, found 3: [* * *]"])]
    #[case::long_name(&"c".repeat(53), "0 3 * * *", vec!["metadata.name: Invalid value: \"ccccccccccccccccccccccccccccccccccccccccccccccccccccc\": must be no more than 52 characters"])]
    fn cron_jobs(#[case] name: &str, #[case] schedule: &str, #[case] errors: Vec<&str>) {
        assert_eq!(
            texts(create_causes("CronJob", &cron(name, schedule))),
            errors
        );
    }
}
