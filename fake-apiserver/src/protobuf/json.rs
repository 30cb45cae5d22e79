//! Decoding one protobuf message into a JSON object, driven by its [`Message`] table.
//!
//! Fields the table does not name are skipped (and logged at debug level); a named field with
//! the wrong wire type, a truncated buffer or a timestamp outside the years 1-9999 is an error.
//! A message field seen twice merges, and a scalar seen twice keeps the last value, as protobuf
//! readers do.

use base64::Engine;
use serde_json::{Map, Number, Value};

use super::schema::{Field, Label, Message, Scalar, Type};
use super::wire::{Reader, WireValue};
use super::{next, ProtobufError};

/// `time.Time{}.Unix()`: the seconds Go writes for the zero time when it writes them at all.
const GO_ZERO_TIME_SECONDS: i64 = -62_135_596_800;

/// 9999-12-31T23:59:59Z, the last second a protobuf timestamp may hold.
const LAST_SECOND_OF_9999: i64 = 253_402_300_799;

/// Decodes the fields of `message` in `bytes` into `out`.
pub fn decode_into(
    message: &'static Message,
    bytes: &[u8],
    out: &mut Map<String, Value>,
) -> Result<(), ProtobufError> {
    let mut reader = Reader::new(bytes);
    while let Some((number, wire)) = next(&mut reader, message.name)? {
        let Some(field) = message.field(number) else {
            tracing::debug!(
                message = message.name,
                field = number,
                "skipping a protobuf field this decoder does not know"
            );
            continue;
        };
        decode_field(message, field, wire, out)?;
    }
    Ok(())
}

fn decode_field(
    message: &'static Message,
    field: &'static Field,
    wire: WireValue<'_>,
    out: &mut Map<String, Value>,
) -> Result<(), ProtobufError> {
    match (field.label, field.ty) {
        (_, Type::Inline(inner)) => {
            let bytes = expect_len(message, field, wire)?;
            decode_into(inner, bytes, out)
        }
        (Label::Value | Label::Always | Label::Optional, Type::Message(inner)) => {
            let bytes = expect_len(message, field, wire)?;
            match slot(out, field.json, empty_object) {
                Value::Object(object) => decode_into(inner, bytes, object),
                _ => Ok(()),
            }
        }
        (Label::Value | Label::Always | Label::Optional, ty) => {
            match single(message, field, ty, wire)? {
                Some(v) if field.label != Label::Value || !is_zero(&v) => {
                    out.insert(field.json.to_string(), v);
                }
                // A zero value field, or a zero time: absent, as in Go's JSON.
                _ => {
                    out.remove(field.json);
                }
            }
            Ok(())
        }
        (Label::Repeated, ty) => {
            let items = repeated_items(message, field, ty, wire)?;
            if let Value::Array(array) = slot(out, field.json, || Value::Array(Vec::new())) {
                array.extend(items);
            }
            Ok(())
        }
        (Label::Map, ty) => {
            let bytes = expect_len(message, field, wire)?;
            let (key, v) = map_entry(message, field, ty, bytes)?;
            if let Value::Object(object) = slot(out, field.json, empty_object) {
                object.insert(key, v);
            }
            Ok(())
        }
    }
}

/// The value under `key` in `out`, set to `empty()` if absent or of another JSON kind (a field
/// seen again merges into what is there).
fn slot<'m>(out: &'m mut Map<String, Value>, key: &str, empty: fn() -> Value) -> &'m mut Value {
    let slot = out.entry(key).or_insert_with(empty);
    if std::mem::discriminant(slot) != std::mem::discriminant(&empty()) {
        *slot = empty();
    }
    slot
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

