//! The answers about custom resources whose CRD converts through a webhook, converted once the
//! request has run: an object or a list's items not at the version the request names go to the
//! webhook in one review (see [`crate::conversion_webhook`]), between the stored version's
//! defaults and the served version's pruning. A failed conversion replaces the answer with the
//! `500` the real server sends (a write that succeeded stays written, as it does there).

use axum::response::Response;
use serde_json::Value;

use crate::error::ApiError;
use crate::registry::conversion;
use crate::resource::{ConversionWebhook, ResourceInfo};
use crate::FakeApiServer;

/// `response` with the objects it carries converted to the version `info` serves.
pub(crate) async fn answer(
    server: &FakeApiServer,
    info: &ResourceInfo,
    webhook: &ConversionWebhook,
    response: Response,
) -> Response {
    crate::http::server::rewrite_json_answer(response, async |bytes| {
        let Ok(mut value) = crate::store::json::from_slice(bytes) else {
            return Ok(None);
        };
        let converted = if value["kind"] == info.list_kind().as_str() {
            match value.get_mut("items").and_then(Value::as_array_mut) {
                Some(items) => objects(server, info, webhook, items).await?,
                None => false,
            }
        } else if value["kind"] == info.kind.as_str() {
            objects(server, info, webhook, std::slice::from_mut(&mut value)).await?
        } else {
            false
        };
        Ok(converted.then(|| serde_json::to_vec(&value).unwrap_or_default()))
    })
    .await
}

/// Converts the objects not at `info`'s version, in place; whether any was.
async fn objects(
    server: &FakeApiServer,
    info: &ResourceInfo,
    webhook: &ConversionWebhook,
    objects: &mut [Value],
) -> Result<bool, ApiError> {
    let (stale, sent) = conversion::stale_for_conversion(info, objects);
    if stale.is_empty() {
        return Ok(false);
    }
    let converted =
        crate::conversion_webhook::convert_now(server, webhook, &sent, &info.api_version()).await?;
    conversion::put_converted(info, objects, &stale, converted);
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
    let Ok(mut event) = crate::store::json::from_slice(&line) else {
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
