//! The message tables: the top-level kinds `kubectl create` sends as protobuf and every message
//! they nest, with field numbers from the `generated.proto` files of `k8s.io/api` (`core/v1`,
//! `apps/v1`, `batch/v1`, `policy/v1`, `networking/v1`, `scheduling/v1`, `rbac/v1`,
//! `node/v1`, `certificates/v1`) and
//! `k8s.io/apimachinery` (`meta/v1`). Fields a table leaves out are
//! skipped when decoding (and logged), as protobuf readers skip unknown fields.

use super::schema::{
    always, inline, map, message, optional, repeated, value, Message, Type, BOOL, BYTES, INT32,
    INT64, STRING,
};

// ---- k8s.io/apimachinery/pkg/apis/meta/v1 ----

/// `metav1.ObjectMeta`.
pub static OBJECT_META: Message = Message {
    name: "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta",
    fields: &[
        value(1, "name", STRING),
        value(2, "generateName", STRING),
        value(3, "namespace", STRING),
        value(4, "selfLink", STRING),
        value(5, "uid", STRING),
        value(6, "resourceVersion", STRING),
        value(7, "generation", INT64),
        value(8, "creationTimestamp", Type::Time),
        optional(9, "deletionTimestamp", Type::Time),
        optional(10, "deletionGracePeriodSeconds", INT64),
        map(11, "labels", STRING),
        map(12, "annotations", STRING),
        repeated(13, "ownerReferences", Type::Message(&OWNER_REFERENCE)),
        repeated(14, "finalizers", STRING),
        repeated(17, "managedFields", Type::Message(&MANAGED_FIELDS_ENTRY)),
    ],
};

/// `metav1.OwnerReference`.
pub static OWNER_REFERENCE: Message = Message {
    name: "k8s.io.apimachinery.pkg.apis.meta.v1.OwnerReference",
    fields: &[
        value(5, "apiVersion", STRING),
        value(1, "kind", STRING),
        value(3, "name", STRING),
        value(4, "uid", STRING),
        optional(6, "controller", BOOL),
        optional(7, "blockOwnerDeletion", BOOL),
    ],
};

/// `metav1.ManagedFieldsEntry`.
pub static MANAGED_FIELDS_ENTRY: Message = Message {
    name: "k8s.io.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry",
    fields: &[
        value(1, "manager", STRING),
        value(2, "operation", STRING),
        value(3, "apiVersion", STRING),
        optional(4, "time", Type::Time),
        value(6, "fieldsType", STRING),
        optional(7, "fieldsV1", Type::FieldsV1),
        value(8, "subresource", STRING),
    ],
};

/// `metav1.DeleteOptions` (the body of a typed client's DELETE, or of an eviction).
pub static DELETE_OPTIONS: Message = Message {
    name: "k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions",
    fields: &[
        optional(1, "gracePeriodSeconds", INT64),
        message(2, "preconditions", &PRECONDITIONS),
        optional(3, "orphanDependents", BOOL),
        optional(4, "propagationPolicy", STRING),
        repeated(5, "dryRun", STRING),
    ],
};

/// `metav1.Preconditions`.
pub static PRECONDITIONS: Message = Message {
    name: "k8s.io.apimachinery.pkg.apis.meta.v1.Preconditions",
    fields: &[
        optional(1, "uid", STRING),
        optional(2, "resourceVersion", STRING),
    ],
};

/// `metav1.LabelSelector`.
pub static LABEL_SELECTOR: Message = Message {
    name: "k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector",
    fields: &[
        map(1, "matchLabels", STRING),
        repeated(
            2,
            "matchExpressions",
            Type::Message(&LABEL_SELECTOR_REQUIREMENT),
        ),
    ],
};

/// `metav1.LabelSelectorRequirement`.
pub static LABEL_SELECTOR_REQUIREMENT: Message = Message {
    name: "k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelectorRequirement",
    fields: &[
        value(1, "key", STRING),
        value(2, "operator", STRING),
        repeated(3, "values", STRING),
    ],
};

// ---- k8s.io/api/core/v1 ----

/// `v1.ConfigMap`.
pub static CONFIG_MAP: Message = Message {
    name: "k8s.io.api.core.v1.ConfigMap",
    fields: &[
        message(1, "metadata", &OBJECT_META),
        optional(4, "immutable", BOOL),
        map(2, "data", STRING),
        map(3, "binaryData", BYTES),
    ],
};

/// `v1.Secret`.
pub static SECRET: Message = Message {
    name: "k8s.io.api.core.v1.Secret",
    fields: &[
        message(1, "metadata", &OBJECT_META),
        optional(5, "immutable", BOOL),
        map(2, "data", BYTES),
        map(4, "stringData", STRING),
        value(3, "type", STRING),
    ],
};

/// `v1.Namespace`.
pub static NAMESPACE: Message = Message {
    name: "k8s.io.api.core.v1.Namespace",
    fields: &[
        message(1, "metadata", &OBJECT_META),
        message(2, "spec", &NAMESPACE_SPEC),
        message(3, "status", &NAMESPACE_STATUS),
    ],
};

/// `v1.NamespaceSpec`.
pub static NAMESPACE_SPEC: Message = Message {
    name: "k8s.io.api.core.v1.NamespaceSpec",
    fields: &[repeated(1, "finalizers", STRING)],
};

/// `v1.NamespaceStatus`.
pub static NAMESPACE_STATUS: Message = Message {
    name: "k8s.io.api.core.v1.NamespaceStatus",
    fields: &[
        value(1, "phase", STRING),
        repeated(2, "conditions", Type::Message(&NAMESPACE_CONDITION)),
    ],
};

/// `v1.NamespaceCondition`.
pub static NAMESPACE_CONDITION: Message = Message {
    name: "k8s.io.api.core.v1.NamespaceCondition",
    fields: &[
        value(1, "type", STRING),
        value(2, "status", STRING),
        value(4, "lastTransitionTime", Type::Time),
        value(5, "reason", STRING),
        value(6, "message", STRING),
    ],
};

/// `v1.ServiceAccount`.
pub static SERVICE_ACCOUNT: Message = Message {
    name: "k8s.io.api.core.v1.ServiceAccount",
    fields: &[
        message(1, "metadata", &OBJECT_META),
        repeated(2, "secrets", Type::Message(&OBJECT_REFERENCE)),
        repeated(
            3,
            "imagePullSecrets",
            Type::Message(&LOCAL_OBJECT_REFERENCE),
        ),
        optional(4, "automountServiceAccountToken", BOOL),
    ],
};

/// `v1.ObjectReference`.
pub static OBJECT_REFERENCE: Message = Message {
    name: "k8s.io.api.core.v1.ObjectReference",
    fields: &[
        value(1, "kind", STRING),
        value(2, "namespace", STRING),
        value(3, "name", STRING),
        value(4, "uid", STRING),
        value(5, "apiVersion", STRING),
        value(6, "resourceVersion", STRING),
        value(7, "fieldPath", STRING),
    ],
};

/// `v1.LocalObjectReference`.
pub static LOCAL_OBJECT_REFERENCE: Message = Message {
    name: "k8s.io.api.core.v1.LocalObjectReference",
    fields: &[value(1, "name", STRING)],
};

/// `v1.Service`.
pub static SERVICE: Message = Message {
    name: "k8s.io.api.core.v1.Service",
    fields: &[
        message(1, "metadata", &OBJECT_META),
        message(2, "spec", &SERVICE_SPEC),
    ],
};

