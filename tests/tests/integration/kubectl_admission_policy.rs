//! The real `kubectl` against ValidatingAdmissionPolicies: a policy and its binding applied from
//! YAML, then a Deployment that breaks it refused by `kubectl apply` (and `kubectl patch`) with
//! the message a real server gives, and a Warn binding's message printed as kubectl prints server warnings.

use crate::kubectl_support;

use kubectl_support::Cluster;

const POLICY: &str = r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: max-replicas
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: ["apps"]
      apiVersions: ["v1"]
      operations: ["CREATE", "UPDATE"]
      resources: ["deployments"]
  validations:
  - expression: "object.spec.replicas <= 5"
    messageExpression: "'replicas must be no greater than 5, got ' + string(object.spec.replicas)"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: max-replicas-binding
spec:
  policyName: max-replicas
  validationActions: [Deny]
"#;

const LABEL_POLICY: &str = r#"
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: team-label
spec:
  matchConstraints:
    resourceRules:
    - apiGroups: [""]
      apiVersions: ["v1"]
      operations: ["CREATE"]
      resources: ["configmaps"]
  validations:
  - expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"
    message: "every ConfigMap should have a team label"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: team-label-warn
spec:
  policyName: team-label
  validationActions: [Warn]
"#;

fn deployment(replicas: u32) -> String {
    format!(
        r#"
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  replicas: {replicas}
  selector:
    matchLabels: {{app: web}}
  template:
    metadata:
      labels: {{app: web}}
    spec:
      containers:
      - name: web
        image: nginx
"#
    )
}

#[test]
fn kubectl_apply_is_refused_by_a_policy_with_the_real_message() {
    let cluster = Cluster::start();
    cluster
        .kubectl(&["apply", "-f", &cluster.write("policy.yaml", POLICY)])
        .ok()
        .stdout_is(
            "validatingadmissionpolicy.admissionregistration.k8s.io/max-replicas created\n\
             validatingadmissionpolicybinding.admissionregistration.k8s.io/max-replicas-binding created\n",
        );
    let too_many = cluster.write("web.yaml", &deployment(10));
    cluster
        .kubectl(&["apply", "-f", &too_many])
        .fails()
        // kubectl prints an Invalid Status through its causes; the policy's cause has no field,
        // hence the `: :` (a real server's answer reads the same).
        .stderr_has(
            "The deployments \"web\" is invalid: : ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: replicas must be no greater than 5, got 10",
        );
    cluster
        .kubectl(&["apply", "-f", &cluster.write("web3.yaml", &deployment(3))])
        .ok()
        .stdout_is("deployment.apps/web created\n");
    cluster
        .kubectl(&["scale", "deployment/web", "--replicas=3"])
        .ok();
    cluster
        .kubectl(&[
            "patch",
            "deployment/web",
            "-p",
            r#"{"spec":{"replicas":7}}"#,
        ])
        .fails()
        .stderr_has("denied request: replicas must be no greater than 5, got 7");
}

#[test]
fn a_warn_binding_prints_a_warning() {
    let cluster = Cluster::start();
    cluster
        .kubectl(&["apply", "-f", &cluster.write("policy.yaml", LABEL_POLICY)])
        .ok();
    cluster
        .kubectl(&["create", "configmap", "settings", "--from-literal=a=1"])
        .ok()
        .stdout_is("configmap/settings created\n")
        .stderr_has("Warning: Validation failed for ValidatingAdmissionPolicy 'team-label' with binding 'team-label-warn': every ConfigMap should have a team label");
}
