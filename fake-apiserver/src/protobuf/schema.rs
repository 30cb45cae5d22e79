//! How a protobuf message maps to JSON: a [`Message`] is a static table from field number to JSON
//! name, value type and label, written by hand from the `generated.proto` files of
//! `k8s.io/api` and `k8s.io/apimachinery` (the numbers are the wire contract; the names are
//! the JSON spelling of the Go struct tags).
//!
//! The tables themselves live in [`super::messages`]; this module holds only their vocabulary.

/// A scalar protobuf type and its JSON rendering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scalar {
    /// `string` → JSON string (invalid UTF-8 replaced, as Go's JSON encoder does).
    String,
    /// `bytes` → base64 JSON string (Go's `[]byte` JSON form).
    Bytes,
    /// `bool` (varint) → JSON bool.
    Bool,
    /// `int32` (varint, sign-extended) → JSON number.
    Int32,
    /// `int64` (varint) → JSON number.
    Int64,
}

/// The type of a field's value (of each element, for repeated fields and map values).
#[derive(Debug, Clone, Copy)]
pub enum Type {
    /// A scalar.
    Scalar(Scalar),
    /// A nested message rendered as a JSON object under the field's name.
    Message(&'static Message),
    /// A Go struct embedded with `json:",inline"`: its fields join the parent's JSON object
    /// (e.g. `LocalObjectReference` inside `ConfigMapKeySelector`).
    Inline(&'static Message),
    /// `metav1.Time` (`{seconds=1, nanos=2}`) → RFC 3339 `YYYY-MM-DDTHH:MM:SSZ`; the zero time
    /// (an empty message) is omitted, as Go's JSON `null`.
    Time,
    /// `intstr.IntOrString` (`{type=1, intVal=2, strVal=3}`) → JSON number or string.
    IntOrString,
    /// `resource.Quantity` (`{string=1}`) → JSON string.
    Quantity,
    /// `metav1.FieldsV1` (`{Raw=1}`, raw JSON bytes) → the JSON value they hold.
    FieldsV1,
}

/// How often a field occurs and what its absence or zero value means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Label {
    /// A Go value field (`string`, `int32`, `bool`, struct): Go always writes it, so its zero
    /// value means "not set" and is omitted, as `omitempty` would in JSON. Messages are kept
    /// even when empty (Go renders an empty struct as `{}`).
    Value,
    /// A Go value field whose JSON tag has no `omitempty` and whose zero value means something
    /// (e.g. `PriorityClass.value: 0`): kept even when zero.
    Always,
    /// A Go pointer field (`*int32`, `*bool`, `*string`): written only when set, so a zero
    /// value on the wire is kept (e.g. `replicas: 0`).
    Optional,
    /// `repeated`: a JSON array (scalars may arrive packed or one by one).
    Repeated,
    /// `map<string, T>`: a JSON object; on the wire, entries `{key=1, value=2}`.
    Map,
}

/// One field of a message.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// The protobuf field number.
    pub number: u32,
    /// The JSON field name.
    pub json: &'static str,
    /// The value type.
    pub ty: Type,
    /// Cardinality and zero-value handling.
    pub label: Label,
}

/// A message: its protobuf name (for errors and logs) and its fields.
#[derive(Debug)]
pub struct Message {
    /// The protobuf message name, e.g. `k8s.io.api.core.v1.ConfigMap`.
    pub name: &'static str,
    /// Its fields, in any order.
    pub fields: &'static [Field],
}

impl Message {
    /// The field with protobuf number `number`, if the table knows it.
    pub fn field(&self, number: u32) -> Option<&'static Field> {
        self.fields.iter().find(|f| f.number == number)
    }
}

/// `string`.
pub const STRING: Type = Type::Scalar(Scalar::String);
/// `bytes`.
pub const BYTES: Type = Type::Scalar(Scalar::Bytes);
/// `bool`.
pub const BOOL: Type = Type::Scalar(Scalar::Bool);
/// `int32`.
pub const INT32: Type = Type::Scalar(Scalar::Int32);
/// `int64`.
pub const INT64: Type = Type::Scalar(Scalar::Int64);

/// A Go value field (see [`Label::Value`]).
pub const fn value(number: u32, json: &'static str, ty: Type) -> Field {
    Field {
        number,
        json,
        ty,
        label: Label::Value,
    }
}

/// A Go value field kept even when zero (see [`Label::Always`]).
pub const fn always(number: u32, json: &'static str, ty: Type) -> Field {
    Field {
        number,
        json,
        ty,
        label: Label::Always,
    }
}

/// A Go pointer field (see [`Label::Optional`]).
pub const fn optional(number: u32, json: &'static str, ty: Type) -> Field {
    Field {
        number,
        json,
        ty,
        label: Label::Optional,
    }
}

/// A repeated field.
pub const fn repeated(number: u32, json: &'static str, ty: Type) -> Field {
    Field {
        number,
        json,
        ty,
        label: Label::Repeated,
    }
}

/// A `map<string, ty>` field.
pub const fn map(number: u32, json: &'static str, ty: Type) -> Field {
    Field {
        number,
        json,
        ty,
        label: Label::Map,
    }
}

/// A nested message field.
pub const fn message(number: u32, json: &'static str, message: &'static Message) -> Field {
    value(number, json, Type::Message(message))
}

/// An embedded (`json:",inline"`) message field.
pub const fn inline(number: u32, message: &'static Message) -> Field {
    value(number, "", Type::Inline(message))
}