/// `v1.ServiceSpec`.
pub static SERVICE_SPEC: Message = Message {
    name: "k8s.io.api.core.v1.ServiceSpec",
    fields: &[
        repeated(1, "ports", Type::Message(&SERVICE_PORT)),
        map(2, "selector", STRING),
        value(3, "clusterIP", STRING),
        repeated(18, "clusterIPs", STRING),
        value(4, "type", STRING),
        repeated(5, "externalIPs", STRING),
        value(7, "sessionAffinity", STRING),
        value(8, "loadBalancerIP", STRING),
        repeated(9, "loadBalancerSourceRanges", STRING),
        value(10, "externalName", STRING),
        value(11, "externalTrafficPolicy", STRING),
        value(12, "healthCheckNodePort", INT32),
        value(13, "publishNotReadyAddresses", BOOL),
        message(14, "sessionAffinityConfig", &SESSION_AFFINITY_CONFIG),
        repeated(19, "ipFamilies", STRING),
        optional(17, "ipFamilyPolicy", STRING),
        optional(20, "allocateLoadBalancerNodePorts", BOOL),
        optional(21, "loadBalancerClass", STRING),
        optional(22, "internalTrafficPolicy", STRING),
        optional(23, "trafficDistribution", STRING),
    ],
};

/// `v1.ServicePort`.
pub static SERVICE_PORT: Message = Message {
    name: "k8s.io.api.core.v1.ServicePort",
    fields: &[
        value(1, "name", STRING),
        value(2, "protocol", STRING),
        optional(6, "appProtocol", STRING),
        value(3, "port", INT32),
        value(4, "targetPort", Type::IntOrString),
        value(5, "nodePort", INT32),
    ],
};

/// `v1.SessionAffinityConfig`.
pub static SESSION_AFFINITY_CONFIG: Message = Message {
    name: "k8s.io.api.core.v1.SessionAffinityConfig",
    fields: &[message(1, "clientIP", &CLIENT_IP_CONFIG)],
};

/// `v1.ClientIPConfig`.
pub static CLIENT_IP_CONFIG: Message = Message {
    name: "k8s.io.api.core.v1.ClientIPConfig",
    fields: &[optional(1, "timeoutSeconds", INT32)],
};

/// `v1.Pod` (spec only: clients do not send a pod's status).
pub static POD: Message = Message {
    name: "k8s.io.api.core.v1.Pod",
    fields: &[
        message(1, "metadata", &OBJECT_META),
        message(2, "spec", &POD_SPEC),
    ],
};

/// `v1.PodTemplateSpec`.
pub static POD_TEMPLATE_SPEC: Message = Message {
    name: "k8s.io.api.core.v1.PodTemplateSpec",
    fields: &[
        message(1, "metadata", &OBJECT_META),
        message(2, "spec", &POD_SPEC),
    ],
};

/// `v1.PodSpec` (volumes, affinity, DNS config and topology spread are not decoded).
pub static POD_SPEC: Message = Message {
    name: "k8s.io.api.core.v1.PodSpec",
    fields: &[
        repeated(20, "initContainers", Type::Message(&CONTAINER)),
        repeated(2, "containers", Type::Message(&CONTAINER)),
        value(3, "restartPolicy", STRING),
        optional(4, "terminationGracePeriodSeconds", INT64),
        optional(5, "activeDeadlineSeconds", INT64),
        value(6, "dnsPolicy", STRING),
        map(7, "nodeSelector", STRING),
        value(8, "serviceAccountName", STRING),
        value(9, "serviceAccount", STRING),
        optional(21, "automountServiceAccountToken", BOOL),
        value(10, "nodeName", STRING),
        value(11, "hostNetwork", BOOL),
        value(12, "hostPID", BOOL),
        value(13, "hostIPC", BOOL),
        optional(27, "shareProcessNamespace", BOOL),
        message(14, "securityContext", &POD_SECURITY_CONTEXT),
        repeated(
            15,
            "imagePullSecrets",
            Type::Message(&LOCAL_OBJECT_REFERENCE),
        ),
        value(16, "hostname", STRING),
        value(17, "subdomain", STRING),
        value(19, "schedulerName", STRING),
        repeated(22, "tolerations", Type::Message(&TOLERATION)),
        repeated(23, "hostAliases", Type::Message(&HOST_ALIAS)),
        value(24, "priorityClassName", STRING),
        optional(25, "priority", INT32),
        repeated(28, "readinessGates", Type::Message(&POD_READINESS_GATE)),
        optional(29, "runtimeClassName", STRING),
        optional(30, "enableServiceLinks", BOOL),
        optional(31, "preemptionPolicy", STRING),
        map(32, "overhead", Type::Quantity),
        optional(35, "setHostnameAsFQDN", BOOL),
        message(36, "os", &POD_OS),
        optional(37, "hostUsers", BOOL),
        repeated(38, "schedulingGates", Type::Message(&POD_SCHEDULING_GATE)),
        message(40, "resources", &RESOURCE_REQUIREMENTS),
        optional(41, "hostnameOverride", STRING),
    ],
};

/// `v1.Container`.
pub static CONTAINER: Message = Message {
    name: "k8s.io.api.core.v1.Container",
    fields: &[
        value(1, "name", STRING),
        value(2, "image", STRING),
        repeated(3, "command", STRING),
        repeated(4, "args", STRING),
        value(5, "workingDir", STRING),
        repeated(6, "ports", Type::Message(&CONTAINER_PORT)),
        repeated(19, "envFrom", Type::Message(&ENV_FROM_SOURCE)),
        repeated(7, "env", Type::Message(&ENV_VAR)),
        message(8, "resources", &RESOURCE_REQUIREMENTS),
        optional(24, "restartPolicy", STRING),
        value(13, "terminationMessagePath", STRING),
        value(20, "terminationMessagePolicy", STRING),
        value(14, "imagePullPolicy", STRING),
        message(15, "securityContext", &SECURITY_CONTEXT),
        value(16, "stdin", BOOL),
        value(17, "stdinOnce", BOOL),
        value(18, "tty", BOOL),
    ],
};

/// `v1.ContainerPort`.
pub static CONTAINER_PORT: Message = Message {
    name: "k8s.io.api.core.v1.ContainerPort",
    fields: &[
        value(1, "name", STRING),
        value(2, "hostPort", INT32),
        value(3, "containerPort", INT32),
        value(4, "protocol", STRING),
        value(5, "hostIP", STRING),
    ],
};

/// `v1.EnvVar`.
pub static ENV_VAR: Message = Message {
    name: "k8s.io.api.core.v1.EnvVar",
    fields: &[
        value(1, "name", STRING),
        value(2, "value", STRING),
        message(3, "valueFrom", &ENV_VAR_SOURCE),
    ],
};

/// `v1.EnvVarSource` (file key references are not decoded).
pub static ENV_VAR_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.EnvVarSource",
    fields: &[
        message(1, "fieldRef", &OBJECT_FIELD_SELECTOR),
        message(2, "resourceFieldRef", &RESOURCE_FIELD_SELECTOR),
        message(3, "configMapKeyRef", &KEY_SELECTOR),
        message(4, "secretKeyRef", &KEY_SELECTOR),
    ],
};

/// `v1.ObjectFieldSelector`.
pub static OBJECT_FIELD_SELECTOR: Message = Message {
    name: "k8s.io.api.core.v1.ObjectFieldSelector",
    fields: &[
        value(1, "apiVersion", STRING),
        value(2, "fieldPath", STRING),
    ],
};

/// `v1.ResourceFieldSelector`.
pub static RESOURCE_FIELD_SELECTOR: Message = Message {
    name: "k8s.io.api.core.v1.ResourceFieldSelector",
    fields: &[
        value(1, "containerName", STRING),
        value(2, "resource", STRING),
        optional(3, "divisor", Type::Quantity),
    ],
};

/// `v1.ConfigMapKeySelector` and `v1.SecretKeySelector` (same fields and numbers).
pub static KEY_SELECTOR: Message = Message {
    name: "k8s.io.api.core.v1.ConfigMapKeySelector",
    fields: &[
        inline(1, &LOCAL_OBJECT_REFERENCE),
        value(2, "key", STRING),
        optional(3, "optional", BOOL),
    ],
};

