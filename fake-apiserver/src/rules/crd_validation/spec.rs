//! The rules on a CRD's spec and status outside its schemas, following
//! `validateCustomResourceDefinitionSpec`, `validateCustomResourceDefinitionVersion`,
//! `ValidateCustomResourceDefinitionNames`, `ValidateCustomResourceDefinitionSubresources`,
//! `ValidateCustomResourceColumnDefinition`, `ValidateCustomResourceSelectableFields`,
//! `validateCustomResourceConversion`, `ValidateCustomResourceDefinitionStoredVersions`,
//! `validateAPIApproval` and `validatePreserveUnknownFields` in
//! `apiextensions-apiserver/pkg/apis/apiextensions/validation/validation.go`.

use serde_json::Value;

use super::go_value;
use super::openapi;
use super::structural;
use super::{set_field, InternalSpec, InternalVersion, Options, Path};
use crate::rules::validation::{is_dns1035_label, is_dns1123_subdomain, Cause, FieldErrorType};

/// At most this many selectable fields per version (`MaxSelectableFields`).
pub const MAX_SELECTABLE_FIELDS: usize = 8;

/// ConversionReview versions the server understands.
const ACCEPTED_REVIEW_VERSIONS: [&str; 2] = ["v1", "v1beta1"];

/// The annotation protected groups need (`api-approved.kubernetes.io`).
const API_APPROVAL_ANNOTATION: &str = "api-approved.kubernetes.io";

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn strings(v: Option<&Value>) -> Vec<&str> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().map(|s| s.as_str().unwrap_or_default()).collect())
        .unwrap_or_default()
}

/// An `Invalid` cause whose value is rendered already.
fn invalid_rendered(path: impl std::fmt::Display, rendered: String, detail: &str) -> Cause {
    Cause::new(FieldErrorType::Invalid, path, Some(rendered), detail)
}

/// Whether `v` is a ConversionReview version the server understands.
pub fn is_accepted_review_version(v: &str) -> bool {
    ACCEPTED_REVIEW_VERSIONS.contains(&v)
}

/// The ConversionReview versions of a v1 `spec.conversion`.
pub fn conversion_review_versions(conversion: &Value) -> Vec<&str> {
    strings(conversion.pointer("/webhook/conversionReviewVersions"))
}

/// `validateEnumStrings`.
fn enum_string(path: &Path, value: &str, accepted: &[&str], required: bool) -> Vec<Cause> {
    if value.is_empty() {
        return if required {
            vec![Cause::required(path, "")]
        } else {
            Vec::new()
        };
    }
    if accepted.contains(&value) {
        return Vec::new();
    }
    let valid: Vec<String> = accepted.iter().map(|s| s.to_string()).collect();
    vec![Cause::not_supported(
        path,
        &Value::String(value.into()),
        &valid,
    )]
}

/// Whether any schema node of the CRD matches `pred`.
fn any_schema(spec: &InternalSpec<'_>, pred: &dyn Fn(&Value) -> bool) -> bool {
    spec.schemas()
        .into_iter()
        .any(|s| openapi::schema_has(s, pred))
}

