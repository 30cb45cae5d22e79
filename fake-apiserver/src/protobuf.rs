//! Request bodies in Kubernetes protobuf (`application/vnd.kubernetes.protobuf`), decoded to the
//! JSON a client would have sent for the same object.
//!
//! kubectl's imperative generators (`kubectl create configmap|secret|namespace|deployment|…`) send
//! typed objects this way. The body is the magic prefix `k8s\x00` followed by a
//! `runtime.Unknown` envelope (`typeMeta=1 {apiVersion=1, kind=2}`, `raw=2`,
//! `contentEncoding=3`, `contentType=4`) whose `raw` bytes are the object's own message. That
//! message is decoded through the static tables in `messages` (field number → JSON name and
//! type) into JSON with `apiVersion` and `kind` set, JSON field names, `bytes` as base64,
//! `metav1.Time` as RFC 3339 and zero-valued Go value fields omitted.
//!
//! Only request bodies are decoded; the server always answers in JSON, which kubectl accepts.

mod json;
mod messages;
mod schema;
#[cfg(test)]
mod test_encoder;
mod wire;

use serde_json::{Map, Value};

pub use wire::WireError;

/// The media type of Kubernetes protobuf bodies.
pub const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// The four bytes every Kubernetes protobuf body starts with.
pub const MAGIC: &[u8; 4] = b"k8s\x00";

/// Why a protobuf body could not be decoded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProtobufError {
    /// The body does not start with `k8s\x00`.
    #[error("the body is not a Kubernetes protobuf object: it does not start with the prefix \"k8s\\x00\"")]
    MissingMagic,
    /// The bytes of a message are not valid protobuf.
    #[error("malformed protobuf in {context}: {source}")]
    Wire {
        /// The message being read.
        context: &'static str,
        /// What is wrong.
        #[source]
        source: WireError,
    },
    /// A known field arrived with a wire type its declared type cannot have.
    #[error("malformed protobuf: field {message}.{field} (number {number}) arrived as {found}")]
    WrongWireType {
        /// The message holding the field.
        message: &'static str,
        /// The field's JSON name.
        field: &'static str,
        /// The field number.
        number: u32,
        /// The wire type found.
        found: &'static str,
    },
    /// A `metav1.Time` outside the years 1 to 9999.
    #[error("malformed protobuf: {message}.{field} holds the time {seconds}s since the epoch, out of range")]
    TimestampOutOfRange {
        /// The message holding the field.
        message: &'static str,
        /// The field's JSON name.
        field: &'static str,
        /// The seconds on the wire.
        seconds: i64,
    },
    /// `managedFields[].fieldsV1` holds bytes that are not JSON.
    #[error("malformed protobuf: managedFields fieldsV1 is not JSON: {detail}")]
    InvalidFieldsV1 {
        /// The JSON parser's complaint.
        detail: String,
    },
    /// The envelope names no apiVersion or no kind.
    #[error("Object 'Kind' is missing in the protobuf envelope (apiVersion {api_version:?}, kind {kind:?})")]
    MissingKind {
        /// The envelope's apiVersion.
        api_version: String,
        /// The envelope's kind.
        kind: String,
    },
    /// The envelope names a kind this decoder has no table for.
    #[error("no kind {kind:?} is registered for version {api_version:?} in this server's protobuf decoder; send it as application/json")]
    UnsupportedKind {
        /// The envelope's apiVersion.
        api_version: String,
        /// The envelope's kind.
        kind: String,
    },
    /// The envelope says its raw bytes are compressed or encoded (e.g. gzip).
    #[error("protobuf content encoding {0:?} is not supported")]
    UnsupportedContentEncoding(String),
    /// The envelope says its raw bytes are in another serialization than protobuf.
    #[error("a protobuf envelope holding {0:?} is not supported")]
    UnsupportedContentType(String),
}

impl ProtobufError {
    /// The HTTP status a server answers with: 415 for a body it cannot interpret although it may
    /// be valid, 400 for a malformed body.
    pub fn code(&self) -> u16 {
        match self {
            ProtobufError::UnsupportedKind { .. }
            | ProtobufError::UnsupportedContentEncoding(_)
            | ProtobufError::UnsupportedContentType(_) => 415,
            _ => 400,
        }
    }

