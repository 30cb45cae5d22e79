//! The API server's half of garbage collection: which of the garbage collector's finalizers
//! (`orphan`, `foregroundDeletion`) a DELETE leaves on an object.
//!
//! The real server decides this in the generic registry store
//! (`deletionFinalizersForGarbageCollection`, from `shouldOrphanDependents` and
//! `shouldDeleteDependents`): an explicit `orphanDependents` or `propagationPolicy` wins, then a
//! garbage-collection finalizer already on the object, then the kind's default
//! (`DefaultGarbageCollectionPolicy` of its strategy). The server only sets the finalizers; the
//! garbage collector ([`crate::controllers::garbage_collector`]) acts on them.

use serde_json::{json, Value};

use crate::error::ApiError;
use crate::registry::semantics::DeleteOptions;
use crate::resource::ResourceInfo;
use crate::rules::validation::Cause;

/// The finalizer that makes the garbage collector orphan an object's dependents before it goes.
pub const ORPHAN: &str = "orphan";
/// The finalizer that keeps an object until its blocking dependents are deleted.
pub const FOREGROUND: &str = "foregroundDeletion";

/// The warning a Job DELETE without a policy gets (batch/v1 Jobs orphan their pods by default).
pub const JOB_DEFAULT_ORPHAN_WARNING: &str = "child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning";

/// Whether the kind's strategy orphans dependents when a DELETE names no policy: the served
/// versions of ReplicationControllers (`v1`) and Jobs (`batch/v1`) do, for backwards
/// compatibility; every other kind (and every custom resource) deletes them in the background.
pub fn orphans_by_default(info: &ResourceInfo) -> bool {
    if info.custom {
        return false;
    }
    matches!(
        (
            info.group.as_str(),
            info.version.as_str(),
            info.kind.as_str()
        ),
        ("", "v1", "ReplicationController") | ("batch", "v1", "Job")
    )
}

/// `ValidateDeleteOptions`: the policy must be one of the three, and not given together with the
/// deprecated `orphanDependents`; `dryRun` may only be `All`.
pub fn validate(opts: &DeleteOptions) -> Result<(), ApiError> {
    let mut causes = Vec::new();
    if let (Some(_), Some(policy)) = (opts.orphan_dependents, &opts.propagation_policy) {
        causes.push(Cause::invalid_str(
            "propagationPolicy",
            policy,
            "orphanDependents and deletionPropagation cannot be both set",
        ));
    }
    if let Some(policy) = &opts.propagation_policy {
        if !matches!(policy.as_str(), "Foreground" | "Background" | "Orphan") {
            let supported: Vec<String> = ["Foreground", "Background", "Orphan", "nil"]
                .iter()
                .map(|s| s.to_string())
                .collect();
            causes.push(Cause::not_supported(
                "propagationPolicy",
                &json!(policy),
                &supported,
            ));
        }
    }
    causes.extend(crate::rules::options::dry_run_cause(&opts.dry_run));
    if causes.is_empty() {
        return Ok(());
    }
    Err(ApiError::invalid(
        "meta.k8s.io",
        "DeleteOptions",
        "",
        causes,
    ))
}

/// `shouldOrphanDependents`.
pub fn should_orphan(info: &ResourceInfo, finalizers: &[String], opts: &DeleteOptions) -> bool {
    if let Some(orphan) = opts.orphan_dependents {
        return orphan;
    }
    match opts.propagation_policy.as_deref() {
        Some("Orphan") => return true,
        Some("Background" | "Foreground") => return false,
        _ => {}
    }
    for f in finalizers {
        match f.as_str() {
            ORPHAN => return true,
            FOREGROUND => return false,
            _ => {}
        }
    }
    orphans_by_default(info)
}

/// `shouldDeleteDependents` (foreground deletion).
pub fn should_delete_dependents(finalizers: &[String], opts: &DeleteOptions) -> bool {
    if opts.orphan_dependents.is_some() {
        return false;
    }
    match opts.propagation_policy.as_deref() {
        Some("Foreground") => return true,
        Some("Background" | "Orphan") => return false,
        _ => {}
    }
    for f in finalizers {
        match f.as_str() {
            FOREGROUND => return true,
            ORPHAN => return false,
            _ => {}
        }
    }
    false
}