/// `v1.EnvFromSource`.
pub static ENV_FROM_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.EnvFromSource",
    fields: &[
        value(1, "prefix", STRING),
        message(2, "configMapRef", &ENV_SOURCE),
        message(3, "secretRef", &ENV_SOURCE),
    ],
};

/// `v1.ConfigMapEnvSource` and `v1.SecretEnvSource` (same fields and numbers).
pub static ENV_SOURCE: Message = Message {
    name: "k8s.io.api.core.v1.ConfigMapEnvSource",
    fields: &[
        inline(1, &LOCAL_OBJECT_REFERENCE),
        optional(2, "optional", BOOL),
    ],
};

/// `v1.ResourceRequirements`.
pub static RESOURCE_REQUIREMENTS: Message = Message {
    name: "k8s.io.api.core.v1.ResourceRequirements",
    fields: &[
        map(1, "limits", Type::Quantity),
        map(2, "requests", Type::Quantity),
        repeated(3, "claims", Type::Message(&RESOURCE_CLAIM)),
    ],
};

/// `v1.ResourceClaim` (a container's reference to a pod resource claim).
pub static RESOURCE_CLAIM: Message = Message {
    name: "k8s.io.api.core.v1.ResourceClaim",
    fields: &[value(1, "name", STRING), value(2, "request", STRING)],
};

/// `v1.SecurityContext` (capabilities, SELinux, Windows and AppArmor options are not decoded).
pub static SECURITY_CONTEXT: Message = Message {
    name: "k8s.io.api.core.v1.SecurityContext",
    fields: &[
        optional(2, "privileged", BOOL),
        optional(4, "runAsUser", INT64),
        optional(8, "runAsGroup", INT64),
        optional(5, "runAsNonRoot", BOOL),
        optional(6, "readOnlyRootFilesystem", BOOL),
        optional(7, "allowPrivilegeEscalation", BOOL),
        optional(9, "procMount", STRING),
        message(11, "seccompProfile", &SECCOMP_PROFILE),
    ],
};

/// `v1.PodSecurityContext` (SELinux, Windows, sysctls and AppArmor options are not decoded).
pub static POD_SECURITY_CONTEXT: Message = Message {
    name: "k8s.io.api.core.v1.PodSecurityContext",
    fields: &[
        optional(2, "runAsUser", INT64),
        optional(6, "runAsGroup", INT64),
        optional(3, "runAsNonRoot", BOOL),
        repeated(4, "supplementalGroups", INT64),
        optional(12, "supplementalGroupsPolicy", STRING),
        optional(5, "fsGroup", INT64),
        optional(9, "fsGroupChangePolicy", STRING),
        message(10, "seccompProfile", &SECCOMP_PROFILE),
        optional(13, "seLinuxChangePolicy", STRING),
    ],
};

/// `v1.SeccompProfile`.
pub static SECCOMP_PROFILE: Message = Message {
    name: "k8s.io.api.core.v1.SeccompProfile",
    fields: &[
        value(1, "type", STRING),
        optional(2, "localhostProfile", STRING),
    ],
};

/// `v1.Toleration`.
pub static TOLERATION: Message = Message {
    name: "k8s.io.api.core.v1.Toleration",
    fields: &[
        value(1, "key", STRING),
        value(2, "operator", STRING),
        value(3, "value", STRING),
        value(4, "effect", STRING),
        optional(5, "tolerationSeconds", INT64),
    ],
};

/// `v1.HostAlias`.
pub static HOST_ALIAS: Message = Message {
    name: "k8s.io.api.core.v1.HostAlias",
    fields: &[value(1, "ip", STRING), repeated(2, "hostnames", STRING)],
};

/// `v1.PodReadinessGate`.
pub static POD_READINESS_GATE: Message = Message {
    name: "k8s.io.api.core.v1.PodReadinessGate",
    fields: &[value(1, "conditionType", STRING)],
};

/// `v1.PodOS`.
pub static POD_OS: Message = Message {
    name: "k8s.io.api.core.v1.PodOS",
    fields: &[value(1, "name", STRING)],
};

/// `v1.PodSchedulingGate`.
pub static POD_SCHEDULING_GATE: Message = Message {
    name: "k8s.io.api.core.v1.PodSchedulingGate",
    fields: &[value(1, "name", STRING)],
};

/// `v1.ResourceQuota` (spec only).
pub static RESOURCE_QUOTA: Message = Message {
    name: "k8s.io.api.core.v1.ResourceQuota",
    fields: &[
        message(1, "metadata", &OBJECT_META),
        message(2, "spec", &RESOURCE_QUOTA_SPEC),
    ],
};

/// `v1.ResourceQuotaSpec`.
pub static RESOURCE_QUOTA_SPEC: Message = Message {
    name: "k8s.io.api.core.v1.ResourceQuotaSpec",
    fields: &[
        map(1, "hard", Type::Quantity),
        repeated(2, "scopes", STRING),
        message(3, "scopeSelector", &SCOPE_SELECTOR),
    ],
};

/// `v1.ScopeSelector`.
pub static SCOPE_SELECTOR: Message = Message {
    name: "k8s.io.api.core.v1.ScopeSelector",
    fields: &[repeated(
        1,
        "matchExpressions",
        Type::Message(&SCOPED_RESOURCE_SELECTOR_REQUIREMENT),
    )],
};

/// `v1.ScopedResourceSelectorRequirement`.
pub static SCOPED_RESOURCE_SELECTOR_REQUIREMENT: Message = Message {
    name: "k8s.io.api.core.v1.ScopedResourceSelectorRequirement",
    fields: &[
        value(1, "scopeName", STRING),
        value(2, "operator", STRING),
        repeated(3, "values", STRING),
    ],
};

/// `v1.ReplicationController` (spec only).
pub static REPLICATION_CONTROLLER: Message = Message {
    name: "k8s.io.api.core.v1.ReplicationController",
    fields: &[
        message(1, "metadata", &OBJECT_META),
        message(2, "spec", &REPLICATION_CONTROLLER_SPEC),
    ],
};

/// `v1.ReplicationControllerSpec`.
pub static REPLICATION_CONTROLLER_SPEC: Message = Message {
    name: "k8s.io.api.core.v1.ReplicationControllerSpec",
    fields: &[
        optional(1, "replicas", INT32),
        value(4, "minReadySeconds", INT32),
        map(2, "selector", STRING),
        message(3, "template", &POD_TEMPLATE_SPEC),
    ],
};

/// `v1.TypedLocalObjectReference`.
pub static TYPED_LOCAL_OBJECT_REFERENCE: Message = Message {
    name: "k8s.io.api.core.v1.TypedLocalObjectReference",
    fields: &[
        optional(1, "apiGroup", STRING),
        value(2, "kind", STRING),
        value(3, "name", STRING),
    ],
};

// ---- k8s.io/api/apps/v1 ----

/// `apps/v1.Deployment`.
pub static DEPLOYMENT: Message = Message {
    name: "k8s.io.api.apps.v1.Deployment",
    fields: &[
        message(1, "metadata", &OBJECT_META),
        message(2, "spec", &DEPLOYMENT_SPEC),
        message(3, "status", &DEPLOYMENT_STATUS),
    ],
};

/// `apps/v1.DeploymentSpec`.
pub static DEPLOYMENT_SPEC: Message = Message {
    name: "k8s.io.api.apps.v1.DeploymentSpec",
    fields: &[
        optional(1, "replicas", INT32),
        message(2, "selector", &LABEL_SELECTOR),
        message(3, "template", &POD_TEMPLATE_SPEC),
        message(4, "strategy", &DEPLOYMENT_STRATEGY),
        value(5, "minReadySeconds", INT32),
        optional(6, "revisionHistoryLimit", INT32),
        value(7, "paused", BOOL),
        optional(9, "progressDeadlineSeconds", INT32),
        optional(10, "podReplacementPolicy", STRING),
    ],
};

