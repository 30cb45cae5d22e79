//! Discovery documents: `/version`, `/api`, `/api/v1`, `/apis`, `/apis/{group}`,
//! `/apis/{group}/{version}` and the aggregated (`apidiscovery.k8s.io/v2`) forms of `/api` and
//! `/apis`.
//!
//! Everything here is a pure function of the resource types the server serves now (built-ins and
//! CRD-defined), so a CRD shows up in discovery the moment it is created. The router picks the
//! function, and answers `404` with a `Status` when one returns `None`.
//!
//! The shapes follow `k8s.io/apimachinery/pkg/apis/meta/v1/types.go` (`APIVersions`,
//! `APIGroupList`, `APIGroup`, `APIResourceList`) and `k8s.io/api/apidiscovery/v2/types.go`
//! (`APIGroupDiscoveryList`). Orderings follow kube-apiserver: groups by the built-in group
//! priority then by name, versions in kube-aware preference order (GA > beta > alpha, higher
//! first), resources by name with each resource's subresources right after it.

use serde_json::{json, Map, Value};

use crate::resource::{compare_kube_versions, ResourceInfo};

/// The `Content-Type` of an aggregated discovery response (`APIGroupDiscoveryList`, v2).
pub const AGGREGATED_CONTENT_TYPE: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// The `Content-Type` of every other discovery response.
pub const JSON_CONTENT_TYPE: &str = "application/json";

/// The Kubernetes release this server imitates in `/version`.
pub const KUBERNETES_MAJOR: &str = "1";
/// See [`KUBERNETES_MAJOR`].
pub const KUBERNETES_MINOR: &str = "36";
/// The `gitVersion` reported by `/version`; the build metadata says what answers.
pub const GIT_VERSION: &str = "v1.36.2+fake-apiserver";

/// Built-in groups in kube-apiserver's discovery priority order (highest first). Groups not listed
/// (CRD groups) come after these, by name.
const GROUP_PRIORITY: &[&str] = &[
    "apiregistration.k8s.io",
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "networking.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "apiextensions.k8s.io",
    "node.k8s.io",
    "discovery.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "resource.k8s.io",
];

/// Whether `group` is one of the groups a real server serves itself (not through a CRD): its
/// paths are routes of the built-in API, whose misses are `Status` answers rather than the
/// plain-text `404 page not found` of the handler chain's end.
pub fn is_builtin_group(group: &str) -> bool {
    GROUP_PRIORITY.contains(&group)
}

/// Whether an `Accept` header asks for aggregated discovery (`apidiscovery.k8s.io/v2`
/// `APIGroupDiscoveryList`), as client-go and kubectl do first.
///
/// Media ranges with `q=0` are refused ranges and do not count. Parameter order does not matter.
pub fn wants_aggregated(accept: &str) -> bool {
    accept.split(',').any(|range| {
        let mut parts = range.split(';').map(str::trim);
        let media_type = parts.next().unwrap_or_default();
        if !media_type.eq_ignore_ascii_case("application/json") {
            return false;
        }
        let (mut group, mut version, mut kind, mut refused) = (false, false, false, false);
        for param in parts {
            let Some((key, value)) = param.split_once('=') else {
                continue;
            };
            let value = value.trim().trim_matches('"');
            match key.trim().to_ascii_lowercase().as_str() {
                "g" => group = value == "apidiscovery.k8s.io",
                "v" => version = value == "v2",
                "as" => kind = value == "APIGroupDiscoveryList",
                "q" => refused = value.parse::<f32>().map(|q| q <= 0.0).unwrap_or(false),
                _ => {}
            }
        }
        group && version && kind && !refused
    })
}

