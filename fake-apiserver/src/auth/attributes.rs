//! What a request asks to do, as an authorizer sees it (the real server's `RequestInfoFactory`
//! and `authorizer.Attributes`): a resource request (verb, group, resource, subresource,
//! namespace, name) or a non-resource request (lower-case HTTP method and path); and the
//! `403 Forbidden` the real server answers when it is not allowed.

use http::Method;

use super::user::UserInfo;
use crate::error::ApiError;
use crate::http::request::Query;

/// One authorization question: may `user` do this?
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Attributes {
    /// Who asks.
    pub user: UserInfo,
    /// Kubernetes verb for resource requests (`get`, `list`, `watch`, `create`, `update`,
    /// `patch`, `delete`, `deletecollection`, or a special verb such as `impersonate`, `bind`,
    /// `escalate`); the lower-case HTTP method for non-resource requests.
    pub verb: String,
    /// Whether this is a resource request.
    pub resource_request: bool,
    /// The URL path (non-resource requests are authorized by it).
    pub path: String,
    /// API group (empty for core).
    pub group: String,
    /// API version.
    pub version: String,
    /// Resource plural.
    pub resource: String,
    /// Subresource, or empty.
    pub subresource: String,
    /// Namespace, or empty.
    pub namespace: String,
    /// Object name, or empty.
    pub name: String,
}

impl Attributes {
    /// A resource request.
    pub fn resource(
        user: &UserInfo,
        verb: &str,
        group: &str,
        resource: &str,
        namespace: &str,
        name: &str,
    ) -> Self {
        Self {
            user: user.clone(),
            verb: verb.to_string(),
            resource_request: true,
            group: group.to_string(),
            resource: resource.to_string(),
            namespace: namespace.to_string(),
            name: name.to_string(),
            ..Default::default()
        }
    }

    /// A non-resource request.
    pub fn non_resource(user: &UserInfo, verb: &str, path: &str) -> Self {
        Self {
            user: user.clone(),
            verb: verb.to_string(),
            path: path.to_string(),
            ..Default::default()
        }
    }

    /// The attributes of an HTTP request, parsed as the real server parses them: `/api/v1/...`
    /// and `/apis/GROUP/VERSION/...` with a resource are resource requests (`/watch/` prefixed
    /// paths included); everything else (discovery roots, `/healthz`, `/version`, `/openapi`)
    /// is a non-resource request.
    pub fn from_request(user: &UserInfo, method: &Method, path: &str, query: &Query) -> Self {
        let method_verb = method.as_str().to_ascii_lowercase();
        let non_resource = || Self::non_resource(user, &method_verb, path);
        let parts: Vec<&str> = path
            .trim_matches('/')
            .split('/')
            .filter(|p| !p.is_empty())
            .collect();
        let (group, rest) = match parts.as_slice() {
            ["api", rest @ ..] if rest.len() >= 2 => ("", rest),
            ["apis", group, rest @ ..] if rest.len() >= 2 => (*group, rest),
            _ => return non_resource(),
        };
        let (version, mut rest) = (rest[0], &rest[1..]);
        let mut attrs = Self {
            user: user.clone(),
            resource_request: true,
            path: path.to_string(),
            group: group.to_string(),
            version: version.to_string(),
            ..Default::default()
        };
        if matches!(rest.first(), Some(&("watch" | "proxy"))) {
            if rest.len() < 2 {
                // The real server cannot tell kind and namespace either; it authorizes what it has.
                attrs.verb = rest[0].to_string();
                return attrs;
            }
            attrs.verb = rest[0].to_string();
            rest = &rest[1..];
        } else {
            attrs.verb = match method.as_str() {
                "POST" => "create",
                "GET" | "HEAD" => "get",
                "PUT" => "update",
                "PATCH" => "patch",
                "DELETE" => "delete",
                _ => "",
            }
            .to_string();
        }
        if rest.first() == Some(&"namespaces") {
            if let Some(ns) = rest.get(1) {
                attrs.namespace = ns.to_string();
                if rest.len() > 2 && !matches!(rest[2], "status" | "finalize") {
                    rest = &rest[2..];
                }
            }
        }
        let subresources_allowed = attrs.verb != "proxy";
        if rest.len() >= 3 && subresources_allowed {
            attrs.subresource = rest[2].to_string();
        }
        if rest.len() >= 2 {
            attrs.name = rest[1].to_string();
        }
        if let Some(resource) = rest.first() {
            attrs.resource = resource.to_string();
        }
        if attrs.name.is_empty() && attrs.verb == "get" {
            let watch = query
                .get("watch")
                .is_some_and(|w| !matches!(w.to_ascii_lowercase().as_str(), "false" | "0"));
            attrs.verb = if watch { "watch" } else { "list" }.into();
            // A list or watch of one name (`fieldSelector=metadata.name=x`) is authorized as
            // that name, so a rule with resourceNames can allow it.
            if let Some(name) = query.get("fieldSelector").and_then(exact_name) {
                attrs.name = name;
            }
        }
        if attrs.name.is_empty() && attrs.verb == "delete" {
            attrs.verb = "deletecollection".into();
        }
        attrs
    }