/// `validateCustomResourceDefinitionSpec`.
pub fn validate_spec(spec: &InternalSpec<'_>, opts: &Options, path: &Path) -> Vec<Cause> {
    let mut causes = Vec::new();
    let raw = spec.raw;
    let group = str_of(raw, "group");
    let group_path = path.child("group");
    if group.is_empty() {
        causes.push(Cause::required(&group_path, ""));
    } else {
        let errs = is_dns1123_subdomain(group);
        if !errs.is_empty() {
            causes.push(Cause::invalid_str(&group_path, group, &errs.join(",")));
        } else if group.split('.').count() < 2 {
            causes.push(Cause::invalid_str(
                &group_path,
                group,
                "should be a domain with at least one dot",
            ));
        }
    }
    causes.extend(enum_string(
        &path.child("scope"),
        str_of(raw, "scope"),
        &["Cluster", "Namespaced"],
        true,
    ));

    let preserve = spec.preserve_unknown_fields();
    let mut opts = opts.clone();
    // Pruning (preserveUnknownFields false) needs structural schemas.
    if !preserve {
        opts.require_structural = true;
    }
    let top_schema = spec
        .validation
        .and_then(|v| set_field(v, "openAPIV3Schema"));
    fn version_schema<'a>(v: &InternalVersion<'a>) -> Option<&'a Value> {
        v.schema.and_then(|s| set_field(s, "openAPIV3Schema"))
    }
    if opts.require_openapi_schema {
        if top_schema.is_none() {
            for (i, v) in spec.versions.iter().enumerate() {
                if version_schema(v).is_none() {
                    causes.push(Cause::required(
                        path.child("versions")
                            .index(i)
                            .child("schema")
                            .child("openAPIV3Schema"),
                        "",
                    ));
                }
            }
        }
    } else if !preserve && top_schema.is_none() {
        for (i, v) in spec.versions.iter().enumerate() {
            let served = v.raw.get("served").and_then(Value::as_bool) == Some(true);
            if served && version_schema(v).is_none() {
                causes.push(Cause::required(
                    path.child("versions")
                        .index(i)
                        .child("schema")
                        .child("openAPIV3Schema"),
                    "because otherwise all fields are pruned",
                ));
            }
        }
    }
    if any_schema(spec, &|s| s.get("default").is_some()) {
        opts.require_structural = true;
        if preserve {
            causes.push(Cause::invalid(
                path.child("preserveUnknownFields"),
                &Value::Bool(true),
                "must be false in order to use defaults in the schema",
            ));
        }
    }
    if any_schema(spec, &openapi::has_kubernetes_extensions) {
        opts.require_structural = true;
    }

    let mut storage = 0;
    let mut seen: Vec<&str> = Vec::new();
    let mut unique = true;
    let any_status = has_any_status(spec);
    for (i, version) in spec.versions.iter().enumerate() {
        let name = version.name();
        if version.raw.get("storage").and_then(Value::as_bool) == Some(true) {
            storage += 1;
        }
        if seen.contains(&name) {
            unique = false;
        } else {
            seen.push(name);
        }
        let version_path = path.child("versions").index(i);
        let errs = is_dns1035_label(name);
        if !errs.is_empty() {
            causes.push(Cause::invalid_str(
                version_path.child("name"),
                name,
                &errs.join(","),
            ));
        }
        let status_enabled = has_status(subresources_for_version(spec, version));
        causes.extend(validate_version(
            version,
            &version_path,
            status_enabled,
            &opts,
        ));
    }
    // The "top-level and per-version ... mutually exclusive" and "per-version ... identical"
    // rules cannot fail for a CRD converted from v1, which has no top-level fields of its own.
    if !unique {
        causes.push(invalid_rendered(
            path.child("versions"),
            go_value::versions(spec),
            "must contain unique version names",
        ));
    }
    if storage != 1 {
        causes.push(invalid_rendered(
            path.child("versions"),
            go_value::versions(spec),
            "must have exactly one version marked as storage version",
        ));
    }
    if let Some(version) = spec.version.filter(|v| !v.is_empty()) {
        let errs = is_dns1035_label(version);
        if !errs.is_empty() {
            causes.push(Cause::invalid_str(
                path.child("version"),
                version,
                &errs.join(","),
            ));
        }
    }

    let names = raw.get("names").unwrap_or(&Value::Null);
    for key in ["plural", "singular", "kind", "listKind"] {
        if str_of(names, key).is_empty() {
            causes.push(Cause::required(path.child("names").child(key), ""));
        }
    }
    causes.extend(validate_names(names, &path.child("names")));
    causes.extend(openapi::validate_validation(
        spec.validation,
        any_status,
        &opts,
        &path.child("validation"),
    ));
    causes.extend(validate_subresources(
        spec.subresources,
        &path.child("subresources"),
    ));
    if let Some(columns) = spec.columns.and_then(Value::as_array) {
        for (i, column) in columns.iter().enumerate() {
            causes.extend(validate_column(
                column,
                &path.child("additionalPrinterColumns").index(i),
            ));
        }
    }
    if let Some(fields) = spec.selectable_fields.and_then(Value::as_array) {
        if spec.validation.is_none() {
            causes.push(Cause::invalid_str(
                path.child("selectableFields"),
                "",
                "may only be set when validations.schema is included",
            ));
        } else {
            causes.extend(validate_selectable_fields(
                fields,
                top_schema,
                &path.child("selectableFields"),
                &path.child("schema.openAPIV3Schema"),
                &opts,
                "",
            ));
        }
    }

    let conversion = set_field(raw, "conversion");
    let strategy = conversion
        .map(|c| str_of(c, "strategy"))
        .unwrap_or_default();
    if conversion.is_some() && strategy != "None" && preserve {
        causes.push(Cause::invalid_str(
            path.child("conversion").child("strategy"),
            strategy,
            "must be None if spec.preserveUnknownFields is true",
        ));
    }
    if let Some(conversion) = conversion {
        causes.extend(validate_conversion(
            conversion,
            opts.require_recognized_conversion_review_version,
            opts.allow_invalid_ca_bundle,
            &path.child("conversion"),
        ));
    }
    causes
}

