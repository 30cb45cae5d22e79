//! Decoding hand-encoded messages laid out as Go's marshallers write them, and surviving garbage.

use super::test_encoder::{
    envelope, envelope_with, int_or_string_int, int_or_string_str, object_meta, quantity, time,
    Encoder,
};
use super::*;
use rand::{Rng, SeedableRng};
use rstest::rstest;
use serde_json::json;

fn none() -> Encoder {
    Encoder::new()
}

#[test]
fn configmap_as_kubectl_sends_it() {
    let raw = Encoder::new()
        .message(1, object_meta("k", "", none()))
        .string_entry(2, "a", "1")
        .string_entry(2, "b", "")
        .bytes_entry(3, "bin", &[0, 0xff, 1])
        .finish();
    let decoded = decode(&envelope("v1", "ConfigMap", &raw)).unwrap();
    assert_eq!(
        decoded,
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "k"},
            "data": {"a": "1", "b": ""},
            "binaryData": {"bin": "AP8B"},
        })
    );
}

#[test]
fn secret_data_is_base64_and_type_kept() {
    let raw = Encoder::new()
        .message(1, object_meta("s", "default", none()))
        .bytes_entry(2, "password", b"hunter2")
        .bytes_entry(2, "empty", b"")
        .string_entry(4, "plain", "text")
        .string(3, "Opaque")
        .bool(5, false)
        .finish();
    let decoded = decode(&envelope("v1", "Secret", &raw)).unwrap();
    assert_eq!(
        decoded,
        json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "s", "namespace": "default"},
            "data": {"password": "aHVudGVyMg==", "empty": ""},
            "stringData": {"plain": "text"},
            "type": "Opaque",
            // A pointer field set to false stays, unlike a zero value field.
            "immutable": false,
        })
    );
}

#[test]
fn namespace_spec_and_status() {
    let raw = Encoder::new()
        .message(1, object_meta("team-a", "", none()))
        .message(2, Encoder::new().string(1, "kubernetes"))
        .message(3, Encoder::new().string(1, "Active"))
        .finish();
    assert_eq!(
        decode(&envelope("v1", "Namespace", &raw)).unwrap(),
        json!({
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": "team-a"},
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"},
        })
    );
}

#[test]
fn service_account_with_secrets_and_pull_secrets() {
    let raw = Encoder::new()
        .message(1, object_meta("sa", "default", none()))
        .message(2, Encoder::new().string(1, "Secret").string(3, "tok"))
        .message(3, Encoder::new().string(1, "regcred"))
        .bool(4, true)
        .finish();
    assert_eq!(
        decode(&envelope("v1", "ServiceAccount", &raw)).unwrap(),
        json!({
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": "sa", "namespace": "default"},
            "secrets": [{"kind": "Secret", "name": "tok"}],
            "imagePullSecrets": [{"name": "regcred"}],
            "automountServiceAccountToken": true,
        })
    );
}

#[test]
fn service_ports_with_int_and_named_target_ports() {
    let port = |name: &str, port: i64, target: Encoder| {
        Encoder::new()
            .string(1, name)
            .string(2, "TCP")
            .int(3, port)
            .message(4, target)
            .int(5, 0)
    };
    let spec = Encoder::new()
        .message(1, port("http", 80, int_or_string_int(8080)))
        .message(1, port("admin", 9000, int_or_string_str("admin-port")))
        .string_entry(2, "app", "web")
        .string(3, "None")
        .string(4, "ClusterIP")
        .string(7, "")
        .bool(13, false)
        .string(17, "SingleStack");
    let raw = Encoder::new()
        .message(1, object_meta("web", "default", none()))
        .message(2, spec)
        .message(3, Encoder::new()) // status: not decoded
        .finish();
    assert_eq!(
        decode(&envelope("v1", "Service", &raw)).unwrap(),
        json!({
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {
                "ports": [
                    {"name": "http", "protocol": "TCP", "port": 80, "targetPort": 8080},
                    {"name": "admin", "protocol": "TCP", "port": 9000, "targetPort": "admin-port"},
                ],
                "selector": {"app": "web"},
                "clusterIP": "None",
                "type": "ClusterIP",
                "ipFamilyPolicy": "SingleStack",
            },
        })
    );
}

