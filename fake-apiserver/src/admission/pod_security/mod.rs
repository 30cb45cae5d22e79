//! The `PodSecurity` admission plugin: the Pod Security Standards a namespace's
//! `pod-security.kubernetes.io/` labels set, enforced on pods, warned about on pods and on the
//! pod templates of workloads (upstream's `pod-security-admission`).

mod checks;
mod helpers;
pub(crate) mod policy;
pub(crate) mod registry;
