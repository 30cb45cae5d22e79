//! The RBAC policy a real API server creates at start (`bootstrappolicy/policy.go`): the
//! user-facing roles (`cluster-admin`; `admin`, `edit` and `view`, aggregated from the
//! `system:aggregate-to-*` roles), the roles every client relies on (`system:discovery`,
//! `system:basic-user`, `system:public-info-viewer`), `system:auth-delegator` (for webhooks
//! and proxies to bind their service accounts to), the CertificateSigningRequest roles
//! (`system:node-bootstrapper`, the node client ones, the approvers of the Kubernetes signers)
//! and the bindings: `system:masters` is
//! cluster admin, every authenticated user may discover the API and review its own access, and
//! anyone (anonymous included) may read the health and version endpoints.

use serde_json::{json, Value};

const READ: &[&str] = &["get", "list", "watch"];
const WRITE: &[&str] = &["create", "update", "patch", "delete", "deletecollection"];
const READ_WRITE: &[&str] = &[
    "get",
    "list",
    "watch",
    "create",
    "update",
    "patch",
    "delete",
    "deletecollection",
];

fn rule(verbs: &[&str], group: &str, resources: &[&str]) -> Value {
    json!({"verbs": verbs, "apiGroups": [group], "resources": resources})
}

fn urls(verbs: &[&str], urls: &[&str]) -> Value {
    json!({"verbs": verbs, "nonResourceURLs": urls})
}

fn metadata(name: &str, labels: &[(&str, &str)]) -> Value {
    let mut all = serde_json::Map::new();
    all.insert("kubernetes.io/bootstrapping".into(), json!("rbac-defaults"));
    for (k, v) in labels {
        all.insert(k.to_string(), json!(v));
    }
    json!({
        "name": name,
        "labels": all,
        "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"},
    })
}

fn cluster_role(name: &str, labels: &[(&str, &str)], rules: Vec<Value>) -> Value {
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": metadata(name, labels),
        "rules": rules,
    })
}

fn aggregated(name: &str, labels: &[(&str, &str)], selector: &str) -> Value {
    let mut role = cluster_role(name, labels, Vec::new());
    role["aggregationRule"] =
        json!({"clusterRoleSelectors": [{"matchLabels": {selector: "true"}}]});
    role
}

fn group_binding(name: &str, groups: &[&str]) -> Value {
    let subjects: Vec<Value> = groups
        .iter()
        .map(|g| json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": g}))
        .collect();
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": metadata(name, &[]),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": subjects,
    })
}

