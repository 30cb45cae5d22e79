//! LIST: selectors, `resourceVersion`/`resourceVersionMatch`, and paging with `limit`/`continue`
//! over a consistent snapshot.

use axum::http::StatusCode;
use axum::response::Response;
use bytes::{BufMut, Bytes, BytesMut};
use serde_json::{json, Value};

use crate::context::FakeApiServer;
use crate::error::{ApiError, StatusCause};
use crate::http::continue_token;
use crate::http::encoding::typed_bytes;
use crate::http::request::Query;
use crate::http::server::{json_response, value_response};
use crate::http::table::IncludeObject;
use crate::resource::ResourceInfo;
use crate::rules::selectors::{FieldSelector, LabelSelector};
use crate::store::{resource_key, Snapshot};

/// How the client asked for the list's resourceVersion to be chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadAt {
    /// The newest state (no resourceVersion).
    Latest,
    /// Any state at least this new (`resourceVersion=N`, `NotOlderThan` or unset match; `0` = any).
    NotOlderThan(u64),
    /// Exactly this revision (`resourceVersionMatch=Exact`).
    Exact(u64),
    /// Continue an earlier paged list: at its revision (`None`: the newest), from a storage key
    /// (after the list's prefix) on.
    Continue {
        revision: Option<u64>,
        start: String,
    },
}

/// A parsed LIST request.
#[derive(Debug, Clone)]
pub struct ListRequest {
    /// The label selector, if any.
    pub labels: Option<LabelSelector>,
    /// The field selector, if any.
    pub fields: Option<FieldSelector>,
    /// Page size (`None` for everything).
    pub limit: Option<usize>,
    /// Which state to read.
    pub read_at: ReadAt,
    /// What a Table's rows carry (read only when a Table is asked for).
    pub include_object: Option<String>,
}

fn selector_error(e: crate::rules::selectors::SelectorError) -> ApiError {
    ApiError::new(e.code(), e.reason(), e.to_string())
}

/// apimachinery's `ValidateListOptions` for a list (not a watch): every cause in one 422.
fn validate_list_options(
    rv: Option<&str>,
    rv_match: Option<&str>,
    has_continue: bool,
    send_initial_events: bool,
) -> Result<(), ApiError> {
    let mut causes = Vec::new();
    if let Some(rv_match) = rv_match {
        if rv.is_none() {
            causes.push(StatusCause::forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden unless resourceVersion is provided",
            ));
        }
        if has_continue {
            causes.push(StatusCause::forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden when continue is provided",
            ));
        }
        if rv_match != "Exact" && rv_match != "NotOlderThan" {
            causes.push(StatusCause::not_supported(
                "resourceVersionMatch",
                &json!(rv_match),
                &["Exact".into(), "NotOlderThan".into(), String::new()],
            ));
        }
        if rv_match == "Exact" && rv == Some("0") {
            causes.push(StatusCause::forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
            ));
        }
    }
    if send_initial_events {
        causes.push(StatusCause::forbidden(
            "sendInitialEvents",
            "sendInitialEvents is forbidden for list",
        ));
    }
    if causes.is_empty() {
        return Ok(());
    }
    Err(ApiError::invalid("meta.k8s.io", "ListOptions", "", causes))
}

