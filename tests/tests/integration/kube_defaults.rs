//! Defaults a real server fills in when built-in objects are written (`pkg/apis/<group>/v1/
//! defaults.go` and the create strategies), seen through kube-rs and `kubectl`, and a CRD's
//! status at creation (empty until its controllers establish it).

use crate::kubectl_support;

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use kubectl_support::Cluster;
use serde_json::{json, Value};

fn template() -> Value {
    json!({"metadata": {"labels": {"app": "web"}},
           "spec": {"containers": [{"name": "app", "image": "web:1.0",
                                    "ports": [{"containerPort": 80}]}]}})
}

fn create<K>(cluster: &Cluster, object: Value) -> Value
where
    K: kube::Resource<Scope = kube::core::NamespaceResourceScope>
        + Clone
        + std::fmt::Debug
        + k8s_openapi::serde::Serialize
        + k8s_openapi::serde::de::DeserializeOwned,
    K::DynamicType: Default,
{
    let api: Api<K> = Api::namespaced(cluster.tcp_client(), "default");
    let typed: K = serde_json::from_value(object).expect("typed object");
    let created = cluster
        .block_on(api.create(&PostParams::default(), &typed))
        .expect("create");
    serde_json::to_value(created).expect("json")
}

#[test]
fn workload_kinds_are_defaulted_as_their_defaults_go_sets() {
    let cluster = Cluster::start();
    let deployment = create::<Deployment>(
        &cluster,
        json!({"metadata": {"name": "web"},
               "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template()}}),
    );
    let spec = &deployment["spec"];
    assert_eq!(spec["replicas"], 1);
    assert_eq!(
        spec["strategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
    );
    assert_eq!(spec["revisionHistoryLimit"], 10);
    assert_eq!(spec["progressDeadlineSeconds"], 600);
    let pod = &spec["template"]["spec"];
    assert_eq!(
        (
            &pod["restartPolicy"],
            &pod["dnsPolicy"],
            &pod["schedulerName"],
            &pod["terminationGracePeriodSeconds"]
        ),
        (
            &json!("Always"),
            &json!("ClusterFirst"),
            &json!("default-scheduler"),
            &json!(30)
        )
    );
    let container = &pod["containers"][0];
    assert_eq!(container["imagePullPolicy"], "IfNotPresent");
    assert_eq!(container["terminationMessagePath"], "/dev/termination-log");
    assert_eq!(container["ports"][0]["protocol"], "TCP");

    let daemon_set = create::<DaemonSet>(
        &cluster,
        json!({"metadata": {"name": "agent"},
               "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template()}}),
    );
    assert_eq!(
        daemon_set["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})
    );
    assert_eq!(daemon_set["spec"]["revisionHistoryLimit"], 10);

    let stateful_set = create::<StatefulSet>(
        &cluster,
        json!({"metadata": {"name": "db"},
               "spec": {"serviceName": "db", "selector": {"matchLabels": {"app": "web"}},
                        "template": template()}}),
    );
    let spec = &stateful_set["spec"];
    assert_eq!(spec["podManagementPolicy"], "OrderedReady");
    assert_eq!(
        spec["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
    );
    assert_eq!(
        spec["persistentVolumeClaimRetentionPolicy"],
        json!({"whenDeleted": "Retain", "whenScaled": "Retain"})
    );
    assert_eq!(
        (&spec["replicas"], &spec["revisionHistoryLimit"]),
        (&json!(1), &json!(10))
    );
}

#[test]
fn jobs_and_cron_jobs_are_defaulted_and_jobs_get_a_generated_selector() {
    let cluster = Cluster::start();
    let mut job_template = template();
    job_template["spec"]["restartPolicy"] = json!("Never");
    let job = create::<Job>(
        &cluster,
        json!({"metadata": {"name": "once"}, "spec": {"template": job_template}}),
    );
    let spec = &job["spec"];
    let uid = job["metadata"]["uid"].as_str().expect("uid");
    assert_eq!(
        (&spec["completions"], &spec["parallelism"]),
        (&json!(1), &json!(1))
    );
    assert_eq!(spec["backoffLimit"], 6);
    assert_eq!(spec["completionMode"], "NonIndexed");
    assert_eq!(spec["suspend"], false);
    assert_eq!(spec["podReplacementPolicy"], "TerminatingOrFailed");
    assert_eq!(spec["manualSelector"], false);
    assert_eq!(
        spec["selector"],
        json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}})
    );
    let labels = &spec["template"]["metadata"]["labels"];
    assert_eq!(labels["batch.kubernetes.io/job-name"], "once");
    assert_eq!(labels["job-name"], "once");
    assert_eq!(labels["controller-uid"], uid);
    assert_eq!(
        job["metadata"]["labels"]["app"], "web",
        "labels from the template"
    );

    // kubectl's own Job: the same defaults.
    cluster
        .kubectl(&["create", "job", "k", "--image=busybox"])
        .ok();
    let job = cluster.must_get("batch/v1", "jobs", Some("default"), "k");
    assert_eq!(job["spec"]["backoffLimit"], 6, "{job}");
    assert_eq!(
        job["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"],
        "Always"
    );

    // (A Job template must say OnFailure or Never: the pod default, Always, is refused.)
    let mut cron_template = template();
    cron_template["spec"]["restartPolicy"] = json!("OnFailure");
    let cron = create::<CronJob>(
        &cluster,
        json!({"metadata": {"name": "nightly"},
               "spec": {"schedule": "0 0 * * *",
                        "jobTemplate": {"spec": {"template": cron_template}}}}),
    );
    let spec = &cron["spec"];
    assert_eq!(spec["concurrencyPolicy"], "Allow");
    assert_eq!(spec["suspend"], false);
    assert_eq!(
        (
            &spec["successfulJobsHistoryLimit"],
            &spec["failedJobsHistoryLimit"]
        ),
        (&json!(3), &json!(1))
    );
    assert_eq!(
        spec["jobTemplate"]["spec"]["template"]["spec"]["dnsPolicy"],
        "ClusterFirst"
    );
}

#[test]
fn services_are_defaulted_and_defaults_apply_on_update_too() {
    let cluster = Cluster::start();
    let service = create::<Service>(
        &cluster,
        json!({"metadata": {"name": "web"},
               "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}),
    );
    let spec = &service["spec"];
    assert_eq!(spec["type"], "ClusterIP");
    assert_eq!(spec["sessionAffinity"], "None");
    assert_eq!(
        spec["ports"][0],
        json!({"port": 80, "protocol": "TCP", "targetPort": 80})
    );
    assert_eq!(spec["internalTrafficPolicy"], "Cluster");
    assert_eq!(spec["ipFamilyPolicy"], "SingleStack");
    assert!(spec.get("externalTrafficPolicy").is_none(), "{spec}");
    assert_eq!(service["status"], json!({"loadBalancer": {}}));

    cluster
        .kubectl(&["create", "service", "loadbalancer", "lb", "--tcp=443:8443"])
        .ok();
    let lb = cluster.must_get("v1", "services", Some("default"), "lb");
    assert_eq!(lb["spec"]["externalTrafficPolicy"], "Cluster", "{lb}");
    assert_eq!(lb["spec"]["allocateLoadBalancerNodePorts"], true, "{lb}");

    // A replace that leaves a defaulted field out gets it back.
    cluster
        .kubectl(&[
            "patch",
            "service",
            "web",
            "--type=json",
            "-p",
            r#"[{"op":"remove","path":"/spec/sessionAffinity"}]"#,
        ])
        .ok();
    let web = cluster.must_get("v1", "services", Some("default"), "web");
    assert_eq!(web["spec"]["sessionAffinity"], "None", "{web}");
}

#[test]
fn webhook_configurations_are_defaulted() {
    let cluster = Cluster::start();
    let config = json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "m"},
        "webhooks": [{"name": "m.example.com", "sideEffects": "None",
                      "admissionReviewVersions": ["v1"],
                      "clientConfig": {"service": {"namespace": "default", "name": "hook"}},
                      "rules": [{"operations": ["CREATE"], "apiGroups": [""],
                                 "apiVersions": ["v1"], "resources": ["pods"]}]}]
    });
    let file = cluster.write_json("m.json", &config);
    cluster.kubectl(&["create", "-f", &file]).ok();
    let stored = cluster.must_get(
        "admissionregistration.k8s.io/v1",
        "mutatingwebhookconfigurations",
        None,
        "m",
    );
    let hook = &stored["webhooks"][0];
    assert_eq!(hook["failurePolicy"], "Fail");
    assert_eq!(hook["matchPolicy"], "Equivalent");
    assert_eq!(hook["namespaceSelector"], json!({}));
    assert_eq!(hook["objectSelector"], json!({}));
    assert_eq!(hook["timeoutSeconds"], 10);
    assert_eq!(hook["reinvocationPolicy"], "Never");
    assert_eq!(hook["rules"][0]["scope"], "*");
    assert_eq!(hook["clientConfig"]["service"]["port"], 443);
}

#[test]
fn a_crd_is_created_unestablished_and_established_by_a_later_status_write() {
    let cluster = Cluster::start();
    let crds: Api<CustomResourceDefinition> = Api::all(cluster.tcp_client());
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "metadata": {"name": "pools.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "pools", "kind": "Pool"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                               "schema": {"openAPIV3Schema": {"type": "object",
                                   "x-kubernetes-preserve-unknown-fields": true}}}]}
    }))
    .expect("crd");
    let created = cluster
        .block_on(crds.create(&PostParams::default(), &crd))
        .expect("create");
    let status = created.status.expect("a status");
    let names = status.accepted_names.expect("acceptedNames");
    assert_eq!((names.kind.as_str(), names.plural.as_str()), ("", ""));
    assert!(status.conditions.is_none_or(|c| c.is_empty()));
    assert_eq!(status.stored_versions, Some(vec!["v1".to_string()]));

    let now = cluster
        .block_on(crds.get("pools.example.com"))
        .expect("get");
    assert_ne!(
        now.metadata.resource_version,
        created.metadata.resource_version
    );
    let status = now.status.expect("status");
    assert_eq!(status.accepted_names.expect("names").kind, "Pool");
    assert!(status
        .conditions
        .unwrap_or_default()
        .iter()
        .any(|c| c.type_ == "Established" && c.status == "True"));
    cluster
        .kubectl(&[
            "wait",
            "--for=condition=Established",
            "crd/pools.example.com",
            "--timeout=5s",
        ])
        .ok();
}