    /// The `metav1.StatusReason` that goes with [`Self::code`].
    pub fn reason(&self) -> &'static str {
        if self.code() == 415 {
            "UnsupportedMediaType"
        } else {
            "BadRequest"
        }
    }
}

/// Decodes a Kubernetes protobuf request body into the JSON object a client would have sent.
pub fn decode(body: &[u8]) -> Result<Value, ProtobufError> {
    let rest = body
        .strip_prefix(MAGIC.as_slice())
        .ok_or(ProtobufError::MissingMagic)?;
    let envelope = Envelope::parse(rest)?;
    if envelope.api_version.is_empty() || envelope.kind.is_empty() {
        return Err(ProtobufError::MissingKind {
            api_version: envelope.api_version,
            kind: envelope.kind,
        });
    }
    if !envelope.content_encoding.is_empty() {
        return Err(ProtobufError::UnsupportedContentEncoding(
            envelope.content_encoding,
        ));
    }
    if !envelope.content_type.is_empty() && envelope.content_type != MEDIA_TYPE {
        return Err(ProtobufError::UnsupportedContentType(envelope.content_type));
    }
    let message = messages::top_level(&envelope.api_version, &envelope.kind).ok_or_else(|| {
        ProtobufError::UnsupportedKind {
            api_version: envelope.api_version.clone(),
            kind: envelope.kind.clone(),
        }
    })?;
    let mut object = Map::new();
    object.insert("apiVersion".into(), Value::String(envelope.api_version));
    object.insert("kind".into(), Value::String(envelope.kind));
    json::decode_into(message, envelope.raw, &mut object)?;
    tracing::debug!(message = message.name, "decoded a protobuf request body");
    Ok(Value::Object(object))
}

/// The `runtime.Unknown` envelope.
#[derive(Debug, Default)]
struct Envelope<'a> {
    api_version: String,
    kind: String,
    raw: &'a [u8],
    content_encoding: String,
    content_type: String,
}

const UNKNOWN: &str = "k8s.io.apimachinery.pkg.runtime.Unknown";
const TYPE_META: &str = "k8s.io.apimachinery.pkg.runtime.TypeMeta";

impl<'a> Envelope<'a> {
    fn parse(bytes: &'a [u8]) -> Result<Self, ProtobufError> {
        let mut envelope = Envelope::default();
        let mut reader = wire::Reader::new(bytes);
        while let Some((number, value)) = next(&mut reader, UNKNOWN)? {
            match number {
                1 => {
                    let mut type_meta = wire::Reader::new(len(UNKNOWN, "typeMeta", 1, value)?);
                    while let Some((number, value)) = next(&mut type_meta, TYPE_META)? {
                        match number {
                            1 => envelope.api_version = text(TYPE_META, "apiVersion", 1, value)?,
                            2 => envelope.kind = text(TYPE_META, "kind", 2, value)?,
                            _ => {}
                        }
                    }
                }
                2 => envelope.raw = len(UNKNOWN, "raw", 2, value)?,
                3 => envelope.content_encoding = text(UNKNOWN, "contentEncoding", 3, value)?,
                4 => envelope.content_type = text(UNKNOWN, "contentType", 4, value)?,
                _ => {}
            }
        }
        Ok(envelope)
    }
}

fn next<'a>(
    reader: &mut wire::Reader<'a>,
    context: &'static str,
) -> Result<Option<(u32, wire::WireValue<'a>)>, ProtobufError> {
    reader
        .next_field()
        .map_err(|source| ProtobufError::Wire { context, source })
}

fn len<'a>(
    message: &'static str,
    field: &'static str,
    number: u32,
    value: wire::WireValue<'a>,
) -> Result<&'a [u8], ProtobufError> {
    match value {
        wire::WireValue::Len(bytes) => Ok(bytes),
        other => Err(ProtobufError::WrongWireType {
            message,
            field,
            number,
            found: other.wire_name(),
        }),
    }
}

fn text(
    message: &'static str,
    field: &'static str,
    number: u32,
    value: wire::WireValue<'_>,
) -> Result<String, ProtobufError> {
    len(message, field, number, value).map(|b| String::from_utf8_lossy(b).into_owned())
}

#[cfg(test)]
mod tests;
