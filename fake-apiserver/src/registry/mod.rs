//! The set of resource types served right now: the built-ins plus whatever the stored CRDs define.
//!
//! Also the registry layer (see the crate documentation): what a write does to an object and to
//! others, below the HTTP layer and above the rules and the store — the write lifecycle in
//! [`semantics`], per-kind mutations ([`kind_rules`]), deletes ([`delete_answer`], [`gc_policy`]),
//! subresources ([`subresource`], [`scale`]), PodDisruptionBudgets (`disruption`), CRDs
//! ([`crd`]) and the saved state file ([`state`]).

pub mod conversion;
pub mod crd;
pub mod crd_storage;
pub mod delete_answer;
pub(crate) mod disruption;
pub mod gc_policy;
pub mod generation;
pub mod kind_rules;
pub mod scale;
pub mod semantics;
pub mod state;
pub mod subresource;

use std::sync::{Arc, RwLock};

use serde_json::Value;

use crate::resource::{builtin_resources, compare_kube_versions, same_group, ResourceInfo};

/// Served resource types. Cheap to clone; clones share the same set.
#[derive(Debug, Clone)]
pub struct Registry {
    inner: Arc<RwLock<Vec<Arc<ResourceInfo>>>>,
}

impl Default for Registry {
    fn default() -> Self {
        Self::new()
    }
}

