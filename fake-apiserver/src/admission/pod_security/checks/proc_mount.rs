//! STUB: `procMount` (baseline) and `procMount_restricted` — to be written (see upstream's
//! `policy/check_procMount_baseline.go` and `check_procMount_restricted.go`).

use serde_json::Value;

use crate::admission::pod_security::policy::Level;
use crate::admission::pod_security::registry::{Check, CheckResult, VersionedCheck};

/// The baseline check.
pub(crate) const CHECK_BASELINE: Check = Check {
    id: "procMount",
    level: Level::Baseline,
    versions: &[VersionedCheck {
        minimum_version: 0,
        check_pod: stub,
        override_check_ids: &[],
    }],
};

/// The restricted check.
pub(crate) const CHECK_RESTRICTED: Check = Check {
    id: "procMount_restricted",
    level: Level::Restricted,
    versions: &[VersionedCheck {
        minimum_version: 35,
        check_pod: stub,
        override_check_ids: &["procMount"],
    }],
};

fn stub(_metadata: &Value, _spec: &Value) -> CheckResult {
    CheckResult::allowed()
}
