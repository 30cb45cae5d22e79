//! The real `kubectl` against the fake API server's CSI storage kinds (`storage.k8s.io/v1`),
//! as a CSI driver's deployment, its node plugin and the external provisioner write them:
//! CSIDrivers (defaulted, `attachRequired` and the lifecycle modes fixed, a generation from the
//! first spec change), CSINodes (a registered driver kept but for its count), CSIStorageCapacities
//! (topology and class fixed, deprecated node labels warned of) and VolumeAttributesClasses
//! (`vac`, parameters required and fixed); StorageClasses defaulted as the real server does.

use crate::kubectl_support;

use kubectl_support::Cluster;
use serde_json::{json, Value};

fn get(cluster: &Cluster, plural: &str, namespace: Option<&str>, name: &str) -> Value {
    cluster.must_get("storage.k8s.io/v1", plural, namespace, name)
}

#[test]
fn a_csi_driver_is_defaulted_printed_and_kept() {
    let cluster = Cluster::start();
    let file = cluster.write_json(
        "driver.json",
        &json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
            "metadata": {"name": "ebs.csi.aws.com"},
            "spec": {"attachRequired": true, "tokenRequests": [{"audience": "sts.amazonaws.com"}]}}),
    );
    cluster
        .kubectl(&["create", "-f", &file])
        .ok()
        .stdout_is("csidriver.storage.k8s.io/ebs.csi.aws.com created\n");
    let stored = get(&cluster, "csidrivers", None, "ebs.csi.aws.com");
    assert_eq!(
        stored["spec"],
        json!({"attachRequired": true, "podInfoOnMount": false, "storageCapacity": false,
               "fsGroupPolicy": "ReadWriteOnceWithFSType", "requiresRepublish": false,
               "seLinuxMount": false, "volumeLifecycleModes": ["Persistent"],
               "tokenRequests": [{"audience": "sts.amazonaws.com"}]})
    );
    assert!(
        stored["metadata"].get("generation").is_none(),
        "a CSIDriver does not start its generation: {stored}"
    );
    let rows = cluster.kubectl(&["get", "csidrivers"]).ok().rows();
    assert_eq!(
        rows[0],
        [
            "NAME",
            "ATTACHREQUIRED",
            "PODINFOONMOUNT",
            "STORAGECAPACITY",
            "TOKENREQUESTS",
            "REQUIRESREPUBLISH",
            "MODES",
            "AGE"
        ]
    );
    assert_eq!(
        rows[1][..7],
        [
            "ebs.csi.aws.com",
            "true",
            "false",
            "false",
            "sts.amazonaws.com",
            "false",
            "Persistent"
        ]
    );

    // Mutable spec fields move the generation; the fixed ones are refused.
    cluster
        .kubectl(&[
            "patch",
            "csidriver",
            "ebs.csi.aws.com",
            "--type=merge",
            "-p",
            r#"{"spec":{"storageCapacity":true}}"#,
        ])
        .ok();
    let patched = get(&cluster, "csidrivers", None, "ebs.csi.aws.com");
    assert_eq!(patched["metadata"]["generation"], 1);
    assert_eq!(patched["spec"]["storageCapacity"], true);
    cluster
        .kubectl(&[
            "patch",
            "csidriver",
            "ebs.csi.aws.com",
            "--type=merge",
            "-p",
            r#"{"spec":{"attachRequired":false,"volumeLifecycleModes":["Ephemeral"]}}"#,
        ])
        .fails()
        .stderr_has("spec.attachedRequired: Invalid value: false: field is immutable")
        .stderr_has(
            "spec.volumeLifecycleModes: Invalid value: [\"Ephemeral\"]: field is immutable",
        );
    cluster
        .kubectl(&["patch", "csidriver", "ebs.csi.aws.com", "--type=merge", "-p",
            r#"{"spec":{"tokenRequests":null,"serviceAccountTokenInSecrets":true}}"#])
        .fails()
        .stderr_has("spec.serviceAccountTokenInSecrets: Invalid value: true: serviceAccountTokenInSecrets is set but no tokenRequests are specified");
}

#[test]
fn a_csi_node_keeps_its_registered_drivers() {
    let cluster = Cluster::start();
    let node = |node_id: &str, count: i64| {
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "node-1"},
            "spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": node_id,
                "topologyKeys": ["topology.ebs.csi.aws.com/zone"], "allocatable": {"count": count}}]}})
    };
    let file = cluster.write_json("node.json", &node("i-1", 25));
    cluster.kubectl(&["create", "-f", &file]).ok();
    let rows = cluster.kubectl(&["get", "csinodes"]).ok().rows();
    assert_eq!(rows[0], ["NAME", "DRIVERS", "AGE"]);
    assert_eq!(rows[1][..2], ["node-1", "1"]);
    // The count may change; the node id may not (reported twice, as upstream validates the
    // object twice on update, and the driver printed as Go prints it).
    let file = cluster.write_json("count.json", &node("i-1", 20));
    cluster.kubectl(&["apply", "-f", &file]).ok();
    assert_eq!(
        get(&cluster, "csinodes", None, "node-1")["spec"]["drivers"][0]["allocatable"]["count"],
        20
    );
    let file = cluster.write_json("moved.json", &node("i-2", 20));
    cluster
        .kubectl(&["apply", "-f", &file])
        .fails()
        .stderr_has("spec.drivers: Invalid value: &storage.CSINodeDriver{Name:\"ebs.csi.aws.com\", NodeID:\"i-2\", TopologyKeys:[]string{\"topology.ebs.csi.aws.com/zone\"}, Allocatable:(*storage.VolumeNodeResources)(nil)}: field is immutable");
    let file = cluster.write_json(
        "twice.json",
        &json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "node-2"},
            "spec": {"drivers": [{"name": "d.io", "nodeID": "a"}, {"name": "d.io", "nodeID": "b"}]}}),
    );
    cluster
        .kubectl(&["create", "-f", &file])
        .fails()
        .stderr_has("spec.drivers[1].name: Duplicate value: \"d.io\"");
}