/// The fields of `/version`'s `version.Info`, shaped like a v1.36 server's, in Go's field order.
fn version_fields() -> [(&'static str, String); 13] {
    [
        ("major", KUBERNETES_MAJOR.into()),
        ("minor", KUBERNETES_MINOR.into()),
        ("emulationMajor", KUBERNETES_MAJOR.into()),
        ("emulationMinor", KUBERNETES_MINOR.into()),
        ("minCompatibilityMajor", KUBERNETES_MAJOR.into()),
        ("minCompatibilityMinor", "35".into()),
        ("gitVersion", GIT_VERSION.into()),
        (
            "gitCommit",
            "0000000000000000000000000000000000000000".into(),
        ),
        ("gitTreeState", "clean".into()),
        ("buildDate", "2026-01-01T00:00:00Z".into()),
        ("goVersion", "none (rust)".into()),
        ("compiler", "rustc".into()),
        ("platform", platform()),
    ]
}

/// The body of `/version` as a value.
pub fn version_info() -> Value {
    Value::Object(
        version_fields()
            .into_iter()
            .map(|(k, v)| (k.to_string(), Value::String(v)))
            .collect(),
    )
}

/// The bytes of `/version` as the real server writes them (`WriteRawJSON`: always indented,
/// in Go's field order, whoever asks).
pub fn version_document() -> Vec<u8> {
    let members: Vec<String> = version_fields()
        .iter()
        .map(|(k, v)| format!("{}:{}", Value::from(*k), Value::from(v.as_str())))
        .collect();
    crate::http::pretty::indent_json(format!("{{{}}}", members.join(",")).as_bytes())
}

/// `os/arch` in Go's spelling, as `version.Info.platform` has it.
fn platform() -> String {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        other => other,
    };
    format!("{}/{}", std::env::consts::OS, arch)
}

/// The legacy (unaggregated) body of `/api`: an `APIVersions` listing the core versions.
///
/// `server_address` is the `host:port` clients reach this server at (the request's `Host`
/// header, or the listening address); it fills `serverAddressByClientCIDRs` as a real server does.
pub fn api_versions(resources: &[ResourceInfo], server_address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": group_version_names(resources, ""),
        "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}
        ],
    })
}

/// The legacy body of `/apis`: an `APIGroupList` of every named group (the core group is absent).
pub fn api_group_list(resources: &[ResourceInfo]) -> Value {
    let groups: Vec<Value> = named_groups(resources)
        .iter()
        .filter_map(|group| api_group_value(resources, group))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// The body of `/apis/{group}`: an `APIGroup`, or `None` when no version of the group is served.
pub fn api_group(resources: &[ResourceInfo], group: &str) -> Option<Value> {
    if group.is_empty() {
        return None;
    }
    let mut value = api_group_value(resources, group)?;
    if let Value::Object(map) = &mut value {
        let mut typed = Map::new();
        typed.insert("kind".into(), json!("APIGroup"));
        typed.insert("apiVersion".into(), json!("v1"));
        typed.append(map);
        return Some(Value::Object(typed));
    }
    Some(value)
}

/// The body of `/api/{version}` (group `""`) or `/apis/{group}/{version}`: an `APIResourceList`
/// with one entry per resource and one per subresource (`pods/status`). `None` when the group
/// version is not served.
pub fn api_resource_list(resources: &[ResourceInfo], group: &str, version: &str) -> Option<Value> {
    let served = resources_of(resources, group, version);
    if served.is_empty() {
        return None;
    }
    let group_version = served[0].api_version();
    let mut entries = Vec::new();
    for info in served {
        entries.push(legacy_resource(info));
        for sub in crate::registry::subresource::of(info) {
            let mut entry = Map::new();
            entry.insert(
                "name".into(),
                json!(format!("{}/{}", info.plural, sub.name)),
            );
            entry.insert("singularName".into(), json!(""));
            entry.insert("namespaced".into(), json!(info.namespaced));
            if let Some((group, version)) = sub.group_version {
                entry.insert("group".into(), json!(group));
                entry.insert("version".into(), json!(version));
            }
            entry.insert("kind".into(), json!(sub.kind));
            entry.insert("verbs".into(), json!(sub.verbs));
            entries.push(Value::Object(entry));
        }
    }
    Some(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": entries,
    }))
}

/// The aggregated body of `/api`: an `APIGroupDiscoveryList` holding the core group (named `""`).
pub fn aggregated_core(resources: &[ResourceInfo]) -> Value {
    let items: Vec<Value> = aggregated_group(resources, "").into_iter().collect();
    aggregated_list(items)
}

/// The aggregated body of `/apis`: an `APIGroupDiscoveryList` of every named group, in priority
/// order, each with its versions (preferred first) and their resources.
pub fn aggregated_groups(resources: &[ResourceInfo]) -> Value {
    let items: Vec<Value> = named_groups(resources)
        .iter()
        .filter_map(|group| aggregated_group(resources, group))
        .collect();
    aggregated_list(items)
}

