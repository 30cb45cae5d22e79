//! The kinds outside the core group and the controllers': `printHorizontalPodAutoscaler`
//! (`formatHPAMetrics`), `printLease`, `printIngress`
//! (`formatHosts`, `formatPorts`, `ingressLoadBalancerStatusStringer`), `printIngressClass`,
//! `printNetworkPolicy`, `printEndpointSlice` (`formatDiscoveryPorts`,
//! `formatDiscoveryEndpoints`, `listWithMoreString`), `printStorageClass`
//! (`storageutil.IsDefaultAnnotation`), `printPriorityClass`, `printMutatingWebhook`,
//! `printValidatingWebhook`, `printCertificateSigningRequest` (`extractCSRStatus`), `printValidatingAdmissionPolicy`,
//! `printValidatingAdmissionPolicyBinding`, `printRoleBinding` and `printClusterRoleBinding`
//! (`rbac.SubjectsStrings`).

use serde_json::{json, Value};

use super::{
    age_col, arr, col, computed, format_label_selector, int_col, int_string_col, name_col,
    pointer_or_none, str_of, text, Column, NAME_DESCRIPTION,
};

/// The other kinds' columns, `None` for a kind this module does not print.
pub(super) fn columns(group: &str, kind: &str) -> Option<Vec<Column>> {
    Some(match (group, kind) {
        ("coordination.k8s.io", "Lease") => vec![
            name_col(),
            col(
                "Holder",
                "string",
                "holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.",
                text(|o| str_of(&o["spec"]["holderIdentity"]).into()),
            ),
            age_col(),
        ],
        ("autoscaling", "HorizontalPodAutoscaler") => horizontal_pod_autoscaler(),
        ("networking.k8s.io", "Ingress") => ingress(),
        ("networking.k8s.io", "IngressClass") => vec![
            name_col(),
            col(
                "Controller",
                "string",
                "Controller that is responsible for handling this class",
                text(|o| str_of(&o["spec"]["controller"]).into()),
            ),
            col(
                "Parameters",
                "string",
                "A reference to a resource with additional parameters",
                text(ingress_class_parameters),
            ),
            age_col(),
        ],
        ("networking.k8s.io", "NetworkPolicy") => vec![
            name_col(),
            col(
                "Pod-Selector",
                "string",
                "Selects the pods to which this NetworkPolicy object applies.  The array of ingress rules is applied to any pods selected by this field. Multiple network policies can select the same set of pods.  In this case, the ingress rules for each are combined additively. This field is NOT optional and follows standard label selector semantics. An empty podSelector matches all pods in this namespace.",
                // `&obj.Spec.PodSelector`: never nil, so an absent selector is the empty one.
                text(|o| match &o["spec"]["podSelector"] {
                    Value::Null => format_label_selector(&json!({})),
                    selector => format_label_selector(selector),
                }),
            ),
            age_col(),
        ],
        ("discovery.k8s.io", "EndpointSlice") => endpoint_slice(),
        ("storage.k8s.io", "StorageClass") => storage_class(),
        // `printVolumeAttachment`.
        ("storage.k8s.io", "VolumeAttachment") => vec![
            name_col(),
            // (The attacher column has the `name` format too.)
            Column {
                format: "name",
                ..col(
                "Attacher",
                "string",
                "attacher indicates the name of the volume driver that MUST handle this request. This is the name returned by GetPluginName().",
                text(|o| str_of(&o["spec"]["attacher"]).into()),
            )
            },
            col(
                "PV",
                "string",
                "persistentVolumeName represents the name of the persistent volume to attach.",
                text(|o| str_of(&o["spec"]["source"]["persistentVolumeName"]).into()),
            ),
            col(
                "Node",
                "string",
                "nodeName represents the node that the volume should be attached to.",
                text(|o| str_of(&o["spec"]["nodeName"]).into()),
            ),
            col(
                "Attached",
                "boolean",
                "attached indicates the volume is successfully attached. This field must only be set by the entity completing the attach operation, i.e. the external-attacher.",
                computed(|o| json!(o["status"]["attached"].as_bool().unwrap_or(false))),
            ),
            age_col(),
        ],
        ("scheduling.k8s.io", "PriorityClass") => priority_class(),
        ("certificates.k8s.io", "CertificateSigningRequest") => certificate_signing_request(),
        // The aggregator's own `ConvertToTable`.
        ("apiregistration.k8s.io", "APIService") => vec![
            name_col(),
            col(
                "Service",
                "string",
                "The reference to the service that hosts this API endpoint.",
                text(crate::rules::apiregistration::printed_service),
            ),
            col(
                "Available",
                "string",
                "Whether this service is available.",
                text(crate::rules::apiregistration::printed_available),
            ),
            age_col(),
        ],
        // The description is `ObjectMeta`'s swagger doc for `handler`, which has none.
        ("node.k8s.io", "RuntimeClass") => vec![
            name_col(),
            col("Handler", "string", "", text(|o| str_of(&o["handler"]).into())),
            age_col(),
        ],
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration")
        | ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration") => vec![
            name_col(),
            int_col(
                "Webhooks",
                "Webhooks indicates the number of webhooks registered in this configuration",
                |o| Some(arr(&o["webhooks"]).len() as i64),
            ),
            age_col(),
        ],
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy") => vec![
            name_col(),
            int_col(
                "Validations",
                "Validations indicates the number of validation rules defined in this configuration",
                |o| Some(arr(&o["spec"]["validations"]).len() as i64),
            ),
            col(
                "ParamKind",
                "string",
                "ParamKind specifies the kind of resources used to parameterize this policy",
                text(|o| match &o["spec"]["paramKind"] {
                    Value::Null => "<unset>".into(),
                    kind => format!("{}/{}", str_of(&kind["apiVersion"]), str_of(&kind["kind"])),
                }),
            ),
            age_col(),
        ],
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding") => vec![
            name_col(),
            col(
                "PolicyName",
                "string",
                "PolicyName indicates the policy definition which the policy binding binded to",
                text(|o| str_of(&o["spec"]["policyName"]).into()),
            ),
            col(
                "ParamRef",
                "string",
                "ParamRef indicates the param resource which sets the configration param",
                text(policy_binding_param),
            ),
            age_col(),
        ],
        ("rbac.authorization.k8s.io", "RoleBinding") => role_binding(
            "roleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.",
            "roleBinding",
        ),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding") => role_binding(
            "roleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.",
            "clusterRoleBinding",
        ),
        _ => return None,
    })
}

