//! The `karpenter.sh/v1beta1` NodeClaim resource and the well-known keys the lifecycle uses.
//!
//! Only the fields the lifecycle and termination controllers read or write are modelled (spec §2):
//! taints, startup taints, requirements (with `minValues`), resource requests and the node class
//! reference in the spec; provider id, image id, capacity, allocatable, node name and the knative
//! style conditions in the status. `spec.kubelet` is not modelled.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Taint;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// API group of Karpenter's resources.
pub const GROUP: &str = "karpenter.sh";
/// Finalizer the lifecycle controller adds and the termination controller removes.
pub const TERMINATION_FINALIZER: &str = "karpenter.sh/termination";
/// Label naming the NodePool a NodeClaim belongs to.
pub const NODEPOOL_LABEL: &str = "karpenter.sh/nodepool";
/// Label carrying the capacity type (spot / on-demand).
pub const CAPACITY_TYPE_LABEL: &str = "karpenter.sh/capacity-type";
/// Label Registration puts on the Node.
pub const NODE_REGISTERED_LABEL: &str = "karpenter.sh/registered";
/// Label Initialization puts on the Node.
pub const NODE_INITIALIZED_LABEL: &str = "karpenter.sh/initialized";
/// Self-referential NodeClaim label (restricted: never derived from requirements).
pub const NODECLAIM_LABEL: &str = "karpenter.sh/nodeclaim";
/// Annotation that opts a Node out of disruption (synced like any other annotation).
pub const DO_NOT_DISRUPT_ANNOTATION: &str = "karpenter.sh/do-not-disrupt";
/// `node.kubernetes.io/instance-type`.
pub const INSTANCE_TYPE_LABEL: &str = "node.kubernetes.io/instance-type";
/// `topology.kubernetes.io/zone`.
pub const ZONE_LABEL: &str = "topology.kubernetes.io/zone";
/// `topology.kubernetes.io/region`.
pub const REGION_LABEL: &str = "topology.kubernetes.io/region";
/// `kubernetes.io/arch`.
pub const ARCH_LABEL: &str = "kubernetes.io/arch";
/// `kubernetes.io/os`.
pub const OS_LABEL: &str = "kubernetes.io/os";
/// `kubernetes.io/hostname`.
pub const HOSTNAME_LABEL: &str = "kubernetes.io/hostname";
/// `node.kubernetes.io/windows-build`.
pub const WINDOWS_BUILD_LABEL: &str = "node.kubernetes.io/windows-build";

/// Condition types of the NodeClaim's living condition set.
pub mod condition_types {
    /// The happy condition, derived from the three below.
    pub const READY: &str = "Ready";
    /// The cloud provider created the instance.
    pub const LAUNCHED: &str = "Launched";
    /// A Node with the NodeClaim's provider id joined and was synced.
    pub const REGISTERED: &str = "Registered";
    /// The Node is Ready, untainted and has its requested resources.
    pub const INITIALIZED: &str = "Initialized";
}

/// Desired state of a NodeClaim, written by the provisioner and read-only for the lifecycle.
#[derive(CustomResource, Clone, Debug, Default, Deserialize, Serialize, PartialEq, JsonSchema)]
#[kube(
    group = "karpenter.sh",
    version = "v1beta1",
    kind = "NodeClaim",
    plural = "nodeclaims",
    singular = "nodeclaim",
    shortname = "nc",
    category = "karpenter",
    status = "NodeClaimStatus",
    derive = "PartialEq",
    printcolumn = r#"{"name":"Type","type":"string","jsonPath":".metadata.labels.node\\.kubernetes\\.io/instance-type"}"#,
    printcolumn = r#"{"name":"Zone","type":"string","jsonPath":".metadata.labels.topology\\.kubernetes\\.io/zone"}"#,
    printcolumn = r#"{"name":"Node","type":"string","jsonPath":".status.nodeName"}"#,
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#,
    printcolumn = r#"{"name":"Capacity","type":"string","jsonPath":".metadata.labels.karpenter\\.sh/capacity-type","priority":1}"#,
    printcolumn = r#"{"name":"NodePool","type":"string","jsonPath":".metadata.labels.karpenter\\.sh/nodepool","priority":1}"#
)]
#[serde(rename_all = "camelCase")]
pub struct NodeClaimSpec {
    /// Taints applied to the Node for its whole life.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<Taint>,
    /// Taints applied at registration and expected to be removed by some other agent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub startup_taints: Vec<Taint>,
    /// Scheduling requirements the instance must satisfy.
    #[serde(default)]
    pub requirements: Vec<NodeSelectorRequirementWithMinValues>,
    /// Resources the instance must provide.
    #[serde(default, skip_serializing_if = "ResourceRequirements::is_empty")]
    pub resources: ResourceRequirements,
    /// The provider-specific node class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_class_ref: Option<NodeClassReference>,
}

/// A node selector requirement with an optional minimum number of values (`minValues`).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeSelectorRequirementWithMinValues {
    /// Label key.
    pub key: String,
    /// One of In, NotIn, Exists, DoesNotExist, Gt, Lt.
    pub operator: String,
    /// Values the operator applies to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
    /// Minimum number of distinct values the scheduler must keep (not used by the lifecycle).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_values: Option<i32>,
}

/// Resource requests of a NodeClaim.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, JsonSchema)]
pub struct ResourceRequirements {
    /// Minimum resources the instance must have.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub requests: BTreeMap<String, Quantity>,
}

