//! Answers as `PartialObjectMetadata`: what a client that asks for
//! `Accept: application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1` (or
//! `as=PartialObjectMetadataList` for a list) gets instead of the objects — kube-rs'
//! `get_metadata`, `list_metadata`, `watch_metadata` and `metadata_watcher`, client-go's
//! metadata informers. As the real handlers transform a response
//! (`asPartialObjectMetadata`, `asPartialObjectMetadataList` in
//! `apiserver/pkg/endpoints/handlers/response.go`): each object becomes its `metadata` under
//! `kind: PartialObjectMetadata`, a list keeps its `resourceVersion`, `continue` and
//! `remainingItemCount`; asking for the one shape and answering the other is a `406`, as is a
//! group version other than `meta.k8s.io/v1` and `v1beta1`. Status answers pass unchanged.

use axum::response::Response;
use bytes::Bytes;
use serde_json::{json, Map, Value};

use crate::error::ApiError;
use crate::http::negotiation::Negotiated;
use crate::resource::ResourceInfo;

/// The group of the metadata-only kinds.
const META_GROUP: &str = "meta.k8s.io";

/// What the client asked the answer to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Requested {
    /// `PartialObjectMetadataList` (else `PartialObjectMetadata`).
    list: bool,
    /// The `meta.k8s.io` version asked for.
    version: String,
}

/// The metadata-only shape a request's negotiated answer is, if it is one.
pub(crate) fn requested(negotiated: &Negotiated) -> Option<Requested> {
    let transform = negotiated.transform.as_ref()?;
    let list = match transform.kind.as_str() {
        "PartialObjectMetadata" => false,
        "PartialObjectMetadataList" => true,
        _ => return None,
    };
    Some(Requested {
        list,
        version: transform.version.clone(),
    })
}

/// `response` transformed as `requested` asks (a successful JSON answer only).
pub(crate) async fn answer(
    info: &ResourceInfo,
    requested: &Requested,
    response: Response,
) -> Response {
    crate::http::server::rewrite_json_answer(response, async |bytes| {
        transform(info, requested, bytes)
    })
    .await
}

/// The answer's JSON transformed; `None` when it is left as it is (a Status, not JSON).
fn transform(
    info: &ResourceInfo,
    requested: &Requested,
    bytes: &[u8],
) -> Result<Option<Vec<u8>>, ApiError> {
    let Ok(value) = crate::store::json::from_slice(bytes) else {
        return Ok(None);
    };
    if value["kind"] == "Status" {
        return Ok(None);
    }
    let is_list = value["items"].is_array() && value["kind"] == info.list_kind().as_str();
    let api_version = format!("{META_GROUP}/{}", requested.version);
    if requested.list {
        if !is_list {
            return Err(not_acceptable(format!(
                "you requested PartialObjectMetadataList, but the requested object is not a list ({})",
                go_type(info, false)
            )));
        }
        check_version(requested)?;
        let items: Vec<Value> = value["items"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|item| partial(item, &api_version))
            .collect();
        let mut metadata = Map::new();
        for field in ["resourceVersion", "continue", "remainingItemCount"] {
            if let Some(v) = value["metadata"].get(field).filter(|v| !v.is_null()) {
                metadata.insert(field.into(), v.clone());
            }
        }
        // Built by appending to a nil slice: an empty list's `items` is `null`.
        let items = if items.is_empty() {
            Value::Null
        } else {
            Value::Array(items)
        };
        let list = json!({"kind": "PartialObjectMetadataList", "apiVersion": api_version,
            "metadata": metadata, "items": items});
        return Ok(Some(serde_json::to_vec(&list).unwrap_or_default()));
    }
    if is_list {
        return Err(not_acceptable(format!(
            "you requested PartialObjectMetadata, but the requested object is a list ({})",
            go_type(info, true)
        )));
    }
    check_version(requested)?;
    Ok(Some(
        serde_json::to_vec(&partial(&value, &api_version)).unwrap_or_default(),
    ))
}

/// A watch event line with its object as `PartialObjectMetadata` (ERROR events unchanged).
pub(crate) fn event_line(requested: &Requested, line: Bytes) -> Bytes {
    let Ok(mut event) = crate::store::json::from_slice(&line) else {
        return line;
    };
    if event["type"] == "ERROR" || event["object"]["kind"] == "Status" {
        return line;
    }
    let api_version = format!("{META_GROUP}/{}", requested.version);
    event["object"] = partial(&event["object"], &api_version);
    let mut out = serde_json::to_vec(&event).unwrap_or_default();
    out.push(b'\n');
    out.into()
}