fn aggregated_list(items: Vec<Value>) -> Value {
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    })
}

/// One `APIGroupDiscovery`, or `None` when the group has no served version.
fn aggregated_group(resources: &[ResourceInfo], group: &str) -> Option<Value> {
    let versions = group_version_names(resources, group);
    if versions.is_empty() {
        return None;
    }
    let versions: Vec<Value> = versions
        .iter()
        .map(|version| {
            let entries: Vec<Value> = resources_of(resources, group, version)
                .into_iter()
                .map(aggregated_resource)
                .collect();
            json!({"version": version, "resources": entries, "freshness": "Current"})
        })
        .collect();
    let metadata = if group.is_empty() {
        json!({})
    } else {
        json!({"name": group})
    };
    Some(json!({"metadata": metadata, "versions": versions}))
}

/// One `APIResourceDiscovery`.
fn aggregated_resource(info: &ResourceInfo) -> Value {
    let response_kind = json!({"group": info.group, "version": info.version, "kind": info.kind});
    let mut entry = Map::new();
    entry.insert("resource".into(), json!(info.plural));
    entry.insert("responseKind".into(), response_kind.clone());
    entry.insert(
        "scope".into(),
        json!(if info.namespaced {
            "Namespaced"
        } else {
            "Cluster"
        }),
    );
    entry.insert("singularResource".into(), json!(info.singular));
    entry.insert("verbs".into(), json!(info.verbs()));
    if !info.short_names.is_empty() {
        entry.insert("shortNames".into(), json!(info.short_names));
    }
    if !info.categories.is_empty() {
        entry.insert("categories".into(), json!(info.categories));
    }
    let subresources: Vec<Value> = crate::registry::subresource::of(info)
        .into_iter()
        .map(|sub| {
            let (group, version) = sub
                .group_version
                .unwrap_or((info.group.as_str(), info.version.as_str()));
            json!({
                "subresource": sub.name,
                "responseKind": {"group": group, "version": version, "kind": sub.kind},
                "verbs": sub.verbs,
            })
        })
        .collect();
    if !subresources.is_empty() {
        entry.insert("subresources".into(), Value::Array(subresources));
    }
    Value::Object(entry)
}

/// One legacy `APIResource` for the resource itself.
fn legacy_resource(info: &ResourceInfo) -> Value {
    let mut entry = Map::new();
    entry.insert("name".into(), json!(info.plural));
    entry.insert("singularName".into(), json!(info.singular));
    entry.insert("namespaced".into(), json!(info.namespaced));
    entry.insert("kind".into(), json!(info.kind));
    entry.insert("verbs".into(), json!(info.verbs()));
    if !info.short_names.is_empty() {
        entry.insert("shortNames".into(), json!(info.short_names));
    }
    if !info.categories.is_empty() {
        entry.insert("categories".into(), json!(info.categories));
    }
    Value::Object(entry)
}

/// `{name, versions, preferredVersion}` of one named group, or `None` when it serves no version.
fn api_group_value(resources: &[ResourceInfo], group: &str) -> Option<Value> {
    let versions = group_version_names(resources, group);
    let preferred = versions.first()?.clone();
    let versions: Vec<Value> = versions
        .iter()
        .map(|gv| group_version_for_discovery(group, gv))
        .collect();
    Some(json!({
        "name": group,
        "versions": versions,
        "preferredVersion": group_version_for_discovery(group, &preferred),
    }))
}

/// A `GroupVersionForDiscovery` from a version name.
fn group_version_for_discovery(group: &str, version: &str) -> Value {
    let group_version = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    json!({"groupVersion": group_version, "version": version})
}

/// Served version names of `group`, in kube-aware preference order, without duplicates.
fn group_version_names(resources: &[ResourceInfo], group: &str) -> Vec<String> {
    let mut versions: Vec<String> = Vec::new();
    for info in resources.iter().filter(|r| r.group == group) {
        if !versions.contains(&info.version) {
            versions.push(info.version.clone());
        }
    }
    versions.sort_by(|a, b| compare_kube_versions(a, b));
    versions
}