fn container() -> Encoder {
    Encoder::new()
        .string(1, "busybox")
        .string(2, "busybox:1.36")
        .string(3, "sh")
        .string(3, "-c")
        .string(4, "sleep 3600")
        .string(5, "")
        .message(
            6,
            Encoder::new()
                .string(1, "http")
                .int(2, 0)
                .int(3, 8080)
                .string(4, "TCP")
                .string(5, ""),
        )
        .message(7, Encoder::new().string(1, "MODE").string(2, "fast"))
        .message(
            7,
            Encoder::new().string(1, "POD").string(2, "").message(
                3,
                Encoder::new()
                    .message(1, Encoder::new().string(1, "v1").string(2, "metadata.name")),
            ),
        )
        .message(
            7,
            Encoder::new().string(1, "PASSWORD").message(
                3,
                Encoder::new().message(
                    4,
                    Encoder::new()
                        .message(1, Encoder::new().string(1, "db"))
                        .string(2, "password"),
                ),
            ),
        )
        .message(
            8,
            Encoder::new()
                .message_entry(1, "cpu", quantity("500m"))
                .message_entry(2, "memory", quantity("64Mi")),
        )
        .string(13, "")
        .string(20, "")
        .string(14, "IfNotPresent")
        .bool(16, false)
        .bool(17, false)
        .bool(18, false)
}

#[test]
fn deployment_with_pod_template() {
    let pod_spec = Encoder::new()
        .message(2, container())
        .string(3, "Always")
        .int(4, 30)
        .string(6, "")
        .string(8, "")
        .string(9, "")
        .string(10, "")
        .bool(11, false)
        .bool(12, false)
        .bool(13, false)
        .message(14, Encoder::new())
        .string(16, "")
        .string(17, "")
        .string(19, "")
        .string(24, "");
    let labels = Encoder::new().string_entry(11, "app", "web");
    let spec = Encoder::new()
        // replicas is a pointer: an explicit 0 must survive.
        .int(1, 0)
        .message(
            2,
            Encoder::new().string_entry(1, "app", "web").message(
                2,
                Encoder::new()
                    .string(1, "tier")
                    .string(2, "In")
                    .string(3, "front")
                    .string(3, "edge"),
            ),
        )
        .message(
            3,
            Encoder::new()
                .message(1, object_meta("", "", labels.clone()))
                .message(2, pod_spec),
        )
        .message(
            4,
            Encoder::new().string(1, "RollingUpdate").message(
                2,
                Encoder::new()
                    .message(1, int_or_string_int(1))
                    .message(2, int_or_string_str("25%")),
            ),
        )
        .int(5, 0)
        .bool(7, false);
    let raw = Encoder::new()
        .message(1, object_meta("web", "default", labels))
        .message(2, spec)
        .message(3, Encoder::new().int(1, 0).int(2, 0))
        .finish();
    assert_eq!(
        decode(&envelope("apps/v1", "Deployment", &raw)).unwrap(),
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
            "spec": {
                "replicas": 0,
                "selector": {
                    "matchLabels": {"app": "web"},
                    "matchExpressions": [{"key": "tier", "operator": "In", "values": ["front", "edge"]}],
                },
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {
                        "containers": [{
                            "name": "busybox",
                            "image": "busybox:1.36",
                            "command": ["sh", "-c"],
                            "args": ["sleep 3600"],
                            "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                            "env": [
                                {"name": "MODE", "value": "fast"},
                                {"name": "POD", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
                                {"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db", "key": "password"}}},
                            ],
                            "resources": {"limits": {"cpu": "500m"}, "requests": {"memory": "64Mi"}},
                            "imagePullPolicy": "IfNotPresent",
                        }],
                        "restartPolicy": "Always",
                        "terminationGracePeriodSeconds": 30,
                        "securityContext": {},
                    },
                },
                "strategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxUnavailable": 1, "maxSurge": "25%"},
                },
            },
            "status": {},
        })
    );
}

