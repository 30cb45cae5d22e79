//! The output media type of an API answer, as the real handlers negotiate it from `Accept`
//! before they act (`negotiation.NegotiateOutputMediaType`): the clauses by preference (`q`,
//! then specificity, then order; `q=0` refuses), the first the server can write wins. The
//! codecs are JSON, YAML and protobuf, in that order, so `*/*` and `application/*` are JSON;
//! when no clause names one of them the request is refused with `406 NotAcceptable` ("only the
//! following media types are accepted: ...") and nothing is done. A resource's requests also
//! read each clause's parameters ([`for_resource`]): the transformation a client asks for
//! (`as=Table`, `as=PartialObjectMetadata[List]`, with `g` and `v`) belongs to its clause, and a
//! clause the endpoint cannot answer is passed over for the next.
//!
//! A YAML answer is the JSON answer converted as `sigs.k8s.io/yaml` converts it
//! ([`crate::http::yaml`]). Protobuf is accepted but
//! answered as JSON: this server decodes protobuf requests and writes no protobuf; clients that
//! ask for it (client-go, kubectl) also accept JSON.

use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::Response;

use crate::error::ApiError;

/// What the answer is written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Output {
    /// `application/json` (also for protobuf, see the module documentation).
    #[default]
    Json,
    /// `application/yaml`.
    Yaml,
}

/// The media types the negotiation offers, in the codec factory's order.
const OFFERED: [&str; 3] = [
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
];

/// Negotiates the answer's media type from the request's `Accept` (none or empty: JSON), taking
/// the first clause by preference that names a type this server writes. For the endpoints
/// that are not a resource's (discovery, OpenAPI): a resource's requests negotiate with
/// [`for_resource`].
pub fn output(headers: &HeaderMap) -> Result<Output, ApiError> {
    let Some(clauses) = ranked_clauses(headers.get_all(header::ACCEPT).iter()) else {
        return Ok(Output::Json);
    };
    clauses
        .iter()
        .find_map(|clause| clause.offers().next())
        .ok_or_else(not_acceptable)
}

/// Whether the clause the negotiation takes asks for the pretty serializer (`pretty=1`, the
/// media type's own option beside `isPrettyPrint`'s query and agent; Go's `Header.Get` reads
/// the first `Accept` header only).
pub fn asks_pretty(headers: &HeaderMap) -> bool {
    let Some(accept) = headers.get(header::ACCEPT) else {
        return false;
    };
    // Every request passes here: most name no `pretty` at all.
    if !accept.as_bytes().windows(6).any(|w| w == b"pretty") {
        return false;
    }
    let Some(clauses) = ranked_clauses(std::iter::once(accept)) else {
        return false;
    };
    clauses
        .iter()
        .find(|clause| clause.offers().next().is_some())
        .is_some_and(|clause| clause.params.contains(&("pretty", "1")))
}

/// A transformation of a resource's answer a client asked for with the `as`, `g` and `v`
/// parameters of the `Accept` clause that won (`as=Table;g=meta.k8s.io;v=v1`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Transform {
    /// `as`: the kind asked for (`Table`, `PartialObjectMetadata`, `PartialObjectMetadataList`).
    pub kind: String,
    /// `g`: its group.
    pub group: String,
    /// `v`: its version.
    pub version: String,
}

/// What a resource's answer is to be written as, and transformed into (by default: JSON, as
/// it is).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Negotiated {
    /// The media type.
    pub output: Output,
    /// The transformation asked for, if any.
    pub transform: Option<Transform>,
}

impl Negotiated {
    /// The `meta.k8s.io` version of the transformation when it is to `kind`.
    pub fn transform_to(&self, kind: &str) -> Option<&str> {
        self.transform
            .as_ref()
            .filter(|t| t.kind == kind)
            .map(|t| t.version.as_str())
    }
}

/// The group of the kinds an answer can be transformed into.
const META_GROUP: &str = "meta.k8s.io";