impl ListRequest {
    /// Parses the query of a LIST (or WATCH) request, checking it in the real server's order:
    /// the parameter codec (integers, then the selectors' syntax), `ValidateListOptions`, the
    /// field selector's labels, then storage's checks of `continue` and `resourceVersion`.
    pub fn parse(info: &ResourceInfo, query: &Query) -> Result<Self, ApiError> {
        let include_object = query.get("includeObject").map(str::to_string);
        // `timeoutSeconds` comes before `limit` in `ListOptions`; a list reads neither further.
        query.int("timeoutSeconds")?;
        let limit = query.int("limit")?.filter(|l| *l > 0).map(|l| l as usize);
        let labels = match query.get("labelSelector").filter(|s| !s.trim().is_empty()) {
            Some(s) => Some(LabelSelector::parse(s).map_err(selector_error)?),
            None => None,
        };
        let fields = match query.get("fieldSelector").filter(|s| !s.trim().is_empty()) {
            Some(s) => Some(FieldSelector::parse(s).map_err(selector_error)?),
            None => None,
        };
        let rv = query.get("resourceVersion").filter(|r| !r.is_empty());
        let rv_match = query.get("resourceVersionMatch").filter(|r| !r.is_empty());
        let token = query.get("continue").filter(|c| !c.is_empty());
        if !query.flag("watch") {
            validate_list_options(
                rv,
                rv_match,
                token.is_some(),
                query.get("sendInitialEvents").is_some(),
            )?;
        }
        let fields = match fields {
            Some(selector) => Some(
                if info.custom {
                    selector
                        .validate_for_custom(info.namespaced, &info.selectable_fields)
                        .map(|()| selector)
                } else {
                    selector.convert_for(&info.group, &info.version, &info.kind)
                }
                .map_err(selector_error)?,
            ),
            None => None,
        };
        // Storage's `ValidateListOptions`: a continue token first, then the resourceVersion.
        if let Some(token) = token {
            let token = continue_token::decode(token)
                .map_err(|e| ApiError::bad_request(format!("invalid continue token: {e}")))?;
            if rv.is_some_and(|r| r != "0") {
                return Err(ApiError::bad_request(
                    "specifying resource version is not allowed when using continue",
                ));
            }
            return Ok(Self {
                labels,
                fields,
                limit,
                read_at: ReadAt::Continue {
                    revision: token.revision,
                    start: token.start,
                },
                include_object,
            });
        }
        let read_at = match rv {
            None => ReadAt::Latest,
            Some(rv) => {
                let revision = crate::rules::strconv::parse_resource_version(rv)
                    .map_err(|e| ApiError::bad_request(format!("invalid resource version: {e}")))?;
                if rv_match == Some("Exact") {
                    ReadAt::Exact(revision)
                } else {
                    ReadAt::NotOlderThan(revision)
                }
            }
        };
        Ok(Self {
            labels,
            fields,
            limit,
            read_at,
            include_object,
        })
    }

    /// Whether the request has a selector (lists with one report no `remainingItemCount`).
    pub fn has_selector(&self) -> bool {
        self.labels.is_some() || self.fields.is_some()
    }

    /// Whether a stored object of `info` passes the selectors. With only a label selector, just
    /// the labels are decoded; a field selector looks at the object as a read decodes it (a
    /// custom resource written before its schema changed, with the present schema: see
    /// [`crate::registry::crd_storage`]).
    pub fn matches_bytes(&self, info: &ResourceInfo, bytes: &[u8]) -> bool {
        if self.fields.is_none() {
            #[derive(serde::Deserialize)]
            struct Meta {
                #[serde(default)]
                labels: Option<serde_json::Map<String, Value>>,
            }
            #[derive(serde::Deserialize)]
            struct LabelsOnly {
                metadata: Meta,
            }
            return match serde_json::from_slice::<LabelsOnly>(bytes) {
                Ok(o) => self
                    .labels
                    .as_ref()
                    .is_none_or(|s| s.matches(o.metadata.labels.as_ref())),
                Err(_) => false,
            };
        }
        crate::store::json::from_slice(bytes)
            .map(|mut object| {
                crate::registry::conversion::decode_stale(info, &mut object);
                self.matches(&object)
            })
            .unwrap_or(false)
    }

    /// Whether an object passes the selectors.
    pub fn matches(&self, object: &Value) -> bool {
        let labels_ok = self
            .labels
            .as_ref()
            .is_none_or(|s| s.matches(object["metadata"]["labels"].as_object()));
        labels_ok && self.fields.as_ref().is_none_or(|f| f.matches(object))
    }
}

/// An object's storage key after the list's prefix: its name in a namespace's list (and for
/// cluster-scoped objects), `namespace/name` in a list across namespaces.
fn storage_key<'k>(
    list_namespace: Option<&str>,
    (namespace, name): &'k (String, String),
) -> impl Iterator<Item = u8> + 'k {
    let across = list_namespace.is_none() && !namespace.is_empty();
    let prefix: &'k [u8] = if across { namespace.as_bytes() } else { b"" };
    let separator: &'static [u8] = if across { b"/" } else { b"" };
    prefix
        .iter()
        .chain(separator)
        .chain(name.as_bytes())
        .copied()
}