#[test]
fn object_meta_every_field() {
    let managed = Encoder::new()
        .string(1, "kubectl-create")
        .string(2, "Update")
        .string(3, "v1")
        .message(4, time(1_700_000_000))
        .string(6, "FieldsV1")
        .message(7, Encoder::new().bytes(1, br#"{"f:data":{"f:a":{}}}"#))
        .string(8, "");
    let owner = Encoder::new()
        .string(5, "apps/v1")
        .string(1, "ReplicaSet")
        .string(3, "web-1")
        .string(4, "uid-1")
        .bool(6, true)
        .bool(7, false);
    let meta = Encoder::new()
        .string(1, "k")
        .string(2, "k-")
        .string(3, "ns")
        .string(4, "/api/v1/namespaces/ns/configmaps/k")
        .string(5, "0b7f")
        .string(6, "42")
        .int(7, 3)
        .message(8, time(1_700_000_000))
        .message(9, time(0))
        .int(10, 0)
        .string_entry(11, "app", "web")
        .string_entry(12, "note", "x=y")
        .message(13, owner)
        .string(14, "example.com/a")
        .string(14, "example.com/b")
        .message(17, managed);
    let raw = Encoder::new().message(1, meta).finish();
    assert_eq!(
        decode(&envelope("v1", "ConfigMap", &raw)).unwrap(),
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": "k",
                "generateName": "k-",
                "namespace": "ns",
                "selfLink": "/api/v1/namespaces/ns/configmaps/k",
                "uid": "0b7f",
                "resourceVersion": "42",
                "generation": 3,
                "creationTimestamp": "2023-11-14T22:13:20Z",
                "deletionTimestamp": "1970-01-01T00:00:00Z",
                "deletionGracePeriodSeconds": 0,
                "labels": {"app": "web"},
                "annotations": {"note": "x=y"},
                "ownerReferences": [{
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "name": "web-1",
                    "uid": "uid-1",
                    "controller": true,
                    "blockOwnerDeletion": false,
                }],
                "finalizers": ["example.com/a", "example.com/b"],
                "managedFields": [{
                    "manager": "kubectl-create",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": "2023-11-14T22:13:20Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:data": {"f:a": {}}},
                }],
            },
        })
    );
}

#[rstest]
#[case::empty_message(Encoder::new(), None)]
#[case::go_zero_time_seconds(time(-62_135_596_800), None)]
#[case::epoch(time(0), Some("1970-01-01T00:00:00Z"))]
#[case::nanos_dropped(Encoder::new().int(1, 86_399).int(2, 999_999_999), Some("1970-01-01T23:59:59Z"))]
#[case::before_epoch(time(-1), Some("1969-12-31T23:59:59Z"))]
#[case::year_9999(time(253_402_300_799), Some("9999-12-31T23:59:59Z"))]
#[case::year_1(time(-62_135_596_799), Some("0001-01-01T00:00:01Z"))]
fn times_render_as_rfc3339_or_vanish(#[case] t: Encoder, #[case] expected: Option<&str>) {
    let raw = Encoder::new()
        .message(1, Encoder::new().string(1, "k").message(8, t))
        .finish();
    let decoded = decode(&envelope("v1", "ConfigMap", &raw)).unwrap();
    assert_eq!(
        decoded["metadata"]
            .get("creationTimestamp")
            .and_then(Value::as_str),
        expected,
        "{decoded}"
    );
}

#[test]
fn rbac_role_and_bindings() {
    let rule = Encoder::new()
        .string(1, "get")
        .string(1, "list")
        .string(2, "")
        .string(3, "pods")
        .string(4, "web-0");
    let role = Encoder::new()
        .message(1, object_meta("reader", "default", none()))
        .message(2, rule.clone())
        .finish();
    assert_eq!(
        decode(&envelope("rbac.authorization.k8s.io/v1", "Role", &role)).unwrap(),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "reader", "namespace": "default"},
            "rules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["web-0"]}],
        })
    );

    let cluster_role = Encoder::new()
        .message(1, object_meta("agg", "", none()))
        .message(
            3,
            Encoder::new().message(
                1,
                Encoder::new().string_entry(1, "rbac.example.com/agg", "true"),
            ),
        )
        .finish();
    assert_eq!(
        decode(&envelope(
            "rbac.authorization.k8s.io/v1",
            "ClusterRole",
            &cluster_role
        ))
        .unwrap(),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": "agg"},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"rbac.example.com/agg": "true"}}]},
        })
    );

    let binding = Encoder::new()
        .message(1, object_meta("readers", "", none()))
        .message(
            2,
            Encoder::new()
                .string(1, "ServiceAccount")
                .string(2, "")
                .string(3, "sa")
                .string(4, "default"),
        )
        .message(
            2,
            Encoder::new()
                .string(1, "User")
                .string(2, "rbac.authorization.k8s.io")
                .string(3, "alice")
                .string(4, ""),
        )
        .message(
            3,
            Encoder::new()
                .string(1, "rbac.authorization.k8s.io")
                .string(2, "ClusterRole")
                .string(3, "view"),
        )
        .finish();
    assert_eq!(
        decode(&envelope(
            "rbac.authorization.k8s.io/v1",
            "ClusterRoleBinding",
            &binding
        ))
        .unwrap(),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "readers"},
            "subjects": [
                {"kind": "ServiceAccount", "name": "sa", "namespace": "default"},
                {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "alice"},
            ],
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        })
    );
}

