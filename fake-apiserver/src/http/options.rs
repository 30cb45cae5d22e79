//! The options every write carries (`CreateOptions`, `UpdateOptions`, `PatchOptions`,
//! `DeleteOptions`), checked as the real handlers check them before anything is decoded or
//! stored (`ValidateCreateOptions` and its siblings in apimachinery's `meta/v1/validation`): a
//! bad option is a `422 Invalid` of kind `<Verb>Options` in `meta.k8s.io`, and nothing is
//! written.

use crate::error::{ApiError, StatusCause};
use crate::http::request::{go_bool, Query};
use crate::registry::semantics::DeleteOptions;
use crate::rules::options::{dry_run_cause, field_validation_cause};

/// A delete's options as the real delete handlers read them: from the body when there is one
/// (the query's options are then ignored), else from the query (`gracePeriodSeconds`,
/// `propagationPolicy`, `orphanDependents`, `dryRun`; preconditions have no query form).
pub fn delete_options(body: &[u8], query: &Query) -> Result<DeleteOptions, ApiError> {
    if !body.iter().all(u8::is_ascii_whitespace) {
        return DeleteOptions::from_body(body);
    }
    Ok(DeleteOptions {
        grace_period_seconds: query.int("gracePeriodSeconds")?,
        propagation_policy: query.get("propagationPolicy").map(str::to_string),
        orphan_dependents: query.get("orphanDependents").map(go_bool),
        dry_run: query.all("dryRun").to_vec(),
        ..DeleteOptions::default()
    })
}

/// Checks the options of a create, update or patch (`kind` is `CreateOptions`, `UpdateOptions`
/// or `PatchOptions`; `apply` for a server-side apply patch), in the order the real validation
/// reports them: `force` and the apply's required `fieldManager`, the field manager's form,
/// `dryRun`, `fieldValidation`.
pub fn check_write_options(query: &Query, kind: &str, apply: bool) -> Result<(), ApiError> {
    let mut causes = Vec::new();
    let manager = query.get("fieldManager").unwrap_or_default();
    if kind == "PatchOptions" {
        if !apply && query.get("force").is_some() {
            causes.push(StatusCause::forbidden(
                "force",
                "may not be specified for non-apply patch",
            ));
        }
        if apply && manager.is_empty() {
            causes.push(StatusCause::required(
                "fieldManager",
                "is required for apply patch",
            ));
        }
    }
    causes.extend(crate::apply::validate_field_manager(manager));
    causes.extend(dry_run_cause(query.all("dryRun")));
    causes.extend(field_validation_cause(query.get("fieldValidation")));
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid("meta.k8s.io", kind, "", causes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn message(query: &str, kind: &str, apply: bool) -> Option<(u16, String)> {
        check_write_options(&Query::parse(Some(query)), kind, apply)
            .err()
            .map(|e| (e.code, e.message))
    }

    #[rstest]
    #[case("", "CreateOptions", false)]
    #[case("dryRun=All", "CreateOptions", false)]
    #[case("dryRun=All&dryRun=All", "UpdateOptions", false)]
    #[case("fieldValidation=Strict", "CreateOptions", false)]
    #[case("fieldValidation=Ignore&dryRun=All", "PatchOptions", false)]
    #[case("fieldValidation=", "UpdateOptions", false)]
    #[case("fieldManager=me&force=true", "PatchOptions", true)]
    fn accepts_valid_options(#[case] query: &str, #[case] kind: &str, #[case] apply: bool) {
        assert_eq!(message(query, kind, apply), None);
    }

    #[rstest]
    #[case(
        "dryRun=Bogus",
        "CreateOptions",
        "CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: [\"Bogus\"]: supported values: \"All\""
    )]
    #[case(
        "dryRun=All&dryRun=true",
        "UpdateOptions",
        "UpdateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: [\"All\",\"true\"]: supported values: \"All\""
    )]
    #[case(
        "dryRun=",
        "PatchOptions",
        "PatchOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: [\"\"]: supported values: \"All\""
    )]
    #[case(
        "fieldValidation=strict",
        "CreateOptions",
        "CreateOptions.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: \"strict\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\""
    )]
    #[case(
        "fieldValidation=Bad&dryRun=No&force=true",
        "PatchOptions",
        "PatchOptions.meta.k8s.io \"\" is invalid: [force: Forbidden: may not be specified for non-apply patch, dryRun: Unsupported value: [\"No\"]: supported values: \"All\", fieldValidation: Unsupported value: \"Bad\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"]"
    )]
    fn refuses_bad_options(#[case] query: &str, #[case] kind: &str, #[case] expected: &str) {
        assert_eq!(
            message(query, kind, false),
            Some((422, expected.to_string()))
        );
    }

    #[test]
    fn delete_options_come_from_the_body_when_there_is_one() {
        let query = Query::parse(Some(
            "dryRun=All&propagationPolicy=Orphan&gracePeriodSeconds=5&orphanDependents=yes",
        ));
        let from_query = delete_options(b"", &query).unwrap();
        assert_eq!(from_query.dry_run, ["All"]);
        assert_eq!(from_query.propagation_policy.as_deref(), Some("Orphan"));
        assert_eq!(from_query.grace_period_seconds, Some(5));
        assert_eq!(from_query.orphan_dependents, Some(true));
        let from_body = delete_options(br#"{"gracePeriodSeconds":1}"#, &query).unwrap();
        assert!(from_body.dry_run.is_empty());
        assert_eq!(from_body.propagation_policy, None);
        assert_eq!(from_body.grace_period_seconds, Some(1));
        assert!(delete_options(br#"{"dryRun":"All"}"#, &Query::default()).is_err());
    }
}