/// The subresources that apply to a version: its own, or the top-level ones.
fn subresources_for_version<'a>(
    spec: &InternalSpec<'a>,
    version: &InternalVersion<'a>,
) -> Option<&'a Value> {
    if spec.versions.iter().any(|v| v.subresources.is_some()) {
        version.subresources
    } else {
        spec.subresources
    }
}

fn has_status(subresources: Option<&Value>) -> bool {
    subresources.and_then(|s| set_field(s, "status")).is_some()
}

fn has_any_status(spec: &InternalSpec<'_>) -> bool {
    has_status(spec.subresources) || spec.versions.iter().any(|v| has_status(v.subresources))
}

/// `validateCustomResourceDefinitionVersion`.
fn validate_version(
    version: &InternalVersion<'_>,
    path: &Path,
    status_enabled: bool,
    opts: &Options,
) -> Vec<Cause> {
    let mut causes = Vec::new();
    let deprecated = version.raw.get("deprecated").and_then(Value::as_bool) == Some(true);
    let warning = version
        .raw
        .get("deprecationWarning")
        .filter(|v| !v.is_null());
    for msg in deprecation_warning_errors(
        deprecated,
        warning.and_then(Value::as_str),
        warning.is_some(),
    ) {
        let rendered = warning.map_or_else(|| "null".to_string(), go_value::go_json);
        causes.push(invalid_rendered(
            path.child("deprecationWarning"),
            rendered,
            &msg,
        ));
    }
    causes.extend(openapi::validate_validation(
        version.schema,
        status_enabled,
        opts,
        &path.child("schema"),
    ));
    causes.extend(validate_subresources(
        version.subresources,
        &path.child("subresources"),
    ));
    if let Some(columns) = version.columns.and_then(Value::as_array) {
        for (i, column) in columns.iter().enumerate() {
            causes.extend(validate_column(
                column,
                &path.child("additionalPrinterColumns").index(i),
            ));
        }
    }
    if let Some(fields) = version.selectable_fields.and_then(Value::as_array) {
        let schema = version.schema.and_then(|s| set_field(s, "openAPIV3Schema"));
        match schema {
            None => causes.push(Cause::invalid_str(
                path.child("selectableFields"),
                "",
                "may only be set when `version.schema.openAPIV3Schema` is not included",
            )),
            Some(_) => causes.extend(validate_selectable_fields(
                fields,
                schema,
                &path.child("selectableFields"),
                &path.child("schema.openAPIV3Schema"),
                opts,
                version.name(),
            )),
        }
    }
    causes
}

/// `validateDeprecationWarning`.
fn deprecation_warning_errors(deprecated: bool, warning: Option<&str>, set: bool) -> Vec<String> {
    if !deprecated && set {
        return vec!["can only be set for deprecated versions".to_string()];
    }
    let Some(warning) = warning else {
        return Vec::new();
    };
    let mut errors = Vec::new();
    if warning.len() > 256 {
        errors.push("must be <= 256 characters long".to_string());
    }
    if warning.is_empty() {
        errors.push("must not be an empty string".to_string());
    }
    for (i, c) in warning.char_indices() {
        if c.is_control() {
            // Go checks printability first; a control character is never printable.
            errors.push(format!(
                "must only contain printable UTF-8 characters; non-printable character found at index {i}"
            ));
            break;
        }
    }
    errors
}

/// `ValidateCustomResourceDefinitionNames`.
pub fn validate_names(names: &Value, path: &Path) -> Vec<Cause> {
    let mut causes = Vec::new();
    for key in ["plural", "singular"] {
        let value = str_of(names, key);
        let errs = is_dns1035_label(value);
        if !value.is_empty() && !errs.is_empty() {
            causes.push(Cause::invalid_str(path.child(key), value, &errs.join(",")));
        }
    }
    for key in ["kind", "listKind"] {
        let value = str_of(names, key);
        let errs = is_dns1035_label(&value.to_lowercase());
        if !value.is_empty() && !errs.is_empty() {
            causes.push(Cause::invalid_str(
                path.child(key),
                value,
                &format!(
                    "may have mixed case, but should otherwise match: {}",
                    errs.join(",")
                ),
            ));
        }
    }
    for (i, short) in strings(names.get("shortNames")).into_iter().enumerate() {
        let errs = is_dns1035_label(short);
        if !errs.is_empty() {
            causes.push(Cause::invalid_str(
                path.child("shortNames").index(i),
                short,
                &errs.join(","),
            ));
        }
    }
    let kind = str_of(names, "kind");
    if !kind.is_empty() && kind == str_of(names, "listKind") {
        causes.push(Cause::invalid_str(
            path.child("listKind"),
            kind,
            "kind and listKind may not be the same",
        ));
    }
    for (i, category) in strings(names.get("categories")).into_iter().enumerate() {
        let errs = is_dns1035_label(category);
        if !errs.is_empty() {
            causes.push(Cause::invalid_str(
                path.child("categories").index(i),
                category,
                &errs.join(","),
            ));
        }
    }
    causes
}