/// The elements one wire occurrence of a repeated field contributes: one value, or several for
/// a packed run of varints.
fn repeated_items(
    message: &'static Message,
    field: &'static Field,
    ty: Type,
    wire: WireValue<'_>,
) -> Result<Vec<Value>, ProtobufError> {
    let packable = matches!(
        ty,
        Type::Scalar(Scalar::Bool | Scalar::Int32 | Scalar::Int64)
    );
    match wire {
        WireValue::Len(bytes) if packable => {
            let mut reader = Reader::new(bytes);
            let mut items = Vec::new();
            while !reader.is_empty() {
                let raw = reader.varint().map_err(|source| ProtobufError::Wire {
                    context: message.name,
                    source,
                })?;
                items.extend(single(message, field, ty, WireValue::Varint(raw))?);
            }
            Ok(items)
        }
        _ => {
            let item = match ty {
                // A zero time inside a list stays in the list, as Go's `null`.
                Type::Time => Some(single(message, field, ty, wire)?.unwrap_or(Value::Null)),
                _ => single(message, field, ty, wire)?,
            };
            Ok(item.into_iter().collect())
        }
    }
}

/// One map entry `{key=1, value=2}`; a missing key or value is its type's zero value.
fn map_entry(
    message: &'static Message,
    field: &'static Field,
    ty: Type,
    bytes: &[u8],
) -> Result<(String, Value), ProtobufError> {
    let mut key = String::new();
    let mut v = None;
    let mut reader = Reader::new(bytes);
    while let Some((number, wire)) = next(&mut reader, message.name)? {
        match number {
            1 => key = lossy_string(expect_len(message, field, wire)?),
            2 => v = single(message, field, ty, wire)?,
            _ => {}
        }
    }
    let v = v.unwrap_or_else(|| zero_value(ty));
    Ok((key, v))
}

/// A single value of type `ty`; `None` for a zero time (which Go renders as `null`).
fn single(
    message: &'static Message,
    field: &'static Field,
    ty: Type,
    wire: WireValue<'_>,
) -> Result<Option<Value>, ProtobufError> {
    let v = match ty {
        Type::Scalar(Scalar::String) => {
            Value::String(lossy_string(expect_len(message, field, wire)?))
        }
        Type::Scalar(Scalar::Bytes) => {
            let bytes = expect_len(message, field, wire)?;
            Value::String(base64::engine::general_purpose::STANDARD.encode(bytes))
        }
        Type::Scalar(Scalar::Bool) => Value::Bool(expect_varint(message, field, wire)? != 0),
        // Go truncates to 32 bits; negative int32 values arrive sign-extended to 64.
        Type::Scalar(Scalar::Int32) => {
            Value::from(expect_varint(message, field, wire)? as i64 as i32)
        }
        Type::Scalar(Scalar::Int64) => Value::from(expect_varint(message, field, wire)? as i64),
        Type::Time => return time(message, field, expect_len(message, field, wire)?),
        Type::IntOrString => int_or_string(message, field, expect_len(message, field, wire)?)?,
        Type::Quantity => quantity(message, field, expect_len(message, field, wire)?)?,
        Type::FieldsV1 => return fields_v1(message, field, expect_len(message, field, wire)?),
        Type::Message(inner) | Type::Inline(inner) => {
            let mut object = Map::new();
            decode_into(inner, expect_len(message, field, wire)?, &mut object)?;
            Value::Object(object)
        }
    };
    Ok(Some(v))
}

/// `metav1.Time`: `{seconds=1, nanos=2}`. Go keeps whole seconds only, so nanos are dropped.
fn time(
    message: &'static Message,
    field: &'static Field,
    bytes: &[u8],
) -> Result<Option<Value>, ProtobufError> {
    let mut seconds: i64 = 0;
    let mut reader = Reader::new(bytes);
    while let Some((number, wire)) = next(&mut reader, "k8s.io.apimachinery.pkg.apis.meta.v1.Time")?
    {
        if number == 1 {
            seconds = expect_varint(message, field, wire)? as i64;
        }
    }
    if bytes.is_empty() || seconds == GO_ZERO_TIME_SECONDS {
        return Ok(None);
    }
    let out_of_range = || ProtobufError::TimestampOutOfRange {
        message: message.name,
        field: field.json,
        seconds,
    };
    if !(GO_ZERO_TIME_SECONDS..=LAST_SECOND_OF_9999).contains(&seconds) {
        return Err(out_of_range());
    }
    // Civil arithmetic rather than `jiff::Timestamp`, whose range stops a day short of 9999-12-31.
    let utc = jiff::civil::date(1970, 1, 1)
        .at(0, 0, 0, 0)
        .checked_add(jiff::SignedDuration::from_secs(seconds))
        .map_err(|_| out_of_range())?;
    Ok(Some(Value::String(
        utc.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
    )))
}

