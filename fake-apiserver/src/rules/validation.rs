//! Object metadata validation with the messages a real API server gives.
//!
//! Names, generateName, namespaces, label keys and values, annotation keys and their total size,
//! owner references and finalizer names are checked the way
//! `k8s.io/apimachinery/pkg/api/validation` checks them, and failures are collected as [`Cause`]s
//! in an [`InvalidError`] that renders the same 422 `Status` (message and `details.causes`) a real
//! server sends.

use serde_json::{json, Map, Value};

/// Total size limit of all annotation keys and values (256 KiB).
pub const TOTAL_ANNOTATION_SIZE_LIMIT_BYTES: usize = 256 * 1024;

const DNS1123_LABEL_MAX_LENGTH: usize = 63;
const DNS1123_SUBDOMAIN_MAX_LENGTH: usize = 253;
const DNS1035_LABEL_MAX_LENGTH: usize = 63;
const LABEL_KEY_NAME_MAX_LENGTH: usize = 63;
const LABEL_VALUE_MAX_LENGTH: usize = 63;

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_ERR_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_ERR_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_LABEL_ERR_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const LABEL_KEY_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_KEY_ERR_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_ERR_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/// One field-level failure, as it appears in `Status.details.causes`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    /// Field path, e.g. `metadata.name` (empty when the failure is not about one field).
    pub field: String,
    /// Cause type, e.g. `FieldValueInvalid`, `FieldValueRequired`, `UnexpectedServerResponse`.
    pub reason: String,
    /// The error body without the field, e.g. `Invalid value: "x": must be ...`.
    pub message: String,
}

/// The kinds of field error `k8s.io/apimachinery/pkg/util/validation/field` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldErrorType {
    /// `Required value`
    Required,
    /// `Invalid value`
    Invalid,
    /// `Forbidden`
    Forbidden,
    /// `Too long`
    TooLong,
    /// `Too many`
    TooMany,
    /// `Unsupported value`
    NotSupported,
    /// `Not found`
    NotFound,
    /// `Duplicate value`
    Duplicate,
    /// `Invalid value` (wrong type)
    TypeInvalid,
    /// `Internal error`
    Internal,
}

impl FieldErrorType {
    /// The cause type string used in `details.causes[].reason`.
    pub fn cause_type(self) -> &'static str {
        match self {
            FieldErrorType::Required => "FieldValueRequired",
            FieldErrorType::Invalid => "FieldValueInvalid",
            FieldErrorType::Forbidden => "FieldValueForbidden",
            FieldErrorType::TooLong => "FieldValueTooLong",
            FieldErrorType::TooMany => "FieldValueTooMany",
            FieldErrorType::NotSupported => "FieldValueNotSupported",
            FieldErrorType::NotFound => "FieldValueNotFound",
            FieldErrorType::Duplicate => "FieldValueDuplicate",
            FieldErrorType::TypeInvalid => "FieldValueTypeInvalid",
            FieldErrorType::Internal => "InternalError",
        }
    }

    /// The human text of the type, as `ErrorType.String()` gives it.
    pub fn text(self) -> &'static str {
        match self {
            FieldErrorType::Required => "Required value",
            FieldErrorType::Invalid | FieldErrorType::TypeInvalid => "Invalid value",
            FieldErrorType::Forbidden => "Forbidden",
            FieldErrorType::TooLong => "Too long",
            FieldErrorType::TooMany => "Too many",
            FieldErrorType::NotSupported => "Unsupported value",
            FieldErrorType::NotFound => "Not found",
            FieldErrorType::Duplicate => "Duplicate value",
            FieldErrorType::Internal => "Internal error",
        }
    }

    /// Whether the error body omits the bad value (`ErrorBody` prints only the type for these).
    fn omits_value(self) -> bool {
        matches!(
            self,
            FieldErrorType::Required
                | FieldErrorType::Forbidden
                | FieldErrorType::TooLong
                | FieldErrorType::Internal
        )
    }
}

impl Cause {
    /// A field error of any type; `bad_value` is the already rendered value (see [`render_value`]).
    pub fn new(
        kind: FieldErrorType,
        field: impl std::fmt::Display,
        bad_value: Option<String>,
        detail: &str,
    ) -> Self {
        let mut message = kind.text().to_string();
        if !kind.omits_value() {
            if let Some(v) = bad_value {
                message.push_str(": ");
                message.push_str(&v);
            }
        }
        if !detail.is_empty() {
            message.push_str(": ");
            message.push_str(detail);
        }
        Cause {
            field: field.to_string(),
            reason: kind.cause_type().to_string(),
            message,
        }
    }

    /// `field.Invalid(path, value, detail)`.
    pub fn invalid(field: impl std::fmt::Display, value: &Value, detail: &str) -> Self {
        Cause::new(
            FieldErrorType::Invalid,
            field,
            Some(render_value(value)),
            detail,
        )
    }

    /// `field.Invalid` for a string value.
    pub fn invalid_str(field: impl std::fmt::Display, value: &str, detail: &str) -> Self {
        Cause::new(
            FieldErrorType::Invalid,
            field,
            Some(go_quote(value)),
            detail,
        )
    }

    /// `field.Required(path, detail)`.
    pub fn required(field: impl std::fmt::Display, detail: &str) -> Self {
        Cause::new(FieldErrorType::Required, field, None, detail)
    }

    /// `field.Forbidden(path, detail)`.
    pub fn forbidden(field: impl std::fmt::Display, detail: &str) -> Self {
        Cause::new(FieldErrorType::Forbidden, field, None, detail)
    }

    /// `field.TooLong(path, value, max)`.
    pub fn too_long(field: impl std::fmt::Display, max_bytes: i64) -> Self {
        let detail = if max_bytes >= 0 {
            format!(
                "may not be more than {max_bytes} {}",
                if max_bytes == 1 { "byte" } else { "bytes" }
            )
        } else {
            "value is too long".to_string()
        };
        Cause::new(FieldErrorType::TooLong, field, None, &detail)
    }

    /// `field.TooMany(path, actual, max)`.
    pub fn too_many(field: impl std::fmt::Display, actual: i64, max_items: i64) -> Self {
        let detail = if max_items >= 0 {
            format!(
                "must have at most {max_items} {}",
                if max_items == 1 { "item" } else { "items" }
            )
        } else {
            "has too many items".to_string()
        };
        let value = (actual >= 0).then(|| actual.to_string());
        Cause::new(FieldErrorType::TooMany, field, value, &detail)
    }