/// `validateSimpleJSONPath`.
fn simple_json_path(s: &str, path: &Path) -> Vec<Cause> {
    if s.is_empty() {
        vec![Cause::invalid_str(path, s, "must not be empty")]
    } else if !s.starts_with('.') {
        vec![Cause::invalid_str(
            path,
            s,
            "must be a simple json path starting with .",
        )]
    } else {
        Vec::new()
    }
}

/// `ValidateCustomResourceDefinitionSubresources`.
fn validate_subresources(subresources: Option<&Value>, path: &Path) -> Vec<Cause> {
    let mut causes = Vec::new();
    let Some(scale) = subresources.and_then(|s| set_field(s, "scale")) else {
        return causes;
    };
    for (key, prefix, detail) in [
        (
            "specReplicasPath",
            ".spec.",
            "should be a json path under .spec",
        ),
        (
            "statusReplicasPath",
            ".status.",
            "should be a json path under .status",
        ),
    ] {
        let field = path.child(&format!("scale.{key}"));
        let value = str_of(scale, key);
        if value.is_empty() {
            causes.push(Cause::required(&field, ""));
            continue;
        }
        let errs = simple_json_path(value, &field);
        if !errs.is_empty() {
            causes.extend(errs);
        } else if !value.starts_with(prefix) {
            causes.push(Cause::invalid_str(&field, value, detail));
        }
    }
    let selector = str_of(scale, "labelSelectorPath");
    if !selector.is_empty() {
        let field = path.child("scale.labelSelectorPath");
        let errs = simple_json_path(selector, &field);
        if !errs.is_empty() {
            causes.extend(errs);
        } else if !selector.starts_with(".spec.") && !selector.starts_with(".status.") {
            causes.push(Cause::invalid_str(
                &field,
                selector,
                "should be a json path under either .spec or .status",
            ));
        }
    }
    causes
}

/// `ValidateCustomResourceColumnDefinition`.
fn validate_column(column: &Value, path: &Path) -> Vec<Cause> {
    const TYPES: &str = "boolean,date,integer,number,string";
    const FORMATS: &str = "byte,date,date-time,double,float,int32,int64,password";
    let mut causes = Vec::new();
    if str_of(column, "name").is_empty() {
        causes.push(Cause::required(path.child("name"), ""));
    }
    let ty = str_of(column, "type");
    if ty.is_empty() {
        causes.push(Cause::required(
            path.child("type"),
            &format!("must be one of {TYPES}"),
        ));
    } else if !TYPES.split(',').any(|t| t == ty) {
        causes.push(Cause::invalid_str(
            path.child("type"),
            ty,
            &format!("must be one of {TYPES}"),
        ));
    }
    let format = str_of(column, "format");
    if !format.is_empty() && !FORMATS.split(',').any(|f| f == format) {
        causes.push(Cause::invalid_str(
            path.child("format"),
            format,
            &format!("must be one of {FORMATS}"),
        ));
    }
    let json_path = str_of(column, "jsonPath");
    if json_path.is_empty() {
        causes.push(Cause::required(path.child("JSONPath"), ""));
    } else {
        causes.extend(simple_json_path(json_path, &path.child("JSONPath")));
    }
    causes
}