/// `formatHosts`: up to three hosts of the rules, then `+ N more...` (counting every rule);
/// `*` when no rule names a host.
fn ingress_hosts(ingress: &Value) -> String {
    const MAX: usize = 3;
    let rules = arr(&ingress["spec"]["rules"]);
    let mut list: Vec<&str> = Vec::new();
    let mut more = false;
    for rule in rules {
        if list.len() == MAX {
            more = true;
        }
        let host = str_of(&rule["host"]);
        if !more && !host.is_empty() {
            list.push(host);
        }
    }
    if list.is_empty() {
        return "*".into();
    }
    let joined = list.join(",");
    if more {
        format!("{joined} + {} more...", rules.len() - MAX)
    } else {
        joined
    }
}

/// `ingressColumnDefinitions` and `printIngress`.
fn ingress() -> Vec<Column> {
    vec![
        name_col(),
        col(
            "Class",
            "string",
            "The name of the IngressClass resource that should be used for additional configuration",
            text(|o| pointer_or_none(&o["spec"]["ingressClassName"])),
        ),
        col(
            "Hosts",
            "string",
            "Hosts that incoming requests are matched against before the ingress rule",
            text(ingress_hosts),
        ),
        col(
            "Address",
            "string",
            "Address is a list containing ingress points for the load-balancer",
            text(|o| super::core_api::load_balancer_ingress(&o["status"])),
        ),
        col(
            "Ports",
            "string",
            "Ports of TLS configurations that open",
            // `formatPorts`.
            text(|o| {
                if arr(&o["spec"]["tls"]).is_empty() {
                    "80".into()
                } else {
                    "80, 443".into()
                }
            }),
        ),
        age_col(),
    ]
}

/// `printIngressClass`'s parameters: `kind[.apiGroup]/name`, `<none>` without.
fn ingress_class_parameters(class: &Value) -> String {
    let parameters = &class["spec"]["parameters"];
    if parameters.is_null() {
        return "<none>".into();
    }
    let mut out = str_of(&parameters["kind"]).to_string();
    if !parameters["apiGroup"].is_null() {
        out = format!("{out}.{}", str_of(&parameters["apiGroup"]));
    }
    format!("{out}/{}", str_of(&parameters["name"]))
}

/// `listWithMoreString`: the first three, then `+ N more...`; `<unset>` for none.
fn list_with_more(items: Vec<String>) -> String {
    const MAX: usize = 3;
    let count = items.len();
    if count > MAX {
        return format!("{} + {} more...", items[..MAX].join(","), count - MAX);
    }
    match items.join(",") {
        joined if joined.is_empty() => "<unset>".into(),
        joined => joined,
    }
}