    /// `field.NotSupported(path, value, valid)`.
    pub fn not_supported(field: impl std::fmt::Display, value: &Value, valid: &[String]) -> Self {
        let detail = if valid.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = valid.iter().map(|v| go_quote(v)).collect();
            format!("supported values: {}", quoted.join(", "))
        };
        Cause::new(
            FieldErrorType::NotSupported,
            field,
            Some(render_value(value)),
            &detail,
        )
    }

    /// `field.NotFound(path, value)`.
    pub fn not_found(field: impl std::fmt::Display, value: &Value) -> Self {
        Cause::new(
            FieldErrorType::NotFound,
            field,
            Some(render_value(value)),
            "",
        )
    }

    /// `field.Duplicate(path, value)`.
    pub fn duplicate(field: impl std::fmt::Display, value: &Value) -> Self {
        Cause::new(
            FieldErrorType::Duplicate,
            field,
            Some(render_value(value)),
            "",
        )
    }

    /// `field.TypeInvalid(path, value, detail)`.
    pub fn type_invalid(field: impl std::fmt::Display, value: &Value, detail: &str) -> Self {
        Cause::new(
            FieldErrorType::TypeInvalid,
            field,
            Some(render_value(value)),
            detail,
        )
    }

    /// The full error text `field: body`, as `field.Error.Error()` gives it.
    pub fn error_text(&self) -> String {
        format!("{}: {}", self.field, self.message)
    }

    /// The cause as JSON for `details.causes` (`reason`, `message`, `field`; empty ones omitted).
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        if !self.reason.is_empty() {
            m.insert("reason".into(), Value::String(self.reason.clone()));
        }
        if !self.message.is_empty() {
            m.insert("message".into(), Value::String(self.message.clone()));
        }
        if !self.field.is_empty() {
            m.insert("field".into(), Value::String(self.field.clone()));
        }
        Value::Object(m)
    }
}

/// The error texts of `causes` (`field: body`), for tests to compare with upstream's messages.
#[cfg(test)]
pub(crate) fn error_texts(causes: Vec<Cause>) -> Vec<String> {
    causes.iter().map(Cause::error_text).collect()
}

/// Joins error texts the way a Go `Aggregate` does: one alone as itself, several as
/// `[a, b]`, duplicates dropped.
pub fn aggregate_message(texts: &[String]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for t in texts {
        if !seen.contains(&t.as_str()) {
            seen.push(t);
        }
    }
    match seen.len() {
        0 => String::new(),
        1 => seen[0].to_string(),
        _ => format!("[{}]", seen.join(", ")),
    }
}

/// A 422 `Invalid` error for one object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.message())]
pub struct InvalidError {
    /// Qualified kind as `GroupKind.String()` gives it: `Pod`, `Deployment.apps`.
    pub kind: String,
    /// Group of the kind (empty for core), for `details.group`.
    pub group: String,
    /// Object name.
    pub name: String,
    /// The field failures.
    pub causes: Vec<Cause>,
}

impl InvalidError {
    /// Builds the error for `kind` in `group` (core: empty group).
    pub fn new(group: &str, kind: &str, name: &str, causes: Vec<Cause>) -> Self {
        InvalidError {
            kind: qualified_kind(group, kind),
            group: group.to_string(),
            name: name.to_string(),
            causes,
        }
    }

    /// The `Status.message`: `Pod "x" is invalid: metadata.name: Invalid value: ...`.
    pub fn message(&self) -> String {
        let texts: Vec<String> = self.causes.iter().map(Cause::error_text).collect();
        let name = go_quote(&self.name);
        if texts.is_empty() {
            format!("{} {} is invalid", self.kind, name)
        } else {
            format!(
                "{} {} is invalid: {}",
                self.kind,
                name,
                aggregate_message(&texts)
            )
        }
    }

    /// `details.causes` as JSON.
    pub fn causes_json(&self) -> Value {
        Value::Array(self.causes.iter().map(Cause::to_json).collect())
    }

    /// The whole `Status` object a real server sends for this error.
    pub fn to_status(&self) -> Value {
        let kind = self.kind.split('.').next().unwrap_or_default();
        let mut details = Map::new();
        details.insert("name".into(), Value::String(self.name.clone()));
        if !self.group.is_empty() {
            details.insert("group".into(), Value::String(self.group.clone()));
        }
        details.insert("kind".into(), Value::String(kind.to_string()));
        details.insert("causes".into(), self.causes_json());
        json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message(),
            "reason": "Invalid",
            "details": Value::Object(details),
            "code": 422
        })
    }
}

/// `GroupKind.String()`: `Kind` for the core group, `Kind.group` otherwise.
pub fn qualified_kind(group: &str, kind: &str) -> String {
    if group.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}.{group}")
    }
}

/// A string as Go's `%q` (`strconv.Quote`) prints it: in double quotes, with `"` and `\`
/// backslashed and every character `unicode.IsPrint` does not accept escaped (`\a`..`\v`,
/// `\xHH` below U+0020 and for U+007F, else `\uHHHH` or `\UHHHHHHHH`). Printable is Go's
/// definition: letters, marks, numbers, punctuation, symbols and U+0020 (the Unicode tables are
/// the regex crate's, which may be a Unicode version ahead of Go's for newly assigned
/// characters).
pub fn go_quote(s: &str) -> String {
    static PRINTABLE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$").expect("a constant, valid pattern")
    });
    let is_print = |c: char| match c {
        ' '..='~' => true,
        c if c.is_ascii() => false,
        c => PRINTABLE.is_match(c.encode_utf8(&mut [0; 4])),
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c if is_print(c) => out.push(c),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if c < ' ' || c == '\u{7f}' => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            c if u32::from(c) < 0x10000 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push_str(&format!("\\U{:08x}", u32::from(c))),
        }
    }
    out.push('"');
    out
}

/// Renders a bad value as `field.Error.ErrorBody` prints it: strings quoted, numbers and
/// booleans plain, and everything else (`null`, lists, maps) as `encoding/json.Marshal`
/// encodes it (apimachinery 1.34 and later; before, `%#v`).
pub fn render_value(v: &Value) -> String {
    match v {
        Value::String(s) => go_quote(s),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => render_number(n),
        Value::Null | Value::Array(_) | Value::Object(_) => go_json(v),
    }
}

/// `encoding/json.Marshal` of a decoded JSON value: compact, map keys sorted, and `<`, `>`,
/// `&`, U+2028 and U+2029 escaped as Go escapes them.
pub fn go_json(v: &Value) -> String {
    let mut out = String::new();
    write_go_json(v, &mut out);
    out
}

fn write_go_json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

fn write_go_json(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&render_number(n)),
        Value::String(s) => write_go_json_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go_json(item, out);
            }
            out.push(']');
        }
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go_json_string(k, out);
                out.push(':');
                write_go_json(&m[k.as_str()], out);
            }
            out.push('}');
        }
    }
}

/// Prints a JSON number as Go's `%v` prints an int64 or float64.
pub fn render_number(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    let f = n.as_f64().unwrap_or(0.0);
    go_format_float(f)
}

/// Go's `%v` for a float64 (`%g` with the shortest representation).
pub fn go_format_float(f: f64) -> String {
    if f.is_finite() && f == f.trunc() && f.abs() < 1e21 {
        format!("{}", f as i128)
    } else if f.is_finite() && (f.abs() >= 1e21 || (f != 0.0 && f.abs() < 1e-4)) {
        let s = format!("{f:e}");
        // Rust prints 1e21 / 1.5e-5; Go prints 1e+21 / 1.5e-05.
        match s.split_once('e') {
            Some((mant, exp)) => {
                let (sign, digits) = match exp.strip_prefix('-') {
                    Some(d) => ('-', d),
                    None => ('+', exp),
                };
                let digits = if digits.len() < 2 {
                    format!("0{digits}")
                } else {
                    digits.to_string()
                };
                format!("{mant}e{sign}{digits}")
            }
            None => s,
        }
    } else {
        format!("{f}")
    }
}

