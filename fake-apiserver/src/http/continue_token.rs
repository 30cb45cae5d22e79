//! A paged list's `continue` token, as storage writes and reads it (`storage/continue.go`):
//! unpadded base64url of `{"v":"meta.k8s.io/v1","rv":<revision>,"start":<key>}`, where the key is
//! the next object's storage key after the list's own prefix (`name\0` in a namespace,
//! `namespace/name\0` across namespaces: the last key returned, then the smallest byte). A
//! revision of -1 asks for the newest state (the token a `410` hands out to go on with an
//! inconsistent rest of the list).
//!
//! Clients treat the token as opaque, but they show it, keep it and send back what they are
//! given, so it is the real one, and a malformed one is refused with the real messages.

use base64::alphabet::URL_SAFE;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::Engine;
use serde::Serialize;

/// Go's `base64.RawURLEncoding`: no padding written or accepted, and (not being `Strict`)
/// non-zero bits after the last symbol are ignored.
const RAW_URL: GeneralPurpose = GeneralPurpose::new(
    &URL_SAFE,
    GeneralPurposeConfig::new()
        .with_encode_padding(false)
        .with_decode_padding_mode(DecodePaddingMode::RequireNone)
        .with_decode_allow_trailing_bits(true),
);

/// The token's one encoding version.
const VERSION: &str = "meta.k8s.io/v1";

/// `ErrGenericInvalidKey`, the start of every message of a token that does not decode.
const INVALID: &str = "continue key is not valid";

#[derive(Serialize)]
struct Wire<'a> {
    #[serde(rename = "v")]
    version: &'a str,
    #[serde(rename = "rv")]
    revision: i64,
    start: &'a str,
}

/// A decoded token: where the next page starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContinueToken {
    /// The revision the list is read at; `None` for the newest (a token's `-1`).
    pub revision: Option<u64>,
    /// The storage key (after the list's prefix) from which the next page starts.
    pub start: String,
}

/// `EncodeContinue(lastKey + "\x00", prefix, revision)`: the token for the page after the
/// object whose key (after the list's prefix) is `last_key`.
pub fn encode(revision: i64, last_key: &str) -> String {
    encode_start(revision, &format!("{last_key}\u{0}"))
}

/// A token starting at `start` (already a start key).
pub fn encode_start(revision: i64, start: &str) -> String {
    let wire = Wire {
        version: VERSION,
        revision,
        start,
    };
    // A struct of strings and an integer always encodes.
    let json = serde_json::to_vec(&wire).unwrap_or_default();
    RAW_URL.encode(json)
}

/// `DecodeContinue`, with its errors in its order: the base64, the JSON, the version, a zero
/// revision, an empty start key, a start key that `path.Clean` would change.
pub fn decode(token: &str) -> Result<ContinueToken, String> {
    let data = RAW_URL.decode(token).map_err(|e| {
        let at = match e {
            base64::DecodeError::InvalidByte(at, _)
            | base64::DecodeError::InvalidLastSymbol(at, _) => at,
            base64::DecodeError::InvalidLength(_) | base64::DecodeError::InvalidPadding => {
                token.len().saturating_sub(1)
            }
        };
        format!("{INVALID}: illegal base64 data at input byte {at}")
    })?;
    let json: serde_json::Value = crate::store::json::from_slice(&data)
        .map_err(|e| format!("{INVALID}: {}", go_syntax_error(&data, &e)))?;
    let wire = read_fields(&json).map_err(|e| format!("{INVALID}: {e}"))?;
    if wire.version != VERSION {
        return Err(format!(
            "{INVALID}: server does not recognize this encoded version {}",
            wire.version
        ));
    }
    if wire.revision == 0 {
        return Err(format!(
            "{INVALID}: incorrect encoded start resourceVersion (version {VERSION})"
        ));
    }
    if wire.start.is_empty() {
        return Err(format!(
            "{INVALID}: encoded start key empty (version {VERSION})"
        ));
    }
    let key = if wire.start.starts_with('/') {
        wire.start.clone()
    } else {
        format!("/{}", wire.start)
    };
    if !is_clean_path(&key) {
        return Err(format!("{INVALID}: {}", wire.start));
    }
    Ok(ContinueToken {
        revision: u64::try_from(wire.revision).ok(),
        start: key[1..].to_string(),
    })
}

/// Whether Go's `path.Clean` leaves an absolute path as it is: no empty, `.` or `..` element
/// and no trailing slash (the root alone is clean).
fn is_clean_path(path: &str) -> bool {
    path == "/"
        || path[1..]
            .split('/')
            .all(|element| !element.is_empty() && element != "." && element != "..")
}