/// `endpointSliceColumnDefinitions` and `printEndpointSlice`.
fn endpoint_slice() -> Vec<Column> {
    vec![
        name_col(),
        col(
            "AddressType",
            "string",
            "addressType specifies the type of address carried by this EndpointSlice. All addresses in this slice must be the same type. This field is immutable after creation. The following address types are currently supported: * IPv4: Represents an IPv4 Address. * IPv6: Represents an IPv6 Address. * FQDN: Represents a Fully Qualified Domain Name.",
            text(|o| str_of(&o["addressType"]).into()),
        ),
        col(
            "Ports",
            "string",
            "ports specifies the list of network ports exposed by each endpoint in this slice. Each port must have a unique name. When ports is empty, it indicates that there are no defined ports. When a port is defined with a nil port value, it indicates \"all ports\". Each slice may include a maximum of 100 ports.",
            // `formatDiscoveryPorts`: the number, else the name, else `*`.
            text(|o| {
                list_with_more(
                    arr(&o["ports"])
                        .iter()
                        .map(|p| match (&p["port"], &p["name"]) {
                            (Value::Null, Value::Null) => "*".to_string(),
                            (Value::Null, name) => str_of(name).to_string(),
                            (port, _) => port.as_i64().unwrap_or(0).to_string(),
                        })
                        .collect(),
                )
            }),
        ),
        col(
            "Endpoints",
            "string",
            "endpoints is a list of unique endpoints in this slice. Each slice may include a maximum of 1000 endpoints.",
            // `formatDiscoveryEndpoints`: every address of every endpoint.
            text(|o| {
                list_with_more(
                    arr(&o["endpoints"])
                        .iter()
                        .flat_map(|e| arr(&e["addresses"]))
                        .map(|a| str_of(a).to_string())
                        .collect(),
                )
            }),
        ),
        age_col(),
    ]
}

/// `storageClassColumnDefinitions` and `printStorageClass`: the default class's name says so.
fn storage_class() -> Vec<Column> {
    vec![
        col(
            "Name",
            "string",
            NAME_DESCRIPTION,
            text(|o| {
                let name = str_of(&o["metadata"]["name"]);
                let annotations = &o["metadata"]["annotations"];
                let default = annotations["storageclass.kubernetes.io/is-default-class"]
                    == "true"
                    || annotations["storageclass.beta.kubernetes.io/is-default-class"] == "true";
                if default {
                    format!("{name} (default)")
                } else {
                    name.into()
                }
            }),
        ),
        col(
            "Provisioner",
            "string",
            "provisioner indicates the type of the provisioner.",
            text(|o| str_of(&o["provisioner"]).into()),
        ),
        col(
            "ReclaimPolicy",
            "string",
            "reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class. Defaults to Delete.",
            text(|o| match &o["reclaimPolicy"] {
                Value::Null => "Delete".into(),
                policy => str_of(policy).into(),
            }),
        ),
        col(
            "VolumeBindingMode",
            "string",
            "volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.  When unset, VolumeBindingImmediate is used. This field is only honored by servers that enable the VolumeScheduling feature.",
            text(|o| match &o["volumeBindingMode"] {
                Value::Null => "Immediate".into(),
                mode => str_of(mode).into(),
            }),
        ),
        col(
            "AllowVolumeExpansion",
            "string",
            "allowVolumeExpansion shows whether the storage class allow volume expand.",
            computed(|o| json!(o["allowVolumeExpansion"].as_bool().unwrap_or(false))),
        ),
        age_col(),
    ]
}

/// `priorityClassColumnDefinitions` and `printPriorityClass`: the preemption policy is not a
/// wide column, though only the wide output fills it (as a real server always does).
/// `printCertificateSigningRequest`: the signer and requested duration (`<none>` when unset), the
/// requesting user and `extractCSRStatus`.
fn certificate_signing_request() -> Vec<Column> {
    vec![
        name_col(),
        age_col(),
        col(
            "SignerName",
            "string",
            CSR_SIGNER_NAME_DESCRIPTION,
            text(|o| match str_of(&o["spec"]["signerName"]) {
                "" => "<none>".into(),
                signer => signer.into(),
            }),
        ),
        col(
            "Requestor",
            "string",
            CSR_REQUEST_DESCRIPTION,
            text(|o| str_of(&o["spec"]["username"]).into()),
        ),
        col(
            "RequestedDuration",
            "string",
            CSR_EXPIRATION_SECONDS_DESCRIPTION,
            text(|o| match o["spec"]["expirationSeconds"].as_i64() {
                Some(seconds) => super::human_duration(seconds),
                None => "<none>".into(),
            }),
        ),
        col(
            "Condition",
            "string",
            CSR_CONDITIONS_DESCRIPTION,
            text(crate::rules::certificates::printed_condition),
        ),
    ]
}

