//! apimachinery's checks of the options a request carries (`meta/v1/validation`):
//! `ValidateDryRun` and `ValidateFieldValidation`, and what a valid `dryRun` means.

use serde_json::json;

use crate::rules::validation::Cause;

/// The one value `dryRun` may take.
pub const DRY_RUN_ALL: &str = "All";

/// The values `fieldValidation` may take, as `sets.List` orders them (the empty string is the
/// default, `Warn`).
const FIELD_VALIDATION_VALUES: [&str; 4] = ["", "Ignore", "Strict", "Warn"];

/// `ValidateDryRun`: every `dryRun` value must be `All`.
pub fn dry_run_cause(values: &[String]) -> Option<Cause> {
    if values.iter().all(|v| v == DRY_RUN_ALL) {
        return None;
    }
    Some(Cause::not_supported(
        "dryRun",
        &json!(values),
        &[DRY_RUN_ALL.to_string()],
    ))
}

/// `ValidateFieldValidation`: `fieldValidation` is empty, `Ignore`, `Warn` or `Strict`.
pub fn field_validation_cause(value: Option<&str>) -> Option<Cause> {
    let value = value?;
    if FIELD_VALIDATION_VALUES.contains(&value) {
        return None;
    }
    let supported: Vec<String> = FIELD_VALIDATION_VALUES
        .iter()
        .map(|v| v.to_string())
        .collect();
    Some(Cause::not_supported(
        "fieldValidation",
        &json!(value),
        &supported,
    ))
}

/// Whether a request with these (validated) `dryRun` values is a dry run (`dryrun.IsDryRun`:
/// any value at all).
pub fn is_dry_run(values: &[String]) -> bool {
    !values.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_all_is_a_valid_dry_run() {
        assert!(dry_run_cause(&[]).is_none());
        assert!(dry_run_cause(&["All".to_string(), "All".to_string()]).is_none());
        let cause = dry_run_cause(&["All".to_string(), "true".to_string()]).unwrap();
        assert_eq!(cause.field, "dryRun");
        assert_eq!(cause.reason, "FieldValueNotSupported");
        assert_eq!(
            cause.message,
            "Unsupported value: [\"All\",\"true\"]: supported values: \"All\""
        );
        assert!(!is_dry_run(&[]));
        assert!(is_dry_run(&["All".to_string()]));
    }

    #[test]
    fn field_validation_takes_the_four_directives() {
        for ok in ["", "Ignore", "Warn", "Strict"] {
            assert!(field_validation_cause(Some(ok)).is_none(), "{ok}");
        }
        assert!(field_validation_cause(None).is_none());
        assert_eq!(
            field_validation_cause(Some("warn")).unwrap().message,
            "Unsupported value: \"warn\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\""
        );
    }
}