    /// `resource/subresource`, or `resource`.
    pub fn combined_resource(&self) -> String {
        if self.subresource.is_empty() {
            self.resource.clone()
        } else {
            format!("{}/{}", self.resource, self.subresource)
        }
    }

    /// The message of a refusal: `User "u" cannot list resource "pods" in API group "" in the
    /// namespace "ns"`, `... at the cluster scope`, or `User "u" cannot get path "/api"`.
    pub fn forbidden_message(&self) -> String {
        let user = crate::rules::validation::go_quote(&self.user.name);
        if !self.resource_request {
            return format!(
                "User {user} cannot {} path {}",
                self.verb,
                crate::rules::validation::go_quote(&self.path)
            );
        }
        let resource = crate::rules::validation::go_quote(&self.combined_resource());
        let group = crate::rules::validation::go_quote(&self.group);
        if self.namespace.is_empty() {
            format!(
                "User {user} cannot {} resource {resource} in API group {group} at the cluster scope",
                self.verb
            )
        } else {
            format!(
                "User {user} cannot {} resource {resource} in API group {group} in the namespace {}",
                self.verb,
                crate::rules::validation::go_quote(&self.namespace)
            )
        }
    }

    /// The `403 Forbidden` the real server answers (`pods is forbidden: User ...`, with the
    /// authorizer's reason after a colon when it gave one).
    pub fn forbidden(&self, reason: &str) -> ApiError {
        let mut message = self.forbidden_message();
        // The real server escapes these so that the message never reads as HTML.
        message = message
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;");
        if !reason.is_empty() {
            message = format!("{message}: {reason}");
        }
        forbidden_error(&self.group, &self.resource, &self.name, &message)
    }
}

/// A `403 Forbidden` as the real server's `NewForbidden` builds it: `RESOURCE "NAME" is
/// forbidden: WHY`, `RESOURCE is forbidden: WHY` without a name, `forbidden: WHY` without a
/// resource.
pub fn forbidden_error(group: &str, resource: &str, name: &str, why: &str) -> ApiError {
    let qualified = crate::error::qualified(group, resource);
    let message = if group.is_empty() && resource.is_empty() {
        format!("forbidden: {why}")
    } else if name.is_empty() {
        format!("{qualified} is forbidden: {why}")
    } else {
        format!("{qualified} \"{name}\" is forbidden: {why}")
    };
    let mut error = ApiError::new(403, "Forbidden", message);
    error.group = (!group.is_empty()).then(|| group.to_string());
    error.kind = (!resource.is_empty()).then(|| resource.to_string());
    error.name = (!name.is_empty()).then(|| name.to_string());
    error
}

/// The name a field selector pins exactly (`metadata.name=x` or `metadata.name==x`), if it is a
/// valid path segment.
fn exact_name(selector: &str) -> Option<String> {
    selector.split(',').find_map(|term| {
        let value = term
            .trim()
            .strip_prefix("metadata.name")?
            .trim_start()
            .strip_prefix('=')?;
        let value = value.strip_prefix('=').unwrap_or(value).trim();
        (!value.is_empty() && value != "." && value != ".." && !value.contains(['/', '%']))
            .then(|| value.to_string())
    })
}