/// `apps/v1.DeploymentStrategy`.
pub static DEPLOYMENT_STRATEGY: Message = Message {
    name: "k8s.io.api.apps.v1.DeploymentStrategy",
    fields: &[
        value(1, "type", STRING),
        message(2, "rollingUpdate", &ROLLING_UPDATE_DEPLOYMENT),
    ],
};

/// `apps/v1.RollingUpdateDeployment`.
pub static ROLLING_UPDATE_DEPLOYMENT: Message = Message {
    name: "k8s.io.api.apps.v1.RollingUpdateDeployment",
    fields: &[
        optional(1, "maxUnavailable", Type::IntOrString),
        optional(2, "maxSurge", Type::IntOrString),
    ],
};

/// `apps/v1.DeploymentStatus`.
pub static DEPLOYMENT_STATUS: Message = Message {
    name: "k8s.io.api.apps.v1.DeploymentStatus",
    fields: &[
        value(1, "observedGeneration", INT64),
        value(2, "replicas", INT32),
        value(3, "updatedReplicas", INT32),
        value(7, "readyReplicas", INT32),
        value(4, "availableReplicas", INT32),
        value(5, "unavailableReplicas", INT32),
        optional(9, "terminatingReplicas", INT32),
        repeated(6, "conditions", Type::Message(&DEPLOYMENT_CONDITION)),
        optional(8, "collisionCount", INT32),
    ],
};

/// `apps/v1.DeploymentCondition`.
pub static DEPLOYMENT_CONDITION: Message = Message {
    name: "k8s.io.api.apps.v1.DeploymentCondition",
    fields: &[
        value(1, "type", STRING),
        value(2, "status", STRING),
        value(6, "lastUpdateTime", Type::Time),
        value(7, "lastTransitionTime", Type::Time),
        value(4, "reason", STRING),
        value(5, "message", STRING),
    ],
};

// ---- k8s.io/api/batch/v1 ----

/// `batch/v1.Job` (spec only).
pub static JOB: Message = Message {
    name: "k8s.io.api.batch.v1.Job",
    fields: &[
        message(1, "metadata", &OBJECT_META),
        message(2, "spec", &JOB_SPEC),
    ],
};

/// `batch/v1.JobSpec`.
pub static JOB_SPEC: Message = Message {
    name: "k8s.io.api.batch.v1.JobSpec",
    fields: &[
        optional(1, "parallelism", INT32),
        optional(2, "completions", INT32),
        optional(3, "activeDeadlineSeconds", INT64),
        message(11, "podFailurePolicy", &POD_FAILURE_POLICY),
        message(16, "successPolicy", &SUCCESS_POLICY),
        optional(7, "backoffLimit", INT32),
        optional(12, "backoffLimitPerIndex", INT32),
        optional(13, "maxFailedIndexes", INT32),
        message(4, "selector", &LABEL_SELECTOR),
        optional(5, "manualSelector", BOOL),
        message(6, "template", &POD_TEMPLATE_SPEC),
        optional(8, "ttlSecondsAfterFinished", INT32),
        optional(9, "completionMode", STRING),
        optional(10, "suspend", BOOL),
        optional(14, "podReplacementPolicy", STRING),
        optional(15, "managedBy", STRING),
    ],
};

/// `batch/v1.PodFailurePolicy`.
pub static POD_FAILURE_POLICY: Message = Message {
    name: "k8s.io.api.batch.v1.PodFailurePolicy",
    fields: &[repeated(
        1,
        "rules",
        Type::Message(&POD_FAILURE_POLICY_RULE),
    )],
};

/// `batch/v1.PodFailurePolicyRule`.
pub static POD_FAILURE_POLICY_RULE: Message = Message {
    name: "k8s.io.api.batch.v1.PodFailurePolicyRule",
    fields: &[
        value(1, "action", STRING),
        message(2, "onExitCodes", &POD_FAILURE_POLICY_ON_EXIT_CODES),
        repeated(
            3,
            "onPodConditions",
            Type::Message(&POD_FAILURE_POLICY_ON_POD_CONDITIONS),
        ),
    ],
};

/// `batch/v1.PodFailurePolicyOnExitCodesRequirement`.
pub static POD_FAILURE_POLICY_ON_EXIT_CODES: Message = Message {
    name: "k8s.io.api.batch.v1.PodFailurePolicyOnExitCodesRequirement",
    fields: &[
        optional(1, "containerName", STRING),
        value(2, "operator", STRING),
        repeated(3, "values", INT32),
    ],
};

/// `batch/v1.PodFailurePolicyOnPodConditionsPattern`.
pub static POD_FAILURE_POLICY_ON_POD_CONDITIONS: Message = Message {
    name: "k8s.io.api.batch.v1.PodFailurePolicyOnPodConditionsPattern",
    fields: &[value(1, "type", STRING), value(2, "status", STRING)],
};

/// `batch/v1.SuccessPolicy`.
pub static SUCCESS_POLICY: Message = Message {
    name: "k8s.io.api.batch.v1.SuccessPolicy",
    fields: &[repeated(1, "rules", Type::Message(&SUCCESS_POLICY_RULE))],
};

/// `batch/v1.SuccessPolicyRule`.
pub static SUCCESS_POLICY_RULE: Message = Message {
    name: "k8s.io.api.batch.v1.SuccessPolicyRule",
    fields: &[
        optional(1, "succeededIndexes", STRING),
        optional(2, "succeededCount", INT32),
    ],
};

/// `batch/v1.CronJob` (spec only).
pub static CRON_JOB: Message = Message {
    name: "k8s.io.api.batch.v1.CronJob",
    fields: &[
        message(1, "metadata", &OBJECT_META),
        message(2, "spec", &CRON_JOB_SPEC),
    ],
};

/// `batch/v1.CronJobSpec`.
pub static CRON_JOB_SPEC: Message = Message {
    name: "k8s.io.api.batch.v1.CronJobSpec",
    fields: &[
        value(1, "schedule", STRING),
        optional(8, "timeZone", STRING),
        optional(2, "startingDeadlineSeconds", INT64),
        value(3, "concurrencyPolicy", STRING),
        optional(4, "suspend", BOOL),
        message(5, "jobTemplate", &JOB_TEMPLATE_SPEC),
        optional(6, "successfulJobsHistoryLimit", INT32),
        optional(7, "failedJobsHistoryLimit", INT32),
    ],
};

/// `batch/v1.JobTemplateSpec`.
pub static JOB_TEMPLATE_SPEC: Message = Message {
    name: "k8s.io.api.batch.v1.JobTemplateSpec",
    fields: &[
        message(1, "metadata", &OBJECT_META),
        message(2, "spec", &JOB_SPEC),
    ],
};

// ---- k8s.io/api/policy/v1 ----

/// `policy/v1.PodDisruptionBudget` (spec only).
pub static POD_DISRUPTION_BUDGET: Message = Message {
    name: "k8s.io.api.policy.v1.PodDisruptionBudget",
    fields: &[
        message(1, "metadata", &OBJECT_META),
        message(2, "spec", &POD_DISRUPTION_BUDGET_SPEC),
    ],
};

/// `policy/v1.Eviction` (the body of a POST to `pods/NAME/eviction`).
pub static EVICTION: Message = Message {
    name: "k8s.io.api.policy.v1.Eviction",
    fields: &[
        message(1, "metadata", &OBJECT_META),
        message(2, "deleteOptions", &DELETE_OPTIONS),
    ],
};

/// `policy/v1.PodDisruptionBudgetSpec`.
pub static POD_DISRUPTION_BUDGET_SPEC: Message = Message {
    name: "k8s.io.api.policy.v1.PodDisruptionBudgetSpec",
    fields: &[
        optional(1, "minAvailable", Type::IntOrString),
        message(2, "selector", &LABEL_SELECTOR),
        optional(3, "maxUnavailable", Type::IntOrString),
        optional(4, "unhealthyPodEvictionPolicy", STRING),
    ],
};