/// Resolves a selectable field's path in a schema (`cel.ValidFieldPath` without array
/// notation): the root element and the schema found, or the error text.
fn resolve_field_path<'a>(
    json_path: &str,
    schema: &'a Value,
) -> Result<(String, String, &'a Value), String> {
    let mut rendered = String::new();
    let mut root = String::new();
    let mut s = schema;
    let mut rest = json_path;
    while !rest.is_empty() {
        let Some(after_dot) = rest.strip_prefix('.') else {
            if rest.starts_with('[') {
                return Err("array notation is not allowed".into());
            }
            let tok: String = rest
                .chars()
                .take_while(|c| !matches!(c, '.' | '[' | ']'))
                .collect();
            let tok = if tok.is_empty() {
                rest[..1].to_string()
            } else {
                tok
            };
            return Err(format!("expected [ or . but got: {tok}"));
        };
        let end = after_dot.find(['.', '[', ']']).unwrap_or(after_dot.len());
        if end == 0 && after_dot.is_empty() {
            return Err("unexpected end of JSON path".into());
        }
        let (name, next) = if end == 0 {
            // A delimiter right after the dot is itself the token.
            (&after_dot[..1], &after_dot[1..])
        } else {
            (&after_dot[..end], &after_dot[end..])
        };
        let props = s.get("properties").and_then(Value::as_object);
        let additional = s.get("additionalProperties").filter(|a| !a.is_null());
        if let Some(props) = props {
            let Some(child) = props.get(name) else {
                return Err("does not refer to a valid field".into());
            };
            if rendered.is_empty() {
                root = name.to_string();
                rendered = name.to_string();
            } else {
                rendered = format!("{rendered}.{name}");
            }
            s = child;
        } else if let Some(additional) = additional {
            rendered = format!("{rendered}[{name}]");
            if root.is_empty() {
                root = rendered.clone();
            }
            match additional {
                Value::Object(_) => s = additional,
                _ => return Err("does not refer to a valid field".into()),
            }
        } else {
            return Err("does not refer to a valid field".into());
        }
        rest = next;
    }
    Ok((root, rendered, s))
}

/// `ValidateCustomResourceSelectableFields`.
fn validate_selectable_fields(
    fields: &[Value],
    schema: Option<&Value>,
    path: &Path,
    schema_path: &Path,
    opts: &Options,
    version: &str,
) -> Vec<Cause> {
    let mut causes = Vec::new();
    let Some(schema) = schema else {
        return causes;
    };
    if let Err(e) = structural::new_structural(schema) {
        causes.push(Cause::invalid_str(schema_path, "", &e));
    }
    let mut unique: Vec<String> = Vec::new();
    for (i, f) in fields.iter().enumerate() {
        let field_path = path.index(i).child("jsonPath");
        let json_path = str_of(f, "jsonPath");
        if json_path.is_empty() {
            causes.push(Cause::required(&field_path, ""));
            continue;
        }
        let (root, rendered, found) = match resolve_field_path(json_path, schema) {
            Ok(found) => found,
            Err(e) => {
                causes.push(Cause::invalid_str(
                    &field_path,
                    json_path,
                    &format!("is an invalid path: {e}"),
                ));
                continue;
            }
        };
        if root == "metadata" {
            causes.push(Cause::invalid_str(
                &field_path,
                json_path,
                "must not point to fields in metadata",
            ));
        }
        if !matches!(str_of(found, "type"), "string" | "boolean" | "integer") {
            causes.push(Cause::invalid_str(
                &field_path,
                json_path,
                "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.",
            ));
        }
        if unique.contains(&rendered) {
            causes.push(Cause::duplicate(
                &field_path,
                &Value::String(json_path.into()),
            ));
        } else {
            unique.push(rendered);
        }
    }
    if unique.len() > MAX_SELECTABLE_FIELDS
        && !opts
            .allow_too_many_selectable_fields
            .iter()
            .any(|v| v == version)
    {
        causes.push(Cause::too_many(
            path,
            unique.len() as i64,
            MAX_SELECTABLE_FIELDS as i64,
        ));
    }
    causes
}