/// The token's fields as `json.Unmarshal` fills `continueToken`: absent and `null` leave the
/// zero value, other keys are ignored, and a value of the wrong JSON type is its
/// `UnmarshalTypeError`.
fn read_fields(json: &serde_json::Value) -> Result<Fields, String> {
    use serde_json::Value;
    let type_error = |found: &Value, field: &str, go_type: &str| {
        let what = match found {
            Value::Bool(_) => "bool".to_string(),
            Value::Number(n) if go_type == "int64" => format!("number {n}"),
            Value::Number(_) => "number".to_string(),
            Value::String(_) => "string".to_string(),
            Value::Array(_) => "array".to_string(),
            Value::Object(_) => "object".to_string(),
            Value::Null => "null".to_string(),
        };
        match field {
            "" => format!("json: cannot unmarshal {what} into Go value of type storage.continueToken"),
            _ => format!("json: cannot unmarshal {what} into Go struct field continueToken.{field} of type {go_type}"),
        }
    };
    let Some(object) = json.as_object() else {
        return match json {
            Value::Null => Ok(Fields::default()),
            other => Err(type_error(other, "", "")),
        };
    };
    let mut fields = Fields::default();
    // Go matches keys case-insensitively, preferring an exact match; the last one read wins.
    for (key, value) in object {
        match key.to_ascii_lowercase().as_str() {
            "v" => match value {
                Value::Null => {}
                Value::String(s) => fields.version = s.clone(),
                other => return Err(type_error(other, "v", "string")),
            },
            "rv" => match value {
                Value::Null => {}
                Value::Number(n) => {
                    fields.revision = n.as_i64().ok_or_else(|| type_error(value, "rv", "int64"))?
                }
                other => return Err(type_error(other, "rv", "int64")),
            },
            "start" => match value {
                Value::Null => {}
                Value::String(s) => fields.start = s.clone(),
                other => return Err(type_error(other, "start", "string")),
            },
            _ => {}
        }
    }
    Ok(fields)
}

/// What a token holds, once read.
#[derive(Default)]
struct Fields {
    version: String,
    revision: i64,
    start: String,
}

/// The text of `encoding/json`'s syntax error for the common cases (`unexpected end of JSON
/// input`, `invalid character 'x' looking for beginning of value`); others keep serde's
/// wording.
fn go_syntax_error(data: &[u8], error: &serde_json::Error) -> String {
    if error.is_eof() {
        return "unexpected end of JSON input".to_string();
    }
    match data.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(&first) if !b"{[\"-0123456789tfn".contains(&first) => format!(
            "invalid character {} looking for beginning of value",
            go_char(first)
        ),
        _ => error.to_string(),
    }
}

/// A byte as `encoding/json` quotes it in an error (`quoteChar`: the byte read as the rune of
/// the same number, through `strconv.Quote`).
fn go_char(byte: u8) -> String {
    let inner = match byte {
        b'\'' => return r"'\''".to_string(),
        b'"' => return r#"'"'"#.to_string(),
        b'\\' => r"\\".to_string(),
        0x07 => r"\a".to_string(),
        0x08 => r"\b".to_string(),
        0x0c => r"\f".to_string(),
        b'\n' => r"\n".to_string(),
        b'\r' => r"\r".to_string(),
        b'\t' => r"\t".to_string(),
        0x0b => r"\v".to_string(),
        0x00..=0x1f | 0x7f => format!("\\x{byte:02x}"),
        // C1 controls, the no-break space and the soft hyphen are not printable to Go.
        0x80..=0xa0 | 0xad => format!("\\u{byte:04x}"),
        _ => char::from(byte).to_string(),
    };
    format!("'{inner}'")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[test]
    fn tokens_are_storage_s_own() {
        // What kube-apiserver hands out for a namespaced page ending at "cm3" read at 42.
        let token = encode(42, "cm3");
        let json = RAW_URL.decode(&token).unwrap();
        assert_eq!(
            std::str::from_utf8(&json).unwrap(),
            r#"{"v":"meta.k8s.io/v1","rv":42,"start":"cm3\u0000"}"#
        );
        assert_eq!(
            decode(&token),
            Ok(ContinueToken {
                revision: Some(42),
                start: "cm3\u{0}".into()
            })
        );
        assert_eq!(
            decode(&encode_start(-1, "ns/cm3\u{0}")).unwrap().revision,
            None
        );
    }

    #[rstest]
    #[case(
        "not-a-token",
        "continue key is not valid: invalid character '\\u009e' looking for beginning of value"
    )]
    #[case("a=", "continue key is not valid: illegal base64 data at input byte 1")]
    #[case("", "continue key is not valid: unexpected end of JSON input")]
    #[case(
        &RAW_URL.encode(r#"{"v":"meta.k8s.io/v2","rv":3,"start":"a"}"#),
        "continue key is not valid: server does not recognize this encoded version meta.k8s.io/v2"
    )]
    #[case(
        &RAW_URL.encode(r#"{"v":"meta.k8s.io/v1","start":"a"}"#),
        "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"
    )]
    #[case(
        &RAW_URL.encode(r#"{"v":"meta.k8s.io/v1","rv":3}"#),
        "continue key is not valid: encoded start key empty (version meta.k8s.io/v1)"
    )]
    #[case(
        &RAW_URL.encode(r#"{"v":"meta.k8s.io/v1","rv":3,"start":"../other/x"}"#),
        "continue key is not valid: ../other/x"
    )]
    #[case(
        &RAW_URL.encode(r#"{"v":"meta.k8s.io/v1","rv":"3","start":"a"}"#),
        "continue key is not valid: json: cannot unmarshal string into Go struct field continueToken.rv of type int64"
    )]
    fn malformed_tokens_are_refused_with_storage_s_messages(
        #[case] token: &str,
        #[case] message: &str,
    ) {
        assert_eq!(decode(token), Err(message.to_string()));
    }
}