// ---- k8s.io/api/scheduling/v1 ----

/// `scheduling.k8s.io/v1.PriorityClass`.
pub static PRIORITY_CLASS: Message = Message {
    name: "k8s.io.api.scheduling.v1.PriorityClass",
    fields: &[
        message(1, "metadata", &OBJECT_META),
        always(2, "value", INT32),
        value(3, "globalDefault", BOOL),
        value(4, "description", STRING),
        optional(5, "preemptionPolicy", STRING),
    ],
};

// ---- k8s.io/api/autoscaling/v1 ----

/// `autoscaling/v1.HorizontalPodAutoscaler` (spec only), which `kubectl autoscale` sends.
pub static HORIZONTAL_POD_AUTOSCALER_V1: Message = Message {
    name: "k8s.io.api.autoscaling.v1.HorizontalPodAutoscaler",
    fields: &[
        message(1, "metadata", &OBJECT_META),
        message(2, "spec", &HORIZONTAL_POD_AUTOSCALER_V1_SPEC),
    ],
};

/// `autoscaling/v1.HorizontalPodAutoscalerSpec`.
static HORIZONTAL_POD_AUTOSCALER_V1_SPEC: Message = Message {
    name: "k8s.io.api.autoscaling.v1.HorizontalPodAutoscalerSpec",
    fields: &[
        message(1, "scaleTargetRef", &CROSS_VERSION_OBJECT_REFERENCE_V1),
        optional(2, "minReplicas", INT32),
        always(3, "maxReplicas", INT32),
        optional(4, "targetCPUUtilizationPercentage", INT32),
    ],
};

/// `autoscaling/v1.CrossVersionObjectReference`.
static CROSS_VERSION_OBJECT_REFERENCE_V1: Message = Message {
    name: "k8s.io.api.autoscaling.v1.CrossVersionObjectReference",
    fields: &[
        always(1, "kind", STRING),
        always(2, "name", STRING),
        value(3, "apiVersion", STRING),
    ],
};

// ---- k8s.io/api/autoscaling/v2 ----

/// `autoscaling/v2.HorizontalPodAutoscaler` (spec only).
pub static HORIZONTAL_POD_AUTOSCALER_V2: Message = Message {
    name: "k8s.io.api.autoscaling.v2.HorizontalPodAutoscaler",
    fields: &[
        message(1, "metadata", &OBJECT_META),
        message(2, "spec", &HORIZONTAL_POD_AUTOSCALER_V2_SPEC),
    ],
};

/// `autoscaling/v2.HorizontalPodAutoscalerSpec`.
static HORIZONTAL_POD_AUTOSCALER_V2_SPEC: Message = Message {
    name: "k8s.io.api.autoscaling.v2.HorizontalPodAutoscalerSpec",
    fields: &[
        message(1, "scaleTargetRef", &CROSS_VERSION_OBJECT_REFERENCE_V2),
        optional(2, "minReplicas", INT32),
        always(3, "maxReplicas", INT32),
        repeated(4, "metrics", Type::Message(&METRIC_SPEC_V2)),
        optional(5, "behavior", Type::Message(&HPA_BEHAVIOR_V2)),
    ],
};

/// `autoscaling/v2.CrossVersionObjectReference`.
static CROSS_VERSION_OBJECT_REFERENCE_V2: Message = Message {
    name: "k8s.io.api.autoscaling.v2.CrossVersionObjectReference",
    fields: &[
        always(1, "kind", STRING),
        always(2, "name", STRING),
        value(3, "apiVersion", STRING),
    ],
};

/// `autoscaling/v2.MetricSpec`.
static METRIC_SPEC_V2: Message = Message {
    name: "k8s.io.api.autoscaling.v2.MetricSpec",
    fields: &[
        always(1, "type", STRING),
        optional(2, "object", Type::Message(&OBJECT_METRIC_SOURCE_V2)),
        optional(3, "pods", Type::Message(&PODS_METRIC_SOURCE_V2)),
        optional(4, "resource", Type::Message(&RESOURCE_METRIC_SOURCE_V2)),
        optional(5, "external", Type::Message(&EXTERNAL_METRIC_SOURCE_V2)),
        optional(
            7,
            "containerResource",
            Type::Message(&CONTAINER_RESOURCE_METRIC_SOURCE_V2),
        ),
    ],
};

/// `autoscaling/v2.ObjectMetricSource`.
static OBJECT_METRIC_SOURCE_V2: Message = Message {
    name: "k8s.io.api.autoscaling.v2.ObjectMetricSource",
    fields: &[
        message(1, "describedObject", &CROSS_VERSION_OBJECT_REFERENCE_V2),
        message(2, "target", &METRIC_TARGET_V2),
        message(3, "metric", &METRIC_IDENTIFIER_V2),
    ],
};

/// `autoscaling/v2.PodsMetricSource`.
static PODS_METRIC_SOURCE_V2: Message = Message {
    name: "k8s.io.api.autoscaling.v2.PodsMetricSource",
    fields: &[
        message(1, "metric", &METRIC_IDENTIFIER_V2),
        message(2, "target", &METRIC_TARGET_V2),
    ],
};

/// `autoscaling/v2.ResourceMetricSource`.
static RESOURCE_METRIC_SOURCE_V2: Message = Message {
    name: "k8s.io.api.autoscaling.v2.ResourceMetricSource",
    fields: &[
        always(1, "name", STRING),
        message(2, "target", &METRIC_TARGET_V2),
    ],
};

/// `autoscaling/v2.ContainerResourceMetricSource`.
static CONTAINER_RESOURCE_METRIC_SOURCE_V2: Message = Message {
    name: "k8s.io.api.autoscaling.v2.ContainerResourceMetricSource",
    fields: &[
        always(1, "name", STRING),
        message(2, "target", &METRIC_TARGET_V2),
        always(3, "container", STRING),
    ],
};

/// `autoscaling/v2.ExternalMetricSource`.
static EXTERNAL_METRIC_SOURCE_V2: Message = Message {
    name: "k8s.io.api.autoscaling.v2.ExternalMetricSource",
    fields: &[
        message(1, "metric", &METRIC_IDENTIFIER_V2),
        message(2, "target", &METRIC_TARGET_V2),
    ],
};

/// `autoscaling/v2.MetricIdentifier`.
static METRIC_IDENTIFIER_V2: Message = Message {
    name: "k8s.io.api.autoscaling.v2.MetricIdentifier",
    fields: &[
        always(1, "name", STRING),
        optional(2, "selector", Type::Message(&LABEL_SELECTOR)),
    ],
};

/// `autoscaling/v2.MetricTarget`.
static METRIC_TARGET_V2: Message = Message {
    name: "k8s.io.api.autoscaling.v2.MetricTarget",
    fields: &[
        always(1, "type", STRING),
        optional(2, "value", Type::Quantity),
        optional(3, "averageValue", Type::Quantity),
        optional(4, "averageUtilization", INT32),
    ],
};

/// `autoscaling/v2.HorizontalPodAutoscalerBehavior`.
static HPA_BEHAVIOR_V2: Message = Message {
    name: "k8s.io.api.autoscaling.v2.HorizontalPodAutoscalerBehavior",
    fields: &[
        optional(1, "scaleUp", Type::Message(&HPA_SCALING_RULES_V2)),
        optional(2, "scaleDown", Type::Message(&HPA_SCALING_RULES_V2)),
    ],
};

/// `autoscaling/v2.HPAScalingRules`.
static HPA_SCALING_RULES_V2: Message = Message {
    name: "k8s.io.api.autoscaling.v2.HPAScalingRules",
    fields: &[
        optional(1, "selectPolicy", STRING),
        repeated(2, "policies", Type::Message(&HPA_SCALING_POLICY_V2)),
        optional(3, "stabilizationWindowSeconds", INT32),
        optional(4, "tolerance", Type::Quantity),
    ],
};

