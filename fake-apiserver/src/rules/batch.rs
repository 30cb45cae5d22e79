//! Rules of `batch` Jobs and CronJobs, from `pkg/apis/batch/validation/validation.go` and
//! `pkg/registry/batch/job/strategy.go`: a Job's restart policy, immutable selector and template;
//! a CronJob's name length, schedule and policies. (The generated selector and labels of a new
//! Job are in [`crate::rules::defaults`], with the other create-time changes.)

use serde_json::Value;

use super::core::{nonnegative_fields, pod_template};
use super::{same, selector, str_of, Target};
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
            // `ValidateJobSpecUpdate`.
            for field in ["selector", "completionMode"] {
                if !same(old["spec"].get(field), new["spec"].get(field)) {
                    causes.push(Cause::invalid(
                        format!("spec.{field}"),
                        new["spec"].get(field).unwrap_or(&Value::Null),
                        "field is immutable",
                    ));
                }
            }
            let suspended = new["spec"]["suspend"].as_bool() == Some(true);
            if !suspended && !same(old["spec"].get("template"), new["spec"].get("template")) {
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
    let mut causes = Vec::new();
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
    causes.extend(job_spec(spec, "spec"));
    causes
}

/// `validateJobSpec`: counts, deadlines and the pod template, whose pods must not restart
/// `Always` (the pod default, so an unset policy is refused as `"Always"`).
fn job_spec(spec: &Value, path: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    nonnegative_fields(
        &mut causes,
        spec,
        path,
        &[
            "parallelism",
            "completions",
            "backoffLimit",
            "ttlSecondsAfterFinished",
        ],
    );
    if let Some(n) = spec["activeDeadlineSeconds"].as_i64() {
        if n <= 0 {
            causes.push(Cause::invalid(
                format!("{path}.activeDeadlineSeconds"),
                &Value::from(n),
                "must be greater than 0",
            ));
        }
    }
    let template = &spec["template"];
    causes.extend(pod_template(template, &format!("{path}.template")));
    let restart = match str_of(&template["spec"], "restartPolicy") {
        "" => "Always",
        other => other,
    };
    if restart != "OnFailure" && restart != "Never" {
        causes.push(Cause::not_supported(
            format!("{path}.template.spec.restartPolicy"),
            &Value::from(restart),
            &["OnFailure".into(), "Never".into()],
        ));
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

    fn texts(causes: Vec<Cause>) -> Vec<String> {
        causes.iter().map(Cause::error_text).collect()
    }

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
    #[case::unset(None, "spec.template.spec.restartPolicy: Unsupported value: \"Always\": supported values: \"OnFailure\", \"Never\"")]
    #[case::always(Some("Always"), "spec.template.spec.restartPolicy: Unsupported value: \"Always\": supported values: \"OnFailure\", \"Never\"")]
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