/// Named (non-core) groups served, in kube-apiserver's discovery order.
fn named_groups(resources: &[ResourceInfo]) -> Vec<String> {
    let mut groups: Vec<String> = Vec::new();
    for info in resources.iter().filter(|r| !r.group.is_empty()) {
        if !groups.contains(&info.group) {
            groups.push(info.group.clone());
        }
    }
    groups.sort_by(|a, b| {
        let rank = |g: &str| {
            GROUP_PRIORITY
                .iter()
                .position(|known| *known == g)
                .unwrap_or(GROUP_PRIORITY.len())
        };
        rank(a).cmp(&rank(b)).then_with(|| a.cmp(b))
    });
    groups
}

/// The resources of one group version, sorted by plural (as kube-apiserver lists them).
fn resources_of<'a>(
    resources: &'a [ResourceInfo],
    group: &str,
    version: &str,
) -> Vec<&'a ResourceInfo> {
    let mut served: Vec<&ResourceInfo> = resources
        .iter()
        .filter(|r| r.group == group && r.version == version)
        .collect();
    served.sort_by(|a, b| a.plural.cmp(&b.plural));
    served.dedup_by(|a, b| a.plural == b.plural);
    served
}

/// Resource sets for tests of the documents built from them (here and in [`crate::openapi`]).
#[cfg(test)]
pub(crate) mod fixtures {
    use crate::resource::{builtin_resources, ResourceInfo};

    /// The built-in resources the tests use, by (group, plural): a fixed subset of the built-in
    /// table, so that the tests do not change when the table grows.
    const BUILTIN_SUBSET: &[(&str, &str)] = &[
        ("", "configmaps"),
        ("", "events"),
        ("", "namespaces"),
        ("", "nodes"),
        ("", "pods"),
        ("", "secrets"),
        ("", "services"),
        ("apps", "deployments"),
        ("coordination.k8s.io", "leases"),
        ("rbac.authorization.k8s.io", "roles"),
        ("events.k8s.io", "events"),
        ("apiextensions.k8s.io", "customresourcedefinitions"),
    ];

    /// [`BUILTIN_SUBSET`] as the built-in table describes it.
    pub(crate) fn builtin_subset() -> Vec<ResourceInfo> {
        let subset: Vec<ResourceInfo> = builtin_resources()
            .into_iter()
            .filter(|r| BUILTIN_SUBSET.contains(&(r.group.as_str(), r.plural.as_str())))
            .collect();
        assert_eq!(
            subset.len(),
            BUILTIN_SUBSET.len(),
            "a fixture kind left the built-in table"
        );
        subset
    }

