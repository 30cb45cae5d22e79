//! The real `kubectl` against the fake API server's VolumeAttachments (`storage.k8s.io/v1`), as
//! the attach/detach controller creates them and a CSI attacher reports on them: the status
//! starts empty and is written only through `/status` (which keeps the stored labels), the spec
//! is fixed, an update needs a resourceVersion, and the printed columns are the real ones.

use crate::kubectl_support;

use kubectl_support::Cluster;
use serde_json::{json, Value};

fn attachment(spec: Value) -> Value {
    json!({"apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
        "metadata": {"name": "csi-abc"}, "spec": spec,
        "status": {"attached": true, "attachmentMetadata": {"device": "/dev/sdz"}}})
}

fn spec() -> Value {
    json!({"attacher": "csi.example.com", "source": {"persistentVolumeName": "pv-1"}, "nodeName": "node-1"})
}

fn stored(cluster: &Cluster) -> Value {
    cluster.must_get("storage.k8s.io/v1", "volumeattachments", None, "csi-abc")
}

#[test]
fn an_attachment_is_created_reported_on_and_kept() {
    let cluster = Cluster::start();
    let file = cluster.write_json("va.json", &attachment(spec()));
    cluster
        .kubectl(&["create", "-f", &file])
        .ok()
        .stdout_is("volumeattachment.storage.k8s.io/csi-abc created\n");
    // The status a client sends on create is dropped; Go writes `attached: false` back.
    assert_eq!(stored(&cluster)["status"], json!({"attached": false}));
    let rows = cluster.kubectl(&["get", "volumeattachments"]).ok().rows();
    assert_eq!(
        rows[0],
        ["NAME", "ATTACHER", "PV", "NODE", "ATTACHED", "AGE"]
    );
    assert_eq!(
        rows[1][..5],
        ["csi-abc", "csi.example.com", "pv-1", "node-1", "false"]
    );

    // The attacher reports through `/status`; labels it sends are not taken.
    let mut reported = stored(&cluster);
    reported["status"] = json!({"attached": true, "attachmentMetadata": {"device": "/dev/sdz"}});
    reported["metadata"]["labels"] = json!({"attacher": "was-here"});
    let file = cluster.write_json("status.json", &reported);
    cluster
        .kubectl(&["replace", "--subresource=status", "-f", &file])
        .ok();
    let after = stored(&cluster);
    assert_eq!(after["status"]["attached"], true);
    assert!(after["metadata"].get("labels").is_none(), "{after}");
    let rows = cluster
        .kubectl(&["get", "volumeattachment", "csi-abc"])
        .ok()
        .rows();
    assert_eq!(rows[1][4], "true");

    // The main endpoint keeps the status and refuses a spec change.
    let mut moved = stored(&cluster);
    moved["spec"]["nodeName"] = json!("node-2");
    let file = cluster.write_json("moved.json", &moved);
    cluster
        .kubectl(&["replace", "-f", &file])
        .fails()
        .stderr_has("spec: Invalid value:")
        .stderr_has("field is immutable");
    let mut unconditional = stored(&cluster);
    unconditional["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("resourceVersion");
    unconditional["metadata"]["labels"] = json!({"a": "b"});
    let file = cluster.write_json("unconditional.json", &unconditional);
    // (`kubectl replace` would fill in the resourceVersion; `--raw` sends the body as it is.)
    cluster
        .kubectl(&[
            "replace",
            "--raw",
            "/apis/storage.k8s.io/v1/volumeattachments/csi-abc",
            "-f",
            &file,
        ])
        .fails()
        .stderr_has("metadata.resourceVersion: Invalid value: 0: must be specified for an update");
}

#[test]
fn bad_attachments_are_refused_in_the_real_servers_words() {
    let cluster = Cluster::start();
    let mut both = spec();
    both["source"]["inlineVolumeSpec"] = json!({"capacity": {"storage": "1Gi"}});
    let file = cluster.write_json("both.json", &attachment(both));
    cluster.kubectl(&["create", "-f", &file]).fails().stderr_has(
        "spec.source: Forbidden: must specify exactly one of inlineVolumeSpec and persistentVolumeName",
    );
    let mut bad_attacher = spec();
    bad_attacher["attacher"] = json!("CSI_Driver");
    let file = cluster.write_json("attacher.json", &attachment(bad_attacher));
    cluster
        .kubectl(&["create", "-f", &file])
        .fails()
        .stderr_has("spec.attacher: Invalid value: \"CSI_Driver\": a lowercase RFC 1123 subdomain");
}
