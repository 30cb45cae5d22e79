//! The answers about custom resources whose CRD converts through a webhook, converted once the
//! request has run: an object or a list's items not at the version the request names go to the
//! webhook in one review (see [`crate::conversion_webhook`]), between the stored version's
//! defaults and the served version's pruning. A failed conversion replaces the answer with the
//! `500` the real server sends (a write that succeeded stays written, as it does there).

use axum::body::Body;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::error::ApiError;
use crate::registry::conversion;
use crate::resource::{ConversionWebhook, ResourceInfo};
use crate::FakeApiServer;

/// Largest answer read back for conversion (a list of every object of a big CRD).
const MAX_ANSWER_BYTES: usize = 1 << 30;

/// `response` with the objects it carries converted to the version `info` serves.
pub(crate) async fn answer(
    server: &FakeApiServer,
    info: &ResourceInfo,
    webhook: &ConversionWebhook,
    response: Response,
) -> Response {
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !is_json || !response.status().is_success() {
        return response;
    }
    let (parts, body) = response.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_ANSWER_BYTES).await {
        Ok(b) => b,
        Err(e) => return ApiError::internal(e.to_string()).into_response(),
    };
    let Ok(mut value) = serde_json::from_slice::<Value>(&bytes) else {
        return Response::from_parts(parts, Body::from(bytes));
    };
    let converted = if value["kind"] == info.list_kind().as_str() {
        match value.get_mut("items").and_then(Value::as_array_mut) {
            Some(items) => objects(server, info, webhook, items).await,
            None => Ok(false),
        }
    } else if value["kind"] == info.kind.as_str() {
        objects(server, info, webhook, std::slice::from_mut(&mut value)).await
    } else {
        Ok(false)
    };
    match converted {
        Ok(false) => Response::from_parts(parts, Body::from(bytes)),
        Ok(true) => {
            let mut response = Response::from_parts(
                parts,
                Body::from(serde_json::to_vec(&value).unwrap_or_default()),
            );
            response.headers_mut().remove(header::CONTENT_LENGTH);
            response
        }
        Err(e) => e.into_response(),
    }
}

/// Converts the objects not at `info`'s version, in place; whether any was.
async fn objects(
    server: &FakeApiServer,
    info: &ResourceInfo,
    webhook: &ConversionWebhook,
    objects: &mut [Value],
) -> Result<bool, ApiError> {
    let target = info.api_version();
    let stale: Vec<usize> = (0..objects.len())
        .filter(|&i| objects[i]["apiVersion"].as_str() != Some(target.as_str()))
        .collect();
    if stale.is_empty() {
        return Ok(false);
    }
    let mut sent: Vec<Value> = stale.iter().map(|&i| objects[i].clone()).collect();
    for object in &mut sent {
        conversion::before_conversion(info, object);
    }
    let converted = crate::conversion_webhook::convert_now(server, webhook, &sent, &target).await?;
    for (&i, mut object) in stale.iter().zip(converted) {
        conversion::after_conversion(info, &mut object);
        objects[i] = object;
    }
    Ok(true)
}

/// A watch event line (`{"type":..,"object":..}\n`) with its object converted; an ERROR line
/// when the conversion fails (the watch then ends, as a real server's does).
pub(crate) async fn event_line(
    server: &FakeApiServer,
    info: &ResourceInfo,
    webhook: &ConversionWebhook,
    line: bytes::Bytes,
) -> Result<bytes::Bytes, bytes::Bytes> {
    let Ok(mut event) = serde_json::from_slice::<Value>(&line) else {
        return Ok(line);
    };
    if event["object"]["kind"] != info.kind.as_str() {
        return Ok(line);
    }
    match objects(
        server,
        info,
        webhook,
        std::slice::from_mut(&mut event["object"]),
    )
    .await
    {
        Ok(false) => Ok(line),
        Ok(true) => {
            let mut out = serde_json::to_vec(&event).unwrap_or_default();
            out.push(b'\n');
            Ok(out.into())
        }
        Err(e) => {
            let error = serde_json::json!({"type": "ERROR", "object": e.to_status()});
            let mut out = serde_json::to_vec(&error).unwrap_or_default();
            out.push(b'\n');
            Err(out.into())
        }
    }
}