/// The bootstrap ClusterRoles, aggregated roles first with empty rules (the aggregation
/// controller fills them in).
pub fn cluster_roles() -> Vec<Value> {
    const TO_ADMIN: (&str, &str) = ("rbac.authorization.k8s.io/aggregate-to-admin", "true");
    const TO_EDIT: (&str, &str) = ("rbac.authorization.k8s.io/aggregate-to-edit", "true");
    const TO_VIEW: (&str, &str) = ("rbac.authorization.k8s.io/aggregate-to-view", "true");
    vec![
        aggregated("admin", &[], TO_ADMIN.0),
        aggregated("edit", &[TO_ADMIN], TO_EDIT.0),
        aggregated("view", &[TO_EDIT], TO_VIEW.0),
        cluster_role(
            "cluster-admin",
            &[],
            vec![rule(&["*"], "*", &["*"]), urls(&["*"], &["*"])],
        ),
        cluster_role(
            "system:discovery",
            &[],
            vec![urls(
                &["get"],
                &[
                    "/api",
                    "/api/*",
                    "/apis",
                    "/apis/*",
                    "/healthz",
                    "/livez",
                    "/openapi",
                    "/openapi/*",
                    "/readyz",
                    "/version",
                    "/version/",
                ],
            )],
        ),
        // What a webhook or an auth proxy needs to delegate authentication and authorization
        // to the API server (both reviews only answer; they change nothing).
        cluster_role(
            "system:auth-delegator",
            &[],
            vec![
                rule(&["create"], "authentication.k8s.io", &["tokenreviews"]),
                rule(
                    &["create"],
                    "authorization.k8s.io",
                    &["subjectaccessreviews"],
                ),
            ],
        ),
        cluster_role(
            "system:basic-user",
            &[],
            vec![
                rule(
                    &["create"],
                    "authorization.k8s.io",
                    &["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                ),
                rule(
                    &["create"],
                    "authentication.k8s.io",
                    &["selfsubjectreviews"],
                ),
            ],
        ),
        cluster_role(
            "system:public-info-viewer",
            &[],
            vec![urls(
                &["get"],
                &["/healthz", "/livez", "/readyz", "/version", "/version/"],
            )],
        ),
        cluster_role(
            "system:aggregate-to-admin",
            &[TO_ADMIN],
            vec![
                rule(
                    &["create"],
                    "authorization.k8s.io",
                    &["localsubjectaccessreviews"],
                ),
                rule(
                    READ_WRITE,
                    "rbac.authorization.k8s.io",
                    &["roles", "rolebindings"],
                ),
            ],
        ),
        cluster_role(
            "system:aggregate-to-edit",
            &[TO_EDIT],
            vec![
                rule(
                    READ,
                    "",
                    &[
                        "pods/attach",
                        "pods/proxy",
                        "pods/exec",
                        "pods/portforward",
                        "secrets",
                        "services/proxy",
                    ],
                ),
                rule(&["impersonate"], "", &["serviceaccounts"]),
                rule(
                    WRITE,
                    "",
                    &[
                        "pods",
                        "pods/attach",
                        "pods/proxy",
                        "pods/exec",
                        "pods/portforward",
                    ],
                ),
                rule(&["create"], "", &["pods/eviction"]),
                rule(
                    WRITE,
                    "",
                    &[
                        "replicationcontrollers",
                        "replicationcontrollers/scale",
                        "serviceaccounts",
                        "services",
                        "services/proxy",
                        "persistentvolumeclaims",
                        "configmaps",
                        "secrets",
                        "events",
                    ],
                ),
                rule(&["create"], "", &["serviceaccounts/token"]),
                rule(
                    WRITE,
                    "apps",
                    &[
                        "statefulsets",
                        "statefulsets/scale",
                        "daemonsets",
                        "deployments",
                        "deployments/scale",
                        "deployments/rollback",
                        "replicasets",
                        "replicasets/scale",
                    ],
                ),
                rule(WRITE, "autoscaling", &["horizontalpodautoscalers"]),
                rule(WRITE, "batch", &["jobs", "cronjobs"]),
                rule(WRITE, "policy", &["poddisruptionbudgets"]),
                rule(
                    WRITE,
                    "networking.k8s.io",
                    &["networkpolicies", "ingresses"],
                ),
            ],
        ),
        cluster_role(
            "system:aggregate-to-view",
            &[TO_VIEW],
            vec![
                rule(
                    READ,
                    "",
                    &[
                        "pods",
                        "replicationcontrollers",
                        "replicationcontrollers/scale",
                        "serviceaccounts",
                        "services",
                        "services/status",
                        "endpoints",
                        "persistentvolumeclaims",
                        "persistentvolumeclaims/status",
                        "configmaps",
                    ],
                ),
                rule(
                    READ,
                    "",
                    &[
                        "limitranges",
                        "resourcequotas",
                        "bindings",
                        "events",
                        "pods/status",
                        "resourcequotas/status",
                        "namespaces/status",
                        "replicationcontrollers/status",
                        "pods/log",
                    ],
                ),
                rule(READ, "", &["namespaces"]),
                rule(READ, "discovery.k8s.io", &["endpointslices"]),
                rule(
                    READ,
                    "apps",
                    &[
                        "controllerrevisions",
                        "statefulsets",
                        "statefulsets/status",
                        "statefulsets/scale",
                        "daemonsets",
                        "daemonsets/status",
                        "deployments",
                        "deployments/status",
                        "deployments/scale",
                        "replicasets",
                        "replicasets/status",
                        "replicasets/scale",
                    ],
                ),
                rule(
                    READ,
                    "autoscaling",
                    &[
                        "horizontalpodautoscalers",
                        "horizontalpodautoscalers/status",
                    ],
                ),
                rule(
                    READ,
                    "batch",
                    &["cronjobs", "cronjobs/status", "jobs", "jobs/status"],
                ),
                rule(
                    READ,
                    "policy",
                    &["poddisruptionbudgets", "poddisruptionbudgets/status"],
                ),
                rule(
                    READ,
                    "networking.k8s.io",
                    &["networkpolicies", "ingresses", "ingresses/status"],
                ),
            ],
        ),
        // What a node's kubelet uses to ask for its client certificate, and the roles of the
        // approvers of the Kubernetes signers (`approve` on the one signer each).
        cluster_role(
            "system:node-bootstrapper",
            &[],
            vec![rule(
                &["create", "get", "list", "watch"],
                CERTIFICATES,
                &["certificatesigningrequests"],
            )],
        ),
        cluster_role(
            "system:certificates.k8s.io:certificatesigningrequests:nodeclient",
            &[],
            vec![rule(
                &["create"],
                CERTIFICATES,
                &["certificatesigningrequests/nodeclient"],
            )],
        ),
        cluster_role(
            "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient",
            &[],
            vec![rule(
                &["create"],
                CERTIFICATES,
                &["certificatesigningrequests/selfnodeclient"],
            )],
        ),
        signer_approver("kube-apiserver-client"),
        signer_approver("kube-apiserver-client-kubelet"),
        signer_approver("kubelet-serving"),
        signer_approver("legacy-unknown"),
    ]
}

const CERTIFICATES: &str = "certificates.k8s.io";

/// `system:certificates.k8s.io:<signer>-approver`: `approve` on the `kubernetes.io/<signer>`
/// signer.
fn signer_approver(signer: &str) -> Value {
    let mut approve = rule(&["approve"], CERTIFICATES, &["signers"]);
    approve["resourceNames"] = json!([format!("kubernetes.io/{signer}")]);
    cluster_role(
        &format!("system:certificates.k8s.io:{signer}-approver"),
        &[],
        vec![approve],
    )
}

/// The bootstrap ClusterRoleBindings.
pub fn cluster_role_bindings() -> Vec<Value> {
    vec![
        group_binding("cluster-admin", &["system:masters"]),
        group_binding("system:discovery", &["system:authenticated"]),
        group_binding("system:basic-user", &["system:authenticated"]),
        group_binding(
            "system:public-info-viewer",
            &["system:authenticated", "system:unauthenticated"],
        ),
    ]
}