/// `validateCustomResourceConversion` on the v1 `spec.conversion` (the internal form has the
/// webhook's `clientConfig` and `conversionReviewVersions` directly under `conversion`).
fn validate_conversion(
    conversion: &Value,
    require_recognized: bool,
    allow_invalid_ca_bundle: bool,
    path: &Path,
) -> Vec<Cause> {
    let mut causes = Vec::new();
    let strategy = str_of(conversion, "strategy");
    causes.extend(enum_string(
        &path.child("strategy"),
        strategy,
        &["None", "Webhook"],
        true,
    ));
    let client_config = conversion
        .pointer("/webhook/clientConfig")
        .filter(|v| !v.is_null());
    let review_versions = conversion_review_versions(conversion);
    let config_path = path.child("webhookClientConfig");
    if strategy == "Webhook" {
        match client_config {
            None => causes.push(Cause::required(
                &config_path,
                "required when strategy is set to Webhook",
            )),
            Some(cc) => {
                let url = cc.get("url").filter(|v| !v.is_null());
                let service = cc.get("service").filter(|v| !v.is_null());
                match (url, service) {
                    (Some(_), Some(_)) | (None, None) => causes.push(Cause::required(
                        &config_path,
                        "exactly one of url or service is required",
                    )),
                    (Some(url), None) => causes.extend(validate_webhook_url(
                        &config_path.child("url"),
                        url.as_str().unwrap_or_default(),
                    )),
                    (None, Some(service)) => causes.extend(validate_webhook_service(
                        &config_path.child("service"),
                        service,
                    )),
                }
                let bundle = cc
                    .get("caBundle")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if !bundle.is_empty() && !allow_invalid_ca_bundle {
                    if let Some(error) = ca_bundle_error(bundle) {
                        causes.push(Cause::invalid(
                            config_path.child("caBundle"),
                            &Value::String(bundle.to_string()),
                            &error,
                        ));
                    }
                }
            }
        }
        causes.extend(validate_review_versions(
            &review_versions,
            require_recognized,
            &path.child("conversionReviewVersions"),
        ));
    } else {
        if client_config.is_some() {
            causes.push(Cause::forbidden(
                &config_path,
                "should not be set when strategy is not set to Webhook",
            ));
        }
        if !review_versions.is_empty() {
            causes.push(Cause::forbidden(
                path.child("conversionReviewVersions"),
                "should not be set when strategy is not set to Webhook",
            ));
        }
    }
    causes
}

/// `webhook.ValidateCABundle` on a bundle as the v1 JSON carries it (base64 of the PEM text):
/// the TLS configuration's error, if the bundle cannot be used.
pub(crate) fn ca_bundle_error(bundle_base64: &str) -> Option<String> {
    let pem = crate::rules::go_encoding::base64::decode_std(bundle_base64.as_bytes()).ok()?;
    crate::rules::certificates::x509::validate_ca_bundle(&pem).err()
}

/// `validateConversionReviewVersions`.
fn validate_review_versions(
    versions: &[&str],
    require_recognized: bool,
    path: &Path,
) -> Vec<Cause> {
    let mut causes = Vec::new();
    if versions.is_empty() {
        causes.push(Cause::required(path, ""));
        return causes;
    }
    let mut seen: Vec<&str> = Vec::new();
    let mut accepted = false;
    for (i, v) in versions.iter().enumerate() {
        if seen.contains(v) {
            causes.push(Cause::invalid_str(path.index(i), v, "duplicate version"));
            continue;
        }
        seen.push(v);
        for msg in is_dns1035_label(v) {
            causes.push(Cause::invalid_str(path.index(i), v, &msg));
        }
        accepted |= is_accepted_review_version(v);
    }
    if require_recognized && !accepted {
        let rendered = go_value::go_json(&Value::Array(
            versions
                .iter()
                .map(|v| Value::String(v.to_string()))
                .collect(),
        ));
        causes.push(invalid_rendered(
            path,
            rendered,
            &format!(
                "must include at least one of {}",
                ACCEPTED_REVIEW_VERSIONS.join(", ")
            ),
        ));
    }
    causes
}

/// The parts of a URL `webhook.ValidateWebhookURL` looks at, split as Go's `url.Parse` does.
struct UrlParts<'a> {
    scheme: &'a str,
    host: &'a str,
    user: Option<&'a str>,
    query: &'a str,
    fragment: &'a str,
}

fn parse_url(url: &str) -> UrlParts<'_> {
    let (rest, fragment) = url.split_once('#').unwrap_or((url, ""));
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (scheme, rest) = match rest.split_once(':') {
        Some((s, r))
            if s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) =>
        {
            (s, r)
        }
        _ => ("", rest),
    };
    let (mut host, mut user) = ("", None);
    if let Some(authority) = rest.strip_prefix("//") {
        let authority = authority.split('/').next().unwrap_or_default();
        match authority.rsplit_once('@') {
            Some((u, h)) => {
                user = Some(u);
                host = h;
            }
            None => host = authority,
        }
    }
    UrlParts {
        scheme,
        host,
        user,
        query,
        fragment,
    }
}