/// etcd's `handleCompactedErrorForPaging`: `410 Expired` for a token whose revision is gone,
/// with a token to go on from the same key at the newest revision.
fn continue_expired(start: &str) -> ApiError {
    let mut error = ApiError::expired(
        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
    );
    error.list_continue = Some(continue_token::encode_start(-1, start));
    error
}

/// Serves a LIST.
pub fn serve(
    server: &FakeApiServer,
    info: &ResourceInfo,
    namespace: Option<&str>,
    request: &ListRequest,
    table: Option<&str>,
) -> Result<Response, ApiError> {
    let store = &server.shared.store;
    let key = resource_key(&info.group, &info.plural);
    let (snapshot, start): (Snapshot, Option<&str>) = match &request.read_at {
        ReadAt::Latest | ReadAt::NotOlderThan(_) => {
            if let ReadAt::NotOlderThan(rv) = request.read_at {
                let current = store.revision();
                if rv > current {
                    return Err(crate::store::too_large_rv(rv, current));
                }
            }
            // An equality label selector reads the objects carrying that label from the
            // store's label index; every one is still checked against the whole selector below,
            // in the same key order, so the answer is the scan's.
            let snapshot = match request.labels.as_ref().and_then(LabelSelector::exact_match) {
                Some(label) => store.snapshot_labelled(&key, namespace, label),
                None => store.snapshot(&key, namespace),
            };
            (snapshot, None)
        }
        ReadAt::Exact(rv) => (store.snapshot_at(&key, namespace, *rv)?, None),
        ReadAt::Continue {
            revision: Some(revision),
            start,
        } => (
            store
                .snapshot_at(&key, namespace, *revision)
                .map_err(|e| match e.code {
                    410 => continue_expired(start),
                    _ => e,
                })?,
            Some(start.as_str()),
        ),
        ReadAt::Continue {
            revision: None,
            start,
        } => (store.snapshot(&key, namespace), Some(start.as_str())),
    };
    let selecting = request.has_selector();
    let mut page: Vec<(&(String, String), &Bytes)> = Vec::new();
    let mut remaining = 0usize;
    let mut more = false;
    let mut last_key: Option<&(String, String)> = None;
    // The items are in storage-key order: a continued page starts where the key reaches the
    // token's, found by bisection rather than a comparison per item.
    let first = start.map_or(0, |start| {
        snapshot
            .items
            .partition_point(|(k, _)| storage_key(namespace, k).lt(start.bytes()))
    });
    for (k, bytes) in &snapshot.items[first..] {
        if selecting && !request.matches_bytes(info, bytes) {
            continue;
        }
        if request.limit.is_some_and(|l| page.len() >= l) {
            more = true;
            if selecting {
                break;
            }
            remaining += 1;
            continue;
        }
        last_key = Some(k);
        page.push((k, bytes));
    }
    let mut metadata = json!({"resourceVersion": snapshot.revision.to_string()});
    if more {
        if let Some(last) = last_key {
            let last = String::from_utf8_lossy(&storage_key(namespace, last).collect::<Vec<u8>>())
                .into_owned();
            let revision = i64::try_from(snapshot.revision).unwrap_or(i64::MAX);
            metadata["continue"] = json!(continue_token::encode(revision, &last));
        }
        if !selecting {
            metadata["remainingItemCount"] = json!(remaining);
        }
    }
    if let Some(version) = table {
        let objects: Vec<Value> = page
            .iter()
            .filter_map(|(_, b)| crate::store::json::from_slice(&typed_bytes(info, b)).ok())
            .collect();
        // The printer columns read the objects at the list's version.
        let objects = crate::registry::conversion::to_served_all(info, objects)?;
        let now = crate::registry::semantics::format_time(server.shared.now());
        let include = IncludeObject::parse(request.include_object.as_deref())?;
        let mut table = crate::http::table::to_table(info, &objects, &now, true, include, version);
        table["metadata"] = metadata;
        return Ok(value_response(StatusCode::OK, &table));
    }
    // Assemble the list from the stored bytes without re-encoding the items.
    let head = json!({
        "kind": info.list_kind(),
        "apiVersion": info.api_version(),
        "metadata": metadata,
    });
    let head = serde_json::to_vec(&head).map_err(|e| ApiError::internal(e.to_string()))?;
    let size: usize = page.iter().map(|(_, b)| b.len() + 1).sum();
    let mut out = BytesMut::with_capacity(head.len() + size + 16);
    out.put_slice(&head[..head.len() - 1]);
    out.put_slice(b",\"items\":[");
    for (i, (_, bytes)) in page.iter().enumerate() {
        if i > 0 {
            out.put_u8(b',');
        }
        crate::http::encoding::put_item(info, bytes, &mut out);
    }
    out.put_slice(b"]}");
    Ok(json_response(StatusCode::OK, out.freeze()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::http::Request;
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    async fn get(server: &FakeApiServer, uri: &str) -> (StatusCode, Bytes) {
        let request = Request::builder().uri(uri).body(Body::empty()).unwrap();
        let response = server.router().oneshot(request).await.unwrap();
        let status = response.status();
        (
            status,
            response.into_body().collect().await.unwrap().to_bytes(),
        )
    }

    /// A list by an equality label selector (read from the store's label index) answers byte
    /// for byte what the same list at that exact revision (read from every stored object)
    /// answers: items, order, resourceVersion, continue tokens, page after page.
    #[tokio::test]
    async fn indexed_label_lists_answer_as_the_scan() {
        let server = FakeApiServer::new();
        for ns in ["a", "b"] {
            server
                .apply_manifest(
                    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
                )
                .unwrap();
        }
        for i in 0..24 {
            let ns = if i % 3 == 0 { "a" } else { "b" };
            let mut labels = serde_json::Map::new();
            labels.insert("app".into(), json!(["web", "db"][i % 2]));
            if i % 4 != 0 {
                labels.insert("tier".into(), json!(format!("t{}", i % 3)));
            }
            server
                .apply_manifest(json!({
                    "apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": format!("cm{i:02}"), "namespace": ns, "labels": labels},
                }))
                .unwrap();
        }
        let selectors = [
            "app%3Dweb",
            "app%3D%3Ddb",
            "app+in+(web)",
            "app%3Dweb,tier%3Dt1",
            "tier%3Dt2,app!%3Dweb",
            "app%3Dnone",
        ];
        for base in ["/api/v1/configmaps", "/api/v1/namespaces/b/configmaps"] {
            for selector in selectors {
                for limit in [None, Some(1), Some(3), Some(50)] {
                    let limit = limit.map(|l| format!("&limit={l}")).unwrap_or_default();
                    let (_, first) =
                        get(&server, &format!("{base}?labelSelector={selector}{limit}")).await;
                    let page: Value = serde_json::from_slice(&first).unwrap();
                    let rv = page["metadata"]["resourceVersion"]
                        .as_str()
                        .unwrap()
                        .to_string();
                    let (status, scanned) = get(
                        &server,
                        &format!("{base}?labelSelector={selector}{limit}&resourceVersion={rv}&resourceVersionMatch=Exact"),
                    )
                    .await;
                    assert_eq!(status, StatusCode::OK);
                    assert_eq!(first, scanned, "{base} {selector} {limit}");
                    // Later pages read at the first page's revision, through the same index-free path.
                    let mut token = page["metadata"]["continue"].as_str().map(str::to_string);
                    let mut items = page["items"].as_array().unwrap().len();
                    while let Some(t) = token {
                        let (_, next) = get(
                            &server,
                            &format!("{base}?labelSelector={selector}{limit}&continue={t}"),
                        )
                        .await;
                        let next: Value = serde_json::from_slice(&next).unwrap();
                        items += next["items"].as_array().unwrap().len();
                        token = next["metadata"]["continue"].as_str().map(str::to_string);
                    }
                    let (_, all) = get(&server, &format!("{base}?labelSelector={selector}")).await;
                    let all: Value = serde_json::from_slice(&all).unwrap();
                    assert_eq!(items, all["items"].as_array().unwrap().len());
                }
            }
        }
    }
}
