//! The Pod Security Standards' checks, one module each, named after upstream's
//! `policy/check_<id>.go`.

use super::registry::Check;

mod allow_privilege_escalation;
mod app_armor_profile;
mod capabilities_baseline;
mod capabilities_restricted;
mod host_namespaces;
mod host_path_volumes;
mod host_ports;
mod host_probes_and_host_lifecycle;
mod privileged;
mod proc_mount;
mod restricted_volumes;
mod run_as_non_root;
mod run_as_user;
mod se_linux_options;
mod seccomp_profile_baseline;
mod seccomp_profile_restricted;
mod sysctls;
mod windows_host_process;

/// Every check of the default registry (`DefaultChecks`), in no particular order (the registry
/// orders them).
pub(crate) static ALL: &[Check] = &[
    allow_privilege_escalation::CHECK,
    app_armor_profile::CHECK,
    capabilities_baseline::CHECK,
    capabilities_restricted::CHECK,
    host_namespaces::CHECK,
    host_path_volumes::CHECK,
    host_ports::CHECK,
    host_probes_and_host_lifecycle::CHECK,
    privileged::CHECK,
    proc_mount::CHECK_BASELINE,
    proc_mount::CHECK_RESTRICTED,
    restricted_volumes::CHECK,
    run_as_non_root::CHECK,
    run_as_user::CHECK,
    se_linux_options::CHECK,
    seccomp_profile_baseline::CHECK,
    seccomp_profile_restricted::CHECK,
    sysctls::CHECK,
    windows_host_process::CHECK,
];