/// `autoscaling/v2.HPAScalingPolicy`.
static HPA_SCALING_POLICY_V2: Message = Message {
    name: "k8s.io.api.autoscaling.v2.HPAScalingPolicy",
    fields: &[
        always(1, "type", STRING),
        always(2, "value", INT32),
        always(3, "periodSeconds", INT32),
    ],
};

// ---- k8s.io/api/node/v1 ----

/// `node.k8s.io/v1.RuntimeClass`.
pub static RUNTIME_CLASS: Message = Message {
    name: "k8s.io.api.node.v1.RuntimeClass",
    fields: &[
        message(1, "metadata", &OBJECT_META),
        always(2, "handler", STRING),
        message(3, "overhead", &OVERHEAD),
        message(4, "scheduling", &SCHEDULING),
    ],
};

/// `node.k8s.io/v1.Overhead`.
static OVERHEAD: Message = Message {
    name: "k8s.io.api.node.v1.Overhead",
    fields: &[map(1, "podFixed", Type::Quantity)],
};

/// `node.k8s.io/v1.Scheduling`.
static SCHEDULING: Message = Message {
    name: "k8s.io.api.node.v1.Scheduling",
    fields: &[
        map(1, "nodeSelector", STRING),
        repeated(2, "tolerations", Type::Message(&TOLERATION)),
    ],
};

// ---- k8s.io/api/storage/v1: VolumeAttachments (an inline persistent volume spec, CSI
// migration's, is left out) ----

/// `storage.k8s.io/v1.VolumeAttachment`.
pub static VOLUME_ATTACHMENT: Message = Message {
    name: "k8s.io.api.storage.v1.VolumeAttachment",
    fields: &[
        message(1, "metadata", &OBJECT_META),
        message(2, "spec", &VOLUME_ATTACHMENT_SPEC),
        message(3, "status", &VOLUME_ATTACHMENT_STATUS),
    ],
};

/// `storage.k8s.io/v1.VolumeAttachmentSpec`.
static VOLUME_ATTACHMENT_SPEC: Message = Message {
    name: "k8s.io.api.storage.v1.VolumeAttachmentSpec",
    fields: &[
        value(1, "attacher", STRING),
        message(2, "source", &VOLUME_ATTACHMENT_SOURCE),
        value(3, "nodeName", STRING),
    ],
};

/// `storage.k8s.io/v1.VolumeAttachmentSource`.
static VOLUME_ATTACHMENT_SOURCE: Message = Message {
    name: "k8s.io.api.storage.v1.VolumeAttachmentSource",
    fields: &[optional(1, "persistentVolumeName", STRING)],
};

/// `storage.k8s.io/v1.VolumeAttachmentStatus`.
static VOLUME_ATTACHMENT_STATUS: Message = Message {
    name: "k8s.io.api.storage.v1.VolumeAttachmentStatus",
    fields: &[
        always(1, "attached", BOOL),
        map(2, "attachmentMetadata", STRING),
        optional(3, "attachError", Type::Message(&VOLUME_ERROR)),
        optional(4, "detachError", Type::Message(&VOLUME_ERROR)),
    ],
};

/// `storage.k8s.io/v1.VolumeError`.
static VOLUME_ERROR: Message = Message {
    name: "k8s.io.api.storage.v1.VolumeError",
    fields: &[
        value(1, "time", Type::Time),
        value(2, "message", STRING),
        optional(3, "errorCode", INT32),
    ],
};

// ---- k8s.io/api/certificates/v1 (`extra` is left out: the server records the requesting
// user itself) ----

/// `certificates.k8s.io/v1.CertificateSigningRequest`.
pub static CERTIFICATE_SIGNING_REQUEST: Message = Message {
    name: "k8s.io.api.certificates.v1.CertificateSigningRequest",
    fields: &[
        message(1, "metadata", &OBJECT_META),
        message(2, "spec", &CERTIFICATE_SIGNING_REQUEST_SPEC),
        message(3, "status", &CERTIFICATE_SIGNING_REQUEST_STATUS),
    ],
};

/// `certificates.k8s.io/v1.CertificateSigningRequestSpec`.
static CERTIFICATE_SIGNING_REQUEST_SPEC: Message = Message {
    name: "k8s.io.api.certificates.v1.CertificateSigningRequestSpec",
    fields: &[
        value(1, "request", BYTES),
        value(7, "signerName", STRING),
        optional(8, "expirationSeconds", INT32),
        repeated(5, "usages", STRING),
        value(2, "username", STRING),
        value(3, "uid", STRING),
        repeated(4, "groups", STRING),
    ],
};

/// `certificates.k8s.io/v1.CertificateSigningRequestStatus`.
static CERTIFICATE_SIGNING_REQUEST_STATUS: Message = Message {
    name: "k8s.io.api.certificates.v1.CertificateSigningRequestStatus",
    fields: &[
        repeated(
            1,
            "conditions",
            Type::Message(&CERTIFICATE_SIGNING_REQUEST_CONDITION),
        ),
        value(2, "certificate", BYTES),
    ],
};

/// `certificates.k8s.io/v1.CertificateSigningRequestCondition`.
static CERTIFICATE_SIGNING_REQUEST_CONDITION: Message = Message {
    name: "k8s.io.api.certificates.v1.CertificateSigningRequestCondition",
    fields: &[
        value(1, "type", STRING),
        value(6, "status", STRING),
        value(2, "reason", STRING),
        value(3, "message", STRING),
        value(4, "lastUpdateTime", Type::Time),
        value(5, "lastTransitionTime", Type::Time),
    ],
};

// ---- k8s.io/api/networking/v1 ----

/// `networking.k8s.io/v1.Ingress` (spec only).
pub static INGRESS: Message = Message {
    name: "k8s.io.api.networking.v1.Ingress",
    fields: &[
        message(1, "metadata", &OBJECT_META),
        message(2, "spec", &INGRESS_SPEC),
    ],
};

/// `networking.k8s.io/v1.IngressSpec`.
pub static INGRESS_SPEC: Message = Message {
    name: "k8s.io.api.networking.v1.IngressSpec",
    fields: &[
        optional(4, "ingressClassName", STRING),
        message(1, "defaultBackend", &INGRESS_BACKEND),
        repeated(2, "tls", Type::Message(&INGRESS_TLS)),
        repeated(3, "rules", Type::Message(&INGRESS_RULE)),
    ],
};

/// `networking.k8s.io/v1.IngressBackend`.
pub static INGRESS_BACKEND: Message = Message {
    name: "k8s.io.api.networking.v1.IngressBackend",
    fields: &[
        message(4, "service", &INGRESS_SERVICE_BACKEND),
        message(3, "resource", &TYPED_LOCAL_OBJECT_REFERENCE),
    ],
};

/// `networking.k8s.io/v1.IngressServiceBackend`.
pub static INGRESS_SERVICE_BACKEND: Message = Message {
    name: "k8s.io.api.networking.v1.IngressServiceBackend",
    fields: &[
        value(1, "name", STRING),
        message(2, "port", &SERVICE_BACKEND_PORT),
    ],
};

/// `networking.k8s.io/v1.ServiceBackendPort`.
pub static SERVICE_BACKEND_PORT: Message = Message {
    name: "k8s.io.api.networking.v1.ServiceBackendPort",
    fields: &[value(1, "name", STRING), value(2, "number", INT32)],
};

/// `networking.k8s.io/v1.IngressTLS`.
pub static INGRESS_TLS: Message = Message {
    name: "k8s.io.api.networking.v1.IngressTLS",
    fields: &[repeated(1, "hosts", STRING), value(2, "secretName", STRING)],
};

/// `networking.k8s.io/v1.IngressRule` (its `IngressRuleValue` is embedded inline).
pub static INGRESS_RULE: Message = Message {
    name: "k8s.io.api.networking.v1.IngressRule",
    fields: &[value(1, "host", STRING), inline(2, &INGRESS_RULE_VALUE)],
};

