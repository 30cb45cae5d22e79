//! Running admission expressions as the apiserver's CEL filter words their errors, and
//! `matchConditions` as `matchconditions.matcher.Match` decides them: shared by admission
//! webhooks and ValidatingAdmissionPolicies.

use serde_json::Value;

use super::{compile, ResultKind};

/// Compiles (cached) and runs `expr` with `vars` over the variables `declared`; an error is
/// worded as the filter reports it (`compilation error: ...`, `expression 'E' resulted in
/// error: ...`).
pub fn run<'v>(
    expr: &str,
    declared: &[&str],
    kind: ResultKind,
    vars: Vec<(&str, Box<dyn cel::common::value::Val + 'v>)>,
) -> Result<cel::Value, String> {
    let program =
        compile(expr, declared, kind).map_err(|e| format!("compilation error: {}", e.detail()))?;
    program
        .eval(vars)
        .map_err(|e| format!("expression '{expr}' resulted in error: {}", e.message))
}

/// Decides a list of `matchConditions` with `run`: `Ok(false)` as soon as one is `false`;
/// otherwise the errors of those that failed, if any (the caller applies its failure policy);
/// otherwise `Ok(true)`.
pub fn match_conditions(
    conditions: &Value,
    run: impl Fn(&str) -> Result<cel::Value, String>,
) -> Result<bool, Vec<String>> {
    let mut errors = Vec::new();
    for condition in conditions.as_array().into_iter().flatten() {
        match run(condition["expression"].as_str().unwrap_or_default()) {
            Ok(cel::Value::Bool(false)) => return Ok(false),
            Ok(_) => {}
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() {
        Ok(true)
    } else {
        Err(errors)
    }
}