impl Registry {
    /// The built-in resource types.
    pub fn new() -> Self {
        Self {
            inner: Arc::new(RwLock::new(
                builtin_resources().into_iter().map(Arc::new).collect(),
            )),
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Vec<Arc<ResourceInfo>>> {
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Every served resource type, built-ins first, then custom ones in the order added.
    pub fn all(&self) -> Vec<ResourceInfo> {
        self.read().iter().map(|r| (**r).clone()).collect()
    }

    /// The resource served at `group/version/plural`.
    pub fn lookup(&self, group: &str, version: &str, plural: &str) -> Option<Arc<ResourceInfo>> {
        // Every request looks its resource up: the plural, which tells most resources apart
        // (by its length alone, mostly), is compared first; many share a group and version.
        self.read()
            .iter()
            .find(|r| r.plural == plural && same_group(&r.group, group) && r.version == version)
            .cloned()
    }

    /// The first served version of `group/plural` (how store keys name resources).
    pub fn lookup_resource(&self, group: &str, plural: &str) -> Option<Arc<ResourceInfo>> {
        self.read()
            .iter()
            .find(|r| r.plural == plural && same_group(&r.group, group))
            .cloned()
    }

    /// The resource for an `apiVersion` and `kind`.
    pub fn lookup_kind(&self, api_version: &str, kind: &str) -> Option<Arc<ResourceInfo>> {
        let (group, version) = split_api_version(api_version);
        self.read()
            .iter()
            .find(|r| r.kind == kind && same_group(&r.group, group) && r.version == version)
            .cloned()
    }

    /// Replaces the custom resource types defined by the CRD named `crd_name` with `infos`.
    pub fn set_custom(&self, crd_name: &str, infos: Vec<ResourceInfo>) {
        let mut all = self.inner.write().unwrap_or_else(|e| e.into_inner());
        all.retain(|r| !(r.custom && crd_name_of(r) == crd_name));
        all.extend(infos.into_iter().map(Arc::new));
    }

    /// The versions (schemas, storage) the resources of the CRD named `crd_name` are served
    /// with now, if it serves any.
    pub fn custom_versions(&self, crd_name: &str) -> Option<Arc<crate::resource::CustomVersions>> {
        let all = self.inner.read().unwrap_or_else(|e| e.into_inner());
        all.iter()
            .find(|r| r.custom && crd_name_of(r) == crd_name)
            .and_then(|r| r.versions.clone())
    }

    /// Stops serving the custom resource types of the CRD named `crd_name`; returns what was removed.
    pub fn remove_custom(&self, crd_name: &str) -> Vec<ResourceInfo> {
        let mut all = self.inner.write().unwrap_or_else(|e| e.into_inner());
        let removed = all
            .iter()
            .filter(|r| r.custom && crd_name_of(r) == crd_name)
            .map(|r| (**r).clone())
            .collect();
        all.retain(|r| !(r.custom && crd_name_of(r) == crd_name));
        removed
    }
}

/// `plural.group`: the name a CRD for this resource has.
pub fn crd_name_of(info: &ResourceInfo) -> String {
    format!("{}.{}", info.plural, info.group)
}

/// Splits `group/version` (or `version` for core).
pub fn split_api_version(api_version: &str) -> (&str, &str) {
    match api_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    }
}

/// The warning of a CRD version marked `deprecated`: its `deprecationWarning` when set
/// (`None` when that is empty: an empty warning is not sent), else
/// `GROUP/VERSION KIND is deprecated`, followed by `; use GROUP/NEWER KIND` naming the most
/// preferred served version that is not deprecated and is newer than this one
/// (`defaultDeprecationWarning` in apiextensions-apiserver's `customresource_handler.go`).
fn crd_deprecation_warning(spec: &Value, version: &Value) -> Option<String> {
    if version["deprecated"].as_bool() != Some(true) {
        return None;
    }
    if let Some(warning) = version.get("deprecationWarning").and_then(Value::as_str) {
        return Some(warning.to_string()).filter(|w| !w.is_empty());
    }
    let group = spec["group"].as_str().unwrap_or_default();
    let kind = spec["names"]["kind"].as_str().unwrap_or_default();
    let name = version["name"].as_str().unwrap_or_default();
    let mut warning = format!("{group}/{name} {kind} is deprecated");
    let newer = spec["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|v| v["served"].as_bool() == Some(true) && v["deprecated"].as_bool() != Some(true))
        .filter_map(|v| v["name"].as_str())
        .filter(|v| compare_kube_versions(v, name) == std::cmp::Ordering::Less)
        .min_by(|a, b| compare_kube_versions(a, b));
    if let Some(newer) = newer {
        warning.push_str(&format!("; use {group}/{newer} {kind}"));
    }
    Some(warning)
}

/// The versions of a CRD's spec as conversion needs them: the storage version and every
/// version's schema.
fn custom_versions(group: &str, spec: &Value) -> crate::resource::CustomVersions {
    let all = spec["versions"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let names = &spec["names"];
    let list_kind = match names["listKind"].as_str().filter(|k| !k.is_empty()) {
        Some(list_kind) => list_kind.to_string(),
        None => format!("{}List", names["kind"].as_str().unwrap_or_default()),
    };
    crate::resource::CustomVersions {
        group: group.to_string(),
        list_kind,
        storage: all
            .iter()
            .find(|v| v["storage"].as_bool() == Some(true))
            .and_then(|v| v["name"].as_str())
            .unwrap_or_default()
            .to_string(),
        schemas: all
            .iter()
            .filter_map(|v| {
                let schema = v.pointer("/schema/openAPIV3Schema")?;
                Some((v["name"].as_str()?.to_string(), schema.clone()))
            })
            .collect(),
        webhook: (spec["conversion"]["strategy"].as_str() == Some("Webhook")).then(|| {
            let webhook = &spec["conversion"]["webhook"];
            crate::resource::ConversionWebhook {
                client_config: webhook["clientConfig"].clone(),
                review_versions: webhook["conversionReviewVersions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect(),
            }
        }),
        epoch: Default::default(),
    }
}

/// The resource types a CRD object defines (one per served version), served from a storage
/// built for it alone (see [`resources_of_crd_after`]).
pub fn resources_of_crd(crd: &Value) -> Vec<ResourceInfo> {
    resources_of_crd_after(crd, None, 0).0
}

/// The resource types a CRD object written at `revision` defines, given the versions its
/// resources were served with until then (`previous`); and whether that write replaced their
/// storage ([`crd_storage`]: its watches are to end).
pub fn resources_of_crd_after(
    crd: &Value,
    previous: Option<&crate::resource::CustomVersions>,
    revision: u64,
) -> (Vec<ResourceInfo>, bool) {
    let spec = &crd["spec"];
    let group = spec["group"].as_str().unwrap_or_default();
    let names = &spec["names"];
    let plural = names["plural"].as_str().unwrap_or_default();
    let kind = names["kind"].as_str().unwrap_or_default();
    if group.is_empty() || plural.is_empty() || kind.is_empty() {
        return (Vec::new(), false);
    }
    let singular = names["singular"]
        .as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| kind.to_lowercase());
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let namespaced = spec["scope"].as_str() != Some("Cluster");
    let mut versions = custom_versions(group, spec);
    let rebuild = crd_storage::rebuild(
        previous.map(|p| (&p.epoch, &p.schemas)),
        crd,
        revision,
        &versions.schemas,
    );
    versions.epoch = rebuild.epoch;
    let conversion = std::sync::Arc::new(versions);
    let infos = spec["versions"]
        .as_array()
        .map(|versions| {
            versions
                .iter()
                .filter(|v| v["served"].as_bool().unwrap_or(false))
                .filter_map(|v| {
                    Some(ResourceInfo {
                        group: group.to_string(),
                        version: v["name"].as_str()?.to_string(),
                        kind: kind.to_string(),
                        plural: plural.to_string(),
                        singular: singular.clone(),
                        namespaced,
                        has_status: v.pointer("/subresources/status").is_some(),
                        short_names: strings(&names["shortNames"]),
                        categories: strings(&names["categories"]),
                        allow_unconditional_update: false,
                        allow_create_on_update: false,
                        custom: true,
                        schema: v.pointer("/schema/openAPIV3Schema").cloned(),
                        additional_printer_columns: v["additionalPrinterColumns"]
                            .as_array()
                            .cloned()
                            .unwrap_or_default(),
                        selectable_fields: v["selectableFields"]
                            .as_array()
                            .map(|fs| {
                                fs.iter()
                                    .filter_map(|f| f["jsonPath"].as_str().map(str::to_string))
                                    .collect()
                            })
                            .unwrap_or_default(),
                        tracks_generation: true,
                        review: false,
                        computed: false,
                        scale: crate::resource::ScalePaths::from_crd_version(v),
                        apply_schema: Default::default(),
                        deprecation_warning: crd_deprecation_warning(spec, v),
                        versions: Some(conversion.clone()),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    (infos, rebuild.replaced)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd() -> Value {
        json!({
            "metadata": {"name": "widgets.example.com"},
            "spec": {
                "group": "example.com",
                "scope": "Cluster",
                "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"]},
                "versions": [
                    {"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
                     "schema": {"openAPIV3Schema": {"type": "object"}}},
                    {"name": "v0", "served": false, "storage": false}
                ]
            }
        })
    }

    #[test]
    fn a_crd_defines_its_served_versions() {
        let infos = resources_of_crd(&crd());
        assert_eq!(infos.len(), 1);
        let w = &infos[0];
        assert!(!w.namespaced && w.has_status && w.custom && !w.allow_unconditional_update);
        assert_eq!(w.singular, "widget");
        assert_eq!(w.short_names, vec!["wd"]);
    }

    #[test]
    fn custom_resources_come_and_go() {
        let reg = Registry::new();
        reg.set_custom("widgets.example.com", resources_of_crd(&crd()));
        assert!(reg.lookup("example.com", "v1", "widgets").is_some());
        assert!(reg.lookup_kind("example.com/v1", "Widget").is_some());
        assert_eq!(reg.remove_custom("widgets.example.com").len(), 1);
        assert!(reg.lookup("example.com", "v1", "widgets").is_none());
        assert!(reg.lookup("", "v1", "pods").is_some());
    }

    #[test]
    fn a_malformed_crd_defines_nothing() {
        assert!(resources_of_crd(&json!({"spec": {"group": 5}})).is_empty());
        assert!(resources_of_crd(&json!(null)).is_empty());
    }

    /// `defaultDeprecationWarning`: the most preferred served, not deprecated version newer than
    /// the deprecated one; the CRD's own warning wins, and an empty one is none.
    #[rstest::rstest]
    #[case::newest_ga(json!([{"name": "v1"}, {"name": "v2"}, {"name": "v1beta1", "deprecated": true}]),
        "v1beta1", Some("example.com/v1beta1 Widget is deprecated; use example.com/v2 Widget"))]
    #[case::no_newer_version(json!([{"name": "v1", "deprecated": true}, {"name": "v1beta1"}]),
        "v1", Some("example.com/v1 Widget is deprecated"))]
    #[case::newer_but_deprecated_or_not_served(json!([{"name": "v1beta1", "deprecated": true},
        {"name": "v1", "deprecated": true}, {"name": "v2", "served": false}]),
        "v1beta1", Some("example.com/v1beta1 Widget is deprecated"))]
    #[case::own_warning(json!([{"name": "v1"}, {"name": "v1beta1", "deprecated": true, "deprecationWarning": "gone soon"}]),
        "v1beta1", Some("gone soon"))]
    #[case::empty_own_warning(json!([{"name": "v1"}, {"name": "v1beta1", "deprecated": true, "deprecationWarning": ""}]),
        "v1beta1", None)]
    #[case::not_deprecated(json!([{"name": "v1"}, {"name": "v1beta1"}]), "v1beta1", None)]
    fn deprecated_crd_versions_carry_the_real_warning(
        #[case] mut versions: Value,
        #[case] version: &str,
        #[case] expected: Option<&str>,
    ) {
        for v in versions.as_array_mut().unwrap() {
            if v.get("served").is_none() {
                v["served"] = json!(true);
            }
        }
        let spec =
            json!({"group": "example.com", "names": {"kind": "Widget"}, "versions": versions});
        let v = spec["versions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == version)
            .unwrap();
        assert_eq!(crd_deprecation_warning(&spec, v).as_deref(), expected);
    }
}
