//! The checks of each level at each version, and what running them makes of a pod (upstream's
//! `policy/checks.go` and `policy/registry.go`).
//!
//! A level's checks at a version: for each check of that level (for `restricted`, of `baseline`
//! too, less the baseline checks a restricted check overrides at that version), the newest of
//! its versioned implementations not newer than the version. Checks run baseline first, then
//! restricted, each group by ID, so the reasons of a refusal always come in that order.
//! `latest`, and any version newer than the server, is the server's own version (1.36 here: the
//! evaluator's emulation version caps it).

use serde_json::Value;

use super::checks;
use super::policy::{Level, LevelVersion, Version};

/// The newest policy version this server evaluates; `latest` and newer versions mean it.
pub(crate) const MAX_VERSION: u32 = 36;

/// What one check makes of a pod (`CheckResult`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CheckResult {
    /// The pod passes.
    pub allowed: bool,
    /// A short reason (`"allowPrivilegeEscalation != false"`); set when not allowed.
    pub forbidden_reason: String,
    /// The detail: which containers, fields or values (may be empty).
    pub forbidden_detail: String,
}

impl CheckResult {
    /// The pod passes this check.
    pub(crate) fn allowed() -> Self {
        CheckResult {
            allowed: true,
            forbidden_reason: String::new(),
            forbidden_detail: String::new(),
        }
    }

    /// The pod fails this check.
    pub(crate) fn forbidden(reason: impl Into<String>, detail: impl Into<String>) -> Self {
        CheckResult {
            allowed: false,
            forbidden_reason: reason.into(),
            forbidden_detail: detail.into(),
        }
    }
}

/// A check's implementation: the pod's (or template's) metadata and spec → its result.
pub(crate) type CheckPodFn = fn(metadata: &Value, spec: &Value) -> CheckResult;

/// One implementation of a check, in force from `minimum_version` (`v1.<minor>`) until the
/// check's next one (`VersionedCheck`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct VersionedCheck {
    /// The first `v1.<minor>` this implementation applies to.
    pub minimum_version: u32,
    /// The implementation.
    pub check_pod: CheckPodFn,
    /// Baseline checks this restricted check replaces at these versions.
    pub override_check_ids: &'static [&'static str],
}

/// A named check of one level with its implementations by version, oldest first (`Check`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Check {
    /// Its ID (`"allowPrivilegeEscalation"`).
    pub id: &'static str,
    /// `Baseline` or `Restricted`.
    pub level: Level,
    /// Its implementations, by strictly increasing minimum version.
    pub versions: &'static [VersionedCheck],
}

impl Check {
    /// The implementation in force at `v1.<minor>`, if the check exists then.
    fn at(&self, minor: u32) -> Option<&VersionedCheck> {
        self.versions
            .iter()
            .rev()
            .find(|v| v.minimum_version <= minor)
    }
}

/// Every check in evaluation order: baseline first, then restricted; by ID within each (sorted
/// once, not on every evaluation).
static ORDERED_CHECKS: std::sync::LazyLock<Vec<&'static Check>> = std::sync::LazyLock::new(|| {
    let mut all: Vec<&Check> = checks::ALL.iter().collect();
    all.sort_by(|a, b| (a.level, a.id).cmp(&(b.level, b.id)));
    all
});

/// The checks of `level` at `version`, by ID, in evaluation order.
fn checks_at(level: Level, version: Version) -> Vec<(&'static str, CheckPodFn)> {
    let minor = match version {
        Version::V1(minor) => minor.min(u64::from(MAX_VERSION)) as u32,
        Version::Latest => MAX_VERSION,
    };
    let all = &*ORDERED_CHECKS;
    let overridden: Vec<&str> = match level {
        Level::Restricted => all
            .iter()
            .filter(|c| c.level == Level::Restricted)
            .filter_map(|c| c.at(minor))
            .flat_map(|v| v.override_check_ids.iter().copied())
            .collect(),
        _ => Vec::new(),
    };
    all.iter()
        .filter(|c| c.level <= level && !overridden.contains(&c.id))
        .filter_map(|c| c.at(minor).map(|v| (c.id, v.check_pod)))
        .collect()
}

/// Runs the checks of `lv` on a pod (`EvaluatePod`); `privileged` runs none.
pub(crate) fn evaluate_pod(
    lv: LevelVersion,
    metadata: &Value,
    spec: &Value,
) -> AggregateCheckResult {
    if lv.level == Level::Privileged {
        return AggregateCheckResult::default();
    }
    let results = checks_at(lv.level, lv.version)
        .into_iter()
        .map(|(_, check)| check(metadata, spec));
    AggregateCheckResult::of(results)
}

/// The failed checks of one evaluation, in order (`AggregateCheckResult`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct AggregateCheckResult {
    /// `(reason, detail)` of each failed check.
    pub forbidden: Vec<(String, String)>,
}

