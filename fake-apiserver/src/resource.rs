//! Descriptions of the resource types the server serves: built-in kinds and those added by CRDs.

use serde_json::Value;

/// Everything the server needs to know about one served resource type (one group/version/plural).
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceInfo {
    /// API group; empty for the core group.
    pub group: String,
    /// API version within the group, e.g. `v1`.
    pub version: String,
    /// Kind, e.g. `Pod`.
    pub kind: String,
    /// Lower-case plural used in URLs, e.g. `pods`.
    pub plural: String,
    /// Lower-case singular, e.g. `pod`.
    pub singular: String,
    /// Whether objects live in a namespace.
    pub namespaced: bool,
    /// Whether the `/status` subresource is served (and the main endpoint ignores `status`).
    pub has_status: bool,
    /// Short names for kubectl, e.g. `po`.
    pub short_names: Vec<String>,
    /// Categories for kubectl, e.g. `all`.
    pub categories: Vec<String>,
    /// Whether a PUT without `metadata.resourceVersion` is allowed (unconditional update).
    pub allow_unconditional_update: bool,
    /// Whether this is a custom resource served from a CRD.
    pub custom: bool,
    /// For custom resources: the `openAPIV3Schema` of this version, used for defaults and pruning.
    pub schema: Option<Value>,
    /// For custom resources: `x-kubernetes-preserve-unknown-fields` at the root turns pruning off.
    pub additional_printer_columns: Vec<Value>,
}

impl ResourceInfo {
    /// `group/version`, or just `version` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The kind of the list type, e.g. `PodList`.
    pub fn list_kind(&self) -> String {
        format!("{}List", self.kind)
    }

    /// The verbs the resource supports, as discovery lists them.
    pub fn verbs(&self) -> Vec<&'static str> {
        vec![
            "create",
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "update",
            "watch",
        ]
    }
}
