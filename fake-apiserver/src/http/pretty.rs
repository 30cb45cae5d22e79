//! Indented JSON for people (applied by [`crate::http::chain`]): a real server answers with indented JSON when the request asks
//! `?pretty=true` or its media type says `pretty=1`, or, without a `pretty` parameter, when its `User-Agent` is a browser's or a
//! command-line HTTP tool's (`curl`, `Wget`, `Mozilla/5.0`): the negotiation's `isPrettyPrint`,
//! which picks the JSON serializer's pretty form (`json.MarshalIndent` with two spaces). Watch
//! streams (their serializer has no pretty form) and the OpenAPI documents (not negotiated) are
//! never indented; clients such as kubectl, client-go and kube-rs get compact JSON.

use axum::body::Body;
use axum::extract::Request;
use axum::http::header;
use axum::response::Response;
use http_body_util::BodyExt;

use crate::http::request::Query;

/// Whether the request asks for indented answers: its `Accept` clause's `pretty=1`, else Go's
/// `isPrettyPrint`.
pub fn wanted(request: &Request) -> bool {
    if crate::http::negotiation::asks_pretty(request.headers()) {
        return true;
    }
    let raw_query = request.uri().query().unwrap_or_default();
    if raw_query.contains("pretty") {
        let query = Query::parse(Some(raw_query));
        if let Some(value) = query.get("pretty").filter(|v| !v.is_empty()) {
            return parse_bool(value);
        }
    }
    let user_agent = request
        .headers()
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    ["curl", "Wget", "Mozilla/5.0"]
        .iter()
        .any(|prefix| user_agent.starts_with(prefix))
}

/// Go's `strconv.ParseBool`, an unparsable value being false.
fn parse_bool(value: &str) -> bool {
    matches!(value, "1" | "t" | "T" | "TRUE" | "true" | "True")
}

/// Whether the request is a watch (whose stream is never indented).
fn is_watch(request: &Request) -> bool {
    let query = Query::parse(request.uri().query());
    query.flag("watch") || request.uri().path().split('/').any(|s| s == "watch")
}

/// Whether the answer to `request` is to be indented: asked for ([`wanted`]), and not a watch
/// or an OpenAPI document (served as stored by its own handler, outside the negotiation).
pub fn indents(request: &Request) -> bool {
    wanted(request) && !is_watch(request) && !request.uri().path().starts_with("/openapi/")
}

/// Indents a JSON answer (any other answer is returned as it is).
pub async fn indent(response: Response) -> Response {
    let json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/json"));
    if !json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let bytes = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => {
            tracing::debug!(error = %e, "answer body failed before it could be indented");
            return Response::from_parts(parts, Body::empty());
        }
    };
    let indented = indent_json(&bytes);
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(indented))
}

/// Go's `json.Indent(dst, src, "", "  ")` of compact or spaced JSON: a line per member and
/// element, two spaces per level, `": "` after a key, empty objects and arrays kept as `{}` and
/// `[]`, whitespace between tokens dropped.
pub fn indent_json(src: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(src.len() + src.len() / 2);
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut i = 0;
    let newline = |out: &mut Vec<u8>, depth: usize| {
        out.push(b'\n');
        out.extend(std::iter::repeat_n(b' ', 2 * depth));
    };
    while i < src.len() {
        let c = src[i];
        i += 1;
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == b'\\' {
                escaped = true;
            } else if c == b'"' {
                in_string = false;
            }
            continue;
        }
        match c {
            b' ' | b'\t' | b'\n' | b'\r' => {}
            b'"' => {
                in_string = true;
                out.push(c);
            }
            b'{' | b'[' => {
                out.push(c);
                let close = if c == b'{' { b'}' } else { b']' };
                let next = src[i..]
                    .iter()
                    .position(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
                match next {
                    Some(n) if src[i + n] == close => {
                        out.push(close);
                        i += n + 1;
                    }
                    _ => {
                        depth += 1;
                        newline(&mut out, depth);
                    }
                }
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            b',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            b':' => {
                out.extend_from_slice(b": ");
            }
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case::object(
        r#"{"a":1,"b":[1,2],"c":{},"d":[]}"#,
        "{\n  \"a\": 1,\n  \"b\": [\n    1,\n    2\n  ],\n  \"c\": {},\n  \"d\": []\n}"
    )]
    #[case::strings_keep_their_bytes(
        r#"{"k:{\"a\":\"b, c\"}":"x: [y]"}"#,
        "{\n  \"k:{\\\"a\\\":\\\"b, c\\\"}\": \"x: [y]\"\n}"
    )]
    #[case::escaped_backslash_before_quote(
        r#"["a\\",{"b":"\\\""}]"#,
        "[\n  \"a\\\\\",\n  {\n    \"b\": \"\\\\\\\"\"\n  }\n]"
    )]
    #[case::spaced(" { \"a\" : [ ] , \"b\" : { } } ", "{\n  \"a\": [],\n  \"b\": {}\n}")]
    #[case::scalar("true", "true")]
    fn json_is_indented_as_go_indents_it(#[case] src: &str, #[case] expected: &str) {
        let indented = indent_json(src.as_bytes());
        assert_eq!(String::from_utf8(indented.clone()).unwrap(), expected);
        // Indenting is idempotent, and the value is unchanged.
        assert_eq!(indent_json(&indented), indented);
        let before: serde_json::Value = serde_json::from_str(src).unwrap();
        let after: serde_json::Value = serde_json::from_slice(&indented).unwrap();
        assert_eq!(before, after);
    }

    #[rstest]
    #[case::true_("1", true)]
    #[case::title("True", true)]
    #[case::t("t", true)]
    #[case::false_("false", false)]
    #[case::garbage("yes", false)]
    fn pretty_parses_as_go_parses_a_bool(#[case] value: &str, #[case] expected: bool) {
        assert_eq!(parse_bool(value), expected);
    }
}
