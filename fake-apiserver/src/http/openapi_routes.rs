//! Serves the OpenAPI documents (built by [`crate::openapi`]) at `/openapi/v2` and `/openapi/v3`.

use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::context::FakeApiServer;
use crate::error::ApiError;
use crate::http::server::value_response;

/// Answers an OpenAPI request.
pub(crate) fn serve(server: &FakeApiServer, path: &str, headers: &HeaderMap) -> Response {
    let resources = server.discoverable_resources();
    if path == "/openapi/v2" {
        let accept = headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        // client-go (kubectl) asks for the gnostic protobuf form only.
        return match crate::openapi::v2_encoding(accept) {
            Some(crate::openapi::V2Encoding::Json) => {
                value_response(StatusCode::OK, &crate::openapi::v2_document(&resources))
            }
            Some(crate::openapi::V2Encoding::Protobuf) => (
                StatusCode::OK,
                [(
                    header::CONTENT_TYPE,
                    crate::openapi::V2_PROTOBUF_CONTENT_TYPE,
                )],
                crate::openapi::v2_protobuf(&resources),
            )
                .into_response(),
            None => ApiError::new(
                406,
                "NotAcceptable",
                "only application/json and application/com.github.proto-openapi.spec.v2.v1.0+protobuf are served",
            )
            .into_response(),
        };
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
