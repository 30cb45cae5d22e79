//! The subresources each served kind has: what discovery lists (name, verbs, the kind of the
//! subresource's objects) and what the router accepts. One table, so the two cannot disagree.
//!
//! As kube-apiserver lists them for the kinds served here: `status` wherever a kind has one; for
//! pods `attach`, `binding`, `eviction` (of `policy/v1` `Eviction`), `exec`, `log`,
//! `portforward`, `proxy`; `proxy` for nodes and services; `scale` (of `autoscaling/v1`
//! `Scale`) for Deployments, ReplicaSets, StatefulSets, ReplicationControllers and custom
//! resources whose CRD declares it; `pods/ephemeralcontainers` (of `Pod`: the pod with only its
//! ephemeral containers writable), `namespaces/finalize`, `serviceaccounts/token`,
//! `certificatesigningrequests/approval` (of `CertificateSigningRequest`: only its conditions
//! writable). Not served
//! (and so not listed): `pods/resize`.

use crate::resource::ResourceInfo;

/// One subresource of a kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subresource {
    /// The name after the object's, e.g. `eviction`.
    pub name: &'static str,
    /// The verbs discovery lists.
    pub verbs: &'static [&'static str],
    /// The kind of the subresource's objects.
    pub kind: String,
    /// `(group, version)` of that kind when it is not the containing resource's (a
    /// `GroupVersionKindProvider` in the real registry): discovery names it then.
    pub group_version: Option<(&'static str, &'static str)>,
}

const STATUS_VERBS: &[&str] = &["get", "patch", "update"];
const PROXY_VERBS: &[&str] = &["create", "delete", "get", "patch", "update"];
const CONNECT_VERBS: &[&str] = &["create", "get"];

fn sub(
    name: &'static str,
    verbs: &'static [&'static str],
    kind: &str,
    group_version: Option<(&'static str, &'static str)>,
) -> Subresource {
    Subresource {
        name,
        verbs,
        kind: kind.to_string(),
        group_version,
    }
}

/// The subresources of a resource, sorted by name.
pub fn of(info: &ResourceInfo) -> Vec<Subresource> {
    if info.review {
        return Vec::new();
    }
    let mut subs = Vec::new();
    if info.has_status {
        subs.push(sub("status", STATUS_VERBS, &info.kind, None));
    }
    if crate::registry::scale::ScaleSpec::of(info).is_some() {
        subs.push(sub(
            "scale",
            STATUS_VERBS,
            "Scale",
            Some(("autoscaling", "v1")),
        ));
    }
    if !info.custom && info.group.is_empty() {
        match info.kind.as_str() {
            "Pod" => subs.extend([
                sub("attach", CONNECT_VERBS, "PodAttachOptions", None),
                sub("binding", &["create"], "Binding", None),
                sub("ephemeralcontainers", STATUS_VERBS, "Pod", None),
                sub("eviction", &["create"], "Eviction", Some(("policy", "v1"))),
                sub("exec", CONNECT_VERBS, "PodExecOptions", None),
                sub("log", &["get"], "Pod", None),
                sub("portforward", CONNECT_VERBS, "PodPortForwardOptions", None),
                sub("proxy", PROXY_VERBS, "PodProxyOptions", None),
                sub("resize", STATUS_VERBS, "Pod", None),
            ]),
            "Namespace" => subs.push(sub("finalize", &["update"], "Namespace", None)),
            "Node" => subs.push(sub("proxy", PROXY_VERBS, "NodeProxyOptions", None)),
            "ServiceAccount" => subs.push(sub(
                "token",
                &["create"],
                "TokenRequest",
                Some(("authentication.k8s.io", "v1")),
            )),
            "Service" => subs.push(sub("proxy", PROXY_VERBS, "ServiceProxyOptions", None)),
            _ => {}
        }
    }
    if info.is_builtin("certificates.k8s.io", "CertificateSigningRequest") {
        subs.push(sub(
            "approval",
            STATUS_VERBS,
            "CertificateSigningRequest",
            None,
        ));
    }
    subs.sort_by(|a, b| a.name.cmp(b.name));
    subs
}

/// The subresource `name` of a resource, if it is served.
pub fn find(info: &ResourceInfo, name: &str) -> Option<Subresource> {
    of(info).into_iter().find(|s| s.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::builtin_resources;

    fn names(kind: &str) -> Vec<&'static str> {
        let info = builtin_resources()
            .into_iter()
            .find(|r| {
                r.kind == kind
                    && (r.group.is_empty()
                        || kind == "Deployment"
                        || kind == "CertificateSigningRequest")
            })
            .unwrap();
        of(&info).into_iter().map(|s| s.name).collect()
    }

    #[test]
    fn pods_have_the_real_servers_subresources() {
        assert_eq!(
            names("Pod"),
            [
                "attach",
                "binding",
                "ephemeralcontainers",
                "eviction",
                "exec",
                "log",
                "portforward",
                "proxy",
                "resize",
                "status"
            ]
        );
        assert_eq!(names("Node"), ["proxy", "status"]);
        assert_eq!(names("ConfigMap"), Vec::<&str>::new());
        assert_eq!(names("Deployment"), ["scale", "status"]);
        assert_eq!(names("ReplicationController"), ["scale", "status"]);
        assert_eq!(names("CertificateSigningRequest"), ["approval", "status"]);
    }

    #[test]
    fn eviction_and_scale_name_their_group_version() {
        let pods = builtin_resources()
            .into_iter()
            .find(|r| r.plural == "pods")
            .unwrap();
        let eviction = find(&pods, "eviction").unwrap();
        assert_eq!(eviction.group_version, Some(("policy", "v1")));
        assert_eq!(eviction.kind, "Eviction");
        assert!(find(&pods, "scale").is_none());
    }
}
