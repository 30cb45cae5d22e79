//! The filters in front of every handler, as the real server's handler chain has them, in one
//! middleware: authentication and authorization ([`crate::auth::filter`]), indented JSON for
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
    let mut response = crate::auth::filter(State(server), request, next).await;
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