#[test]
fn pod_scalars_negative_ints_and_packed_repeated() {
    let security = Encoder::new()
        .int(2, 1000)
        // supplementalGroups: one unpacked element, then a packed run.
        .int(4, 5)
        .bytes(4, &[0x06, 0x07, 0x96, 0x01])
        .int(5, 0);
    let toleration = Encoder::new()
        .string(1, "")
        .string(2, "Exists")
        .string(3, "")
        .string(4, "NoExecute")
        .int(5, 300);
    let spec = Encoder::new()
        .message(2, Encoder::new().string(1, "main").string(2, "nginx"))
        .int(25, -5)
        .message(14, security)
        .message(22, toleration)
        .string_entry(7, "disk", "ssd")
        .bool(30, false)
        .string(8, "builder");
    let raw = Encoder::new()
        .message(1, object_meta("p", "default", none()))
        .message(2, spec)
        .message(3, Encoder::new().string(1, "Running")) // status is not decoded
        .finish();
    assert_eq!(
        decode(&envelope("v1", "Pod", &raw)).unwrap(),
        json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default"},
            "spec": {
                "containers": [{"name": "main", "image": "nginx"}],
                "priority": -5,
                "securityContext": {"runAsUser": 1000, "supplementalGroups": [5, 6, 7, 150], "fsGroup": 0},
                "tolerations": [{"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
                "nodeSelector": {"disk": "ssd"},
                "enableServiceLinks": false,
                "serviceAccountName": "builder",
            },
        })
    );
}

#[test]
fn unknown_fields_of_every_wire_type_are_skipped() {
    let raw = Encoder::new()
        .varint(99, 7)
        .message(1, object_meta("k", "", none()).string(1000, "future"))
        .fixed32(98, 1)
        .fixed64(97, 2)
        .string(96, "x")
        .string_entry(2, "a", "1")
        .finish();
    let body = envelope_with("v1", "ConfigMap", &raw, "", MEDIA_TYPE);
    assert_eq!(
        decode(&body).unwrap(),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "k"}, "data": {"a": "1"}})
    );
}

#[test]
fn repeated_occurrences_merge_messages_and_keep_the_last_scalar() {
    let raw = Encoder::new()
        .message(
            1,
            Encoder::new().string(1, "first").string_entry(11, "a", "1"),
        )
        .message(
            1,
            Encoder::new()
                .string(1, "second")
                .string_entry(11, "b", "2"),
        )
        .string_entry(2, "k", "old")
        .string_entry(2, "k", "new")
        .message(2, Encoder::new()) // a map entry with neither key nor value
        .finish();
    assert_eq!(
        decode(&envelope("v1", "ConfigMap", &raw)).unwrap(),
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "second", "labels": {"a": "1", "b": "2"}},
            "data": {"k": "new", "": ""},
        })
    );
}

#[test]
fn invalid_utf8_is_replaced_as_go_does() {
    let raw = Encoder::new()
        .message(1, Encoder::new().bytes(1, b"k\xff"))
        .finish();
    assert_eq!(
        decode(&envelope("v1", "ConfigMap", &raw)).unwrap()["metadata"]["name"],
        json!("k\u{fffd}")
    );
}

#[test]
fn job_and_cronjob_with_pointer_fields() {
    let template = Encoder::new()
        .message(1, object_meta("", "", none()))
        .message(
            2,
            Encoder::new()
                .message(2, Encoder::new().string(1, "j").string(2, "busybox"))
                .string(3, "Never"),
        );
    let job_spec = || {
        Encoder::new()
            .int(7, 0)
            .message(6, template.clone())
            .bool(10, false)
            .message(
                11,
                Encoder::new().message(
                    1,
                    Encoder::new().string(1, "FailJob").message(
                        2,
                        Encoder::new().string(2, "In").int(3, 42).bytes(3, &[0x07]),
                    ),
                ),
            )
    };
    let expected_spec = json!({
        "backoffLimit": 0,
        "template": {
            "metadata": {},
            "spec": {"containers": [{"name": "j", "image": "busybox"}], "restartPolicy": "Never"},
        },
        "suspend": false,
        "podFailurePolicy": {"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42, 7]}}]},
    });
    let job = Encoder::new()
        .message(1, object_meta("j", "default", none()))
        .message(2, job_spec())
        .finish();
    assert_eq!(
        decode(&envelope("batch/v1", "Job", &job)).unwrap(),
        json!({
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": "j", "namespace": "default"},
            "spec": expected_spec,
        })
    );

    let cron = Encoder::new()
        .message(1, object_meta("cj", "default", none()))
        .message(
            2,
            Encoder::new()
                .string(1, "*/5 * * * *")
                .string(3, "")
                .message(
                    5,
                    Encoder::new()
                        .message(1, object_meta("cj", "", none()))
                        .message(2, job_spec()),
                )
                .int(6, 0),
        )
        .finish();
    assert_eq!(
        decode(&envelope("batch/v1", "CronJob", &cron)).unwrap()["spec"],
        json!({
            "schedule": "*/5 * * * *",
            "jobTemplate": {"metadata": {"name": "cj"}, "spec": expected_spec},
            "successfulJobsHistoryLimit": 0,
        })
    );
}

#[test]
fn priority_class_keeps_a_zero_value() {
    let raw = Encoder::new()
        .message(1, object_meta("low", "", none()))
        .int(2, 0)
        .bool(3, false)
        .string(4, "")
        .string(5, "Never")
        .finish();
    assert_eq!(
        decode(&envelope("scheduling.k8s.io/v1", "PriorityClass", &raw)).unwrap(),
        json!({
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "low"},
            "value": 0,
            "preemptionPolicy": "Never",
        })
    );
}

