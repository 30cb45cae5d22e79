//! The Kubernetes CEL `format` library (`k8s.io/apiserver/pkg/cel/library/format.go`): named
//! string formats a rule validates with, `format.dns1123Label().validate(self.name)` or
//! `format.named('uuid').value().validate(self.id)`, answering `optional.none()` for a valid
//! string and otherwise the list of the format's error messages (the same messages the
//! server's own validation gives for names, label values and schema formats).

use std::sync::Arc;

use cel::common::functions::Function;
use cel::common::types::{CelOptional, Type, STRING_TYPE};
use cel::common::value::{CowVal, Val};
use cel::objects::Opaque;
use cel::{DeclarationError, Env, Value};

use super::value_types::{opaque, string_arg, typed, Answer};
use crate::rules::validation::{self, NameRule};

/// The CEL type of a format (`apiservercel.FormatType`).
const FORMAT: &str = "kubernetes.NamedFormat";

/// One of the library's formats (`ConstantFormats`), by the name a rule uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CelFormat {
    key: &'static str,
}

impl Opaque for CelFormat {
    fn runtime_type_name(&self) -> &str {
        FORMAT
    }
}

/// Every format, by the name `format.named` and the `format.<name>()` functions take.
const FORMATS: [CelFormat; 13] = [
    CelFormat {
        key: "dns1123Label",
    },
    CelFormat {
        key: "dns1123Subdomain",
    },
    CelFormat {
        key: "dns1035Label",
    },
    CelFormat {
        key: "qualifiedName",
    },
    CelFormat {
        key: "dns1123LabelPrefix",
    },
    CelFormat {
        key: "dns1123SubdomainPrefix",
    },
    CelFormat {
        key: "dns1035LabelPrefix",
    },
    CelFormat { key: "labelValue" },
    CelFormat { key: "uri" },
    CelFormat { key: "uuid" },
    CelFormat { key: "byte" },
    CelFormat { key: "date" },
    CelFormat { key: "datetime" },
];

impl CelFormat {
    /// The format's `ValidateFunc`: its error messages for `text` (none: valid).
    fn validate(self, text: &str) -> Vec<String> {
        let schema_format = |format: &str, message: &str| -> Vec<String> {
            match crate::rules::schema_format::check(format, text) {
                Some(false) => vec![message.to_string()],
                _ => Vec::new(),
            }
        };
        match self.key {
            "dns1123Label" => NameRule::Dns1123Label.check(text, false),
            "dns1123Subdomain" => NameRule::Dns1123Subdomain.check(text, false),
            "dns1035Label" => NameRule::Dns1035Label.check(text, false),
            "qualifiedName" => validation::is_qualified_name(text),
            "dns1123LabelPrefix" => NameRule::Dns1123Label.check(text, true),
            "dns1123SubdomainPrefix" => NameRule::Dns1123Subdomain.check(text, true),
            "dns1035LabelPrefix" => NameRule::Dns1035Label.check(text, true),
            "labelValue" => validation::is_label_value(text),
            // `url.ParseRequestURI`'s error, as `*url.Error` prints it.
            "uri" => match crate::rules::request_uri::parse(text) {
                Ok(_) => Vec::new(),
                Err(why) => vec![format!("parse {}: {why}", validation::go_quote(text))],
            },
            "uuid" => schema_format("uuid", "does not match the UUID format"),
            "byte" => schema_format("byte", "invalid base64"),
            "date" => schema_format("date", "invalid date"),
            "datetime" => schema_format("datetime", "invalid datetime"),
            _ => Vec::new(),
        }
    }
}

/// Adds the library to `env`: `format.named`, one `format.<name>()` per format, and
/// `<format>.validate(string)`.
pub(crate) fn add(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_overload("format.named", "format-named", vec![STRING_TYPE], named)?;
    for (format, function) in FORMATS.iter().zip(CONSTANTS) {
        let name = format!("format.{}", format.key);
        env.add_overload(&name, &name, vec![], function)?;
    }
    env.add_member_overload(
        "validate",
        "format-validate",
        Type::new_opaque_type(FORMAT),
        vec![STRING_TYPE],
        validate,
    )
}

/// `format.<name>()` for the `I`th format.
fn constant<'b, 'v, const I: usize>(_: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    opaque(FORMATS[I])
}

/// The `format.<name>()` functions, in the order of [`FORMATS`].
const CONSTANTS: [Function; 13] = [
    constant::<0>,
    constant::<1>,
    constant::<2>,
    constant::<3>,
    constant::<4>,
    constant::<5>,
    constant::<6>,
    constant::<7>,
    constant::<8>,
    constant::<9>,
    constant::<10>,
    constant::<11>,
    constant::<12>,
];

/// `format.named(name)`: the format, or `optional.none()` for a name the library lacks.
fn named<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    let key = string_arg(&args, 0, "format.named")?;
    let answer: Box<dyn Val> = match FORMATS.into_iter().find(|f| f.key == key) {
        Some(format) => {
            let format: Box<dyn Val> = Value::Opaque(Arc::new(format)).try_into()?;
            Box::new(CelOptional::of(format))
        }
        None => Box::new(CelOptional::none()),
    };
    Ok(CowVal::Owned(answer))
}

/// `<format>.validate(text)`: `optional.none()` when `text` is valid, else the messages.
fn validate<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    let format = typed::<CelFormat>(&args, 0, "validate")?;
    let text = string_arg(&args, 1, "validate")?;
    let errors = format.validate(&text);
    if errors.is_empty() {
        return Ok(CowVal::Owned(Box::new(CelOptional::none())));
    }
    let list = Value::List(
        errors
            .into_iter()
            .map(|e| Value::String(e.into()))
            .collect::<Vec<_>>()
            .into(),
    );
    Ok(CowVal::Owned(Box::new(CelOptional::of(list.try_into()?))))
}