impl AggregateCheckResult {
    /// The failures among `results` (`AggregateCheckResults`).
    fn of(results: impl IntoIterator<Item = CheckResult>) -> Self {
        let forbidden = results
            .into_iter()
            .filter(|r| !r.allowed)
            .map(|r| {
                let reason = if r.forbidden_reason.is_empty() {
                    "unknown forbidden reason".to_string()
                } else {
                    r.forbidden_reason
                };
                (reason, r.forbidden_detail)
            })
            .collect();
        AggregateCheckResult { forbidden }
    }

    /// No check failed.
    pub(crate) fn allowed(&self) -> bool {
        self.forbidden.is_empty()
    }

    /// The reasons, comma-separated (`ForbiddenReason`).
    pub(crate) fn forbidden_reason(&self) -> String {
        let reasons: Vec<&str> = self.forbidden.iter().map(|(r, _)| r.as_str()).collect();
        reasons.join(", ")
    }

    /// Each reason with its detail in parentheses, comma-separated (`ForbiddenDetail`).
    pub(crate) fn forbidden_detail(&self) -> String {
        let parts: Vec<String> = self
            .forbidden
            .iter()
            .map(|(reason, detail)| match detail.is_empty() {
                true => reason.clone(),
                false => format!("{reason} ({detail})"),
            })
            .collect();
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ids_at(level: Level, version: Version) -> Vec<&'static str> {
        checks_at(level, version)
            .into_iter()
            .map(|(id, _)| id)
            .collect()
    }

    #[test]
    fn every_check_has_strictly_increasing_versions_and_a_known_level() {
        let mut ids = std::collections::BTreeSet::new();
        for check in checks::ALL {
            assert!(ids.insert(check.id), "duplicate check {}", check.id);
            assert_ne!(check.level, Level::Privileged, "{}", check.id);
            assert!(!check.versions.is_empty(), "{}", check.id);
            for pair in check.versions.windows(2) {
                assert!(
                    pair[0].minimum_version < pair[1].minimum_version,
                    "{}",
                    check.id
                );
            }
            for v in check.versions {
                if !v.override_check_ids.is_empty() {
                    assert_eq!(check.level, Level::Restricted, "{}", check.id);
                }
            }
        }
    }

    #[test]
    fn baseline_checks_run_before_restricted_ones_and_by_id() {
        let ids = ids_at(Level::Restricted, Version::Latest);
        let first_restricted = ids
            .iter()
            .position(|id| {
                checks::ALL
                    .iter()
                    .any(|c| c.id == *id && c.level == Level::Restricted)
            })
            .unwrap_or(ids.len());
        let (baseline, restricted) = ids.split_at(first_restricted);
        assert!(baseline.windows(2).all(|w| w[0] < w[1]), "{baseline:?}");
        assert!(restricted.windows(2).all(|w| w[0] < w[1]), "{restricted:?}");
        assert!(restricted.iter().all(|id| !baseline.contains(id)));
    }

    #[test]
    fn restricted_overrides_replace_their_baseline_checks() {
        let latest = ids_at(Level::Restricted, Version::Latest);
        for overridden in [
            "capabilities_baseline",
            "hostPathVolumes",
            "seccompProfile_baseline",
            "procMount",
        ] {
            assert!(!latest.contains(&overridden), "{overridden} in {latest:?}");
        }
        assert!(ids_at(Level::Baseline, Version::Latest).contains(&"procMount"));
        // Before 1.22 the restricted capabilities check did not exist.
        assert!(ids_at(Level::Restricted, Version::V1(21)).contains(&"capabilities_baseline"));
        assert!(!ids_at(Level::Restricted, Version::V1(21)).contains(&"capabilities_restricted"));
    }

    #[test]
    fn versions_newer_than_the_server_are_latest() {
        assert_eq!(
            ids_at(Level::Restricted, Version::V1(99)),
            ids_at(Level::Restricted, Version::Latest)
        );
        assert!(!ids_at(Level::Baseline, Version::V1(33)).contains(&"hostProbesAndHostLifecycle"));
        assert!(ids_at(Level::Baseline, Version::V1(34)).contains(&"hostProbesAndHostLifecycle"));
    }

    #[test]
    fn privileged_checks_nothing() {
        let spec = json!({"hostNetwork": true, "containers": [{"name": "c", "securityContext": {"privileged": true}}]});
        assert!(evaluate_pod(LevelVersion::PRIVILEGED_LATEST, &json!({}), &spec).allowed());
    }

    #[test]
    fn details_join_reasons_in_order_with_parenthesized_details() {
        let result = AggregateCheckResult::of([
            CheckResult::forbidden("a", "x"),
            CheckResult::allowed(),
            CheckResult::forbidden("b", ""),
            CheckResult::forbidden("", "y"),
        ]);
        assert_eq!(result.forbidden_reason(), "a, b, unknown forbidden reason");
        assert_eq!(
            result.forbidden_detail(),
            "a (x), b, unknown forbidden reason (y)"
        );
    }
}