#[test]
fn ingress_rules_inline_their_rule_value() {
    let backend =
        |port: Encoder| Encoder::new().message(4, Encoder::new().string(1, "svc").message(2, port));
    let rule = Encoder::new().string(1, "a.example.com").message(
        2,
        Encoder::new().message(
            1,
            Encoder::new().message(
                1,
                Encoder::new()
                    .string(1, "/")
                    .string(3, "Exact")
                    .message(2, backend(Encoder::new().string(1, "").int(2, 80))),
            ),
        ),
    );
    let raw = Encoder::new()
        .message(1, object_meta("web", "default", none()))
        .message(
            2,
            Encoder::new()
                .string(4, "nginx")
                .message(1, backend(Encoder::new().string(1, "http").int(2, 0)))
                .message(
                    2,
                    Encoder::new().string(1, "a.example.com").string(2, "tls-a"),
                )
                .message(3, rule),
        )
        .finish();
    assert_eq!(
        decode(&envelope("networking.k8s.io/v1", "Ingress", &raw)).unwrap()["spec"],
        json!({
            "ingressClassName": "nginx",
            "defaultBackend": {"service": {"name": "svc", "port": {"name": "http"}}},
            "tls": [{"hosts": ["a.example.com"], "secretName": "tls-a"}],
            "rules": [{
                "host": "a.example.com",
                "http": {"paths": [{
                    "path": "/",
                    "pathType": "Exact",
                    "backend": {"service": {"name": "svc", "port": {"number": 80}}},
                }]},
            }],
        })
    );
}

#[test]
fn pdb_quota_and_replication_controller() {
    let pdb = Encoder::new()
        .message(1, object_meta("p", "default", none()))
        .message(
            2,
            Encoder::new()
                .message(1, int_or_string_str("50%"))
                .message(2, Encoder::new().string_entry(1, "app", "web")),
        )
        .finish();
    assert_eq!(
        decode(&envelope("policy/v1", "PodDisruptionBudget", &pdb)).unwrap()["spec"],
        json!({"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}})
    );

    let quota = Encoder::new()
        .message(1, object_meta("q", "default", none()))
        .message(
            2,
            Encoder::new()
                .message_entry(1, "pods", quantity("2"))
                .message_entry(1, "requests.cpu", quantity("1500m"))
                .string(2, "BestEffort")
                .message(
                    3,
                    Encoder::new().message(
                        1,
                        Encoder::new()
                            .string(1, "PriorityClass")
                            .string(2, "In")
                            .string(3, "low"),
                    ),
                ),
        )
        .finish();
    assert_eq!(
        decode(&envelope("v1", "ResourceQuota", &quota)).unwrap()["spec"],
        json!({
            "hard": {"pods": "2", "requests.cpu": "1500m"},
            "scopes": ["BestEffort"],
            "scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": ["low"]}]},
        })
    );

    let rc = Encoder::new()
        .message(1, object_meta("rc", "default", none()))
        .message(
            2,
            Encoder::new()
                .int(1, 2)
                .string_entry(2, "app", "web")
                .int(4, 0),
        )
        .finish();
    assert_eq!(
        decode(&envelope("v1", "ReplicationController", &rc)).unwrap()["spec"],
        json!({"replicas": 2, "selector": {"app": "web"}})
    );
}