/// `webhook.ValidateWebhookURL` with https required.
pub(crate) fn validate_webhook_url(path: &Path, url: &str) -> Vec<Cause> {
    const FORM: &str = "; desired format: https://host[/path]";
    let mut causes = Vec::new();
    let u = parse_url(url);
    if u.scheme != "https" {
        causes.push(Cause::invalid_str(
            path,
            u.scheme,
            &format!("'https' is the only allowed URL scheme{FORM}"),
        ));
    }
    if u.host.is_empty() {
        causes.push(Cause::invalid_str(
            path,
            u.host,
            &format!("host must be specified{FORM}"),
        ));
    }
    if let Some(user) = u.user {
        causes.push(Cause::invalid_str(
            path,
            user,
            "user information is not permitted in the URL",
        ));
    }
    if !u.fragment.is_empty() {
        causes.push(Cause::invalid_str(
            path,
            u.fragment,
            "fragments are not permitted in the URL",
        ));
    }
    if !u.query.is_empty() {
        causes.push(Cause::invalid_str(
            path,
            u.query,
            "query parameters are not permitted in the URL",
        ));
    }
    causes
}

/// `webhook.ValidateWebhookService` as the CRD validation calls it: upstream passes the
/// service's name where the function expects the namespace and the other way round, so a
/// missing namespace is reported on `name` and a missing name on `namespace`.
pub(crate) fn validate_webhook_service(path: &Path, service: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let as_namespace = str_of(service, "name");
    let as_name = str_of(service, "namespace");
    if as_name.is_empty() {
        causes.push(Cause::required(path.child("name"), ""));
    }
    if as_namespace.is_empty() {
        causes.push(Cause::required(path.child("namespace"), ""));
    }
    let port = service.get("port").and_then(Value::as_i64).unwrap_or(443);
    if !(1..=65535).contains(&port) {
        causes.push(Cause::invalid(
            path.child("port"),
            &Value::from(port),
            "port is not valid: must be between 1 and 65535, inclusive",
        ));
    }
    let Some(url_path) = service.get("path").and_then(Value::as_str) else {
        return causes;
    };
    if url_path == "/" || url_path.is_empty() {
        return causes;
    }
    let field = path.child("path");
    if url_path == "//" {
        causes.push(Cause::invalid_str(
            &field,
            url_path,
            "segment[0] may not be empty",
        ));
        return causes;
    }
    if !url_path.starts_with('/') {
        causes.push(Cause::invalid_str(
            &field,
            url_path,
            "must start with a '/'",
        ));
    }
    let mut to_check = url_path.get(1..).unwrap_or_default();
    to_check = to_check.strip_suffix('/').unwrap_or(to_check);
    for (i, step) in to_check.split('/').enumerate() {
        if step.is_empty() {
            causes.push(Cause::invalid_str(
                &field,
                url_path,
                &format!("segment[{i}] may not be empty"),
            ));
            continue;
        }
        for failure in is_dns1123_subdomain(step) {
            causes.push(Cause::invalid_str(
                &field,
                url_path,
                &format!("segment[{i}]: {failure}"),
            ));
        }
    }
    causes
}

