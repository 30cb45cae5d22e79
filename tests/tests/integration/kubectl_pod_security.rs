//! The real `kubectl` against the fake API server's `PodSecurity` admission: labelling a
//! namespace with an enforce level warns about the pods already there, `kubectl run` is then
//! refused with the real message, and a workload is admitted with the warning.

use crate::kubectl_support;

use kubectl_support::Cluster;

#[test]
fn kubectl_label_warns_then_run_is_refused_and_a_deployment_is_warned_about() {
    let cluster = Cluster::start();
    cluster
        .kubectl(&["create", "namespace", "team"])
        .ok()
        .stdout_is("namespace/team created\n");
    cluster
        .kubectl(&["run", "old", "--image=nginx", "-n", "team"])
        .ok()
        .stdout_is("pod/old created\n");
    cluster
        .kubectl(&[
            "label",
            "namespace",
            "team",
            "pod-security.kubernetes.io/enforce=restricted",
        ])
        .ok()
        .stdout_is("namespace/team labeled\n")
        .stderr_has("Warning: existing pods in namespace \"team\" violate the new PodSecurity enforce level \"restricted:latest\"\nWarning: old: allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile\n");

    cluster
        .kubectl(&["run", "web", "--image=nginx", "-n", "team"])
        .fails()
        .stderr_has("Error from server (Forbidden): pods \"web\" is forbidden: violates PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false (container \"web\" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container \"web\" must set securityContext.capabilities.drop=[\"ALL\"]), runAsNonRoot != true (pod or container \"web\" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container \"web\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")");

    cluster
        .kubectl(&["create", "deployment", "api", "--image=nginx", "-n", "team"])
        .ok()
        .stdout_is("deployment.apps/api created\n")
        .stderr_has("Warning: would violate PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false (container \"nginx\" must set securityContext.allowPrivilegeEscalation=false)");

    cluster
        .kubectl(&[
            "label",
            "namespace",
            "team",
            "--overwrite",
            "pod-security.kubernetes.io/enforce=strict",
        ])
        .fails()
        .stderr_has("The Namespace \"team\" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: \"strict\": must be one of privileged, baseline, restricted");
}