/// Which rule an object's name must follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameRule {
    /// RFC 1123 subdomain (most kinds).
    Dns1123Subdomain,
    /// RFC 1123 label (namespaces).
    Dns1123Label,
    /// RFC 1035 label (services).
    Dns1035Label,
    /// Any name usable as a URL path segment (RBAC kinds).
    PathSegment,
    /// No rule of the kind's own (`ValidateCertificateRequestName`: "We don't care what you call
    /// your certificate requests"); the registry's path-segment check still applies.
    Unchecked,
}

impl NameRule {
    /// Messages for a name (`prefix`: it is a generateName prefix to be completed).
    pub fn check(self, name: &str, prefix: bool) -> Vec<String> {
        match self {
            NameRule::Dns1123Subdomain => {
                is_dns1123_subdomain(&mask_trailing_dash_if(name, prefix))
            }
            NameRule::Dns1123Label => is_dns1123_label(&mask_trailing_dash_if(name, prefix)),
            NameRule::Dns1035Label => is_dns1035_label(&mask_trailing_dash_if(name, prefix)),
            NameRule::PathSegment => {
                if prefix {
                    path_segment_prefix_errors(name)
                } else {
                    validate_path_segment_name(name)
                }
            }
            NameRule::Unchecked => Vec::new(),
        }
    }
}

fn mask_trailing_dash_if(name: &str, prefix: bool) -> String {
    if prefix && name.ends_with('-') {
        // Upstream replaces the final two bytes with "a"; a one-byte "-" becomes "a".
        let cut = name.len().saturating_sub(2);
        let mut base = name.get(..cut).unwrap_or_default().to_string();
        base.push('a');
        base
    } else {
        name.to_string()
    }
}

pub(crate) fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} bytes")
}

pub(crate) fn regex_error(msg: &str, re: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{msg} (regex used for validation is '{re}')");
    }
    let mut out = format!("{msg} (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            out.push_str(" or ");
        }
        out.push_str(&format!("'{e}', "));
    }
    out.push_str(&format!("regex used for validation is '{re}')"));
    out
}

fn is_dns_label_chars(s: &str, first_alpha: bool) -> bool {
    is_dns_label_bytes(s.as_bytes(), first_alpha)
}

fn is_dns_label_bytes(b: &[u8], first_alpha: bool) -> bool {
    let (Some(&first), Some(&last)) = (b.first(), b.last()) else {
        return false;
    };
    let alnum = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    let first_ok = if first_alpha {
        first.is_ascii_lowercase()
    } else {
        alnum(first)
    };
    first_ok && alnum(last) && b.iter().all(|&c| alnum(c) || c == b'-')
}

fn matches_dns1123_subdomain(s: &str) -> bool {
    // Split as bytes: the dot is ASCII, and a byte split skips `str`'s pattern searcher.
    !s.is_empty()
        && s.as_bytes()
            .split(|&b| b == b'.')
            .all(|part| is_dns_label_bytes(part, false))
}

/// `IsDNS1123Label`.
pub fn is_dns1123_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_LABEL_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_LABEL_MAX_LENGTH));
    }
    if !is_dns_label_chars(value, false) {
        if matches_dns1123_subdomain(value) {
            errs.push("must not contain dots".to_string());
        } else {
            errs.push(regex_error(
                DNS1123_LABEL_ERR_MSG,
                DNS1123_LABEL_FMT,
                &["my-name", "123-abc"],
            ));
        }
    }
    errs
}

/// `IsDNS1123Subdomain`.
pub fn is_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    if !matches_dns1123_subdomain(value) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_ERR_MSG,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// `IsDNS1035Label`.
pub fn is_dns1035_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1035_LABEL_MAX_LENGTH {
        errs.push(max_len_error(DNS1035_LABEL_MAX_LENGTH));
    }
    if !is_dns_label_chars(value, true) {
        errs.push(regex_error(
            DNS1035_LABEL_ERR_MSG,
            DNS1035_LABEL_FMT,
            &["my-name", "abc-123"],
        ));
    }
    errs
}

/// `IsValidPathSegmentName`: names that cannot be used in a URL path.
pub fn validate_path_segment_name(name: &str) -> Vec<String> {
    for bad in [".", ".."] {
        if name == bad {
            return vec![format!("may not be '{bad}'")];
        }
    }
    path_segment_prefix_errors(name)
}

fn path_segment_prefix_errors(name: &str) -> Vec<String> {
    ["/", "%"]
        .iter()
        .filter(|bad| name.contains(*bad))
        .map(|bad| format!("may not contain '{bad}'"))
        .collect()
}

fn matches_label_key_name(s: &str) -> bool {
    let b = s.as_bytes();
    let (Some(&first), Some(&last)) = (b.first(), b.last()) else {
        return false;
    };
    first.is_ascii_alphanumeric()
        && last.is_ascii_alphanumeric()
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_' || c == b'.')
}

