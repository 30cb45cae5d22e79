//! Serves the OpenAPI documents (built by [`crate::openapi`]) at `/openapi/v2` and `/openapi/v3`.

use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::server::{value_response, FakeApiServer};

/// Answers an OpenAPI request.
pub(crate) fn serve(server: &FakeApiServer, path: &str, headers: &HeaderMap) -> Response {
    let resources = server.resources();
    if path == "/openapi/v2" {
        let accept = headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        if !crate::openapi::v2_accepts_json(accept) {
            return ApiError::new(406, "NotAcceptable", "only application/json is served")
                .into_response();
        }
        return value_response(StatusCode::OK, &crate::openapi::v2_document(&resources));
    }
    let rest = path.trim_start_matches("/openapi/v3").trim_matches('/');
    if rest.is_empty() {
        return value_response(StatusCode::OK, &crate::openapi::v3_index(&resources));
    }
    match crate::openapi::v3_document(&resources, rest) {
        Some(doc) => value_response(StatusCode::OK, &doc),
        None => ApiError::no_such_resource().into_response(),
    }
}