#[test]
fn env_resource_field_ref_and_resource_claims() {
    let container = Encoder::new()
        .string(1, "main")
        .message(
            7,
            Encoder::new().string(1, "CPU").message(
                3,
                Encoder::new().message(
                    2,
                    Encoder::new()
                        .string(1, "")
                        .string(2, "limits.cpu")
                        .message(3, quantity("1m")),
                ),
            ),
        )
        .message(
            8,
            Encoder::new().message(3, Encoder::new().string(1, "gpu").string(2, "")),
        );
    let raw = Encoder::new()
        .message(1, object_meta("p", "default", none()))
        .message(2, Encoder::new().message(2, container))
        .finish();
    assert_eq!(
        decode(&envelope("v1", "Pod", &raw)).unwrap()["spec"]["containers"][0],
        json!({
            "name": "main",
            "env": [{"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "1m"}}}],
            "resources": {"claims": [{"name": "gpu"}]},
        })
    );
}

#[test]
fn delete_options_under_any_group_version_and_inside_an_eviction() {
    let options = Encoder::new()
        .int(1, 0)
        .message(2, Encoder::new().string(1, "uid-1").string(2, "42"))
        .string(4, "Foreground")
        .string(5, "All");
    let raw = options.clone().finish();
    for api_version in ["v1", "apps/v1", "meta.k8s.io/v1"] {
        assert_eq!(
            decode(&envelope(api_version, "DeleteOptions", &raw)).unwrap(),
            json!({
                "apiVersion": api_version,
                "kind": "DeleteOptions",
                "gracePeriodSeconds": 0,
                "preconditions": {"uid": "uid-1", "resourceVersion": "42"},
                "propagationPolicy": "Foreground",
                "dryRun": ["All"],
            })
        );
    }
    let eviction = Encoder::new()
        .message(1, object_meta("web-0", "default", none()))
        .message(2, options)
        .finish();
    let decoded = decode(&envelope("policy/v1", "Eviction", &eviction)).unwrap();
    assert_eq!(
        decoded["metadata"],
        json!({"name": "web-0", "namespace": "default"})
    );
    assert_eq!(decoded["deleteOptions"]["gracePeriodSeconds"], 0);
}

fn configmap_raw() -> Vec<u8> {
    Encoder::new()
        .message(1, object_meta("k", "default", none()))
        .string_entry(2, "a", "1")
        .finish()
}

#[rstest]
#[case::empty_body(Vec::new(), 400)]
#[case::json_body(br#"{"kind":"ConfigMap"}"#.to_vec(), 400)]
#[case::magic_only(MAGIC.to_vec(), 400)]
#[case::unknown_kind(envelope("storage.k8s.io/v1", "StorageClass", &[]), 415)]
#[case::kind_in_wrong_version(envelope("v1", "Deployment", &[]), 415)]
#[case::missing_kind(envelope("v1", "", &configmap_raw()), 400)]
#[case::gzip(envelope_with("v1", "ConfigMap", &configmap_raw(), "gzip", ""), 415)]
#[case::json_inside(envelope_with("v1", "ConfigMap", b"{}", "", "application/json"), 415)]
#[case::truncated_raw(envelope("v1", "ConfigMap", &configmap_raw()[..10]), 400)]
#[case::metadata_as_varint(envelope("v1", "ConfigMap", &Encoder::new().varint(1, 5).finish()), 400)]
#[case::label_value_as_fixed32(envelope("v1", "ConfigMap", &Encoder::new().message(1, Encoder::new().message(11, Encoder::new().string(1, "a").fixed32(2, 1))).finish()), 400)]
#[case::replicas_as_string(envelope("apps/v1", "Deployment", &Encoder::new().message(2, Encoder::new().string(1, "3")).finish()), 400)]
#[case::time_out_of_range(envelope("v1", "ConfigMap", &Encoder::new().message(1, Encoder::new().message(8, time(i64::MAX))).finish()), 400)]
#[case::time_after_9999(envelope("v1", "ConfigMap", &Encoder::new().message(1, Encoder::new().message(8, time(253_402_300_800))).finish()), 400)]
#[case::time_before_year_1(envelope("v1", "ConfigMap", &Encoder::new().message(1, Encoder::new().message(8, time(-62_135_596_801))).finish()), 400)]
#[case::fields_v1_not_json(envelope("v1", "ConfigMap", &Encoder::new().message(1, Encoder::new().message(17, Encoder::new().message(7, Encoder::new().bytes(1, b"{nope")))).finish()), 400)]
#[case::typemeta_as_varint({let mut b = MAGIC.to_vec(); b.extend(Encoder::new().varint(1, 1).finish()); b}, 400)]
fn bad_bodies_get_typed_errors(#[case] body: Vec<u8>, #[case] code: u16) {
    let err = decode(&body).unwrap_err();
    assert_eq!(err.code(), code, "{err}");
    let reason = if code == 415 {
        "UnsupportedMediaType"
    } else {
        "BadRequest"
    };
    assert_eq!(err.reason(), reason, "{err}");
    assert!(!err.to_string().is_empty());
}

#[test]
fn unknown_kind_message_names_the_kind() {
    let err = decode(&envelope("storage.k8s.io/v1", "StorageClass", &[])).unwrap_err();
    assert_eq!(
        err,
        ProtobufError::UnsupportedKind {
            api_version: "storage.k8s.io/v1".into(),
            kind: "StorageClass".into()
        }
    );
    assert!(err.to_string().contains("\"StorageClass\""), "{err}");
}

/// A Deployment body with every kind of field, for mutation.
fn rich_body() -> Vec<u8> {
    let template = Encoder::new()
        .message(
            1,
            object_meta("", "", Encoder::new().string_entry(11, "app", "web")),
        )
        .message(2, Encoder::new().message(2, container()).int(25, -5));
    let raw = Encoder::new()
        .message(
            1,
            object_meta(
                "web",
                "default",
                Encoder::new().message(8, time(1_700_000_000)),
            ),
        )
        .message(
            2,
            Encoder::new()
                .int(1, 2)
                .message(2, Encoder::new().string_entry(1, "app", "web"))
                .message(3, template)
                .message(
                    4,
                    Encoder::new().message(2, Encoder::new().message(2, int_or_string_str("25%"))),
                ),
        )
        .finish();
    envelope("apps/v1", "Deployment", &raw)
}

#[test]
fn every_truncation_inside_the_object_is_an_error() {
    let body = rich_body();
    assert!(decode(&body).is_ok());
    // The envelope is magic, typeMeta, raw, then two empty strings (4 bytes): cutting anywhere
    // before the end of raw leaves a length that runs past the end.
    let raw_end = body.len() - 4;
    // Cutting right after typeMeta leaves a whole envelope with no object; every other cut
    // before the end of raw is inside a length-delimited value.
    let type_meta_end = MAGIC.len() + 2 + usize::from(body[MAGIC.len() + 1]);
    for cut in (0..raw_end).filter(|cut| *cut != type_meta_end) {
        let result = decode(&body[..cut]);
        assert!(result.is_err(), "prefix of {cut} bytes decoded: {result:?}");
        assert_eq!(result.unwrap_err().code(), 400, "prefix of {cut} bytes");
    }
}

#[test]
fn random_and_mutated_bodies_never_panic() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x6b38_7300);
    let valid = rich_body();
    let mut outcomes = [0usize; 2];
    for round in 0..4000 {
        let body = match round % 4 {
            // Pure noise, with and without the magic prefix.
            0 | 1 => {
                let len = rng.random_range(0..200);
                let mut body: Vec<u8> = (0..len).map(|_| rng.random()).collect();
                if round % 4 == 1 {
                    let mut with_magic = MAGIC.to_vec();
                    with_magic.append(&mut body);
                    body = with_magic;
                }
                body
            }
            // A valid body with a few bytes overwritten.
            2 => {
                let mut body = valid.clone();
                for _ in 0..rng.random_range(1..6) {
                    let at = rng.random_range(MAGIC.len()..body.len());
                    body[at] = rng.random();
                }
                body
            }
            // A valid body with a byte removed or inserted.
            _ => {
                let mut body = valid.clone();
                let at = rng.random_range(MAGIC.len()..body.len());
                if rng.random::<bool>() {
                    body.remove(at);
                } else {
                    body.insert(at, rng.random());
                }
                body
            }
        };
        match decode(&body) {
            Ok(value) => {
                assert!(value.is_object());
                outcomes[0] += 1;
            }
            Err(err) => {
                assert!(matches!(err.code(), 400 | 415), "{err}");
                outcomes[1] += 1;
            }
        }
    }
    // Both paths were exercised.
    assert!(outcomes[0] > 0 && outcomes[1] > 0, "{outcomes:?}");
}

