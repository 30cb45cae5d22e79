//! A tiny protobuf writer for tests: builds messages field by field the way Go's generated
//! marshallers lay them out, and wraps them in the `k8s\x00` + `runtime.Unknown` envelope.

/// A message under construction.
#[derive(Debug, Clone, Default)]
pub struct Encoder {
    buf: Vec<u8>,
}

impl Encoder {
    /// An empty message.
    pub fn new() -> Self {
        Self::default()
    }

    fn put_varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.buf.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }

    fn tag(&mut self, field: u32, wire_type: u8) {
        self.put_varint((u64::from(field) << 3) | u64::from(wire_type));
    }

    /// A varint field.
    pub fn varint(mut self, field: u32, v: u64) -> Self {
        self.tag(field, 0);
        self.put_varint(v);
        self
    }

    /// An int32/int64 field (negative values sign-extended to ten bytes, as Go writes them).
    pub fn int(self, field: u32, v: i64) -> Self {
        self.varint(field, v as u64)
    }

    /// A bool field.
    pub fn bool(self, field: u32, v: bool) -> Self {
        self.varint(field, u64::from(v))
    }

    /// A length-delimited field.
    pub fn bytes(mut self, field: u32, bytes: &[u8]) -> Self {
        self.tag(field, 2);
        self.put_varint(bytes.len() as u64);
        self.buf.extend_from_slice(bytes);
        self
    }

    /// A string field.
    pub fn string(self, field: u32, s: &str) -> Self {
        self.bytes(field, s.as_bytes())
    }

    /// A nested message field.
    pub fn message(self, field: u32, inner: Encoder) -> Self {
        self.bytes(field, &inner.buf)
    }

    /// A fixed32 field.
    pub fn fixed32(mut self, field: u32, v: u32) -> Self {
        self.tag(field, 5);
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }

    /// A fixed64 field.
    pub fn fixed64(mut self, field: u32, v: u64) -> Self {
        self.tag(field, 1);
        self.buf.extend_from_slice(&v.to_le_bytes());
        self
    }

    /// A `map<string, string>` entry.
    pub fn string_entry(self, field: u32, key: &str, value: &str) -> Self {
        self.message(field, Encoder::new().string(1, key).string(2, value))
    }

    /// A `map<string, bytes>` entry.
    pub fn bytes_entry(self, field: u32, key: &str, value: &[u8]) -> Self {
        self.message(field, Encoder::new().string(1, key).bytes(2, value))
    }

    /// A `map<string, Message>` entry.
    pub fn message_entry(self, field: u32, key: &str, value: Encoder) -> Self {
        self.message(field, Encoder::new().string(1, key).message(2, value))
    }

    /// The encoded bytes.
    pub fn finish(self) -> Vec<u8> {
        self.buf
    }
}

/// `metav1.Time` at `seconds` since the epoch.
pub fn time(seconds: i64) -> Encoder {
    Encoder::new().int(1, seconds).int(2, 0)
}

/// `intstr.IntOrString` holding an int.
pub fn int_or_string_int(v: i32) -> Encoder {
    Encoder::new().int(1, 0).int(2, i64::from(v)).string(3, "")
}

/// `intstr.IntOrString` holding a string.
pub fn int_or_string_str(s: &str) -> Encoder {
    Encoder::new().int(1, 1).int(2, 0).string(3, s)
}

/// `resource.Quantity`.
pub fn quantity(s: &str) -> Encoder {
    Encoder::new().string(1, s)
}

/// `ObjectMeta` as Go's marshaller writes it for a new object: every value field, empty or not,
/// and the zero `creationTimestamp` as an empty message; then `extra` (labels, …).
pub fn object_meta(name: &str, namespace: &str, extra: Encoder) -> Encoder {
    let mut meta = Encoder::new()
        .string(1, name)
        .string(2, "")
        .string(3, namespace)
        .string(4, "")
        .string(5, "")
        .string(6, "")
        .int(7, 0)
        .message(8, Encoder::new());
    meta.buf.extend_from_slice(&extra.buf);
    meta
}

/// A whole request body: `k8s\x00` and a `runtime.Unknown` holding `raw`.
pub fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    envelope_with(api_version, kind, raw, "", "")
}

/// A request body whose envelope also names a content encoding and type.
pub fn envelope_with(
    api_version: &str,
    kind: &str,
    raw: &[u8],
    content_encoding: &str,
    content_type: &str,
) -> Vec<u8> {
    let unknown = Encoder::new()
        .message(1, Encoder::new().string(1, api_version).string(2, kind))
        .bytes(2, raw)
        .string(3, content_encoding)
        .string(4, content_type);
    let mut body = super::MAGIC.to_vec();
    body.extend_from_slice(&unknown.finish());
    body
}