impl ResourceRequirements {
    /// True when no request is set.
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }
}

/// Reference to the provider-specific node class.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeClassReference {
    /// Kind of the node class.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Name of the node class.
    pub name: String,
    /// API version of the node class.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
}

/// Observed state of a NodeClaim, written by Launch (provider details) and Registration (node name).
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeClaimStatus {
    /// Name of the Node that registered for this NodeClaim.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub node_name: String,
    /// Cloud provider id of the instance; the join key with `Node.spec.providerID`.
    #[serde(
        default,
        rename = "providerID",
        skip_serializing_if = "String::is_empty"
    )]
    pub provider_id: String,
    /// Image the instance was launched from.
    #[serde(default, rename = "imageID", skip_serializing_if = "String::is_empty")]
    pub image_id: String,
    /// Full capacity of the instance.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub capacity: BTreeMap<String, Quantity>,
    /// Capacity available for pods.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub allocatable: BTreeMap<String, Quantity>,
    /// Knative-style conditions, sorted by type.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

/// A knative `apis.Condition`: like a Kubernetes condition, plus a severity.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// Condition type.
    #[serde(rename = "type")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// Empty (`Error`) for the living set's terminal conditions, `Info` or `Warning` otherwise.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub severity: String,
    /// When the condition last changed (whole seconds, like `metav1.Time`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    /// Machine-readable reason of the last transition.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
    /// Human-readable message of the last transition.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

impl Condition {
    /// Status `True`.
    pub fn is_true(&self) -> bool {
        self.status == "True"
    }
    /// Status `False`.
    pub fn is_false(&self) -> bool {
        self.status == "False"
    }
    /// Status `Unknown`.
    pub fn is_unknown(&self) -> bool {
        self.status == "Unknown"
    }
}

impl NodeClaim {
    /// The NodeClaim's conditions (empty when it has no status yet).
    pub fn conditions(&self) -> &[Condition] {
        self.status
            .as_ref()
            .map(|s| s.conditions.as_slice())
            .unwrap_or(&[])
    }

    /// The condition of type `type_`, if set.
    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.conditions().iter().find(|c| c.type_ == type_)
    }

    /// Whether the condition of type `type_` is set and `True`.
    pub fn condition_is_true(&self, type_: &str) -> bool {
        self.condition(type_).is_some_and(Condition::is_true)
    }

    /// The provider id in the status (empty before launch).
    pub fn provider_id(&self) -> &str {
        self.status
            .as_ref()
            .map(|s| s.provider_id.as_str())
            .unwrap_or("")
    }

    /// The NodePool label (empty when absent), used as a metric label.
    pub fn nodepool(&self) -> &str {
        self.label(NODEPOOL_LABEL)
    }

    /// The value of label `key` (empty when absent).
    pub fn label(&self, key: &str) -> &str {
        self.metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(key))
            .map(String::as_str)
            .unwrap_or("")
    }

    /// Whether the object carries a deletion timestamp.
    pub fn is_deleting(&self) -> bool {
        self.metadata.deletion_timestamp.is_some()
    }

    /// Whether the termination finalizer is present.
    pub fn has_termination_finalizer(&self) -> bool {
        self.metadata
            .finalizers
            .as_ref()
            .is_some_and(|f| f.iter().any(|x| x == TERMINATION_FINALIZER))
    }
}

/// The NodeClaim CRD as YAML (for `controllers crds` and `deploy/`).
pub fn crd_yaml() -> Result<String, serde_yaml::Error> {
    use kube::CustomResourceExt;
    serde_yaml::to_string(&NodeClaim::crd())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::CustomResourceExt;

    #[test]
    fn crd_is_cluster_scoped_with_status_subresource() {
        let crd = NodeClaim::crd();
        assert_eq!(crd.spec.scope, "Cluster");
        assert_eq!(crd.spec.group, "karpenter.sh");
        let version = &crd.spec.versions[0];
        assert_eq!(version.name, "v1beta1");
        assert!(version
            .subresources
            .as_ref()
            .and_then(|s| s.status.as_ref())
            .is_some());
        let yaml = crd_yaml().unwrap();
        assert!(yaml.contains("nodeclaims.karpenter.sh"));
        assert!(yaml.contains("providerID"));
    }

    #[test]
    fn deploy_manifest_matches_the_code() {
        use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
        let committed: CustomResourceDefinition =
            serde_yaml::from_str(include_str!("../../../deploy/karpenter/crds.yaml")).unwrap();
        assert_eq!(
            committed,
            NodeClaim::crd(),
            "regenerate deploy/karpenter/crds.yaml with `controllers crds`"
        );
    }

    #[test]
    fn parses_a_nodeclaim_without_requirements_or_resources() {
        let nc: NodeClaim = serde_json::from_value(serde_json::json!({
            "apiVersion": "karpenter.sh/v1beta1", "kind": "NodeClaim",
            "metadata": {"name": "bare"}, "spec": {}
        }))
        .unwrap();
        assert!(nc.spec.requirements.is_empty());
        assert!(nc.spec.resources.is_empty());
        assert_eq!(nc.provider_id(), "");
        assert!(nc.conditions().is_empty());
    }

    #[test]
    fn condition_serializes_like_knative() {
        let c = Condition {
            type_: "Launched".into(),
            status: "True".into(),
            ..Default::default()
        };
        assert_eq!(
            serde_json::to_value(&c).unwrap(),
            serde_json::json!({"type": "Launched", "status": "True"})
        );
    }
}