/// `IsLabelKey` / `IsQualifiedName`: `[prefix/]name`.
pub fn is_qualified_name(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let name = match value.split_once('/') {
        None => value,
        Some((prefix, name)) if !name.contains('/') => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                errs.extend(
                    is_dns1123_subdomain(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            name
        }
        Some(_) => {
            errs.push(format!(
                "a valid label key {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(LABEL_KEY_ERR_MSG, LABEL_KEY_FMT, &["MyName", "my.name", "123-abc"])
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > LABEL_KEY_NAME_MAX_LENGTH {
        errs.push(format!(
            "name part {}",
            max_len_error(LABEL_KEY_NAME_MAX_LENGTH)
        ));
    }
    if !matches_label_key_name(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                LABEL_KEY_ERR_MSG,
                LABEL_KEY_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// `IsLabelValue`.
pub fn is_label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > LABEL_VALUE_MAX_LENGTH {
        errs.push(max_len_error(LABEL_VALUE_MAX_LENGTH));
    }
    if !value.is_empty() && !matches_label_key_name(value) {
        errs.push(regex_error(
            LABEL_VALUE_ERR_MSG,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// `ValidateLabels`: keys must be qualified names, values label values; all under `field`.
pub fn validate_labels(labels: Option<&Value>, field: &dyn std::fmt::Display) -> Vec<Cause> {
    let mut causes = Vec::new();
    let Some(labels) = labels else {
        return causes;
    };
    let Some(map) = labels.as_object() else {
        causes.push(Cause::invalid(field, labels, "must be a map of strings"));
        return causes;
    };
    for (k, v) in map {
        for msg in is_qualified_name(k) {
            causes.push(Cause::invalid_str(field, k, &msg));
        }
        match v.as_str() {
            Some(s) => {
                for msg in is_label_value(s) {
                    causes.push(Cause::invalid_str(field, s, &msg));
                }
            }
            None => causes.push(Cause::invalid(field, v, "must be a string")),
        }
    }
    causes
}

/// `ValidateAnnotations`: keys are qualified names (case-insensitive), total size limited.
pub fn validate_annotations(annotations: Option<&Value>, field: &str) -> Vec<Cause> {
    validate_annotations_with(annotations, field, None)
}

/// [`validate_annotations`] where the keys of `valid_keys` (a map that passed it) are known to
/// be valid names: a key found there is not checked as a name again. Each value is still
/// checked and the total size counted, so the causes are those [`validate_annotations`] gives.
pub fn validate_annotations_with(
    annotations: Option<&Value>,
    field: &str,
    valid_keys: Option<&Map<String, Value>>,
) -> Vec<Cause> {
    let mut causes = Vec::new();
    let Some(annotations) = annotations else {
        return causes;
    };
    let Some(map) = annotations.as_object() else {
        causes.push(Cause::invalid(
            field,
            annotations,
            "must be a map of strings",
        ));
        return causes;
    };
    let mut total = 0usize;
    for (k, v) in map {
        if !valid_keys.is_some_and(|valid| valid.contains_key(k.as_str())) {
            // Lowercased as `strings.ToLower` does; most keys are lowercase ASCII already.
            let lower = if k.bytes().any(|b| !b.is_ascii() || b.is_ascii_uppercase()) {
                std::borrow::Cow::Owned(k.to_lowercase())
            } else {
                std::borrow::Cow::Borrowed(k.as_str())
            };
            for msg in is_qualified_name(&lower) {
                causes.push(Cause::invalid_str(field, k, &msg));
            }
        }
        total += k.len() + v.as_str().map(str::len).unwrap_or(0);
        if !v.is_string() {
            causes.push(Cause::invalid(field, v, "must be a string"));
        }
    }
    if total > TOTAL_ANNOTATION_SIZE_LIMIT_BYTES {
        causes.push(Cause::too_long(
            field,
            TOTAL_ANNOTATION_SIZE_LIMIT_BYTES as i64,
        ));
    }
    causes
}

/// `ValidateFinalizers`: qualified names; `orphan` and `foregroundDeletion` not both.
pub fn validate_finalizers(finalizers: Option<&Value>, field: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    let Some(list) = finalizers else {
        return causes;
    };
    let Some(items) = list.as_array() else {
        causes.push(Cause::invalid(field, list, "must be a list of strings"));
        return causes;
    };
    let mut orphan = false;
    let mut foreground = false;
    for item in items {
        let Some(name) = item.as_str() else {
            causes.push(Cause::invalid(field, item, "must be a string"));
            continue;
        };
        for msg in is_qualified_name(name) {
            causes.push(Cause::invalid_str(field, name, &msg));
        }
        orphan |= name == "orphan";
        foreground |= name == "foregroundDeletion";
    }
    if orphan && foreground {
        let names: Vec<Value> = items
            .iter()
            .map(|v| Value::String(v.as_str().unwrap_or_default().to_string()))
            .collect();
        causes.push(Cause::new(
            FieldErrorType::Invalid,
            field,
            Some(go_json(&Value::Array(names))),
            "finalizer orphan and foregroundDeletion cannot be both set",
        ));
    }
    causes
}

/// `schema.ParseGroupVersion`: `(group, version)`, or `None` for a string with two or more `/`.
fn parse_group_version(gv: &str) -> Option<(&str, &str)> {
    if gv.is_empty() || gv == "/" {
        return Some(("", ""));
    }
    match gv.matches('/').count() {
        0 => Some(("", gv)),
        1 => gv.split_once('/'),
        _ => None,
    }
}

/// An owner reference as `json.Marshal` encodes a `metav1.OwnerReference` (struct order,
/// `controller` and `blockOwnerDeletion` omitted when unset).
fn render_owner_reference(r: &Value) -> String {
    let get = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or_default();
    let mut out = String::from("{");
    for (i, key) in ["apiVersion", "kind", "name", "uid"].iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&format!(
            "\"{key}\":{}",
            go_json(&Value::String(get(key).into()))
        ));
    }
    for key in ["controller", "blockOwnerDeletion"] {
        if let Some(b) = r.get(key).and_then(Value::as_bool) {
            out.push_str(&format!(",\"{key}\":{b}"));
        }
    }
    out.push('}');
    out
}

/// `ValidateOwnerReferences` (and `validateOwnerReference` for each entry, at its index):
/// apiVersion, kind, name and uid required, a parseable apiVersion, no `/v1 Event` owner, and at
/// most one controller.
pub fn validate_owner_references(refs: Option<&Value>, field: &str) -> Vec<Cause> {
    let mut causes = Vec::new();
    let Some(items) = refs.and_then(Value::as_array) else {
        return causes;
    };
    let mut first_controller: Option<String> = None;
    for (idx, r) in items.iter().enumerate() {
        let path = format!("{field}[{idx}]");
        let get = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or_default();
        let api_version = get("apiVersion");
        let parsed = parse_group_version(api_version);
        if api_version.is_empty() {
            causes.push(Cause::required(
                format!("{path}.apiVersion"),
                "must not be empty",
            ));
        } else if parsed.is_none_or(|(_, v)| v.is_empty()) {
            causes.push(Cause::invalid_str(
                format!("{path}.apiVersion"),
                api_version,
                "must be <group>/<version> or <version>",
            ));
        }
        for key in ["kind", "name", "uid"] {
            if get(key).is_empty() {
                causes.push(Cause::required(
                    format!("{path}.{key}"),
                    "must not be empty",
                ));
            }
        }
        let (group, version) = parsed.unwrap_or(("", ""));
        if group.is_empty() && version == "v1" && get("kind") == "Event" {
            causes.push(Cause::new(
                FieldErrorType::Invalid,
                &path,
                Some(render_owner_reference(r)),
                "/v1, Kind=Event is disallowed from being an owner",
            ));
        }
        if r.get("controller").and_then(Value::as_bool) == Some(true) {
            let current = format!("{}/{}", get("kind"), get("name"));
            match &first_controller {
                Some(first) => {
                    let all: Vec<String> = items.iter().map(render_owner_reference).collect();
                    causes.push(Cause::new(
                        FieldErrorType::Invalid,
                        field,
                        Some(format!("[{}]", all.join(","))),
                        &format!(
                            "Only one reference can have Controller set to true. Found \"true\" in references for {first} and {current}"
                        ),
                    ))
                }
                None => first_controller = Some(current),
            }
        }
    }
    causes
}

/// Removes exact duplicate owner references (same UID and identical otherwise), as the API
/// server does on create, update and patch. Returns the warning a real server sends when it
/// dropped some (`after_mutating_admission`: the PATCH wording).
pub fn dedup_owner_references(obj: &mut Value, after_mutating_admission: bool) -> Option<String> {
    let refs = obj
        .get_mut("metadata")
        .and_then(|m| m.get_mut("ownerReferences"))
        .and_then(Value::as_array_mut)?;
    let mut kept: Vec<Value> = Vec::with_capacity(refs.len());
    let mut duplicates: Vec<String> = Vec::new();
    for r in refs.drain(..) {
        if kept.contains(&r) {
            duplicates.push(
                r.get("uid")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            );
        } else {
            kept.push(r);
        }
    }
    *refs = kept;
    if duplicates.is_empty() {
        return None;
    }
    let when = if after_mutating_admission {
        " after mutating admission happens"
    } else {
        ""
    };
    Some(format!(
        ".metadata.ownerReferences contains duplicate entries{when}; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: {}",
        duplicates.join(", ")
    ))
}

fn meta_str<'a>(meta: &'a Value, key: &str) -> &'a str {
    meta.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// Create-time metadata validation (`ValidateObjectMeta`), as every built-in kind and custom
/// resource gets it. `kind` is the qualified kind (`Pod`, `Deployment.apps`, see
/// [`qualified_kind`]); generateName must already have been turned into a name.
pub fn validate_object_meta(
    kind: &str,
    namespaced: bool,
    name_rule: NameRule,
    obj: &Value,
) -> Result<(), InvalidError> {
    let causes = object_meta_causes(namespaced, name_rule, obj);
    finish(kind, object_name(obj), causes)
}

fn object_name(obj: &Value) -> &str {
    obj.get("metadata")
        .map(|m| meta_str(m, "name"))
        .unwrap_or_default()
}

/// The causes of `ValidateObjectMetaAccessor` (apimachinery `api/validation/objectmeta.go`):
/// generateName and name by the kind's name rule, namespace, generation, labels, annotations,
/// owner references, finalizers.
///
/// `managedFields` are left to the field manager, which replaces unusable entries before
/// validation runs.
pub fn object_meta_causes(namespaced: bool, name_rule: NameRule, obj: &Value) -> Vec<Cause> {
    object_meta_causes_with(namespaced, name_rule, obj, &MetadataMapCauses::of(obj))
}

/// The causes of `metadata.labels` and `metadata.annotations` of one object
/// ([`validate_labels`], [`validate_annotations`]): found once for the several metadata
/// validations of one write that each report them (a pod update checks them four times, as
/// the real server's strategy and `rest.BeforeUpdate` together do).
#[derive(Debug, Clone, Default)]
pub struct MetadataMapCauses {
    labels: Vec<Cause>,
    annotations: Vec<Cause>,
}

thread_local! {
    /// The last labels and annotations maps this thread found to pass their checks, kept (so
    /// alive): a map sharing their entries (an object created from the same template, whose
    /// maps are the template's) holds the same pairs, so it passes too.
    static PASSED_MAPS: std::cell::RefCell<[Option<Value>; 2]> =
        const { std::cell::RefCell::new([None, None]) };
}

impl MetadataMapCauses {
    /// The causes of `obj`'s labels and annotations.
    pub fn of(obj: &Value) -> Self {
        let meta = obj.get("metadata");
        let maps = ["labels", "annotations"].map(|key| meta.and_then(|m| m.get(key)));
        let shares = |map: Option<&Value>, kept: &Option<Value>| match (map, kept) {
            (Some(Value::Object(map)), Some(Value::Object(kept))) => map.shares_entries(kept),
            _ => false,
        };
        let known = PASSED_MAPS.with(|passed| {
            let passed = passed.borrow();
            [0, 1].map(|i| shares(maps[i], &passed[i]))
        });
        let causes = Self::of_known(obj, known[0], known[1], None);
        let passed = [causes.labels.is_empty(), causes.annotations.is_empty()];
        PASSED_MAPS.with(|kept| {
            let mut kept = kept.borrow_mut();
            for i in [0, 1] {
                if let (false, true, Some(map @ Value::Object(_))) = (known[i], passed[i], maps[i])
                {
                    kept[i] = Some(map.clone());
                }
            }
        });
        causes
    }

    /// [`MetadataMapCauses::of`], but a map known to pass its check (`labels_known`,
    /// `annotations_known`: it is one that passed it before) is not looked at, and the keys of
    /// `valid_annotation_keys` (a map that passed the annotations' check: the stored
    /// version's) are not checked as names again (see [`validate_annotations_with`]).
    pub fn of_known(
        obj: &Value,
        labels_known: bool,
        annotations_known: bool,
        valid_annotation_keys: Option<&Map<String, Value>>,
    ) -> Self {
        let meta = obj.get("metadata");
        let field = |key: &str| meta.and_then(|m| m.get(key));
        Self {
            labels: if labels_known {
                Vec::new()
            } else {
                validate_labels(field("labels"), &"metadata.labels")
            },
            annotations: if annotations_known {
                Vec::new()
            } else {
                validate_annotations_with(
                    field("annotations"),
                    "metadata.annotations",
                    valid_annotation_keys,
                )
            },
        }
    }

    fn labels(&self) -> impl Iterator<Item = Cause> + '_ {
        self.labels.iter().cloned()
    }

    fn annotations(&self) -> impl Iterator<Item = Cause> + '_ {
        self.annotations.iter().cloned()
    }
}

/// [`object_meta_causes`] given the causes of `obj`'s labels and annotations.
pub fn object_meta_causes_with(
    namespaced: bool,
    name_rule: NameRule,
    obj: &Value,
    maps: &MetadataMapCauses,
) -> Vec<Cause> {
    let empty = Value::Object(Map::new());
    let meta = obj.get("metadata").unwrap_or(&empty);
    let name = meta_str(meta, "name");
    let mut causes = Vec::new();
    let generate_name = meta_str(meta, "generateName");
    if !generate_name.is_empty() {
        for msg in name_rule.check(generate_name, true) {
            causes.push(Cause::invalid_str(
                "metadata.generateName",
                generate_name,
                &msg,
            ));
        }
    }
    if name.is_empty() {
        causes.push(Cause::required(
            "metadata.name",
            "name or generateName is required",
        ));
    } else {
        for msg in name_rule.check(name, false) {
            causes.push(Cause::invalid_str("metadata.name", name, &msg));
        }
    }
    causes.extend(common_meta_causes(meta, namespaced, maps));
    causes
}

/// Update-time metadata validation (`ValidateObjectMetaUpdate`): identity fields immutable,
/// resourceVersion required, generation not decremented, no new finalizers while deleting.
pub fn validate_object_meta_update(
    kind: &str,
    new: &Value,
    old: &Value,
) -> Result<(), InvalidError> {
    finish(kind, object_name(new), object_meta_update_causes(new, old))
}

/// The causes of `ValidateObjectMetaAccessorUpdate` (apimachinery `api/validation/objectmeta.go`).
/// Unlike the create rules it does not check finalizer names.
pub fn object_meta_update_causes(new: &Value, old: &Value) -> Vec<Cause> {
    object_meta_update_causes_with(new, old, &MetadataMapCauses::of(new))
}

/// [`object_meta_update_causes`] given the causes of `new`'s labels and annotations.
pub fn object_meta_update_causes_with(
    new: &Value,
    old: &Value,
    maps: &MetadataMapCauses,
) -> Vec<Cause> {
    let empty = Value::Object(Map::new());
    let new_meta = new.get("metadata").unwrap_or(&empty);
    let old_meta = old.get("metadata").unwrap_or(&empty);
    let mut causes = Vec::new();
    if old_meta
        .get("deletionTimestamp")
        .is_some_and(|v| !v.is_null())
    {
        let old_fin: Vec<&str> = string_list(old_meta.get("finalizers"));
        let mut extra: Vec<&str> = string_list(new_meta.get("finalizers"))
            .into_iter()
            .filter(|f| !old_fin.contains(f))
            .collect();
        extra.sort_unstable();
        extra.dedup();
        if !extra.is_empty() {
            let rendered: Vec<String> = extra.iter().map(|f| go_quote(f)).collect();
            causes.push(Cause::forbidden(
                "metadata.finalizers",
                &format!(
                    "no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
                    rendered.join(", ")
                ),
            ));
        }
    }
    let rv = meta_str(new_meta, "resourceVersion");
    if rv.is_empty() {
        causes.push(Cause::invalid_str(
            "metadata.resourceVersion",
            rv,
            "must be specified for an update",
        ));
    }
    let new_gen = new_meta
        .get("generation")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let old_gen = old_meta
        .get("generation")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if new_gen < old_gen {
        causes.push(Cause::invalid(
            "metadata.generation",
            &Value::from(new_gen),
            "must not be decremented",
        ));
    }
    for key in [
        "name",
        "namespace",
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
    ] {
        let n = new_meta.get(key).unwrap_or(&Value::Null);
        let o = old_meta.get(key).unwrap_or(&Value::Null);
        let same = n == o || (is_blank(n) && is_blank(o));
        if !same {
            causes.push(Cause::invalid(
                format!("metadata.{key}"),
                n,
                "field is immutable",
            ));
        }
    }
    causes.extend(maps.labels());
    causes.extend(maps.annotations());
    causes.extend(validate_owner_references(
        new_meta.get("ownerReferences"),
        "metadata.ownerReferences",
    ));
    causes
}

fn is_blank(v: &Value) -> bool {
    v.is_null() || v.as_str() == Some("")
}

fn string_list(v: Option<&Value>) -> Vec<&str> {
    v.and_then(Value::as_array)
        .map(|items| items.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn common_meta_causes(meta: &Value, namespaced: bool, maps: &MetadataMapCauses) -> Vec<Cause> {
    let mut causes = Vec::new();
    let namespace = meta_str(meta, "namespace");
    if namespaced {
        if namespace.is_empty() {
            causes.push(Cause::required("metadata.namespace", ""));
        } else {
            for msg in NameRule::Dns1123Label.check(namespace, false) {
                causes.push(Cause::invalid_str("metadata.namespace", namespace, &msg));
            }
        }
    } else if !namespace.is_empty() {
        causes.push(Cause::forbidden(
            "metadata.namespace",
            "not allowed on this type",
        ));
    }
    if let Some(generation) = meta.get("generation").and_then(Value::as_i64) {
        if generation < 0 {
            causes.push(Cause::invalid(
                "metadata.generation",
                &Value::from(generation),
                "must be greater than or equal to 0",
            ));
        }
    }
    causes.extend(maps.labels());
    causes.extend(maps.annotations());
    causes.extend(validate_owner_references(
        meta.get("ownerReferences"),
        "metadata.ownerReferences",
    ));
    causes.extend(validate_finalizers(
        meta.get("finalizers"),
        "metadata.finalizers",
    ));
    causes
}

fn finish(kind: &str, name: &str, causes: Vec<Cause>) -> Result<(), InvalidError> {
    if causes.is_empty() {
        return Ok(());
    }
    let (k, group) = match kind.split_once('.') {
        Some((k, g)) => (k, g),
        None => (kind, ""),
    };
    Err(InvalidError::new(group, k, name, causes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    #[test]
    fn maps_that_passed_are_kept_and_only_their_sharers_skip_the_checks() {
        let kept_labels = || PASSED_MAPS.with(|kept| kept.borrow()[0].clone());
        let valid = json!({"metadata": {"labels": {"app": "web"}, "annotations": {"a": "1"}}});
        assert!(MetadataMapCauses::of(&valid).labels.is_empty());
        let (Some(Value::Object(kept)), Some(labels)) =
            (kept_labels(), valid["metadata"]["labels"].as_object())
        else {
            panic!("the passed labels are kept");
        };
        assert!(kept.shares_entries(labels));
        // A copy of the object shares them: known to pass.
        assert!(MetadataMapCauses::of(&valid.clone()).labels.is_empty());
        // Labels that do not pass are reported, and not kept.
        let invalid = json!({"metadata": {"labels": {"-bad-": "web"}}});
        assert_eq!(MetadataMapCauses::of(&invalid).labels.len(), 1);
        assert_eq!(MetadataMapCauses::of(&invalid.clone()).labels.len(), 1);
        let (Some(Value::Object(still)), Some(labels)) =
            (kept_labels(), valid["metadata"]["labels"].as_object())
        else {
            panic!("the passed labels are still kept");
        };
        assert!(still.shares_entries(labels));
        // Equal labels that do not share the kept entries are checked again (and pass).
        let equal = json!({"metadata": {"labels": {"app": "web"}}});
        assert!(MetadataMapCauses::of(&equal).labels.is_empty());
    }

    #[rstest]
    #[case::plain("runtime/default", r#""runtime/default""#)]
    #[case::quote_and_backslash(r#"a"b\c"#, r#""a\"b\\c""#)]
    #[case::named_escapes("\u{7}\u{8}\u{c}\n\r\t\u{b}", r#""\a\b\f\n\r\t\v""#)]
    #[case::other_controls("\u{0}\u{1f}\u{7f}\u{85}", r#""\x00\x1f\x7f\u0085""#)]
    #[case::printable_unicode("é😀", "\"é😀\"")]
    #[case::unprintable_spaces_and_formats(
        "\u{a0}\u{2028}\u{200e}\u{ad}",
        r#""\u00a0\u2028\u200e\u00ad""#
    )]
    #[case::private_use("\u{e000}\u{f0000}", r#""\ue000\U000f0000""#)]
    fn go_quote_matches_strconv_quote(#[case] input: &str, #[case] quoted: &str) {
        assert_eq!(go_quote(input), quoted);
    }

    const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

    fn pod(meta: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta})
    }

    #[test]
    fn bad_pod_name_renders_like_a_real_server() {
        let err = validate_object_meta(
            "Pod",
            true,
            NameRule::Dns1123Subdomain,
            &pod(json!({"name": "Bad_Name", "namespace": "default"})),
        )
        .unwrap_err();
        assert_eq!(
            err.message(),
            format!("Pod \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": {SUBDOMAIN_MSG}")
        );
        let status = err.to_status();
        assert_eq!(status["code"], 422);
        assert_eq!(status["reason"], "Invalid");
        assert_eq!(status["details"]["kind"], "Pod");
        assert_eq!(status["details"]["name"], "Bad_Name");
        assert_eq!(
            status["details"]["causes"][0]["reason"],
            "FieldValueInvalid"
        );
        assert_eq!(status["details"]["causes"][0]["field"], "metadata.name");
        assert_eq!(
            status["details"]["causes"][0]["message"],
            format!("Invalid value: \"Bad_Name\": {SUBDOMAIN_MSG}")
        );
    }

    #[test]
    fn several_causes_are_bracketed_and_group_is_qualified() {
        let err = validate_object_meta(
            "Deployment.apps",
            true,
            NameRule::Dns1123Subdomain,
            &json!({"metadata": {"name": "ok", "labels": {"a b": "c"}}}),
        )
        .unwrap_err();
        let msg = err.message();
        assert!(msg.starts_with("Deployment.apps \"ok\" is invalid: [metadata.namespace: Required value, metadata.labels: Invalid value: \"a b\": name part must consist of"), "{msg}");
        assert!(msg.ends_with(']'));
        assert_eq!(err.to_status()["details"]["group"], "apps");
        assert_eq!(err.to_status()["details"]["kind"], "Deployment");
    }

    /// `dns1123SubdomainFmt`: dot-separated labels, each alphanumeric at both ends.
    #[rstest]
    #[case::one_label("example", true)]
    #[case::labels("app.kubernetes.io", true)]
    #[case::dashes_inside("a-b.c--d.e", true)]
    #[case::digits("0.1.2", true)]
    #[case::empty_label("a..b", false)]
    #[case::leading_dot(".a", false)]
    #[case::trailing_dot("a.", false)]
    #[case::label_ends_in_dash("a-.b", false)]
    #[case::label_starts_with_dash("a.-b", false)]
    #[case::upper("a.B", false)]
    #[case::underscore("a_b.c", false)]
    #[case::non_ascii("a.\u{e9}", false)]
    #[case::only_dot(".", false)]
    fn subdomains_are_dot_separated_labels(#[case] value: &str, #[case] valid: bool) {
        assert_eq!(matches_dns1123_subdomain(value), valid);
    }

    #[rstest]
    #[case::ok(NameRule::Dns1123Subdomain, "my.name-1", false, 0)]
    #[case::upper(NameRule::Dns1123Subdomain, "Upper", false, 1)]
    #[case::too_long(NameRule::Dns1123Subdomain, &"a".repeat(254), false, 1)]
    #[case::label_dots(NameRule::Dns1123Label, "a.b", false, 1)]
    #[case::label_ok(NameRule::Dns1123Label, "kube-system", false, 0)]
    #[case::dns1035_digit(NameRule::Dns1035Label, "1abc", false, 1)]
    #[case::dns1035_ok(NameRule::Dns1035Label, "abc-1", false, 0)]
    #[case::prefix_dash(NameRule::Dns1123Subdomain, "gen-", true, 0)]
    #[case::prefix_bad(NameRule::Dns1123Subdomain, "Gen_", true, 1)]
    #[case::prefix_single_dash(NameRule::Dns1123Subdomain, "-", true, 0)]
    #[case::path_ok(NameRule::PathSegment, "system:controller:foo", false, 0)]
    #[case::path_dot(NameRule::PathSegment, "..", false, 1)]
    #[case::path_slash_pct(NameRule::PathSegment, "a/b%c", false, 2)]
    #[case::empty(NameRule::Dns1123Subdomain, "", false, 1)]
    fn name_rules(
        #[case] rule: NameRule,
        #[case] name: &str,
        #[case] prefix: bool,
        #[case] errors: usize,
    ) {
        assert_eq!(rule.check(name, prefix).len(), errors, "{name}");
    }

    #[test]
    fn label_dots_message() {
        assert_eq!(is_dns1123_label("a.b"), vec!["must not contain dots"]);
        assert_eq!(
            validate_path_segment_name("a/b%c"),
            vec!["may not contain '/'", "may not contain '%'"]
        );
        assert_eq!(validate_path_segment_name("."), vec!["may not be '.'"]);
    }

    #[rstest]
    #[case::simple("app", 0)]
    #[case::prefixed("example.com/app", 0)]
    #[case::empty_prefix("/app", 1)]
    #[case::bad_prefix("Example.com/app", 1)]
    #[case::empty_name("example.com/", 2)]
    #[case::two_slashes("a/b/c", 1)]
    #[case::long_name(&"a".repeat(64), 1)]
    #[case::bad_chars("-app", 1)]
    fn qualified_names(#[case] key: &str, #[case] errors: usize) {
        assert_eq!(is_qualified_name(key).len(), errors, "{key}");
    }

    #[test]
    fn qualified_name_messages() {
        assert_eq!(
            is_qualified_name("/x"),
            vec!["prefix part must be non-empty"]
        );
        assert_eq!(
            is_qualified_name("a/b/c"),
            vec!["a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
        );
    }

    #[rstest]
    #[case::empty("", 0)]
    #[case::ok("my_value-1.x", 0)]
    #[case::bad("a b", 1)]
    #[case::long(&"a".repeat(64), 1)]
    #[case::trailing_dash("abc-", 1)]
    fn label_values(#[case] v: &str, #[case] errors: usize) {
        assert_eq!(is_label_value(v).len(), errors);
    }

    #[test]
    fn label_value_message_uses_metadata_labels_field() {
        let causes = validate_labels(Some(&json!({"app": "a b"})), &"metadata.labels");
        assert_eq!(causes.len(), 1);
        assert_eq!(causes[0].field, "metadata.labels");
        assert!(causes[0]
            .message
            .starts_with("Invalid value: \"a b\": a valid label must be an empty string"));
    }

    /// Annotations checked knowing the keys of a map that passed the check give exactly the
    /// causes of a full check: only the name check of a kept key is skipped.
    #[rstest]
    #[case::a_new_key_that_is_not_a_name(json!({"a": "1"}), json!({"a": "2", "bad key": "x"}))]
    #[case::a_kept_key_whose_value_is_no_string(json!({"a": "1", "B/c": "2"}), json!({"a": 3, "B/c": "2"}))]
    #[case::kept_keys_over_the_size_limit(json!({"a": "1"}), json!({"a": "x".repeat(TOTAL_ANNOTATION_SIZE_LIMIT_BYTES)}))]
    #[case::nothing_wrong(json!({"a": "1", "Upper/Case": "v"}), json!({"a": "2", "Upper/Case": "v", "new/key": ""}))]
    #[case::all_keys_new(json!({}), json!({"x y": "1", "-bad": "2"}))]
    fn annotations_checked_knowing_valid_keys_give_the_full_causes(
        #[case] old: Value,
        #[case] new: Value,
    ) {
        assert!(
            validate_annotations(Some(&old), "f").is_empty(),
            "old must be valid"
        );
        let full = validate_annotations(Some(&new), "metadata.annotations");
        let known = validate_annotations_with(Some(&new), "metadata.annotations", old.as_object());
        let messages = |causes: &[Cause]| -> Vec<String> {
            causes
                .iter()
                .map(|c| format!("{} {} {}", c.reason, c.field, c.message))
                .collect()
        };
        assert_eq!(messages(&known), messages(&full));
    }

    #[test]
    fn annotations_total_size_and_case_insensitive_keys() {
        let big = "x".repeat(TOTAL_ANNOTATION_SIZE_LIMIT_BYTES);
        let causes = validate_annotations(Some(&json!({"Key": big})), "metadata.annotations");
        assert_eq!(causes.len(), 1);
        assert_eq!(causes[0].reason, "FieldValueTooLong");
        assert_eq!(
            causes[0].message,
            "Too long: may not be more than 262144 bytes"
        );
        assert!(validate_annotations(Some(&json!({"Upper.Case/Key": "v"})), "f").is_empty());
    }

    #[test]
    fn finalizers_validated_as_qualified_names_and_conflict() {
        let causes = validate_finalizers(
            Some(&json!(["orphan", "foregroundDeletion", "bad name"])),
            "metadata.finalizers",
        );
        assert_eq!(causes.len(), 2);
        assert_eq!(causes[0].message.split(':').next(), Some("Invalid value"));
        assert_eq!(
            causes[1].message,
            "Invalid value: [\"orphan\",\"foregroundDeletion\",\"bad name\"]: finalizer orphan and foregroundDeletion cannot be both set"
        );
    }

    #[test]
    fn namespace_rules() {
        let cluster = validate_object_meta(
            "Node",
            false,
            NameRule::Dns1123Subdomain,
            &json!({"metadata": {"name": "n", "namespace": "x"}}),
        )
        .unwrap_err();
        assert_eq!(
            cluster.message(),
            "Node \"n\" is invalid: metadata.namespace: Forbidden: not allowed on this type"
        );
        let missing =
            validate_object_meta("Pod", true, NameRule::Dns1123Subdomain, &json!({})).unwrap_err();
        assert_eq!(
            missing.message(),
            "Pod \"\" is invalid: [metadata.name: Required value: name or generateName is required, metadata.namespace: Required value]"
        );
    }

    #[test]
    fn owner_references_need_fields_and_one_controller() {
        let refs = json!([
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "a", "uid": "1", "controller": true},
            {"apiVersion": "", "kind": "", "name": "", "uid": "", "controller": true}
        ]);
        let causes = validate_owner_references(Some(&refs), "metadata.ownerReferences");
        let texts: Vec<String> = causes.iter().map(Cause::error_text).collect();
        assert_eq!(
            texts,
            vec![
                "metadata.ownerReferences[1].apiVersion: Required value: must not be empty",
                "metadata.ownerReferences[1].kind: Required value: must not be empty",
                "metadata.ownerReferences[1].name: Required value: must not be empty",
                "metadata.ownerReferences[1].uid: Required value: must not be empty",
                "metadata.ownerReferences: Invalid value: [{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"name\":\"a\",\"uid\":\"1\",\"controller\":true},{\"apiVersion\":\"\",\"kind\":\"\",\"name\":\"\",\"uid\":\"\",\"controller\":true}]: Only one reference can have Controller set to true. Found \"true\" in references for ConfigMap/a and /"
            ]
        );
        assert_eq!(causes[0].reason, "FieldValueRequired");
    }

    /// `validateOwnerReference`: the apiVersion must parse as a group version.
    #[rstest]
    #[case::core("v1", 0)]
    #[case::grouped("apps/v1", 0)]
    #[case::no_version("apps/", 1)]
    #[case::slash("/", 1)]
    #[case::two_slashes("a/b/c", 1)]
    fn owner_reference_api_versions(#[case] api_version: &str, #[case] errors: usize) {
        let refs = json!([{"apiVersion": api_version, "kind": "K", "name": "n", "uid": "u"}]);
        let causes = validate_owner_references(Some(&refs), "metadata.ownerReferences");
        assert_eq!(causes.len(), errors, "{causes:?}");
        if errors == 1 {
            assert_eq!(
                causes[0].error_text(),
                format!("metadata.ownerReferences[0].apiVersion: Invalid value: \"{api_version}\": must be <group>/<version> or <version>")
            );
        }
    }

    #[test]
    fn an_event_may_not_own() {
        let refs = json!([{"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "u"}]);
        let causes = validate_owner_references(Some(&refs), "metadata.ownerReferences");
        assert_eq!(
            causes[0].error_text(),
            "metadata.ownerReferences[0]: Invalid value: {\"apiVersion\":\"v1\",\"kind\":\"Event\",\"name\":\"e\",\"uid\":\"u\"}: /v1, Kind=Event is disallowed from being an owner"
        );
    }

    #[test]
    fn update_rules() {
        let old = json!({"metadata": {"name": "a", "uid": "u1", "resourceVersion": "5", "generation": 3,
            "deletionTimestamp": "2026-01-01T00:00:00Z", "finalizers": ["a.io/x"]}});
        let new = json!({"metadata": {"name": "a", "uid": "u2", "generation": 2,
            "deletionTimestamp": "2026-01-01T00:00:00Z", "finalizers": ["a.io/x", "b.io/y"]}});
        let err = validate_object_meta_update("ConfigMap", &new, &old).unwrap_err();
        let fields: Vec<&str> = err.causes.iter().map(|c| c.field.as_str()).collect();
        assert_eq!(
            fields,
            vec![
                "metadata.finalizers",
                "metadata.resourceVersion",
                "metadata.generation",
                "metadata.uid"
            ]
        );
        assert_eq!(
            err.causes[0].message,
            "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{\"b.io/y\"}"
        );
        assert_eq!(
            err.causes[3].message,
            "Invalid value: \"u2\": field is immutable"
        );
        let ok_new = json!({"metadata": {"name": "a", "uid": "u1", "resourceVersion": "5", "generation": 3,
            "deletionTimestamp": "2026-01-01T00:00:00Z", "finalizers": []}});
        assert!(validate_object_meta_update("ConfigMap", &ok_new, &old).is_ok());
    }

    #[test]
    fn owner_reference_duplicates_are_dropped_with_a_warning() {
        let owner = json!({"apiVersion": "v1", "kind": "X", "name": "nc-b", "uid": "b"});
        let mut other = owner.clone();
        other["controller"] = json!(true);
        let mut obj =
            json!({"metadata": {"ownerReferences": [owner.clone(), owner.clone(), other.clone()]}});
        let warning = dedup_owner_references(&mut obj, true).unwrap();
        assert!(warning.contains("API server dedups owner references"));
        assert!(warning.contains("after mutating admission happens"));
        assert!(warning.ends_with("duplicate UID(s) observed: b"));
        assert_eq!(obj["metadata"]["ownerReferences"], json!([owner, other]));
        assert_eq!(dedup_owner_references(&mut obj, false), None);
        assert_eq!(
            dedup_owner_references(&mut json!({"metadata": {}}), false),
            None
        );
        assert_eq!(dedup_owner_references(&mut json!(7), false), None);
    }

    #[rstest]
    #[case::plain("abc", "\"abc\"")]
    #[case::quote("a\"b", "\"a\\\"b\"")]
    #[case::newline("a\nb", "\"a\\nb\"")]
    #[case::control("\u{1}", "\"\\x01\"")]
    #[case::unicode("ü", "\"ü\"")]
    fn quoting(#[case] input: &str, #[case] expected: &str) {
        assert_eq!(go_quote(input), expected);
    }

    #[rstest]
    #[case::int(json!(3), "3")]
    #[case::float(json!(1.5), "1.5")]
    #[case::whole_float(json!(2.0), "2")]
    #[case::null(json!(null), "null")]
    #[case::boolean(json!(true), "true")]
    #[case::list(json!(["a", 1]), "[\"a\",1]")]
    #[case::map(json!({"b": 1, "a": "<x>"}), "{\"a\":\"\\u003cx\\u003e\",\"b\":1}")]
    fn values_render_like_go(#[case] v: Value, #[case] expected: &str) {
        assert_eq!(render_value(&v), expected);
    }

    #[test]
    fn malformed_metadata_never_panics() {
        for obj in [
            json!(null),
            json!([1]),
            json!({"metadata": 5}),
            json!({"metadata": {"name": 5, "labels": [1], "annotations": "x", "finalizers": {"a": 1}, "ownerReferences": "x"}}),
        ] {
            let _ = validate_object_meta("Pod", true, NameRule::Dns1123Subdomain, &obj);
            let _ = validate_object_meta_update("Pod", &obj, &obj);
        }
    }
}