/// The object's finalizers after a DELETE, or `None` when the DELETE leaves them as they are.
/// The garbage-collection finalizers are removed and added back as the rules say, after the
/// others.
pub fn finalizers_after_delete(
    info: &ResourceInfo,
    finalizers: &[String],
    opts: &DeleteOptions,
) -> Option<Vec<String>> {
    let orphan = should_orphan(info, finalizers, opts);
    let foreground = should_delete_dependents(finalizers, opts);
    let mut next: Vec<String> = finalizers
        .iter()
        .filter(|f| f.as_str() != ORPHAN && f.as_str() != FOREGROUND)
        .cloned()
        .collect();
    if orphan {
        next.push(ORPHAN.to_string());
    }
    if foreground {
        next.push(FOREGROUND.to_string());
    }
    let as_set = |v: &[String]| v.iter().cloned().collect::<std::collections::BTreeSet<_>>();
    if as_set(&next) == as_set(finalizers) {
        None
    } else {
        Some(next)
    }
}

/// The warning a DELETE gets when it leaves the policy to a kind that orphans by default and
/// warns about it (Jobs).
pub fn default_policy_warning(info: &ResourceInfo, opts: &DeleteOptions) -> Option<&'static str> {
    let is_job = info.is_builtin("batch", "Job");
    (is_job
        && opts.propagation_policy.is_none()
        && opts.orphan_dependents.is_none()
        && orphans_by_default(info))
    .then_some(JOB_DEFAULT_ORPHAN_WARNING)
}

/// The `metadata.finalizers` of an object, as strings.
pub fn finalizers_of(object: &Value) -> Vec<String> {
    object["metadata"]["finalizers"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|f| f.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::builtin_resources;
    use rstest::rstest;

    fn builtin(group: &str, plural: &str) -> ResourceInfo {
        builtin_resources()
            .into_iter()
            .find(|r| r.group == group && r.plural == plural)
            .unwrap()
    }

    fn opts(policy: Option<&str>, orphan: Option<bool>) -> DeleteOptions {
        DeleteOptions {
            propagation_policy: policy.map(str::to_string),
            orphan_dependents: orphan,
            ..Default::default()
        }
    }

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[rstest]
    #[case::deployment_default("apps", "deployments", None, None, &[], None)]
    #[case::job_default_orphans("batch", "jobs", None, None, &[], Some(&["orphan"][..]))]
    #[case::rc_default_orphans("", "replicationcontrollers", None, None, &[], Some(&["orphan"][..]))]
    #[case::job_background("batch", "jobs", Some("Background"), None, &[], None)]
    #[case::foreground("apps", "deployments", Some("Foreground"), None, &["a.io/x"], Some(&["a.io/x", "foregroundDeletion"][..]))]
    #[case::orphan_replaces_foreground("", "configmaps", Some("Orphan"), None, &["foregroundDeletion"], Some(&["orphan"][..]))]
    #[case::existing_finalizer_kept("", "configmaps", None, None, &["orphan"], None)]
    #[case::orphan_dependents_false("batch", "jobs", None, Some(false), &[], None)]
    #[case::orphan_dependents_true("", "configmaps", None, Some(true), &[], Some(&["orphan"][..]))]
    #[case::background_clears("", "configmaps", Some("Background"), None, &["orphan", "a.io/x"], Some(&["a.io/x"][..]))]
    fn finalizers_follow_the_generic_store(
        #[case] group: &str,
        #[case] plural: &str,
        #[case] policy: Option<&str>,
        #[case] orphan: Option<bool>,
        #[case] existing: &[&str],
        #[case] expected: Option<&[&str]>,
    ) {
        let info = builtin(group, plural);
        let got = finalizers_after_delete(&info, &strings(existing), &opts(policy, orphan));
        assert_eq!(got, expected.map(strings));
    }

    #[test]
    fn invalid_policies_are_refused_as_the_real_server_does() {
        let err = validate(&opts(Some("Sideways"), None)).unwrap_err();
        assert_eq!(err.code, 422);
        assert_eq!(
            err.message,
            "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported value: \"Sideways\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\""
        );
        let err = validate(&opts(Some("Orphan"), Some(true))).unwrap_err();
        assert!(
            err.message
                .contains("orphanDependents and deletionPropagation cannot be both set"),
            "{}",
            err.message
        );
        assert!(validate(&opts(Some("Foreground"), None)).is_ok());
    }

    #[test]
    fn only_jobs_warn_about_their_default() {
        let jobs = builtin("batch", "jobs");
        assert_eq!(
            default_policy_warning(&jobs, &opts(None, None)),
            Some(JOB_DEFAULT_ORPHAN_WARNING)
        );
        assert_eq!(
            default_policy_warning(&jobs, &opts(Some("Orphan"), None)),
            None
        );
        let rcs = builtin("", "replicationcontrollers");
        assert_eq!(default_policy_warning(&rcs, &opts(None, None)), None);
    }
}