/// `validateCustomResourceDefinitionSpecUpdate`'s own rules (after the spec rules).
pub fn validate_spec_update(
    spec: &InternalSpec<'_>,
    old: &InternalSpec<'_>,
    opts: &Options,
    path: &Path,
) -> Vec<Cause> {
    let mut causes = Vec::new();
    let immutable = |causes: &mut Vec<Cause>, field: Path, new: &str, old: &str| {
        if new != old {
            causes.push(Cause::invalid_str(field, new, "field is immutable"));
        }
    };
    let names = |s: &InternalSpec<'_>, key: &str| {
        s.raw
            .pointer(&format!("/names/{key}"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    if opts.require_immutable_names {
        immutable(
            &mut causes,
            path.child("scope"),
            str_of(spec.raw, "scope"),
            str_of(old.raw, "scope"),
        );
        immutable(
            &mut causes,
            path.child("names").child("kind"),
            &names(spec, "kind"),
            &names(old, "kind"),
        );
    }
    immutable(
        &mut causes,
        path.child("group"),
        str_of(spec.raw, "group"),
        str_of(old.raw, "group"),
    );
    immutable(
        &mut causes,
        path.child("names").child("plural"),
        &names(spec, "plural"),
        &names(old, "plural"),
    );
    causes
}

/// `ValidateCustomResourceDefinitionStatus`: the accepted names follow the names rules.
pub fn validate_status(crd: &Value) -> Vec<Cause> {
    match crd.pointer("/status/acceptedNames") {
        Some(names) => validate_names(names, &Path::new("status").child("acceptedNames")),
        None => Vec::new(),
    }
}

/// `ValidateCustomResourceDefinitionStoredVersions`.
pub fn validate_stored_versions(stored: Option<&[String]>, spec: &InternalSpec<'_>) -> Vec<Cause> {
    let path = Path::new("status").child("storedVersions");
    let rendered = || match stored {
        None => "null".to_string(),
        Some(list) => go_value::go_json(&Value::Array(
            list.iter().map(|s| Value::String(s.clone())).collect(),
        )),
    };
    let Some(list) = stored.filter(|l| !l.is_empty()) else {
        return vec![invalid_rendered(
            path,
            rendered(),
            "must have at least one stored version",
        )];
    };
    let mut causes = Vec::new();
    let mut remaining: Vec<(usize, &str)> = list.iter().map(String::as_str).enumerate().collect();
    for v in &spec.versions {
        let name = v.name();
        let found = list.iter().any(|s| s == name);
        if v.raw.get("storage").and_then(Value::as_bool) == Some(true) && !found {
            causes.push(invalid_rendered(
                &path,
                rendered(),
                &format!("must have the storage version {name}"),
            ));
        }
        remaining.retain(|(_, s)| *s != name);
    }
    // Upstream walks a map here; the fake reports in list order so that answers are stable.
    remaining.dedup_by(|a, b| a.1 == b.1);
    for (i, v) in remaining {
        causes.push(Cause::invalid_str(
            path.index(i),
            v,
            &format!(
                "missing from spec.versions; {v} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in {v} and removes {v} from status.storedVersions"
            ),
        ));
    }
    causes
}

/// `IsProtectedCommunityGroup`: groups under `k8s.io` and `kubernetes.io`.
fn is_protected_group(group: &str) -> bool {
    group == "k8s.io"
        || group.ends_with(".k8s.io")
        || group == "kubernetes.io"
        || group.ends_with(".kubernetes.io")
}

/// The approval state of a CRD (`GetAPIApprovalState`), as (state, reason).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Approval {
    Missing,
    Bypassed,
    Approved,
    Invalid,
}

fn approval_state(crd: &Value) -> (Approval, String) {
    let annotation = crd
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(API_APPROVAL_ANNOTATION))
        .and_then(Value::as_str)
        .unwrap_or_default();
    if annotation.is_empty() {
        return (
            Approval::Missing,
            format!("protected groups must have approval annotation \"{API_APPROVAL_ANNOTATION}\", see https://github.com/kubernetes/enhancements/pull/1111"),
        );
    }
    if annotation.starts_with("unapproved") {
        return (Approval::Bypassed, format!("not approved: {annotation:?}"));
    }
    let u = parse_url(annotation);
    if !u.scheme.is_empty() && !u.host.is_empty() {
        return (Approval::Approved, format!("approved in {annotation}"));
    }
    (
        Approval::Invalid,
        format!("protected groups must have approval annotation \"{API_APPROVAL_ANNOTATION}\" with either a URL or a reason starting with \"unapproved\", see https://github.com/kubernetes/enhancements/pull/1111"),
    )
}

/// `validateAPIApproval`: CRDs in protected groups need the approval annotation.
pub fn validate_api_approval(crd: &Value, old: Option<&Value>) -> Vec<Cause> {
    let group = crd
        .pointer("/spec/group")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !is_protected_group(group) {
        return Vec::new();
    }
    let (state, reason) = approval_state(crd);
    if old.is_some_and(|o| approval_state(o).0 == state) {
        return Vec::new();
    }
    let path = Path::new("metadata")
        .child("annotations")
        .key(API_APPROVAL_ANNOTATION);
    let value = crd
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(API_APPROVAL_ANNOTATION))
        .and_then(Value::as_str)
        .unwrap_or_default();
    match state {
        Approval::Approved | Approval::Bypassed => Vec::new(),
        Approval::Missing => vec![Cause::required(path, &reason)],
        Approval::Invalid => vec![Cause::invalid_str(path, value, &reason)],
    }
}

/// `validatePreserveUnknownFields`: `spec.preserveUnknownFields` may not become true.
pub fn validate_preserve_unknown_fields(crd: &Value, old: Option<&Value>) -> Vec<Cause> {
    let puf = |c: &Value| {
        c.pointer("/spec/preserveUnknownFields")
            .and_then(Value::as_bool)
            == Some(true)
    };
    if old.is_some_and(puf) || !puf(crd) {
        return Vec::new();
    }
    vec![Cause::invalid(
        Path::new("spec").child("preserveUnknownFields"),
        &Value::Bool(true),
        "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
    )]
}