/// Negotiates a resource request's answer as `NegotiateOutputMediaType` does with the resource's
/// `RequestScope` as its restrictions: clauses by preference, and within a clause the types it
/// names in the order the server offers them; a type is taken unless the clause's parameters
/// rule it out (`acceptMediaTypeOptions`): `stream` other than `watch` or on YAML (which has no
/// stream serializer), `sv` other than `v1`, or a transformation the endpoint does not allow
/// (`AllowsMediaTypeTransform`: `Table` as JSON or YAML, `PartialObjectMetadata[List]` as any
/// type, both only in `meta.k8s.io/v1` or `v1beta1`; nothing else). Without a transformation a
/// custom resource is not written as protobuf (the CRD handler's standard serializers). As Go's
/// `Header.Get`, only the first `Accept` header is read.
pub fn for_resource(headers: &HeaderMap, custom: bool) -> Result<Negotiated, ApiError> {
    let first = headers.get(header::ACCEPT);
    // What kube-rs sends with every patch: decided without parsing.
    if first.is_some_and(|v| v.as_bytes() == b"application/json") {
        return Ok(Negotiated::default());
    }
    let Some(clauses) = ranked_clauses(first.into_iter()) else {
        return Ok(Negotiated::default());
    };
    for clause in &clauses {
        for (offer, output) in clause.offered() {
            if let Some(transform) = clause.accepted_as(offer, custom) {
                return Ok(Negotiated { output, transform });
            }
        }
    }
    Err(not_acceptable())
}

/// A watch's negotiation: the resource's ([`for_resource`]), then, as `serveWatchHandler`'s
/// `NegotiateOutputMediaTypeStream`, a type with a stream serializer (JSON or protobuf; YAML
/// has none), else `406` naming the stream types.
pub fn for_watch(headers: &HeaderMap, custom: bool) -> Result<Negotiated, ApiError> {
    let negotiated = for_resource(headers, custom)?;
    if negotiated.output == Output::Yaml {
        return Err(ApiError::new(
            406,
            "NotAcceptable",
            "only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch",
        ));
    }
    Ok(negotiated)
}

/// One clause of `Accept`: its media range (lower case) and parameters, `q` aside.
struct Clause<'a> {
    range: String,
    params: Vec<(&'a str, &'a str)>,
}

impl Clause<'_> {
    /// The offered types this clause's range names, in the server's order.
    fn offered(&self) -> impl Iterator<Item = (&'static str, Output)> + '_ {
        OFFERED.iter().filter_map(move |offer| {
            let names = self.range == "*/*"
                || self.range == *offer
                || self
                    .range
                    .strip_suffix("/*")
                    .is_some_and(|kind| offer.split('/').next() == Some(kind));
            let output = match *offer {
                "application/yaml" => Output::Yaml,
                _ => Output::Json,
            };
            names.then_some((*offer, output))
        })
    }

    /// What the generic negotiation writes for this clause (its parameters unread).
    fn offers(&self) -> impl Iterator<Item = Output> + '_ {
        self.offered().map(|(_, output)| output)
    }

    /// `acceptMediaTypeOptions` with a resource endpoint's restrictions: `None` when the
    /// clause's parameters rule `offer` out, else the transformation they ask for.
    fn accepted_as(&self, offer: &str, custom: bool) -> Option<Option<Transform>> {
        let mut transform: Option<Transform> = None;
        for &(key, value) in &self.params {
            match key {
                "as" => transform.get_or_insert_with(Default::default).kind = value.into(),
                "g" => transform.get_or_insert_with(Default::default).group = value.into(),
                "v" => transform.get_or_insert_with(Default::default).version = value.into(),
                // Only `watch`, and only on a type with a stream serializer (YAML has none).
                "stream"
                    if !value.is_empty() && (value != "watch" || offer == "application/yaml") =>
                {
                    return None
                }
                "sv" if !value.is_empty() && value != "v1" => return None,
                _ => {}
            }
        }
        let allowed = match &transform {
            None => !(custom && offer == "application/vnd.kubernetes.protobuf"),
            Some(t) if t.group == META_GROUP && matches!(t.version.as_str(), "v1" | "v1beta1") => {
                match t.kind.as_str() {
                    "Table" => offer != "application/vnd.kubernetes.protobuf",
                    "PartialObjectMetadata" | "PartialObjectMetadataList" => true,
                    _ => false,
                }
            }
            Some(_) => false,
        };
        allowed.then_some(transform)
    }
}