/// Whether a watch may be answered in the requested shape: watch events carry single objects,
/// so only `PartialObjectMetadata` at a known version.
pub(crate) fn check_watch(info: &ResourceInfo, requested: &Requested) -> Result<(), ApiError> {
    if requested.list {
        return Err(not_acceptable(format!(
            "you requested PartialObjectMetadataList, but the requested object is not a list ({})",
            go_type(info, false)
        )));
    }
    check_version(requested)
}

fn check_version(requested: &Requested) -> Result<(), ApiError> {
    if matches!(requested.version.as_str(), "v1" | "v1beta1") {
        return Ok(());
    }
    // (The real message names the list kind for both shapes.)
    Err(not_acceptable(format!(
        "no PartialObjectMetadataList exists in group version {META_GROUP}/{}",
        requested.version
    )))
}

/// `meta.AsPartialObjectMetadata`: the object's metadata under the metadata-only kind.
fn partial(object: &Value, api_version: &str) -> Value {
    let metadata = match &object["metadata"] {
        Value::Object(m) => Value::Object(m.clone()),
        _ => json!({}),
    };
    json!({"kind": "PartialObjectMetadata", "apiVersion": api_version, "metadata": metadata})
}

fn not_acceptable(message: String) -> ApiError {
    ApiError::new(406, "NotAcceptable", message)
}

/// Go's `%T` of the object the handler transforms: the internal type (`*core.Pod`,
/// `*apps.DeploymentList`), `*unstructured.Unstructured[List]` for custom resources.
fn go_type(info: &ResourceInfo, list: bool) -> String {
    let suffix = if list { "List" } else { "" };
    if info.custom {
        return format!("*unstructured.Unstructured{suffix}");
    }
    let package = match info.group.as_str() {
        "" | "events.k8s.io" => "core",
        group => group.split('.').next().unwrap_or(group),
    };
    format!("*{package}.{}{suffix}", info.kind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::{header, HeaderMap, HeaderValue};
    use rstest::rstest;

    fn headers(accept: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::ACCEPT, HeaderValue::from_str(accept).unwrap());
        h
    }

    #[rstest]
    #[case::object("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", Some((false, "v1")))]
    #[case::list("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1,application/json", Some((true, "v1beta1")))]
    #[case::spaces("application/json; as=PartialObjectMetadata; g=meta.k8s.io; v=v1", Some((false, "v1")))]
    #[case::table("application/json;as=Table;g=meta.k8s.io;v=v1", None)]
    #[case::other_group("application/json;as=PartialObjectMetadata;g=example.com;v=v1", None)]
    #[case::fallback_only(
        "application/json,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
        None
    )]
    #[case::unknown_version_falls_back(
        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v2,application/json",
        None
    )]
    #[case::preferred_by_q(
        "application/json;q=0.5,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
        Some((false, "v1"))
    )]
    #[case::any_media_type(
        "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
        Some((true, "v1"))
    )]
    fn the_negotiated_clause_decides(#[case] accept: &str, #[case] expected: Option<(bool, &str)>) {
        let negotiated =
            crate::http::negotiation::for_resource(&headers(accept), false).unwrap_or_default();
        let got = requested(&negotiated).map(|r| (r.list, r.version));
        assert_eq!(got, expected.map(|(l, v)| (l, v.to_string())));
    }

    #[rstest]
    #[case::pod("", "Pod", false, "*core.Pod")]
    #[case::deployments("apps", "Deployment", true, "*apps.DeploymentList")]
    #[case::roles("rbac.authorization.k8s.io", "Role", false, "*rbac.Role")]
    #[case::events("events.k8s.io", "Event", false, "*core.Event")]
    fn go_types_name_the_internal_type(
        #[case] group: &str,
        #[case] kind: &str,
        #[case] list: bool,
        #[case] expected: &str,
    ) {
        let info = ResourceInfo {
            group: group.into(),
            kind: kind.into(),
            ..Default::default()
        };
        assert_eq!(go_type(&info, list), expected);
    }
}