/// `networking.k8s.io/v1.IngressRuleValue`.
pub static INGRESS_RULE_VALUE: Message = Message {
    name: "k8s.io.api.networking.v1.IngressRuleValue",
    fields: &[message(1, "http", &HTTP_INGRESS_RULE_VALUE)],
};

/// `networking.k8s.io/v1.HTTPIngressRuleValue`.
pub static HTTP_INGRESS_RULE_VALUE: Message = Message {
    name: "k8s.io.api.networking.v1.HTTPIngressRuleValue",
    fields: &[repeated(1, "paths", Type::Message(&HTTP_INGRESS_PATH))],
};

/// `networking.k8s.io/v1.HTTPIngressPath`.
pub static HTTP_INGRESS_PATH: Message = Message {
    name: "k8s.io.api.networking.v1.HTTPIngressPath",
    fields: &[
        value(1, "path", STRING),
        optional(3, "pathType", STRING),
        message(2, "backend", &INGRESS_BACKEND),
    ],
};

// ---- k8s.io/api/rbac/v1 ----

/// `rbac/v1.Role`.
pub static ROLE: Message = Message {
    name: "k8s.io.api.rbac.v1.Role",
    fields: &[
        message(1, "metadata", &OBJECT_META),
        repeated(2, "rules", Type::Message(&POLICY_RULE)),
    ],
};

/// `rbac/v1.ClusterRole`.
pub static CLUSTER_ROLE: Message = Message {
    name: "k8s.io.api.rbac.v1.ClusterRole",
    fields: &[
        message(1, "metadata", &OBJECT_META),
        repeated(2, "rules", Type::Message(&POLICY_RULE)),
        message(3, "aggregationRule", &AGGREGATION_RULE),
    ],
};

/// `rbac/v1.PolicyRule`.
pub static POLICY_RULE: Message = Message {
    name: "k8s.io.api.rbac.v1.PolicyRule",
    fields: &[
        repeated(1, "verbs", STRING),
        repeated(2, "apiGroups", STRING),
        repeated(3, "resources", STRING),
        repeated(4, "resourceNames", STRING),
        repeated(5, "nonResourceURLs", STRING),
    ],
};

/// `rbac/v1.AggregationRule`.
pub static AGGREGATION_RULE: Message = Message {
    name: "k8s.io.api.rbac.v1.AggregationRule",
    fields: &[repeated(
        1,
        "clusterRoleSelectors",
        Type::Message(&LABEL_SELECTOR),
    )],
};

/// `rbac/v1.RoleBinding` and `rbac/v1.ClusterRoleBinding` (same fields and numbers).
pub static ROLE_BINDING: Message = Message {
    name: "k8s.io.api.rbac.v1.RoleBinding",
    fields: &[
        message(1, "metadata", &OBJECT_META),
        repeated(2, "subjects", Type::Message(&SUBJECT)),
        message(3, "roleRef", &ROLE_REF),
    ],
};

/// `rbac/v1.Subject`.
pub static SUBJECT: Message = Message {
    name: "k8s.io.api.rbac.v1.Subject",
    fields: &[
        value(1, "kind", STRING),
        value(2, "apiGroup", STRING),
        value(3, "name", STRING),
        value(4, "namespace", STRING),
    ],
};

/// `rbac/v1.RoleRef`.
pub static ROLE_REF: Message = Message {
    name: "k8s.io.api.rbac.v1.RoleRef",
    fields: &[
        value(1, "apiGroup", STRING),
        value(2, "kind", STRING),
        value(3, "name", STRING),
    ],
};

// ---- k8s.io/api/authorization/v1 and authentication/v1: what `kubectl auth can-i`,
// `kubectl auth whoami` and `kubectl create token` send. Statuses are left out (the server
// fills them in), and so are the alpha selector attributes and `extra`. ----

/// `authorization/v1.SelfSubjectAccessReview`.
pub static SELF_SUBJECT_ACCESS_REVIEW: Message = Message {
    name: "k8s.io.api.authorization.v1.SelfSubjectAccessReview",
    fields: &[
        message(1, "metadata", &OBJECT_META),
        message(2, "spec", &SELF_SUBJECT_ACCESS_REVIEW_SPEC),
    ],
};

/// `authorization/v1.SelfSubjectAccessReviewSpec`.
pub static SELF_SUBJECT_ACCESS_REVIEW_SPEC: Message = Message {
    name: "k8s.io.api.authorization.v1.SelfSubjectAccessReviewSpec",
    fields: &[
        optional(1, "resourceAttributes", Type::Message(&RESOURCE_ATTRIBUTES)),
        optional(
            2,
            "nonResourceAttributes",
            Type::Message(&NON_RESOURCE_ATTRIBUTES),
        ),
    ],
};

/// `authorization/v1.SubjectAccessReview` and `LocalSubjectAccessReview` (same fields).
pub static SUBJECT_ACCESS_REVIEW: Message = Message {
    name: "k8s.io.api.authorization.v1.SubjectAccessReview",
    fields: &[
        message(1, "metadata", &OBJECT_META),
        message(2, "spec", &SUBJECT_ACCESS_REVIEW_SPEC),
    ],
};

/// `authorization/v1.SubjectAccessReviewSpec`.
pub static SUBJECT_ACCESS_REVIEW_SPEC: Message = Message {
    name: "k8s.io.api.authorization.v1.SubjectAccessReviewSpec",
    fields: &[
        optional(1, "resourceAttributes", Type::Message(&RESOURCE_ATTRIBUTES)),
        optional(
            2,
            "nonResourceAttributes",
            Type::Message(&NON_RESOURCE_ATTRIBUTES),
        ),
        value(3, "user", STRING),
        repeated(4, "groups", STRING),
        value(6, "uid", STRING),
    ],
};

/// `authorization/v1.ResourceAttributes`.
pub static RESOURCE_ATTRIBUTES: Message = Message {
    name: "k8s.io.api.authorization.v1.ResourceAttributes",
    fields: &[
        value(1, "namespace", STRING),
        value(2, "verb", STRING),
        value(3, "group", STRING),
        value(4, "version", STRING),
        value(5, "resource", STRING),
        value(6, "subresource", STRING),
        value(7, "name", STRING),
    ],
};

/// `authorization/v1.NonResourceAttributes`.
pub static NON_RESOURCE_ATTRIBUTES: Message = Message {
    name: "k8s.io.api.authorization.v1.NonResourceAttributes",
    fields: &[value(1, "path", STRING), value(2, "verb", STRING)],
};

/// `authorization/v1.SelfSubjectRulesReview`.
pub static SELF_SUBJECT_RULES_REVIEW: Message = Message {
    name: "k8s.io.api.authorization.v1.SelfSubjectRulesReview",
    fields: &[
        message(1, "metadata", &OBJECT_META),
        message(2, "spec", &SELF_SUBJECT_RULES_REVIEW_SPEC),
    ],
};

/// `authorization/v1.SelfSubjectRulesReviewSpec`.
pub static SELF_SUBJECT_RULES_REVIEW_SPEC: Message = Message {
    name: "k8s.io.api.authorization.v1.SelfSubjectRulesReviewSpec",
    fields: &[value(1, "namespace", STRING)],
};

/// `authentication/v1.SelfSubjectReview`.
pub static SELF_SUBJECT_REVIEW: Message = Message {
    name: "k8s.io.api.authentication.v1.SelfSubjectReview",
    fields: &[message(1, "metadata", &OBJECT_META)],
};

/// `authentication/v1.TokenReview`.
pub static TOKEN_REVIEW: Message = Message {
    name: "k8s.io.api.authentication.v1.TokenReview",
    fields: &[
        message(1, "metadata", &OBJECT_META),
        message(2, "spec", &TOKEN_REVIEW_SPEC),
    ],
};