/// The clauses of `Accept` by preference (`q`, then specificity, then the client's order),
/// without those refused (`q=0`); `None` when no header names anything (the default answer).
fn ranked_clauses<'a>(values: impl Iterator<Item = &'a HeaderValue>) -> Option<Vec<Clause<'a>>> {
    let mut clauses: Vec<(f32, u8, Clause<'a>)> = Vec::new();
    let mut any = false;
    for clause in values
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
    {
        any |= !clause.trim().is_empty();
        let mut parts = clause.split(';').map(str::trim);
        let range = parts.next().unwrap_or_default();
        if range.is_empty() {
            continue;
        }
        let mut q = 1.0f32;
        let mut params = Vec::new();
        for param in parts {
            if let Some((key, value)) = param.split_once('=') {
                match key.trim() {
                    "q" => q = value.trim().parse().unwrap_or(0.0),
                    key => params.push((key, value.trim())),
                }
            }
        }
        if q <= 0.0 {
            continue;
        }
        let specificity = match range {
            "*/*" => 0,
            r if r.ends_with("/*") => 1,
            _ => 2,
        };
        let range = range.to_ascii_lowercase();
        clauses.push((q, specificity, Clause { range, params }));
    }
    if !any {
        return None;
    }
    // By preference; a stable sort keeps the client's order among equals.
    clauses.sort_by(|a, b| {
        b.0.partial_cmp(&a.0)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(b.1.cmp(&a.1))
    });
    Some(clauses.into_iter().map(|(_, _, clause)| clause).collect())
}

/// `NewNotAcceptableError` of the offered media types.
fn not_acceptable() -> ApiError {
    ApiError::new(
        406,
        "NotAcceptable",
        format!(
            "only the following media types are accepted: {}",
            OFFERED.join(", ")
        ),
    )
}

/// Rewrites a JSON answer as YAML (other answers are returned as they are).
pub async fn answer(output: Output, response: Response) -> Response {
    use http_body_util::BodyExt;
    let json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/json"));
    if output != Output::Yaml || !json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let bytes = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => {
            tracing::debug!(error = %e, "answer body failed before it could be written as YAML");
            return Response::from_parts(parts, axum::body::Body::empty());
        }
    };
    match to_yaml(&bytes) {
        Some(yaml) => {
            parts.headers.remove(header::CONTENT_LENGTH);
            parts.headers.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/yaml"),
            );
            Response::from_parts(parts, axum::body::Body::from(yaml))
        }
        None => Response::from_parts(parts, axum::body::Body::from(bytes)),
    }
}

