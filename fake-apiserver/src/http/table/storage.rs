//! The storage kinds the CSI machinery writes: `printCSIDriver`, `printCSINode`,
//! `printCSIStorageCapacity` and `printVolumeAttributesClass` (descriptions from the v1 types'
//! swagger docs, as the printers take them).

use serde_json::{json, Value};

use super::{
    age_col, arr, col, computed, int_col, name_col, or_none, quantity, str_of, text, Cell, Column,
};

/// The storage kinds' columns, `None` for a kind this module does not print.
pub(super) fn columns(group: &str, kind: &str) -> Option<Vec<Column>> {
    Some(match (group, kind) {
        ("storage.k8s.io", "CSIDriver") => csi_driver(),
        // `printCSINode`.
        ("storage.k8s.io", "CSINode") => vec![
            name_col(),
            int_col(
                "Drivers",
                "Drivers indicates the number of CSI drivers registered on the node",
                |o| Some(arr(&o["spec"]["drivers"]).len() as i64),
            ),
            age_col(),
        ],
        // `printCSIStorageCapacity` (no age column).
        ("storage.k8s.io", "CSIStorageCapacity") => vec![
            name_col(),
            col(
                "StorageClassName",
                "string",
                "storageClassName represents the name of the StorageClass that the reported capacity applies to. It must meet the same requirements as the name of a StorageClass object (non-empty, DNS subdomain). If that object no longer exists, the CSIStorageCapacity object is obsolete and should be removed by its creator. This field is immutable.",
                text(|o| str_of(&o["storageClassName"]).into()),
            ),
            col(
                "Capacity",
                "string",
                "capacity is the value reported by the CSI driver in its GetCapacityResponse for a GetCapacityRequest with topology and parameters that match the previous fields.\n\nThe semantic is currently (CSI spec 1.2) defined as: The available capacity, in bytes, of the storage that can be used to provision volumes. If not set, that information is currently unavailable.",
                text(|o| match &o["capacity"] {
                    Value::Null => "<unset>".into(),
                    q => quantity(q),
                }),
            ),
        ],
        // `printVolumeAttributesClass`.
        ("storage.k8s.io", "VolumeAttributesClass") => vec![
            name_col(),
            col(
                "DriverName",
                "string",
                "Name of the CSI driver This field is immutable.",
                text(|o| str_of(&o["driverName"]).into()),
            ),
            age_col(),
        ],
        _ => return None,
    })
}

/// `printCSIDriver`: unset booleans print as their defaults, no token requests as `<unset>`,
/// no lifecycle modes as `<none>`.
fn csi_driver() -> Vec<Column> {
    fn flag(key: &'static str, unset: bool) -> Cell {
        computed(move |o| json!(o["spec"][key].as_bool().unwrap_or(unset)))
    }
    vec![
        name_col(),
        col(
            "AttachRequired",
            "boolean",
            CSI_ATTACH_REQUIRED,
            flag("attachRequired", true),
        ),
        col(
            "PodInfoOnMount",
            "boolean",
            CSI_POD_INFO_ON_MOUNT,
            flag("podInfoOnMount", false),
        ),
        col(
            "StorageCapacity",
            "boolean",
            CSI_STORAGE_CAPACITY,
            flag("storageCapacity", false),
        ),
        col(
            "TokenRequests",
            "string",
            CSI_TOKEN_REQUESTS,
            text(|o| match o["spec"]["tokenRequests"].as_array() {
                None => "<unset>".into(),
                Some(requests) => requests
                    .iter()
                    .map(|r| str_of(&r["audience"]))
                    .collect::<Vec<_>>()
                    .join(","),
            }),
        ),
        col(
            "RequiresRepublish",
            "boolean",
            CSI_REQUIRES_REPUBLISH,
            flag("requiresRepublish", false),
        ),
        col(
            "Modes",
            "string",
            CSI_VOLUME_LIFECYCLE_MODES,
            text(|o| {
                or_none(
                    &arr(&o["spec"]["volumeLifecycleModes"])
                        .iter()
                        .map(str_of)
                        .collect::<Vec<_>>()
                        .join(","),
                )
            }),
        ),
        age_col(),
    ]
}