#[test]
fn a_storage_capacity_warns_and_keeps_its_topology() {
    let cluster = Cluster::start();
    let file = cluster.write_json(
        "capacity.json",
        &json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity",
            "metadata": {"name": "csisc-1", "namespace": "default"},
            "storageClassName": "gp3", "capacity": "100Gi",
            "nodeTopology": {"matchLabels": {"failure-domain.beta.kubernetes.io/zone": "us-east-1a"}}}),
    );
    cluster
        .kubectl(&["create", "-f", &file])
        .ok()
        .stderr_has("Warning: nodeTopology.matchLabels.failure-domain.beta.kubernetes.io/zone: deprecated since v1.17; use \"topology.kubernetes.io/zone\" instead");
    let rows = cluster
        .kubectl(&["get", "csistoragecapacities"])
        .ok()
        .rows();
    assert_eq!(rows[0], ["NAME", "STORAGECLASSNAME", "CAPACITY"]);
    assert_eq!(rows[1], ["csisc-1", "gp3", "100Gi"]);
    cluster
        .kubectl(&["patch", "csistoragecapacity", "csisc-1", "--type=merge", "-p",
            r#"{"storageClassName":"io2","nodeTopology":{"matchLabels":{"topology.kubernetes.io/zone":"b"}}}"#])
        .fails()
        .stderr_has("storageClassName: Invalid value: \"io2\": field is immutable")
        .stderr_has("nodeTopology: Invalid value: {\"matchLabels\":{");
    cluster
        .kubectl(&[
            "patch",
            "csistoragecapacity",
            "csisc-1",
            "--type=merge",
            "-p",
            r#"{"capacity":"-1"}"#,
        ])
        .fails()
        .stderr_has("capacity: Invalid value: \"-1\": must be greater than or equal to 0");
}

#[test]
fn volume_attributes_classes_and_storage_classes() {
    let cluster = Cluster::start();
    let vac = |params: Value| {
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttributesClass",
            "metadata": {"name": "gold"}, "driverName": "ebs.csi.aws.com", "parameters": params})
    };
    let file = cluster.write_json("empty.json", &vac(json!({})));
    cluster
        .kubectl(&["create", "-f", &file])
        .fails()
        .stderr_has("parameters: Required value: must contain at least one key/value pair");
    let file = cluster.write_json("gold.json", &vac(json!({"iops": "6000"})));
    cluster.kubectl(&["create", "-f", &file]).ok();
    let rows = cluster.kubectl(&["get", "vac"]).ok().rows();
    assert_eq!(rows[0], ["NAME", "DRIVERNAME", "AGE"]);
    assert_eq!(rows[1][..2], ["gold", "ebs.csi.aws.com"]);
    cluster
        .kubectl(&[
            "patch",
            "vac",
            "gold",
            "--type=merge",
            "-p",
            r#"{"parameters":{"iops":"9000"}}"#,
        ])
        .fails()
        .stderr_has("parameters: Forbidden: updates to parameters are forbidden.");

    let file = cluster.write_json(
        "sc.json",
        &json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": "gp3"}, "provisioner": "ebs.csi.aws.com",
            "allowedTopologies": [{"matchLabelExpressions": [{"key": "failure-domain.beta.kubernetes.io/zone", "values": ["a"]}]}]}),
    );
    cluster
        .kubectl(&["create", "-f", &file])
        .ok()
        .stderr_has("Warning: allowedTopologies[0].matchLabelExpressions[0].key: deprecated since v1.17; use \"topology.kubernetes.io/zone\" instead");
    let sc = get(&cluster, "storageclasses", None, "gp3");
    assert_eq!(sc["reclaimPolicy"], "Delete");
    assert_eq!(sc["volumeBindingMode"], "Immediate");
}