/// `intstr.IntOrString`: `{type=1, intVal=2, strVal=3}`; type 1 is a string, anything else an int.
fn int_or_string(
    message: &'static Message,
    field: &'static Field,
    bytes: &[u8],
) -> Result<Value, ProtobufError> {
    let mut is_string = false;
    let mut int_val: i32 = 0;
    let mut str_val = String::new();
    let mut reader = Reader::new(bytes);
    while let Some((number, wire)) = next(
        &mut reader,
        "k8s.io.apimachinery.pkg.util.intstr.IntOrString",
    )? {
        match number {
            1 => is_string = expect_varint(message, field, wire)? == 1,
            2 => int_val = expect_varint(message, field, wire)? as i64 as i32,
            3 => str_val = lossy_string(expect_len(message, field, wire)?),
            _ => {}
        }
    }
    Ok(if is_string {
        Value::String(str_val)
    } else {
        Value::from(int_val)
    })
}

/// `resource.Quantity`: `{string=1}`.
fn quantity(
    message: &'static Message,
    field: &'static Field,
    bytes: &[u8],
) -> Result<Value, ProtobufError> {
    let mut text = String::new();
    let mut reader = Reader::new(bytes);
    while let Some((number, wire)) =
        next(&mut reader, "k8s.io.apimachinery.pkg.api.resource.Quantity")?
    {
        if number == 1 {
            text = lossy_string(expect_len(message, field, wire)?);
        }
    }
    Ok(Value::String(text))
}

/// `metav1.FieldsV1`: `{Raw=1}` holding JSON; empty raw bytes are Go's `null` (omitted).
fn fields_v1(
    message: &'static Message,
    field: &'static Field,
    bytes: &[u8],
) -> Result<Option<Value>, ProtobufError> {
    let mut raw: &[u8] = &[];
    let mut reader = Reader::new(bytes);
    while let Some((number, wire)) =
        next(&mut reader, "k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1")?
    {
        if number == 1 {
            raw = expect_len(message, field, wire)?;
        }
    }
    if raw.is_empty() {
        return Ok(None);
    }
    crate::store::json::from_slice(raw)
        .map(Some)
        .map_err(|e| ProtobufError::InvalidFieldsV1 {
            detail: e.to_string(),
        })
}

fn expect_len<'a>(
    message: &'static Message,
    field: &'static Field,
    wire: WireValue<'a>,
) -> Result<&'a [u8], ProtobufError> {
    super::len(message.name, field.json, field.number, wire)
}

fn expect_varint(
    message: &'static Message,
    field: &'static Field,
    wire: WireValue<'_>,
) -> Result<u64, ProtobufError> {
    match wire {
        WireValue::Varint(v) => Ok(v),
        other => Err(wrong_wire_type(message, field, other)),
    }
}

fn wrong_wire_type(
    message: &'static Message,
    field: &'static Field,
    found: WireValue<'_>,
) -> ProtobufError {
    ProtobufError::WrongWireType {
        message: message.name,
        field: field.json,
        number: field.number,
        found: found.wire_name(),
    }
}

/// Go strings are bytes; its JSON encoder replaces invalid UTF-8 with U+FFFD, and so does this.
fn lossy_string(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Whether a decoded scalar is its type's zero value (`""`, `0`, `false`).
fn is_zero(v: &Value) -> bool {
    match v {
        Value::String(s) => s.is_empty(),
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_i64() == Some(0),
        _ => false,
    }
}

/// The JSON zero value of a type, for a map entry that carries no value.
fn zero_value(ty: Type) -> Value {
    match ty {
        Type::Scalar(Scalar::String | Scalar::Bytes) | Type::Quantity => {
            Value::String(String::new())
        }
        Type::Scalar(Scalar::Bool) => Value::Bool(false),
        Type::Scalar(Scalar::Int32 | Scalar::Int64) | Type::IntOrString => {
            Value::Number(Number::from(0))
        }
        Type::Message(_) | Type::Inline(_) => empty_object(),
        Type::Time | Type::FieldsV1 => Value::Null,
    }
}