    /// A namespaced custom resource `widgets.example.com` (short name `wdg`, status subresource).
    pub(crate) fn widget(version: &str) -> ResourceInfo {
        ResourceInfo {
            group: "example.com".into(),
            version: version.into(),
            kind: "Widget".into(),
            plural: "widgets".into(),
            singular: "widget".into(),
            namespaced: true,
            has_status: true,
            short_names: vec!["wdg".into()],
            custom: true,
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn served() -> Vec<ResourceInfo> {
        let mut all = fixtures::builtin_subset();
        all.push(fixtures::widget("v1beta1"));
        all.push(fixtures::widget("v1"));
        all
    }

    #[rstest]
    #[case(
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json",
        true
    )]
    #[case(
        "application/json; as=APIGroupDiscoveryList;v=v2;g=apidiscovery.k8s.io",
        true
    )]
    #[case(
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;profile=nopeer",
        true
    )]
    #[case(
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;q=0",
        false
    )]
    #[case(
        "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList",
        false
    )]
    #[case("application/json", false)]
    #[case("*/*", false)]
    #[case("", false)]
    #[case(";;,=,;g=", false)]
    fn aggregated_is_chosen_by_accept(#[case] accept: &str, #[case] expected: bool) {
        assert_eq!(wants_aggregated(accept), expected);
    }

    #[test]
    fn version_has_the_keys_of_a_real_server() {
        let v = version_info();
        let mut keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(
            keys,
            [
                "buildDate",
                "compiler",
                "emulationMajor",
                "emulationMinor",
                "gitCommit",
                "gitTreeState",
                "gitVersion",
                "goVersion",
                "major",
                "minCompatibilityMajor",
                "minCompatibilityMinor",
                "minor",
                "platform"
            ]
        );
        assert_eq!(v["major"], "1");
        assert_eq!(v["minor"], "36");
        assert!(v["gitVersion"].as_str().unwrap().starts_with("v1.36."));
    }

    #[test]
    fn api_lists_core_v1_and_the_server_address() {
        let v = api_versions(&served(), "127.0.0.1:6443");
        assert_eq!(v["kind"], "APIVersions");
        assert_eq!(v["versions"], json!(["v1"]));
        assert_eq!(
            v["serverAddressByClientCIDRs"][0]["serverAddress"],
            "127.0.0.1:6443"
        );
    }

    #[test]
    fn group_list_has_named_groups_in_priority_order_with_preferred_versions() {
        let v = api_group_list(&served());
        assert_eq!(v["kind"], "APIGroupList");
        assert_eq!(v["apiVersion"], "v1");
        let names: Vec<&str> = v["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "apps",
                "events.k8s.io",
                "rbac.authorization.k8s.io",
                "coordination.k8s.io",
                "apiextensions.k8s.io",
                "example.com"
            ]
        );
        let widgets = &v["groups"][5];
        assert_eq!(
            widgets["versions"],
            json!([
                {"groupVersion": "example.com/v1", "version": "v1"},
                {"groupVersion": "example.com/v1beta1", "version": "v1beta1"}
            ])
        );
        assert_eq!(
            widgets["preferredVersion"],
            json!({"groupVersion": "example.com/v1", "version": "v1"})
        );
    }

    #[test]
    fn group_document_and_unknown_group() {
        let v = api_group(&served(), "apps").unwrap();
        assert_eq!(v["kind"], "APIGroup");
        assert_eq!(v["apiVersion"], "v1");
        assert_eq!(v["name"], "apps");
        assert_eq!(v["versions"][0]["groupVersion"], "apps/v1");
        assert_eq!(api_group(&served(), "nope.example.com"), None);
        assert_eq!(api_group(&served(), ""), None);
    }

    #[test]
    fn core_resource_list_has_subresources_and_metadata() {
        let v = api_resource_list(&served(), "", "v1").unwrap();
        assert_eq!(v["kind"], "APIResourceList");
        assert_eq!(v["groupVersion"], "v1");
        let entries = v["resources"].as_array().unwrap();
        let names: Vec<&str> = entries
            .iter()
            .map(|r| r["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "configmaps",
                "events",
                "namespaces",
                "namespaces/finalize",
                "namespaces/status",
                "nodes",
                "nodes/proxy",
                "nodes/status",
                "pods",
                "pods/attach",
                "pods/binding",
                "pods/ephemeralcontainers",
                "pods/eviction",
                "pods/exec",
                "pods/log",
                "pods/portforward",
                "pods/proxy",
                "pods/resize",
                "pods/status",
                "secrets",
                "services",
                "services/proxy",
                "services/status"
            ]
        );
        // A subresource whose kind is in another group version names it, as kubectl drain
        // looks for (`CheckEvictionSupport`); the others do not.
        let eviction = entries
            .iter()
            .find(|r| r["name"] == "pods/eviction")
            .unwrap();
        assert_eq!(
            eviction,
            &json!({"name": "pods/eviction", "singularName": "", "namespaced": true,
                    "group": "policy", "version": "v1", "kind": "Eviction", "verbs": ["create"]})
        );
        let log = entries.iter().find(|r| r["name"] == "pods/log").unwrap();
        assert!(log.get("group").is_none() && log["kind"] == "Pod");
        let pods = entries.iter().find(|r| r["name"] == "pods").unwrap();
        assert_eq!(
            pods,
            &json!({
                "name": "pods",
                "singularName": "pod",
                "namespaced": true,
                "kind": "Pod",
                "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
                "shortNames": ["po"],
                "categories": ["all"]
            })
        );
        let status = entries.iter().find(|r| r["name"] == "pods/status").unwrap();
        assert_eq!(status["verbs"], json!(["get", "patch", "update"]));
        assert_eq!(status["kind"], "Pod");
        let secrets = entries.iter().find(|r| r["name"] == "secrets").unwrap();
        assert!(secrets.get("shortNames").is_none());
    }

    #[rstest]
    #[case("", "v2")]
    #[case("apps", "v1beta1")]
    #[case("nope.example.com", "v1")]
    fn unknown_group_versions_are_none(#[case] group: &str, #[case] version: &str) {
        assert_eq!(api_resource_list(&served(), group, version), None);
    }

    #[test]
    fn custom_resource_list_matches_a_real_crd() {
        let v = api_resource_list(&served(), "example.com", "v1").unwrap();
        assert_eq!(v["groupVersion"], "example.com/v1");
        let entries = v["resources"].as_array().unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0]["name"], "widgets");
        assert_eq!(entries[0]["shortNames"], json!(["wdg"]));
        assert!(entries[0].get("categories").is_none());
        assert_eq!(entries[0]["singularName"], "widget");
        assert_eq!(entries[1]["name"], "widgets/status");
    }

    #[test]
    fn aggregated_core_is_one_unnamed_group() {
        let v = aggregated_core(&served());
        assert_eq!(v["kind"], "APIGroupDiscoveryList");
        assert_eq!(v["apiVersion"], "apidiscovery.k8s.io/v2");
        let items = v["items"].as_array().unwrap();
        assert_eq!(items.len(), 1);
        assert!(items[0]["metadata"].get("name").is_none());
        let version = &items[0]["versions"][0];
        assert_eq!(version["version"], "v1");
        assert_eq!(version["freshness"], "Current");
        let pods = version["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["resource"] == "pods")
            .unwrap();
        assert_eq!(
            pods,
            &json!({
                "resource": "pods",
                "responseKind": {"group": "", "version": "v1", "kind": "Pod"},
                "scope": "Namespaced",
                "singularResource": "pod",
                "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
                "shortNames": ["po"],
                "categories": ["all"],
                "subresources": [
                    {"subresource": "attach", "responseKind": {"group": "", "version": "v1", "kind": "PodAttachOptions"}, "verbs": ["create", "get"]},
                    {"subresource": "binding", "responseKind": {"group": "", "version": "v1", "kind": "Binding"}, "verbs": ["create"]},
                    {"subresource": "ephemeralcontainers", "responseKind": {"group": "", "version": "v1", "kind": "Pod"}, "verbs": ["get", "patch", "update"]},
                    {"subresource": "eviction", "responseKind": {"group": "policy", "version": "v1", "kind": "Eviction"}, "verbs": ["create"]},
                    {"subresource": "exec", "responseKind": {"group": "", "version": "v1", "kind": "PodExecOptions"}, "verbs": ["create", "get"]},
                    {"subresource": "log", "responseKind": {"group": "", "version": "v1", "kind": "Pod"}, "verbs": ["get"]},
                    {"subresource": "portforward", "responseKind": {"group": "", "version": "v1", "kind": "PodPortForwardOptions"}, "verbs": ["create", "get"]},
                    {"subresource": "proxy", "responseKind": {"group": "", "version": "v1", "kind": "PodProxyOptions"}, "verbs": ["create", "delete", "get", "patch", "update"]},
                    {"subresource": "resize", "responseKind": {"group": "", "version": "v1", "kind": "Pod"}, "verbs": ["get", "patch", "update"]},
                    {"subresource": "status", "responseKind": {"group": "", "version": "v1", "kind": "Pod"}, "verbs": ["get", "patch", "update"]}
                ]
            })
        );
        let nodes = version["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["resource"] == "nodes")
            .unwrap();
        assert_eq!(nodes["scope"], "Cluster");
    }

    #[test]
    fn aggregated_groups_put_the_preferred_version_first() {
        let v = aggregated_groups(&served());
        let items = v["items"].as_array().unwrap();
        assert_eq!(items[0]["metadata"]["name"], "apps");
        let widgets = items
            .iter()
            .find(|g| g["metadata"]["name"] == "example.com")
            .unwrap();
        let versions: Vec<&str> = widgets["versions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["version"].as_str().unwrap())
            .collect();
        assert_eq!(versions, ["v1", "v1beta1"]);
        assert!(items.iter().all(|g| g["metadata"]["name"] != ""));
    }

    #[test]
    fn kube_version_order() {
        let mut versions = vec![
            "v1alpha1",
            "foo1",
            "v10",
            "v1",
            "v2beta1",
            "v1beta2",
            "v11alpha2",
            "foo10",
            "v12alpha1",
            "v3beta1",
            "v2",
        ];
        versions.sort_by(|a, b| compare_kube_versions(a, b));
        assert_eq!(
            versions,
            [
                "v10",
                "v2",
                "v1",
                "v3beta1",
                "v2beta1",
                "v1beta2",
                "v12alpha1",
                "v11alpha2",
                "v1alpha1",
                "foo1",
                "foo10"
            ]
        );
    }
}