/// `yaml.JSONToYAML` ([`crate::http::yaml`]); `None` for bytes that are not JSON.
pub fn to_yaml(json: &[u8]) -> Option<String> {
    let value: serde_json::Value = crate::store::json::from_slice(json).ok()?;
    Some(crate::http::yaml::from_json(&value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn accept(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[rstest]
    #[case::none("", Some(Output::Json))]
    #[case::json("application/json", Some(Output::Json))]
    #[case::kubectl_tables(
        "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
        Some(Output::Json)
    )]
    #[case::any("*/*", Some(Output::Json))]
    #[case::application_any("application/*", Some(Output::Json))]
    #[case::yaml("application/yaml", Some(Output::Yaml))]
    #[case::yaml_preferred("application/json;q=0.5, application/yaml", Some(Output::Yaml))]
    #[case::specific_before_wildcard("*/*, application/yaml", Some(Output::Yaml))]
    #[case::protobuf("application/vnd.kubernetes.protobuf", Some(Output::Json))]
    #[case::client_go("application/vnd.kubernetes.protobuf, */*", Some(Output::Json))]
    #[case::browser(
        "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
        Some(Output::Json)
    )]
    #[case::text("text/plain", None)]
    #[case::cbor("application/cbor", None)]
    #[case::refused_json("application/json;q=0", None)]
    #[case::text_any("text/*", None)]
    fn accept_headers_negotiate_as_the_real_handlers_do(
        #[case] header: &str,
        #[case] expected: Option<Output>,
    ) {
        let headers = if header.is_empty() {
            HeaderMap::new()
        } else {
            accept(header)
        };
        match (output(&headers), expected) {
            (Ok(found), Some(expected)) => assert_eq!(found, expected),
            (Err(e), None) => {
                assert_eq!(e.code, 406);
                assert_eq!(e.reason, "NotAcceptable");
                assert_eq!(
                    e.message,
                    "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
                );
            }
            (found, expected) => panic!("{header}: {found:?}, expected {expected:?}"),
        }
    }

    /// A resource's answer: the clause that wins once its parameters are read, as
    /// `NegotiateOutputMediaType` reads them with a resource's `RequestScope`.
    #[rstest]
    #[case::none("", false, Some((Output::Json, None)))]
    #[case::plain("application/json", false, Some((Output::Json, None)))]
    #[case::kubectl_get(
        "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json",
        false,
        Some((Output::Json, Some("Table/v1")))
    )]
    #[case::table_v1beta1("application/json;as=Table;v=v1beta1;g=meta.k8s.io", false, Some((Output::Json, Some("Table/v1beta1"))))]
    #[case::table_as_yaml("application/yaml;as=Table;v=v1;g=meta.k8s.io", false, Some((Output::Yaml, Some("Table/v1"))))]
    #[case::table_not_as_protobuf(
        "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io",
        false,
        None
    )]
    #[case::table_unknown_version("application/json;as=Table;v=v2;g=meta.k8s.io", false, None)]
    #[case::table_without_group("application/json;as=Table", false, None)]
    #[case::unknown_version_falls_back(
        "application/json;as=Table;v=v2;g=meta.k8s.io, application/json",
        false,
        Some((Output::Json, None))
    )]
    #[case::unknown_kind("application/json;as=Foo;g=meta.k8s.io;v=v1", false, None)]
    #[case::preferred_by_q(
        "application/json;q=0.1, application/json;as=Table;v=v1;g=meta.k8s.io",
        false,
        Some((Output::Json, Some("Table/v1")))
    )]
    #[case::metadata_any_type(
        "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
        false,
        Some((Output::Json, Some("PartialObjectMetadata/v1")))
    )]
    #[case::watch_stream("application/json;stream=watch", false, Some((Output::Json, None)))]
    #[case::yaml_has_no_stream("application/yaml;stream=watch", false, None)]
    #[case::other_stream("application/json;stream=other", false, None)]
    #[case::server_version("application/json;sv=v1", false, Some((Output::Json, None)))]
    #[case::other_server_version("application/json;sv=v2", false, None)]
    #[case::builtin_protobuf("application/vnd.kubernetes.protobuf", false, Some((Output::Json, None)))]
    #[case::custom_no_protobuf("application/vnd.kubernetes.protobuf", true, None)]
    #[case::custom_client_go(
        "application/vnd.kubernetes.protobuf, */*",
        true,
        Some((Output::Json, None))
    )]
    #[case::custom_table("application/json;as=Table;v=v1;g=meta.k8s.io", true, Some((Output::Json, Some("Table/v1"))))]
    fn resource_answers_negotiate_with_their_restrictions(
        #[case] header: &str,
        #[case] custom: bool,
        #[case] expected: Option<(Output, Option<&str>)>,
    ) {
        let headers = if header.is_empty() {
            HeaderMap::new()
        } else {
            accept(header)
        };
        let found = for_resource(&headers, custom).map(|n| {
            let transform = n.transform.map(|t| {
                assert_eq!(t.group, "meta.k8s.io");
                format!("{}/{}", t.kind, t.version)
            });
            (n.output, transform)
        });
        match (found, expected) {
            (Ok(found), Some((output, transform))) => {
                assert_eq!(found, (output, transform.map(str::to_string)), "{header}")
            }
            (Err(e), None) => {
                assert_eq!(e.code, 406, "{header}");
                assert!(e.message.starts_with("only the following media types"));
            }
            (found, expected) => panic!("{header}: {found:?}, expected {expected:?}"),
        }
    }

    /// As Go's `Header.Get`, a resource's negotiation reads the first `Accept` header only.
    #[test]
    fn only_the_first_accept_header_counts() {
        let mut headers = HeaderMap::new();
        headers.append(header::ACCEPT, HeaderValue::from_static("text/plain"));
        headers.append(header::ACCEPT, HeaderValue::from_static("application/json"));
        assert_eq!(for_resource(&headers, false).map(|n| n.output).ok(), None);
    }

    #[test]
    fn yaml_is_the_same_object_with_sorted_keys() {
        let json = br#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"},"data":{"b":"true","a":"x: y"}}"#;
        let yaml = to_yaml(json).unwrap();
        assert!(yaml.starts_with("apiVersion: v1\ndata:\n"), "{yaml}");
        let back: serde_json::Value = serde_yaml::from_str(&yaml).unwrap();
        assert_eq!(back, crate::store::json::from_slice(json).unwrap());
        assert_eq!(to_yaml(b"not json"), None);
    }
}