/// `authentication/v1.TokenReviewSpec`.
pub static TOKEN_REVIEW_SPEC: Message = Message {
    name: "k8s.io.api.authentication.v1.TokenReviewSpec",
    fields: &[value(1, "token", STRING), repeated(2, "audiences", STRING)],
};

/// `authentication/v1.TokenRequest`.
pub static TOKEN_REQUEST: Message = Message {
    name: "k8s.io.api.authentication.v1.TokenRequest",
    fields: &[
        message(1, "metadata", &OBJECT_META),
        message(2, "spec", &TOKEN_REQUEST_SPEC),
    ],
};

/// `authentication/v1.TokenRequestSpec`.
pub static TOKEN_REQUEST_SPEC: Message = Message {
    name: "k8s.io.api.authentication.v1.TokenRequestSpec",
    fields: &[
        repeated(1, "audiences", STRING),
        optional(4, "expirationSeconds", INT64),
        optional(3, "boundObjectRef", Type::Message(&BOUND_OBJECT_REFERENCE)),
    ],
};

/// `authentication/v1.BoundObjectReference`.
pub static BOUND_OBJECT_REFERENCE: Message = Message {
    name: "k8s.io.api.authentication.v1.BoundObjectReference",
    fields: &[
        value(1, "kind", STRING),
        value(2, "apiVersion", STRING),
        value(3, "name", STRING),
        value(4, "uid", STRING),
    ],
};

/// The kinds this decoder understands, by `(apiVersion, kind)`.
static KINDS: &[(&str, &str, &Message)] = &[
    ("v1", "ConfigMap", &CONFIG_MAP),
    ("v1", "Secret", &SECRET),
    ("v1", "Namespace", &NAMESPACE),
    ("v1", "ServiceAccount", &SERVICE_ACCOUNT),
    ("v1", "Service", &SERVICE),
    ("v1", "Pod", &POD),
    ("v1", "ResourceQuota", &RESOURCE_QUOTA),
    ("v1", "ReplicationController", &REPLICATION_CONTROLLER),
    ("apps/v1", "Deployment", &DEPLOYMENT),
    ("batch/v1", "Job", &JOB),
    ("batch/v1", "CronJob", &CRON_JOB),
    ("policy/v1", "PodDisruptionBudget", &POD_DISRUPTION_BUDGET),
    ("policy/v1", "Eviction", &EVICTION),
    ("scheduling.k8s.io/v1", "PriorityClass", &PRIORITY_CLASS),
    ("node.k8s.io/v1", "RuntimeClass", &RUNTIME_CLASS),
    (
        "certificates.k8s.io/v1",
        "CertificateSigningRequest",
        &CERTIFICATE_SIGNING_REQUEST,
    ),
    ("storage.k8s.io/v1", "VolumeAttachment", &VOLUME_ATTACHMENT),
    (
        "autoscaling/v1",
        "HorizontalPodAutoscaler",
        &HORIZONTAL_POD_AUTOSCALER_V1,
    ),
    (
        "autoscaling/v2",
        "HorizontalPodAutoscaler",
        &HORIZONTAL_POD_AUTOSCALER_V2,
    ),
    ("networking.k8s.io/v1", "Ingress", &INGRESS),
    ("rbac.authorization.k8s.io/v1", "Role", &ROLE),
    ("rbac.authorization.k8s.io/v1", "ClusterRole", &CLUSTER_ROLE),
    ("rbac.authorization.k8s.io/v1", "RoleBinding", &ROLE_BINDING),
    (
        "rbac.authorization.k8s.io/v1",
        "ClusterRoleBinding",
        &ROLE_BINDING,
    ),
    (
        "authorization.k8s.io/v1",
        "SelfSubjectAccessReview",
        &SELF_SUBJECT_ACCESS_REVIEW,
    ),
    (
        "authorization.k8s.io/v1",
        "SelfSubjectRulesReview",
        &SELF_SUBJECT_RULES_REVIEW,
    ),
    (
        "authorization.k8s.io/v1",
        "SubjectAccessReview",
        &SUBJECT_ACCESS_REVIEW,
    ),
    (
        "authorization.k8s.io/v1",
        "LocalSubjectAccessReview",
        &SUBJECT_ACCESS_REVIEW,
    ),
    (
        "authentication.k8s.io/v1",
        "SelfSubjectReview",
        &SELF_SUBJECT_REVIEW,
    ),
    ("authentication.k8s.io/v1", "TokenRequest", &TOKEN_REQUEST),
    ("authentication.k8s.io/v1", "TokenReview", &TOKEN_REVIEW),
];

/// The message table of a top-level kind, if this decoder knows it. `DeleteOptions` is
/// registered in every group version (a typed client stamps it with its own), so it matches
/// under any apiVersion.
pub fn top_level(api_version: &str, kind: &str) -> Option<&'static Message> {
    if kind == "DeleteOptions" {
        return Some(&DELETE_OPTIONS);
    }
    KINDS
        .iter()
        .find(|(v, k, _)| *v == api_version && *k == kind)
        .map(|(_, _, message)| *message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protobuf::schema::Type;
    use std::collections::HashSet;

    /// Every table reachable from a top-level kind.
    fn reachable() -> Vec<&'static Message> {
        let mut seen: Vec<&'static Message> = Vec::new();
        let mut stack: Vec<&'static Message> = KINDS.iter().map(|(_, _, m)| *m).collect();
        stack.push(&DELETE_OPTIONS);
        while let Some(message) = stack.pop() {
            if seen.iter().any(|m| std::ptr::eq(*m, message)) {
                continue;
            }
            seen.push(message);
            for field in message.fields {
                if let Type::Message(nested) | Type::Inline(nested) = field.ty {
                    stack.push(nested);
                }
            }
        }
        seen
    }

    #[test]
    fn field_numbers_and_json_names_are_unique_in_every_table() {
        for message in reachable() {
            let numbers: HashSet<u32> = message.fields.iter().map(|f| f.number).collect();
            assert_eq!(numbers.len(), message.fields.len(), "{}", message.name);
            let names: Vec<&str> = message
                .fields
                .iter()
                .map(|f| f.json)
                .filter(|n| !n.is_empty())
                .collect();
            let unique: HashSet<&str> = names.iter().copied().collect();
            assert_eq!(unique.len(), names.len(), "{}", message.name);
            assert!(
                message.fields.iter().all(|f| f.number > 0),
                "{}",
                message.name
            );
        }
    }

    /// The decoder recurses once per nesting level of the tables, so the tables must not nest
    /// themselves: then no input, however deep, can nest the recursion further.
    #[test]
    fn tables_do_not_nest_themselves() {
        fn visit(message: &'static Message, path: &mut Vec<&'static str>) {
            assert!(
                !path.contains(&message.name),
                "cycle: {path:?} -> {}",
                message.name
            );
            path.push(message.name);
            for field in message.fields {
                if let Type::Message(nested) | Type::Inline(nested) = field.ty {
                    visit(nested, path);
                }
            }
            path.pop();
        }
        for message in reachable() {
            visit(message, &mut Vec::new());
        }
    }

    #[test]
    fn every_top_level_kind_starts_with_object_meta_as_field_one() {
        for (api_version, kind, message) in KINDS {
            let metadata = message.field(1).expect("field 1");
            assert_eq!(metadata.json, "metadata", "{api_version} {kind}");
            assert!(
                matches!(metadata.ty, Type::Message(m) if std::ptr::eq(m, &OBJECT_META)),
                "{api_version} {kind}"
            );
        }
    }

    #[test]
    fn lookup_needs_both_api_version_and_kind() {
        assert!(top_level("v1", "ConfigMap").is_some());
        assert!(top_level("apps/v1", "ConfigMap").is_none());
        assert!(top_level("v1", "Deployment").is_none());
        assert!(top_level("rbac.authorization.k8s.io/v1", "ClusterRoleBinding").is_some());
        assert!(top_level("v1", "DeleteOptions").is_some());
        assert!(top_level("apps/v1", "DeleteOptions").is_some());
    }
}
