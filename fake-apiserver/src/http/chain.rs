//! The filters in front of every handler, as the real server's handler chain has them, in one
//! middleware: the request deadline's `timeout` check ([`invalid_timeout`]), authentication and
//! authorization ([`crate::auth::filter`]), indented JSON for
//! people ([`crate::http::pretty`]), and the headers every answer carries, whatever answers
//! it: `Audit-Id` (`WithAuditInit`: the request's own `Audit-ID`, echoed as sent, else a new
//! id) and `Cache-Control: no-cache, private` (`WithCacheControl`, unless the handler set one).
//!
//! A new audit id is a UUID numbering the server's requests (`...-000000000001` for the first),
//! not a random one, so that a seeded run answers the same bytes every time.

use std::sync::atomic::Ordering;

use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;

use crate::context::FakeApiServer;
use crate::error::ApiError;
use crate::http::request::Query;

/// The header carrying a request's audit id, both ways.
pub const AUDIT_ID: HeaderName = HeaderName::from_static("audit-id");

/// The middleware (one, so that a request pays for one hop).
pub async fn layer(State(server): State<FakeApiServer>, request: Request, next: Next) -> Response {
    if crate::http::request::decode_path(request.uri().path()).is_none() {
        // Go's server refuses it while reading the request: no handler, no audit id.
        return crate::http::request::malformed_request();
    }
    let audit_id = match request.headers().get(&AUDIT_ID).filter(|v| !v.is_empty()) {
        Some(sent) => sent.clone(),
        None => {
            let n = server.shared.audit_ids.fetch_add(1, Ordering::Relaxed) + 1;
            HeaderValue::from_bytes(&numbered_uuid(n)).unwrap_or(HeaderValue::from_static(""))
        }
    };
    let indent = crate::http::pretty::indents(&request);
    let mut response = match invalid_timeout(&request) {
        Some(refusal) => axum::response::IntoResponse::into_response(refusal),
        None => crate::auth::filter(State(server), request, next).await,
    };
    if indent {
        response = crate::http::pretty::indent(response).await;
    }
    let headers = response.headers_mut();
    headers.insert(AUDIT_ID, audit_id);
    headers
        .entry(axum::http::header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-cache, private"));
    response
}

/// The refusal of `WithRequestDeadline`, which runs before authentication: a request that is
/// not long-running whose `timeout` query parameter Go's `time.ParseDuration` cannot read is a
/// `400` (`invalid timeout specified in the request URL - time: invalid duration "abc"`). A
/// readable one sets the request's deadline (up to the server's maximum), which nothing here
/// runs long enough to reach.
fn invalid_timeout(request: &Request) -> Option<ApiError> {
    let raw = request.uri().query()?;
    if !raw.contains("timeout") {
        return None;
    }
    let query = Query::parse(Some(raw));
    let value = query.get("timeout").filter(|v| !v.is_empty())?;
    let error = crate::rules::go_duration::parse_duration(value).err()?;
    if long_running(request, &query) {
        return None;
    }
    Some(ApiError::bad_request(format!(
        "invalid timeout specified in the request URL - {error}"
    )))
}

/// The real server's `BasicLongRunningRequestCheck` of the request's info (as
/// [`crate::auth::Attributes::from_request`] resolves it): the `watch` and `proxy` verbs, the
/// `attach`, `exec`, `log`, `portforward` and `proxy` subresources, and `/debug/pprof/`.
fn long_running(request: &Request, query: &Query) -> bool {
    let Some(path) = crate::http::request::decode_path(request.uri().path()) else {
        return false;
    };
    let info =
        crate::auth::Attributes::from_request(&Default::default(), request.method(), &path, query);
    if !info.resource_request {
        return path.starts_with("/debug/pprof/");
    }
    matches!(info.verb.as_str(), "watch" | "proxy")
        || matches!(
            info.subresource.as_str(),
            "attach" | "exec" | "log" | "portforward" | "proxy"
        )
}

/// The `n`th audit id: a version-4-shaped UUID whose last group is `n` (its low 48 bits, in
/// lower-case hex). Written digit by digit: every request makes one, and `format!` took ~0.8k
/// instructions for it, 3% of a GET's.
fn numbered_uuid(n: u64) -> [u8; 36] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut id = *b"00000000-0000-4000-8000-000000000000";
    let (_, last) = id.split_at_mut(24);
    for (i, digit) in last.iter_mut().enumerate() {
        *digit = HEX[((n >> (4 * (11 - i))) & 0xf) as usize];
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    /// Which requests the deadline filter refuses for an unreadable `timeout`.
    #[rstest]
    #[case::list("GET", "/api/v1/namespaces/default/configmaps?timeout=abc", true)]
    #[case::get("GET", "/api/v1/namespaces/default/configmaps/a?timeout=1d", true)]
    #[case::create("POST", "/api/v1/namespaces/default/configmaps?timeout=x", true)]
    #[case::non_resource("GET", "/version?timeout=abc", true)]
    #[case::readable("GET", "/api/v1/namespaces?timeout=5s", false)]
    #[case::empty("GET", "/api/v1/namespaces?timeout=", false)]
    #[case::other_parameter("GET", "/api/v1/namespaces?timeoutSeconds=abc", false)]
    #[case::watch("GET", "/api/v1/namespaces?watch=true&timeout=abc", false)]
    #[case::not_watch("GET", "/api/v1/namespaces?watch=false&timeout=abc", true)]
    #[case::legacy_watch("GET", "/api/v1/watch/namespaces?timeout=abc", false)]
    #[case::group_legacy_watch("GET", "/apis/apps/v1/watch/deployments?timeout=abc", false)]
    #[case::log("GET", "/api/v1/namespaces/d/pods/p/log?timeout=abc", false)]
    #[case::exec("POST", "/api/v1/namespaces/d/pods/p/exec?timeout=abc", false)]
    #[case::proxy("GET", "/api/v1/namespaces/d/pods/p/proxy/x?timeout=abc", false)]
    #[case::status("GET", "/api/v1/namespaces/d/pods/p/status?timeout=abc", true)]
    #[case::pprof("GET", "/debug/pprof/heap?timeout=abc", false)]
    fn unreadable_timeouts_are_refused_unless_long_running(
        #[case] method: &str,
        #[case] uri: &str,
        #[case] refused: bool,
    ) {
        let request = Request::builder()
            .method(method)
            .uri(uri)
            .body(axum::body::Body::empty())
            .expect("a valid request");
        let refusal = invalid_timeout(&request);
        assert_eq!(refusal.is_some(), refused, "{method} {uri}");
        if let Some(e) = refusal {
            assert_eq!(e.code, 400);
            assert_eq!(e.reason, "BadRequest");
            assert!(
                e.message
                    .starts_with("invalid timeout specified in the request URL - time: "),
                "{}",
                e.message
            );
        }
    }

    #[test]
    fn numbered_ids_are_uuids() {
        let id = numbered_uuid(26);
        assert_eq!(&id, b"00000000-0000-4000-8000-00000000001a");
        for n in [0, 1, 26, 0xabc_def0_1234, (1 << 48) - 1, 1 << 48, u64::MAX] {
            let id = std::str::from_utf8(&numbered_uuid(n)).unwrap().to_string();
            let expected = format!("00000000-0000-4000-8000-{:012x}", n & 0xffff_ffff_ffff);
            assert_eq!(id, expected);
            assert!(uuid::Uuid::parse_str(&id).is_ok());
        }
    }
}
