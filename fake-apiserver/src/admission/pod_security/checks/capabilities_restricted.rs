//! STUB: `capabilities_restricted` — to be written (see upstream's `policy/check_capabilities_restricted.go`).

use serde_json::Value;

use crate::admission::pod_security::policy::Level;
use crate::admission::pod_security::registry::{Check, CheckResult, VersionedCheck};

/// The check.
pub(crate) const CHECK: Check = Check {
    id: "capabilities_restricted",
    level: Level::Restricted,
    versions: &[VersionedCheck {
        minimum_version: 0,
        check_pod: stub,
        override_check_ids: &[],
    }],
};

fn stub(_metadata: &Value, _spec: &Value) -> CheckResult {
    CheckResult::allowed()
}