/// The `+default` markers of `k8s.io/api/core/v1` and `SetDefaults_Volume`, read back over the
/// wire as `kubectl` sees them: a volume without a source is an empty dir, plugin sources are
/// filled, a gRPC probe's service is written as `""`, an empty port protocol is TCP; a
/// persistent volume's plugin source gets the same markers.
#[test]
fn the_core_types_markers_fill_volumes_probes_and_ports() {
    let cluster = Cluster::start();
    let file = cluster.write_json(
        "pod.json",
        &json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "busybox",
                "ports": [{"containerPort": 8080, "protocol": ""}],
                "readinessProbe": {"grpc": {"port": 9000}}}],
                "volumes": [{"name": "scratch"},
                            {"name": "disk", "iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.2001-04.com.example:storage", "lun": 0}}]}}),
    );
    cluster.kubectl(&["create", "-f", &file]).ok();
    let pod = cluster
        .kubectl(&["get", "pod", "p", "-o", "json"])
        .ok()
        .json();
    let c = &pod["spec"]["containers"][0];
    assert_eq!(c["ports"][0]["protocol"], "TCP");
    assert_eq!(
        c["readinessProbe"]["grpc"],
        json!({"port": 9000, "service": ""})
    );
    assert_eq!(
        pod["spec"]["volumes"][0],
        json!({"name": "scratch", "emptyDir": {}})
    );
    assert_eq!(
        pod["spec"]["volumes"][1]["iscsi"]["iscsiInterface"],
        "default"
    );

    let file = cluster.write_json(
        "pv.json",
        &json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv"},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                "rbd": {"monitors": ["10.0.0.2:6789"], "image": "img"}}}),
    );
    cluster.kubectl(&["create", "-f", &file]).ok();
    let pv = cluster
        .kubectl(&["get", "pv", "pv", "-o", "json"])
        .ok()
        .json();
    assert_eq!(
        (
            &pv["spec"]["rbd"]["pool"],
            &pv["spec"]["rbd"]["user"],
            &pv["spec"]["rbd"]["keyring"]
        ),
        (&json!("rbd"), &json!("admin"), &json!("/etc/ceph/keyring"))
    );
}