#[cfg(test)]
// The rstest tables have one argument per column.
#[allow(clippy::too_many_arguments)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn attrs(method: &str, path: &str, query: &str) -> Attributes {
        Attributes::from_request(
            &UserInfo::authenticated("u", "", &[]),
            &Method::from_bytes(method.as_bytes()).unwrap(),
            path,
            &Query::parse(Some(query)),
        )
    }

    #[rstest]
    #[case(
        "GET",
        "/api/v1/namespaces/a/pods",
        "",
        "list",
        "",
        "pods",
        "",
        "a",
        ""
    )]
    #[case(
        "GET",
        "/api/v1/namespaces/a/pods",
        "watch=true",
        "watch",
        "",
        "pods",
        "",
        "a",
        ""
    )]
    #[case(
        "GET",
        "/api/v1/namespaces/a/pods",
        "watch=0",
        "list",
        "",
        "pods",
        "",
        "a",
        ""
    )]
    #[case(
        "GET",
        "/api/v1/namespaces/a/pods",
        "fieldSelector=metadata.name%3Dp",
        "list",
        "",
        "pods",
        "",
        "a",
        "p"
    )]
    #[case(
        "GET",
        "/api/v1/namespaces/a/pods/p",
        "",
        "get",
        "",
        "pods",
        "",
        "a",
        "p"
    )]
    #[case(
        "PUT",
        "/api/v1/namespaces/a/pods/p/status",
        "",
        "update",
        "",
        "pods",
        "status",
        "a",
        "p"
    )]
    #[case(
        "DELETE",
        "/api/v1/namespaces/a/pods",
        "",
        "deletecollection",
        "",
        "pods",
        "",
        "a",
        ""
    )]
    #[case(
        "GET",
        "/api/v1/namespaces/a",
        "",
        "get",
        "",
        "namespaces",
        "",
        "a",
        "a"
    )]
    #[case(
        "PUT",
        "/api/v1/namespaces/a/finalize",
        "",
        "update",
        "",
        "namespaces",
        "finalize",
        "a",
        "a"
    )]
    #[case("GET", "/api/v1/namespaces", "", "list", "", "namespaces", "", "", "")]
    #[case(
        "GET",
        "/api/v1/watch/namespaces/a/pods",
        "",
        "watch",
        "",
        "pods",
        "",
        "a",
        ""
    )]
    #[case(
        "POST",
        "/apis/eno.azure.io/v1/namespaces/n/compositions",
        "",
        "create",
        "eno.azure.io",
        "compositions",
        "",
        "n",
        ""
    )]
    #[case(
        "PATCH",
        "/api/v1/nodes/n/status",
        "",
        "patch",
        "",
        "nodes",
        "status",
        "",
        "n"
    )]
    #[case(
        "POST",
        "/api/v1/namespaces/a/serviceaccounts/s/token",
        "",
        "create",
        "",
        "serviceaccounts",
        "token",
        "a",
        "s"
    )]
    fn resource_requests(
        #[case] method: &str,
        #[case] path: &str,
        #[case] query: &str,
        #[case] verb: &str,
        #[case] group: &str,
        #[case] resource: &str,
        #[case] subresource: &str,
        #[case] namespace: &str,
        #[case] name: &str,
    ) {
        let a = attrs(method, path, query);
        assert!(a.resource_request);
        assert_eq!(
            (a.verb.as_str(), a.group.as_str(), a.resource.as_str()),
            (verb, group, resource)
        );
        assert_eq!(
            (
                a.subresource.as_str(),
                a.namespace.as_str(),
                a.name.as_str()
            ),
            (subresource, namespace, name)
        );
    }

    #[rstest]
    #[case("GET", "/api", "get")]
    #[case("GET", "/api/v1", "get")]
    #[case("GET", "/apis/apps", "get")]
    #[case("GET", "/apis/apps/v1", "get")]
    #[case("GET", "/healthz", "get")]
    #[case("POST", "/version", "post")]
    #[case("GET", "/openapi/v3/api/v1", "get")]
    fn non_resource_requests(#[case] method: &str, #[case] path: &str, #[case] verb: &str) {
        let a = attrs(method, path, "");
        assert!(!a.resource_request);
        assert_eq!((a.verb.as_str(), a.path.as_str()), (verb, path));
    }

    #[test]
    fn forbidden_messages_are_the_real_servers() {
        let user = UserInfo::authenticated("system:serviceaccount:ns:sa", "", &[]);
        let list = Attributes::resource(&user, "list", "", "pods", "ns", "");
        let e = list.forbidden("");
        assert_eq!(e.code, 403);
        assert_eq!(
            e.message,
            r#"pods is forbidden: User "system:serviceaccount:ns:sa" cannot list resource "pods" in API group "" in the namespace "ns""#
        );
        let mut status =
            Attributes::resource(&user, "update", "eno.azure.io", "compositions", "", "c");
        status.subresource = "status".into();
        assert_eq!(
            status.forbidden("").message,
            r#"compositions.eno.azure.io "c" is forbidden: User "system:serviceaccount:ns:sa" cannot update resource "compositions/status" in API group "eno.azure.io" at the cluster scope"#
        );
        let path = Attributes::non_resource(&UserInfo::anonymous(), "get", "/api");
        let e = path.forbidden("");
        assert_eq!(
            e.message,
            r#"forbidden: User "system:anonymous" cannot get path "/api""#
        );
        assert!(e.to_status().get("details").is_none());
        assert_eq!(
            list.forbidden("").to_status()["details"],
            serde_json::json!({"kind": "pods"})
        );
    }
}