const CSI_ATTACH_REQUIRED: &str = "attachRequired indicates this CSI volume driver requires an attach operation (because it implements the CSI ControllerPublishVolume() method), and that the Kubernetes attach detach controller should call the attach volume interface which checks the volumeattachment status and waits until the volume is attached before proceeding to mounting. The CSI external-attacher coordinates with CSI volume driver and updates the volumeattachment status when the attach operation is complete. If the value is specified to false, the attach operation will be skipped. Otherwise the attach operation will be called.\n\nThis field is immutable.";
const CSI_POD_INFO_ON_MOUNT: &str = "podInfoOnMount indicates this CSI volume driver requires additional pod information (like podName, podUID, etc.) during mount operations, if set to true. If set to false, pod information will not be passed on mount. Default is false.\n\nThe CSI driver specifies podInfoOnMount as part of driver deployment. If true, Kubelet will pass pod information as VolumeContext in the CSI NodePublishVolume() calls. The CSI driver is responsible for parsing and validating the information passed in as VolumeContext.\n\nThe following VolumeContext will be passed if podInfoOnMount is set to true. This list might grow, but the prefix will be used. \"csi.storage.k8s.io/pod.name\": pod.Name \"csi.storage.k8s.io/pod.namespace\": pod.Namespace \"csi.storage.k8s.io/pod.uid\": string(pod.UID) \"csi.storage.k8s.io/ephemeral\": \"true\" if the volume is an ephemeral inline volume\n                                defined by a CSIVolumeSource, otherwise \"false\"\n\n\"csi.storage.k8s.io/ephemeral\" is a new feature in Kubernetes 1.16. It is only required for drivers which support both the \"Persistent\" and \"Ephemeral\" VolumeLifecycleMode. Other drivers can leave pod info disabled and/or ignore this field. As Kubernetes 1.15 doesn't support this field, drivers can only support one mode when deployed on such a cluster and the deployment determines which mode that is, for example via a command line parameter of the driver.\n\nThis field was immutable in Kubernetes < 1.29 and now is mutable.";
const CSI_STORAGE_CAPACITY: &str = "storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage capacity that the driver deployment will report by creating CSIStorageCapacity objects with capacity information, if set to true.\n\nThe check can be enabled immediately when deploying a driver. In that case, provisioning new volumes with late binding will pause until the driver deployment has published some suitable CSIStorageCapacity object.\n\nAlternatively, the driver can be deployed with the field unset or false and it can be flipped later when storage capacity information has been published.\n\nThis field was immutable in Kubernetes <= 1.22 and now is mutable.";
const CSI_TOKEN_REQUESTS: &str = "tokenRequests indicates the CSI driver needs pods' service account tokens it is mounting volume for to do necessary authentication. Kubelet will pass the tokens in VolumeContext in the CSI NodePublishVolume calls. The CSI driver should parse and validate the following VolumeContext: \"csi.storage.k8s.io/serviceAccount.tokens\": {\n  \"<audience>\": {\n    \"token\": <token>,\n    \"expirationTimestamp\": <expiration timestamp in RFC3339>,\n  },\n  ...\n}\n\nNote: Audience in each TokenRequest should be different and at most one token is empty string. To receive a new token after expiry, RequiresRepublish can be used to trigger NodePublishVolume periodically.";
const CSI_REQUIRES_REPUBLISH: &str = "requiresRepublish indicates the CSI driver wants `NodePublishVolume` being periodically called to reflect any possible change in the mounted volume. This field defaults to false.\n\nNote: After a successful initial NodePublishVolume call, subsequent calls to NodePublishVolume should only update the contents of the volume. New mount points will not be seen by a running container.";
const CSI_VOLUME_LIFECYCLE_MODES: &str = "volumeLifecycleModes defines what kind of volumes this CSI volume driver supports. The default if the list is empty is \"Persistent\", which is the usage defined by the CSI specification and implemented in Kubernetes via the usual PV/PVC mechanism.\n\nThe other mode is \"Ephemeral\". In this mode, volumes are defined inline inside the pod spec with CSIVolumeSource and their lifecycle is tied to the lifecycle of that pod. A driver has to be aware of this because it is only going to get a NodePublishVolume call for such a volume.\n\nFor more information about implementing this mode, see https://kubernetes-csi.github.io/docs/ephemeral-local-volumes.html A driver can support one or more of these modes and more modes may be added in the future.\n\nThis field is beta. This field is immutable.";