/// `certificatesv1.CertificateSigningRequestSpec{}.SwaggerDoc()["signerName"]`.
const CSR_SIGNER_NAME_DESCRIPTION: &str = "signerName indicates the requested signer, and is a qualified name.\n\nList/watch requests for CertificateSigningRequests can filter on this field using a \"spec.signerName=NAME\" fieldSelector.\n\nWell-known Kubernetes signers are:\n 1. \"kubernetes.io/kube-apiserver-client\": issues client certificates that can be used to authenticate to kube-apiserver.\n  Requests for this signer are never auto-approved by kube-controller-manager, can be issued by the \"csrsigning\" controller in kube-controller-manager.\n 2. \"kubernetes.io/kube-apiserver-client-kubelet\": issues client certificates that kubelets use to authenticate to kube-apiserver.\n  Requests for this signer can be auto-approved by the \"csrapproving\" controller in kube-controller-manager, and can be issued by the \"csrsigning\" controller in kube-controller-manager.\n 3. \"kubernetes.io/kubelet-serving\" issues serving certificates that kubelets use to serve TLS endpoints, which kube-apiserver can connect to securely.\n  Requests for this signer are never auto-approved by kube-controller-manager, and can be issued by the \"csrsigning\" controller in kube-controller-manager.\n\nMore details are available at https://k8s.io/docs/reference/access-authn-authz/certificate-signing-requests/#kubernetes-signers\n\nCustom signerNames can also be specified. The signer defines:\n 1. Trust distribution: how trust (CA bundles) are distributed.\n 2. Permitted subjects: and behavior when a disallowed subject is requested.\n 3. Required, permitted, or forbidden x509 extensions in the request (including whether subjectAltNames are allowed, which types, restrictions on allowed values) and behavior when a disallowed extension is requested.\n 4. Required, permitted, or forbidden key usages / extended key usages.\n 5. Expiration/certificate lifetime: whether it is fixed by the signer, configurable by the admin.\n 6. Whether or not requests for CA certificates are allowed.";
/// `...Spec{}.SwaggerDoc()["request"]` (the Requestor column's description, as upstream has it).
const CSR_REQUEST_DESCRIPTION: &str = "request contains an x509 certificate signing request encoded in a \"CERTIFICATE REQUEST\" PEM block. When serialized as JSON or YAML, the data is additionally base64-encoded.";
/// `...Spec{}.SwaggerDoc()["expirationSeconds"]`.
const CSR_EXPIRATION_SECONDS_DESCRIPTION: &str = "expirationSeconds is the requested duration of validity of the issued certificate. The certificate signer may issue a certificate with a different validity duration so a client must check the delta between the notBefore and and notAfter fields in the issued certificate to determine the actual duration.\n\nThe v1.22+ in-tree implementations of the well-known Kubernetes signers will honor this field as long as the requested duration is not greater than the maximum duration they will honor per the --cluster-signing-duration CLI flag to the Kubernetes controller manager.\n\nCertificate signers may not honor this field for various reasons:\n\n  1. Old signer that is unaware of the field (such as the in-tree\n     implementations prior to v1.22)\n  2. Signer whose configured maximum is shorter than the requested duration\n  3. Signer whose configured minimum is longer than the requested duration\n\nThe minimum valid value for expirationSeconds is 600, i.e. 10 minutes.";
/// `certificatesv1.CertificateSigningRequestStatus{}.SwaggerDoc()["conditions"]`.
const CSR_CONDITIONS_DESCRIPTION: &str = "conditions applied to the request. Known conditions are \"Approved\", \"Denied\", and \"Failed\".";

fn priority_class() -> Vec<Column> {
    vec![
        name_col(),
        int_col(
            "Value",
            "value represents the integer value of this priority class. This is the actual priority that pods receive when they have the name of this class in their pod spec.",
            |o| o["value"].as_i64(),
        ),
        col(
            "Global-Default",
            "boolean",
            "globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class. Only one PriorityClass can be marked as `globalDefault`. However, if more than one PriorityClasses exists with their `globalDefault` field set to true, the smallest value of such global default PriorityClasses will be used as the default priority.",
            computed(|o| json!(o["globalDefault"].as_bool().unwrap_or(false))),
        ),
        age_col(),
        col(
            "PreemptionPolicy",
            "string",
            "preemptionPolicy is the Policy for preempting pods with lower priority. One of Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if unset.",
            text(|o| str_of(&o["preemptionPolicy"]).into()),
        ),
    ]
}

/// `metav1.LabelSelector.String()` (the generated one): `&LabelSelector{MatchLabels:map[string]string{k: v,},MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:k,Operator:In,Values:[a b],},},}`.
fn label_selector_go_string(selector: &Value) -> String {
    let labels: String = selector["matchLabels"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}: {},", str_of(v)))
        .collect();
    let expressions: String = arr(&selector["matchExpressions"])
        .iter()
        .map(|e| {
            let values: Vec<&str> = arr(&e["values"]).iter().map(str_of).collect();
            format!(
                "LabelSelectorRequirement{{Key:{},Operator:{},Values:[{}],}},",
                str_of(&e["key"]),
                str_of(&e["operator"]),
                values.join(" ")
            )
        })
        .collect();
    format!(
        "&LabelSelector{{MatchLabels:map[string]string{{{labels}}},MatchExpressions:[]LabelSelectorRequirement{{{expressions}}},}}"
    )
}

