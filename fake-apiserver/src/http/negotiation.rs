//! The output media type of an API answer, as the real handlers negotiate it from `Accept`
//! before they act (`negotiation.NegotiateOutputMediaType`): the clauses by preference (`q`,
//! then specificity, then order; `q=0` refuses), the first the server can write wins. The
//! codecs are JSON, YAML and protobuf, in that order, so `*/*` and `application/*` are JSON;
//! when no clause names one of them the request is refused with `406 NotAcceptable` ("only the
//! following media types are accepted: ...") and nothing is done.
//!
//! A YAML answer is the JSON answer converted as `sigs.k8s.io/yaml` converts it
//! ([`crate::http::yaml`]). Protobuf is accepted but
//! answered as JSON: this server decodes protobuf requests and writes no protobuf; clients that
//! ask for it (client-go, kubectl) also accept JSON.

use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::Response;

use crate::error::ApiError;

/// What the answer is written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// `application/json` (also for protobuf, see the module documentation).
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

/// Negotiates the answer's media type from the request's `Accept` (none or empty: JSON).
pub fn output(headers: &HeaderMap) -> Result<Output, ApiError> {
    let values = headers.get_all(header::ACCEPT);
    let clauses_sent = values
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','));
    let mut clauses: Vec<(f32, u8, usize, &str)> = Vec::new();
    let mut any = false;
    for (order, clause) in clauses_sent.enumerate() {
        any |= !clause.trim().is_empty();
        let mut parts = clause.split(';').map(str::trim);
        let range = parts.next().unwrap_or_default();
        if range.is_empty() {
            continue;
        }
        let mut q = 1.0f32;
        for param in parts {
            if let Some((key, value)) = param.split_once('=') {
                if key.trim() == "q" {
                    q = value.trim().parse().unwrap_or(0.0);
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
        clauses.push((q, specificity, order, range));
    }
    if !any {
        return Ok(Output::Json);
    }
    // By preference; a stable sort keeps the client's order among equals.
    clauses.sort_by(|a, b| {
        b.0.partial_cmp(&a.0)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(b.1.cmp(&a.1))
    });
    for (_, _, _, range) in clauses {
        let range = range.to_ascii_lowercase();
        let offered = OFFERED.iter().find(|offer| {
            range == "*/*"
                || range == **offer
                || range
                    .strip_suffix("/*")
                    .is_some_and(|kind| offer.split('/').next() == Some(kind))
        });
        match offered {
            Some(&"application/yaml") => return Ok(Output::Yaml),
            Some(_) => return Ok(Output::Json),
            None => {}
        }
    }
    Err(not_acceptable())
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