#[test]
fn horizontal_pod_autoscalers_at_both_versions() {
    let target = || {
        Encoder::new()
            .string(1, "Deployment")
            .string(2, "web")
            .string(3, "apps/v1")
    };
    // v1, as `kubectl autoscale` sends it.
    let raw = Encoder::new()
        .message(1, object_meta("web", "default", none()))
        .message(
            2,
            Encoder::new()
                .message(1, target())
                .int(2, 1)
                .int(3, 5)
                .int(4, 70),
        )
        .finish();
    let decoded = decode(&envelope("autoscaling/v1", "HorizontalPodAutoscaler", &raw)).unwrap();
    assert_eq!(
        decoded["spec"],
        json!({"scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
            "minReplicas": 1, "maxReplicas": 5, "targetCPUUtilizationPercentage": 70})
    );
    // v2 with a metric and a behaviour.
    let metric = Encoder::new().string(1, "Pods").message(
        3,
        Encoder::new()
            .message(1, Encoder::new().string(1, "rps"))
            .message(
                2,
                Encoder::new()
                    .string(1, "AverageValue")
                    .message(3, quantity("1k")),
            ),
    );
    let rules = Encoder::new()
        .string(1, "Max")
        .message(2, Encoder::new().string(1, "Pods").int(2, 4).int(3, 15))
        .int(3, 0)
        .message(4, quantity("50m"));
    let raw = Encoder::new()
        .message(1, object_meta("web", "default", none()))
        .message(
            2,
            Encoder::new()
                .message(1, target())
                .int(3, 9)
                .message(4, metric)
                .message(5, Encoder::new().message(1, rules)),
        )
        .finish();
    let decoded = decode(&envelope("autoscaling/v2", "HorizontalPodAutoscaler", &raw)).unwrap();
    assert_eq!(
        decoded["spec"],
        json!({
            "scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
            "maxReplicas": 9,
            "metrics": [{"type": "Pods", "pods": {"metric": {"name": "rps"},
                "target": {"type": "AverageValue", "averageValue": "1k"}}}],
            "behavior": {"scaleUp": {"selectPolicy": "Max", "stabilizationWindowSeconds": 0,
                "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15}], "tolerance": "50m"}}
        })
    );
}

#[test]
fn certificate_signing_request_as_kubectl_certificate_approve_sends_it() {
    let condition = Encoder::new()
        .string(1, "Approved")
        .string(6, "True")
        .string(2, "KubectlApprove")
        .message(4, time(1_700_000_000));
    let raw = Encoder::new()
        .message(1, object_meta("csr", "", none()))
        .message(
            2,
            Encoder::new()
                .bytes(1, b"PEM")
                .string(7, "example.com/signer")
                .varint(8, 3600)
                .string(5, "client auth")
                .string(2, "alice")
                .string(4, "dev"),
        )
        .message(3, Encoder::new().message(1, condition))
        .finish();
    let decoded = decode(&envelope(
        "certificates.k8s.io/v1",
        "CertificateSigningRequest",
        &raw,
    ))
    .unwrap();
    assert_eq!(decoded["spec"]["request"], "UEVN");
    assert_eq!(decoded["spec"]["signerName"], "example.com/signer");
    assert_eq!(decoded["spec"]["expirationSeconds"], 3600);
    assert_eq!(decoded["spec"]["usages"], json!(["client auth"]));
    assert_eq!(decoded["spec"]["groups"], json!(["dev"]));
    let approved = &decoded["status"]["conditions"][0];
    assert_eq!(approved["type"], "Approved");
    assert_eq!(approved["status"], "True");
    assert_eq!(approved["reason"], "KubectlApprove");
    assert_eq!(approved["lastUpdateTime"], "2023-11-14T22:13:20Z");
}

#[test]
fn volume_attachment_as_the_attach_detach_controller_sends_it() {
    let raw = Encoder::new()
        .message(1, object_meta("csi-123", "", none()))
        .message(
            2,
            Encoder::new()
                .string(1, "csi.example.com")
                .message(2, Encoder::new().string(1, "pv-1"))
                .string(3, "node-1"),
        )
        .message(
            3,
            Encoder::new()
                .bool(1, false)
                .message(4, Encoder::new().string(2, "busy").varint(3, 5)),
        )
        .finish();
    let decoded = decode(&envelope("storage.k8s.io/v1", "VolumeAttachment", &raw)).unwrap();
    assert_eq!(
        decoded["spec"],
        json!({"attacher": "csi.example.com", "source": {"persistentVolumeName": "pv-1"}, "nodeName": "node-1"})
    );
    assert_eq!(
        decoded["status"],
        json!({"attached": false, "detachError": {"message": "busy", "errorCode": 5}})
    );
}