/// `printValidatingAdmissionPolicyBinding`'s param: `namespace/name` (`*/name` without a
/// namespace), else the selector, `<unset>` without a `paramRef`.
fn policy_binding_param(binding: &Value) -> String {
    let param = &binding["spec"]["paramRef"];
    if param.is_null() {
        return "<unset>".into();
    }
    match (str_of(&param["name"]), str_of(&param["namespace"])) {
        ("", _) if !param["selector"].is_null() => label_selector_go_string(&param["selector"]),
        ("", _) => "<unset>".into(),
        (name, "") => format!("*/{name}"),
        (name, namespace) => format!("{namespace}/{name}"),
    }
}

/// `rbac.SubjectsStrings`, joined with `, `: users, groups and service accounts
/// (`namespace/name`).
fn subjects(binding: &Value, kind: &str) -> String {
    arr(&binding["subjects"])
        .iter()
        .filter(|s| s["kind"] == kind)
        .map(|s| match kind {
            "ServiceAccount" => format!("{}/{}", str_of(&s["namespace"]), str_of(&s["name"])),
            _ => str_of(&s["name"]).to_string(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `roleBindingsColumnDefinitions` / `clusterRoleBindingsColumnDefinitions` and
/// `printRoleBinding` / `printClusterRoleBinding`; `of` names the kind in the descriptions.
fn role_binding(role_description: &str, of: &str) -> Vec<Column> {
    vec![
        name_col(),
        col(
            "Role",
            "string",
            role_description,
            text(|o| {
                let role = &o["roleRef"];
                format!("{}/{}", str_of(&role["kind"]), str_of(&role["name"]))
            }),
        ),
        age_col(),
        col(
            "Users",
            "string",
            &format!("Users in the {of}"),
            text(|o| subjects(o, "User")),
        )
        .wide(),
        col(
            "Groups",
            "string",
            &format!("Groups in the {of}"),
            text(|o| subjects(o, "Group")),
        )
        .wide(),
        col(
            "ServiceAccounts",
            "string",
            &format!("ServiceAccounts in the {of}"),
            text(|o| subjects(o, "ServiceAccount")),
        )
        .wide(),
    ]
}

/// `printHorizontalPodAutoscaler`'s columns (descriptions from the v2 swagger docs).
fn horizontal_pod_autoscaler() -> Vec<Column> {
    vec![
        name_col(),
        col(
            "Reference",
            "string",
            "scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count.",
            text(|o| {
                let target = &o["spec"]["scaleTargetRef"];
                format!("{}/{}", str_of(&target["kind"]), str_of(&target["name"]))
            }),
        ),
        col(
            "Targets",
            "string",
            "metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used).  The desired replica count is calculated multiplying the ratio between the target value and the current value by the current number of pods.  Ergo, metrics used must decrease as the pod count is increased, and vice-versa.  See the individual metric source types for more information about how each type of metric must respond. If not set, the default metric will be set to 80% average CPU utilization.",
            text(|o| format_hpa_metrics(arr(&o["spec"]["metrics"]), arr(&o["status"]["currentMetrics"]))),
        ),
        col(
            "MinPods",
            "string",
            "minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.  It defaults to 1 pod.  minReplicas is allowed to be 0 if the alpha feature gate HPAScaleToZero is enabled and at least one Object or External metric is configured.  Scaling is active as long as at least one metric value is available.",
            text(|o| match o["spec"]["minReplicas"].as_i64() {
                Some(n) => n.to_string(),
                None => "<unset>".into(),
            }),
        ),
        int_string_col(
            "MaxPods",
            "maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up. It cannot be less that minReplicas.",
            |o| o["spec"]["maxReplicas"].as_i64().unwrap_or(0),
        ),
        int_string_col(
            "Replicas",
            "currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler.",
            |o| o["status"]["currentReplicas"].as_i64().unwrap_or(0),
        ),
        age_col(),
    ]
}

/// `formatHPAMetrics`: each metric's current and target value (the status at the same index
/// gives the current one), at most two and a count of the rest.
fn format_hpa_metrics(specs: &[Value], statuses: &[Value]) -> String {
    const MAX: usize = 2;
    if specs.is_empty() {
        return "<none>".into();
    }
    // `Quantity.String()` of a nil pointer.
    let q = |v: &Value| -> String {
        if v.is_null() {
            "<nil>".into()
        } else {
            super::quantity(v)
        }
    };
    let percent = |v: &Value| v.as_i64().map(|n| format!("{n}%"));
    let mut list: Vec<String> = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let status = statuses.get(i).unwrap_or(&Value::Null);
        let known = |source: &str| !status[source].is_null();
        let entry = match str_of(&spec["type"]) {
            kind @ ("External" | "Object") => {
                let source = if kind == "External" {
                    "external"
                } else {
                    "object"
                };
                let target = &spec[source]["target"];
                let current = &status[source]["current"];
                if !target["averageValue"].is_null() {
                    let now = if known(source) && !current["averageValue"].is_null() {
                        q(&current["averageValue"])
                    } else {
                        "<unknown>".into()
                    };
                    format!("{now}/{} (avg)", q(&target["averageValue"]))
                } else {
                    let now = if known(source) {
                        q(&current["value"])
                    } else {
                        "<unknown>".into()
                    };
                    format!("{now}/{}", q(&target["value"]))
                }
            }
            "Pods" => {
                let now = if known("pods") {
                    q(&status["pods"]["current"]["averageValue"])
                } else {
                    "<unknown>".into()
                };
                format!("{now}/{}", q(&spec["pods"]["target"]["averageValue"]))
            }
            kind @ ("Resource" | "ContainerResource") => {
                let source = if kind == "Resource" {
                    "resource"
                } else {
                    "containerResource"
                };
                let name = str_of(&spec[source]["name"]);
                let target = &spec[source]["target"];
                let current = &status[source]["current"];
                if !target["averageValue"].is_null() {
                    let now = if known(source) {
                        q(&current["averageValue"])
                    } else {
                        "<unknown>".into()
                    };
                    format!("{name}: {now}/{}", q(&target["averageValue"]))
                } else {
                    let now = known(source)
                        .then(|| percent(&current["averageUtilization"]))
                        .flatten()
                        .unwrap_or_else(|| "<unknown>".into());
                    let goal =
                        percent(&target["averageUtilization"]).unwrap_or_else(|| "<auto>".into());
                    format!("{name}: {now}/{goal}")
                }
            }
            _ => "<unknown type>".into(),
        };
        list.push(entry);
    }
    let count = list.len();
    if count > MAX {
        list.truncate(MAX);
        return format!("{} + {} more...", list.join(", "), count - MAX);
    }
    list.join(", ")
}

#[cfg(test)]
mod tests {
    use super::super::tests::table_of;
    use rstest::rstest;
    use serde_json::{json, Value};

    /// The columns `printers.go` gives these kinds (`*` marks a wide one), and their cells.
    #[rstest]
    #[case::lease("leases.coordination.k8s.io", json!({"spec": {"holderIdentity": "node-1"}}),
        &["Name", "Holder", "Age"], json!(["x", "node-1", "60s"]))]
    #[case::lease_unheld("leases.coordination.k8s.io", json!({"spec": {}}),
        &["Name", "Holder", "Age"], json!(["x", "", "60s"]))]
    #[case::ingress("ingresses.networking.k8s.io", json!({"spec": {"ingressClassName": "nginx",
        "rules": [{"host": "a.example.com"}, {}, {"host": "b.example.com"}, {"host": "c.example.com"}, {"host": "d.example.com"}],
        "tls": [{"hosts": ["a.example.com"]}]},
        "status": {"loadBalancer": {"ingress": [{"ip": "5.6.7.8"}, {"hostname": "lb.example.com"}, {"ip": "1.2.3.4"}]}}}),
        &["Name", "Class", "Hosts", "Address", "Ports", "Age"],
        json!(["x", "nginx", "a.example.com,b.example.com,c.example.com + 2 more...", "1.2.3.4,5.6.7.8,lb.example.com", "80, 443", "60s"]))]
    #[case::ingress_defaults("ingresses.networking.k8s.io", json!({"spec": {"rules": [{}]}}),
        &["Name", "Class", "Hosts", "Address", "Ports", "Age"], json!(["x", "<none>", "*", "", "80", "60s"]))]
    #[case::ingress_class("ingressclasses.networking.k8s.io", json!({"spec": {"controller": "k8s.io/ingress-nginx",
        "parameters": {"apiGroup": "k8s.example.com", "kind": "IngressParameters", "name": "p"}}}),
        &["Name", "Controller", "Parameters", "Age"], json!(["x", "k8s.io/ingress-nginx", "IngressParameters.k8s.example.com/p", "60s"]))]
    #[case::ingress_class_core_parameters("ingressclasses.networking.k8s.io", json!({"spec": {"controller": "c",
        "parameters": {"kind": "ConfigMap", "name": "p"}}}),
        &["Name", "Controller", "Parameters", "Age"], json!(["x", "c", "ConfigMap/p", "60s"]))]
    #[case::ingress_class_without_parameters("ingressclasses.networking.k8s.io", json!({"spec": {"controller": "c"}}),
        &["Name", "Controller", "Parameters", "Age"], json!(["x", "c", "<none>", "60s"]))]
    #[case::network_policy("networkpolicies.networking.k8s.io", json!({"spec": {"podSelector": {"matchLabels": {"role": "db"}}}}),
        &["Name", "Pod-Selector", "Age"], json!(["x", "role=db", "60s"]))]
    #[case::network_policy_all_pods("networkpolicies.networking.k8s.io", json!({"spec": {}}),
        &["Name", "Pod-Selector", "Age"], json!(["x", "<none>", "60s"]))]
    #[case::endpoint_slice("endpointslices.discovery.k8s.io", json!({"addressType": "IPv4",
        "ports": [{"port": 80, "name": "http"}, {"name": "named"}, {}, {"port": 9090}],
        "endpoints": [{"addresses": ["10.0.0.1", "10.0.0.2"]}, {"addresses": ["10.0.0.3"]}, {"addresses": ["10.0.0.4"]}]}),
        &["Name", "AddressType", "Ports", "Endpoints", "Age"],
        json!(["x", "IPv4", "80,named,* + 1 more...", "10.0.0.1,10.0.0.2,10.0.0.3 + 1 more...", "60s"]))]
    #[case::endpoint_slice_empty("endpointslices.discovery.k8s.io", json!({"addressType": "IPv6"}),
        &["Name", "AddressType", "Ports", "Endpoints", "Age"], json!(["x", "IPv6", "<unset>", "<unset>", "60s"]))]
    #[case::storage_class_default("storageclasses.storage.k8s.io", json!({
        "metadata": {"name": "standard", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
        "provisioner": "rancher.io/local-path", "reclaimPolicy": "Retain", "volumeBindingMode": "WaitForFirstConsumer", "allowVolumeExpansion": true}),
        &["Name", "Provisioner", "ReclaimPolicy", "VolumeBindingMode", "AllowVolumeExpansion", "Age"],
        json!(["standard (default)", "rancher.io/local-path", "Retain", "WaitForFirstConsumer", true, "60s"]))]
    #[case::storage_class_unset("storageclasses.storage.k8s.io", json!({
        "metadata": {"annotations": {"storageclass.beta.kubernetes.io/is-default-class": "false"}}, "provisioner": "p"}),
        &["Name", "Provisioner", "ReclaimPolicy", "VolumeBindingMode", "AllowVolumeExpansion", "Age"],
        json!(["x", "p", "Delete", "Immediate", false, "60s"]))]
    #[case::priority_class("priorityclasses.scheduling.k8s.io", json!({"value": 1000000, "globalDefault": true, "preemptionPolicy": "Never"}),
        &["Name", "Value", "Global-Default", "Age", "PreemptionPolicy"], json!(["x", 1000000, true, "60s", "Never"]))]
    #[case::hpa_none("horizontalpodautoscalers.autoscaling", json!({"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3}}),
        &["Name", "Reference", "Targets", "MinPods", "MaxPods", "Replicas", "Age"],
        json!(["x", "Deployment/web", "<none>", "<unset>", 3, 0, "60s"]))]
    #[case::hpa_metrics("horizontalpodautoscalers.autoscaling", json!({
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "minReplicas": 2, "maxReplicas": 9, "metrics": [
            {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}},
            {"type": "External", "external": {"metric": {"name": "q"}, "target": {"type": "AverageValue", "averageValue": "30"}}},
            {"type": "Pods", "pods": {"metric": {"name": "rps"}, "target": {"type": "AverageValue", "averageValue": "1k"}}}]},
        "status": {"currentReplicas": 4, "currentMetrics": [
            {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 41, "averageValue": "200m"}}},
            {"type": "External", "external": {"metric": {"name": "q"}, "current": {"averageValue": "12"}}}]}}),
        &["Name", "Reference", "Targets", "MinPods", "MaxPods", "Replicas", "Age"],
        json!(["x", "Deployment/web", "cpu: 41%/60%, 12/30 (avg) + 1 more...", "2", 9, 4, "60s"]))]
    #[case::hpa_values("horizontalpodautoscalers.autoscaling", json!({
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 1, "metrics": [
            {"type": "Object", "object": {"describedObject": {"kind": "Service", "name": "s"}, "metric": {"name": "hits"}, "target": {"type": "Value", "value": "5"}}},
            {"type": "ContainerResource", "containerResource": {"name": "memory", "container": "app", "target": {"type": "AverageValue", "averageValue": "64Mi"}}}]},
        "status": {"currentMetrics": [{"type": "Object", "object": {"current": {"value": "2"}}}]}}),
        &["Name", "Reference", "Targets", "MinPods", "MaxPods", "Replicas", "Age"],
        json!(["x", "Deployment/web", "2/5, memory: <unknown>/64Mi", "<unset>", 1, 0, "60s"]))]
    #[case::runtime_class("runtimeclasses.node.k8s.io", json!({"handler": "kata"}),
        &["Name", "Handler", "Age"], json!(["x", "kata", "60s"]))]
    #[case::priority_class_unset("priorityclasses.scheduling.k8s.io", json!({"value": -5}),
        &["Name", "Value", "Global-Default", "Age", "PreemptionPolicy"], json!(["x", -5, false, "60s", ""]))]
    #[case::mutating_webhooks("mutatingwebhookconfigurations.admissionregistration.k8s.io", json!({"webhooks": [{"name": "a"}, {"name": "b"}]}),
        &["Name", "Webhooks", "Age"], json!(["x", 2, "60s"]))]
    #[case::validating_webhooks("validatingwebhookconfigurations.admissionregistration.k8s.io", json!({}),
        &["Name", "Webhooks", "Age"], json!(["x", 0, "60s"]))]
    #[case::admission_policy("validatingadmissionpolicies.admissionregistration.k8s.io", json!({"spec": {
        "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"}, "validations": [{"expression": "true"}]}}),
        &["Name", "Validations", "ParamKind", "Age"], json!(["x", 1, "v1/ConfigMap", "60s"]))]
    #[case::admission_policy_without_params("validatingadmissionpolicies.admissionregistration.k8s.io", json!({"spec": {}}),
        &["Name", "Validations", "ParamKind", "Age"], json!(["x", 0, "<unset>", "60s"]))]
    #[case::policy_binding("validatingadmissionpolicybindings.admissionregistration.k8s.io", json!({"spec": {"policyName": "p",
        "paramRef": {"name": "cfg", "namespace": "ns"}}}),
        &["Name", "PolicyName", "ParamRef", "Age"], json!(["x", "p", "ns/cfg", "60s"]))]
    #[case::policy_binding_any_namespace("validatingadmissionpolicybindings.admissionregistration.k8s.io", json!({"spec": {"policyName": "p",
        "paramRef": {"name": "cfg"}}}),
        &["Name", "PolicyName", "ParamRef", "Age"], json!(["x", "p", "*/cfg", "60s"]))]
    #[case::policy_binding_selector("validatingadmissionpolicybindings.admissionregistration.k8s.io", json!({"spec": {"policyName": "p",
        "paramRef": {"selector": {"matchLabels": {"b": "2", "a": "1"}, "matchExpressions": [{"key": "t", "operator": "In", "values": ["x", "y"]}]}}}}),
        &["Name", "PolicyName", "ParamRef", "Age"],
        json!(["x", "p", "&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:t,Operator:In,Values:[x y],},},}", "60s"]))]
    #[case::policy_binding_unset("validatingadmissionpolicybindings.admissionregistration.k8s.io", json!({"spec": {"policyName": "p"}}),
        &["Name", "PolicyName", "ParamRef", "Age"], json!(["x", "p", "<unset>", "60s"]))]
    #[case::role_binding("rolebindings.rbac.authorization.k8s.io", json!({"roleRef": {"kind": "Role", "name": "reader"},
        "subjects": [{"kind": "User", "name": "alice"}, {"kind": "Group", "name": "devs"}, {"kind": "User", "name": "bob"},
                     {"kind": "ServiceAccount", "namespace": "ns", "name": "sa"}, {"kind": "Other", "name": "o"}]}),
        &["Name", "Role", "Age", "Users*", "Groups*", "ServiceAccounts*"],
        json!(["x", "Role/reader", "60s", "alice, bob", "devs", "ns/sa"]))]
    #[case::cluster_role_binding("clusterrolebindings.rbac.authorization.k8s.io", json!({"roleRef": {"kind": "ClusterRole", "name": "admin"}}),
        &["Name", "Role", "Age", "Users*", "Groups*", "ServiceAccounts*"],
        json!(["x", "ClusterRole/admin", "60s", "", "", ""]))]
    fn other_kinds_print_the_real_columns(
        #[case] resource: &str,
        #[case] object: Value,
        #[case] columns: &[&str],
        #[case] cells: Value,
    ) {
        let (names, got, _) = table_of(resource, object);
        assert_eq!(names, columns);
        assert_eq!(got, cells);
    }

    #[test]
    fn binding_descriptions_name_their_kind() {
        let (_, _, t) = table_of("clusterrolebindings.rbac.authorization.k8s.io", json!({}));
        assert_eq!(
            t["columnDefinitions"][3]["description"],
            "Users in the clusterRoleBinding"
        );
        let (_, _, t) = table_of("rolebindings.rbac.authorization.k8s.io", json!({}));
        assert_eq!(
            t["columnDefinitions"][5]["description"],
            "ServiceAccounts in the roleBinding"
        );
    }
}
