//! The CRD rules against the messages of `apiextensions/validation` (each case names the
//! upstream rule it follows).

use rstest::rstest;
use serde_json::{json, Value};

use super::*;

/// A valid namespaced CRD with one version and a status subresource.
fn crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {"type": "object", "properties": {
                            "size": {"type": "integer", "default": 1},
                            "ports": {"type": "array", "x-kubernetes-list-type": "map",
                                "x-kubernetes-list-map-keys": ["name"],
                                "items": {"type": "object", "required": ["name"],
                                    "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}},
                            "port": {"x-kubernetes-int-or-string": true},
                            "free": {"x-kubernetes-preserve-unknown-fields": true},
                            "template": {"type": "object", "x-kubernetes-embedded-resource": true,
                                "x-kubernetes-preserve-unknown-fields": true}
                        }},
                        "status": {"type": "object", "properties": {
                            "resources": {"type": "array", "items": {"type": "object",
                                "x-kubernetes-preserve-unknown-fields": true}}
                        }}
                    }
                }}
            }]
        }
    })
}

fn with(mut base: Value, pointer: &str, value: Value) -> Value {
    let (parent, key) = pointer.rsplit_once('/').unwrap();
    let target = base.pointer_mut(parent).unwrap();
    match target {
        Value::Array(list) => {
            let i: usize = key.parse().unwrap();
            if i < list.len() {
                list[i] = value;
            } else {
                list.push(value);
            }
        }
        Value::Object(m) => {
            if value.is_null() {
                m.remove(key);
            } else {
                m.insert(key.to_string(), value);
            }
        }
        _ => panic!("{pointer}"),
    }
    base
}

const SCHEMA: &str = "/spec/versions/0/schema/openAPIV3Schema";
const VALIDATION: &str = "spec.validation.openAPIV3Schema";

fn texts(causes: &[Cause]) -> Vec<String> {
    causes.iter().map(Cause::error_text).collect()
}

#[test]
fn a_valid_crd_has_no_causes() {
    assert_eq!(texts(&create_causes(&crd())), Vec::<String>::new());
}

#[test]
fn the_issue_s_resource_slice_message() {
    let bad = with(
        crd(),
        &format!("{SCHEMA}/properties/status/properties/resources/items"),
        json!({"description": "one entry"}),
    );
    let err = validate_create(&bad).unwrap_err();
    assert_eq!(err.code, 422);
    assert_eq!(err.reason, "Invalid");
    assert_eq!(
        err.message,
        "CustomResourceDefinition.apiextensions.k8s.io \"widgets.example.com\" is invalid: \
         spec.validation.openAPIV3Schema.properties[status].properties[resources].items.type: \
         Required value: must not be empty for specified array items"
    );
    assert_eq!(err.causes[0].reason, "FieldValueRequired");
}

#[test]
fn per_version_schemas_report_under_the_version() {
    // Two versions with different schemas stay per version (conversion to the internal form
    // only moves identical ones to spec.validation).
    let mut c = crd();
    let mut v2 = c["spec"]["versions"][0].clone();
    v2["name"] = json!("v2");
    v2["storage"] = json!(false);
    v2["schema"]["openAPIV3Schema"]["properties"]["extra"] = json!({"type": "array", "items": {}});
    c["spec"]["versions"].as_array_mut().unwrap().push(v2);
    assert_eq!(
        texts(&create_causes(&c)),
        vec!["spec.versions[1].schema.openAPIV3Schema.properties[extra].items.type: Required value: must not be empty for specified array items"]
    );
    // Identical schemas move to the top, whatever the number of versions.
    let mut same = crd();
    let mut v2 = same["spec"]["versions"][0].clone();
    v2["name"] = json!("v2");
    v2["storage"] = json!(false);
    v2["schema"]["openAPIV3Schema"]["properties"]["spec"]["type"] = json!("");
    same["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["type"] =
        json!("");
    same["spec"]["versions"].as_array_mut().unwrap().push(v2);
    assert_eq!(
        texts(&create_causes(&same)),
        vec![format!("{VALIDATION}.properties[spec].type: Required value: must not be empty for specified object fields")]
    );
}

macro_rules! dns1035 {
    () => {
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
    };
}

/// `validateCustomResourceDefinitionSpec`, `ValidateCustomResourceDefinitionNames`, the CRD's
/// name function, `ValidateCustomResourceDefinitionStoredVersions`, `validateAPIApproval`,
/// `validatePreserveUnknownFields`.
#[rstest]
#[case::name_must_be_plural_dot_group("/metadata/name", json!("gadgets.example.com"),
    &["metadata.name: Invalid value: \"gadgets.example.com\": must be spec.names.plural+\".\"+spec.group"])]
#[case::group_needs_a_dot("/spec/group", json!("example"), &[
    "metadata.name: Invalid value: \"widgets.example.com\": must be spec.names.plural+\".\"+spec.group",
    "spec.group: Invalid value: \"example\": should be a domain with at least one dot"])]
#[case::scope_required("/spec/scope", Value::Null, &["spec.scope: Required value"])]
#[case::scope_supported("/spec/scope", json!("Galaxy"),
    &["spec.scope: Unsupported value: \"Galaxy\": supported values: \"Cluster\", \"Namespaced\""])]
#[case::version_name_dns1035("/spec/versions/0/name", json!("V1"), &[
    concat!("spec.versions[0].name: Invalid value: \"V1\": ", dns1035!()),
    concat!("spec.version: Invalid value: \"V1\": ", dns1035!())])]
#[case::no_storage_version("/spec/versions/0/storage", json!(false), &[
    "spec.versions: Invalid value: [{\"Name\":\"v1\",\"Served\":true,\"Storage\":false,\"Deprecated\":false,\"DeprecationWarning\":null,\"Schema\":null,\"Subresources\":null,\"AdditionalPrinterColumns\":null,\"SelectableFields\":null}]: must have exactly one version marked as storage version",
    "status.storedVersions: Invalid value: null: must have at least one stored version"])]
#[case::plural_dns1035("/spec/names/plural", json!("Widgets"), &[
    "metadata.name: Invalid value: \"widgets.example.com\": must be spec.names.plural+\".\"+spec.group",
    concat!("spec.names.plural: Invalid value: \"Widgets\": ", dns1035!())])]
#[case::kind_equals_list_kind("/spec/names/listKind", json!("Widget"),
    &["spec.names.listKind: Invalid value: \"Widget\": kind and listKind may not be the same"])]
#[case::kind_mixed_case("/spec/names/kind", json!("Wid_get"), &[
    concat!("spec.names.kind: Invalid value: \"Wid_get\": may have mixed case, but should otherwise match: ", dns1035!())])]
#[case::short_name("/spec/names/shortNames", json!(["ok", "Not OK"]),
    &[concat!("spec.names.shortNames[1]: Invalid value: \"Not OK\": ", dns1035!())])]
#[case::schema_required("/spec/versions/0/schema", Value::Null,
    &["spec.versions[0].schema.openAPIV3Schema: Required value"])]
#[case::preserve_unknown_fields("/spec/preserveUnknownFields", json!(true), &[
    "spec.preserveUnknownFields: Invalid value: true: must be false in order to use defaults in the schema",
    "spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead"])]
#[case::deprecation_warning_only_when_deprecated("/spec/versions/0/deprecationWarning", json!("old"),
    &["spec.versions[0].deprecationWarning: Invalid value: \"old\": can only be set for deprecated versions"])]
fn spec_rules(#[case] pointer: &str, #[case] value: Value, #[case] expected: &[&str]) {
    let c = with(crd(), pointer, value);
    assert_eq!(texts(&create_causes(&c)), expected);
}

#[test]
fn names_default_from_the_kind_and_are_then_required() {
    let mut c = with(crd(), "/spec/names/singular", Value::Null);
    c = with(c, "/spec/names/listKind", Value::Null);
    apply_defaults(&mut c);
    assert_eq!(c["spec"]["names"]["singular"], "widget");
    assert_eq!(c["spec"]["names"]["listKind"], "WidgetList");
    assert_eq!(c["spec"]["conversion"], json!({"strategy": "None"}));
    let mut no_kind = with(crd(), "/spec/names", json!({"plural": "widgets"}));
    apply_defaults(&mut no_kind);
    assert_eq!(
        texts(&create_causes(&no_kind)),
        vec![
            "spec.names.singular: Required value",
            "spec.names.kind: Required value",
            "spec.names.listKind: Required value"
        ]
    );
}

/// `specStandardValidatorV3.validate`, `ValidateCustomResourceDefinitionOpenAPISchema`,
/// `validateMapListKeysMapSet`, `validateCustomResourceDefinitionValidation`.
#[rstest]
#[case::additional_properties_with_properties("/properties/spec/additionalProperties", json!({"type": "string"}),
    &["spec.validation.openAPIV3Schema.properties[spec].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive"])]
#[case::unique_items("/properties/spec/properties/ports/uniqueItems", json!(true),
    &["spec.validation.openAPIV3Schema.properties[spec].properties[ports].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic"])]
#[case::type_not_openapi("/properties/spec/properties/size/type", json!("int"), &[
    "spec.validation.openAPIV3Schema.properties[spec].properties[size].default: Invalid value: \"integer\":  in body must be of type int: \"integer\"",
    "spec.validation.openAPIV3Schema.properties[spec].properties[size].type: Unsupported value: \"int\": supported values: \"array\", \"boolean\", \"integer\", \"number\", \"object\", \"string\""])]
#[case::ref_forbidden("/properties/spec/properties/size/$ref", json!("#/x"),
    &["spec.validation.openAPIV3Schema.properties[spec].properties[size].$ref: Forbidden: $ref is not supported"])]
#[case::preserve_false("/properties/spec/properties/free/x-kubernetes-preserve-unknown-fields", json!(false), &[
    "spec.validation.openAPIV3Schema.properties[spec].properties[free].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined"])]
#[case::list_type_needs_array("/properties/spec/properties/size/x-kubernetes-list-type", json!("set"),
    &["spec.validation.openAPIV3Schema.properties[spec].properties[size].type: Invalid value: \"integer\": must be array if x-kubernetes-list-type is specified"])]
#[case::map_list_without_keys("/properties/spec/properties/ports/x-kubernetes-list-map-keys", Value::Null,
    &["spec.validation.openAPIV3Schema.properties[spec].properties[ports].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map"])]
#[case::map_key_not_a_property("/properties/spec/properties/ports/x-kubernetes-list-map-keys", json!(["name", "proto"]),
    &["spec.validation.openAPIV3Schema.properties[spec].properties[ports].x-kubernetes-list-map-keys: Invalid value: [\"name\",\"proto\"]: entries must all be names of item properties"])]
#[case::map_key_required_or_defaulted("/properties/spec/properties/ports/items/required", Value::Null,
    &["spec.validation.openAPIV3Schema.properties[spec].properties[ports].items.properties[name].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"])]
#[case::map_type_values("/properties/spec/x-kubernetes-map-type", json!("fine"),
    &["spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-map-type: Unsupported value: \"fine\": supported values: \"atomic\", \"granular\""])]
#[case::default_in_metadata("/properties/metadata", json!({"type": "object", "default": {}}), &[
    "spec.validation.openAPIV3Schema.properties[metadata].default: Forbidden: must not be set in top-level metadata"])]
#[case::status_root_fields("/minProperties", json!(1), &[
    "spec.validation.openAPIV3Schema: Invalid value: {\"ID\":\"\",\"Schema\":\"\",\"Ref\":null,\"Description\":\"\",\"Type\":\"object\",\"Nullable\":false"])]
#[case::validation_rule_without_rule("/properties/spec/x-kubernetes-validations", json!([{"rule": " "}]),
    &["spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Required value: rule is not specified"])]
fn openapi_rules(#[case] pointer: &str, #[case] value: Value, #[case] expected: &[&str]) {
    let c = with(crd(), &format!("{SCHEMA}{pointer}"), value);
    let got = texts(&create_causes(&c));
    assert_eq!(got.len(), expected.len(), "{got:#?}");
    for (g, e) in got.iter().zip(expected) {
        assert!(g.starts_with(e), "{g}\n  does not start with\n{e}");
    }
}

/// `schema.ValidateStructural`: invariants and completeness, sorted by text.
#[rstest]
#[case::field_type("/properties/spec/type", Value::Null,
    &["spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields"])]
#[case::array_without_items("/properties/spec/properties/ports/items", Value::Null, &[
    "spec.validation.openAPIV3Schema.properties[spec].properties[ports].items: Required value: must be specified",
    "spec.validation.openAPIV3Schema.properties[spec].properties[ports].items: Required value: must have a schema if x-kubernetes-list-type is map"])]
#[case::metadata_restricted("/properties/metadata", json!({"type": "object", "properties": {"labels": {"type": "object"}}}),
    &["spec.validation.openAPIV3Schema.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified"])]
#[case::metadata_name_allowed("/properties/metadata", json!({"type": "object", "properties": {"name": {"type": "string", "maxLength": 20}}}), &[])]
#[case::kind_is_a_string("/properties/kind", json!({"type": "integer"}),
    &["spec.validation.openAPIV3Schema.properties[kind].type: Invalid value: \"integer\": must be string"])]
#[case::embedded_needs_object("/properties/spec/properties/template/type", Value::Null,
    &["spec.validation.openAPIV3Schema.properties[spec].properties[template].type: Required value: must be object if x-kubernetes-embedded-resource is true"])]
#[case::embedded_needs_properties("/properties/spec/properties/template/x-kubernetes-preserve-unknown-fields", Value::Null,
    &["spec.validation.openAPIV3Schema.properties[spec].properties[template].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"])]
#[case::int_or_string_and_preserve("/properties/spec/properties/port/x-kubernetes-preserve-unknown-fields", json!(true),
    &["spec.validation.openAPIV3Schema.properties[spec].properties[port].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true"])]
#[case::int_or_string_any_of("/properties/spec/properties/port/anyOf", json!([{"type": "integer"}, {"type": "string"}]), &[])]
#[case::typed_any_of("/properties/spec/properties/size/anyOf", json!([{"type": "integer", "minimum": 1}]),
    &["spec.validation.openAPIV3Schema.properties[spec].properties[size].anyOf[0].type: Forbidden: must be empty to be structural"])]
#[case::nested_metadata("/properties/spec/allOf", json!([{"properties": {"metadata": {}}}]), &[
    "spec.validation.openAPIV3Schema.properties[spec].allOf[0].properties[metadata]: Forbidden: must not be specified in a nested context"])]
fn structural_rules(#[case] pointer: &str, #[case] value: Value, #[case] expected: &[&str]) {
    let c = with(crd(), &format!("{SCHEMA}{pointer}"), value);
    assert_eq!(texts(&create_causes(&c)), expected);
}

/// Rules on the root of a schema (a CRD without status subresource, which would restrict the
/// root further).
#[rstest]
#[case::nullable_root("/nullable", json!(true),
    &["spec.validation.openAPIV3Schema.nullable: Forbidden: nullable cannot be true at the root"])]
#[case::root_type("/type", json!("array"), &[
    "spec.validation.openAPIV3Schema.items: Required value: must be specified",
    "spec.validation.openAPIV3Schema.type: Invalid value: \"array\": must be object at the root"])]
#[case::additional_properties_at_root("/additionalProperties", json!(false),
    &["spec.validation.openAPIV3Schema.additionalProperties: Forbidden: must not be used at the root",
      "spec.validation.openAPIV3Schema.additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive"])]
#[case::incomplete("/anyOf", json!([{"properties": {"other": {"minProperties": 1}}}]), &[
    "spec.validation.openAPIV3Schema.properties[other]: Required value: because it is defined in spec.validation.openAPIV3Schema.anyOf[0].properties[other]"])]
fn root_rules(#[case] pointer: &str, #[case] value: Value, #[case] expected: &[&str]) {
    let c = with(crd(), "/spec/versions/0/subresources", Value::Null);
    let c = with(c, &format!("{SCHEMA}{pointer}"), value);
    assert_eq!(texts(&create_causes(&c)), expected);
}

#[test]
fn status_subresource_restricts_the_root() {
    let c = with(crd(), &format!("{SCHEMA}/type"), json!("array"));
    let got = texts(&create_causes(&c));
    assert_eq!(
        got[0],
        "spec.validation.openAPIV3Schema.type: Invalid value: \"array\": only \"object\" is allowed as the type at the root of the schema if the status subresource is enabled"
    );
}

/// `defaulting.ValidateDefaults`.
#[rstest]
#[case::unpruned("/properties/spec/properties/template", json!({"type": "object", "default": {"a": 1},
    "properties": {"b": {"type": "string"}}}), &[
    "spec.validation.openAPIV3Schema.properties[spec].properties[template].default: Invalid value: {\"a\":1}: must not have unknown fields"])]
#[case::wrong_type("/properties/spec/properties/size/default", json!("big"), &[
    "spec.validation.openAPIV3Schema.properties[spec].properties[size].default: Invalid value: \"string\":  in body must be of type integer: \"string\""])]
#[case::below_minimum("/properties/spec/properties/size", json!({"type": "integer", "minimum": 2, "default": 1}), &[
    "spec.validation.openAPIV3Schema.properties[spec].properties[size].default: Invalid value: 1:  in body should be greater than or equal to 2"])]
#[case::object_default_checked_inside("/properties/spec/properties/ports/default", json!([{"name": 5}]), &[
    "spec.validation.openAPIV3Schema.properties[spec].properties[ports].default[0].name: Invalid value: \"integer\": [0].name in body must be of type string: \"integer\""])]
fn default_rules(#[case] pointer: &str, #[case] value: Value, #[case] expected: &[&str]) {
    let c = with(crd(), &format!("{SCHEMA}{pointer}"), value);
    assert_eq!(texts(&create_causes(&c)), expected);
}

/// `ValidateCustomResourceDefinitionSubresources`, `ValidateCustomResourceColumnDefinition`,
/// `validateCustomResourceConversion`, `ValidateCustomResourceSelectableFields`.
#[rstest]
#[case::scale_paths("/spec/versions/0/subresources/scale", json!({"specReplicasPath": "spec.replicas", "statusReplicasPath": ".spec.replicas", "labelSelectorPath": ".metadata.x"}), &[
    "spec.subresources.scale.specReplicasPath: Invalid value: \"spec.replicas\": must be a simple json path starting with .",
    "spec.subresources.scale.statusReplicasPath: Invalid value: \".spec.replicas\": should be a json path under .status",
    "spec.subresources.scale.labelSelectorPath: Invalid value: \".metadata.x\": should be a json path under either .spec or .status"])]
#[case::scale_required("/spec/versions/0/subresources/scale", json!({}), &[
    "spec.subresources.scale.specReplicasPath: Required value",
    "spec.subresources.scale.statusReplicasPath: Required value"])]
#[case::column("/spec/versions/0/additionalPrinterColumns", json!([{"name": "", "type": "text", "format": "x", "jsonPath": "spec"}]), &[
    "spec.additionalPrinterColumns[0].name: Required value",
    "spec.additionalPrinterColumns[0].type: Invalid value: \"text\": must be one of boolean,date,integer,number,string",
    "spec.additionalPrinterColumns[0].format: Invalid value: \"x\": must be one of byte,date,date-time,double,float,int32,int64,password",
    "spec.additionalPrinterColumns[0].JSONPath: Invalid value: \"spec\": must be a simple json path starting with ."])]
#[case::webhook_without_config("/spec/conversion", json!({"strategy": "Webhook"}), &[
    "spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook",
    "spec.conversion.conversionReviewVersions: Required value"])]
#[case::webhook_url("/spec/conversion", json!({"strategy": "Webhook", "webhook": {"clientConfig": {"url": "http://h/p?q=1"}, "conversionReviewVersions": ["v2"]}}), &[
    "spec.conversion.webhookClientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
    "spec.conversion.webhookClientConfig.url: Invalid value: \"q=1\": query parameters are not permitted in the URL",
    "spec.conversion.conversionReviewVersions: Invalid value: [\"v2\"]: must include at least one of v1, v1beta1"])]
#[case::none_with_webhook("/spec/conversion", json!({"strategy": "None", "webhook": {"clientConfig": {"url": "https://h"}}}), &[
    "spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook"])]
#[case::strategy("/spec/conversion", json!({"strategy": "Magic"}), &[
    "spec.conversion.strategy: Unsupported value: \"Magic\": supported values: \"None\", \"Webhook\""])]
#[case::selectable_fields("/spec/versions/0/selectableFields", json!([{"jsonPath": ".spec.size"}, {"jsonPath": ".spec.nope"}, {"jsonPath": ".spec"}, {"jsonPath": ".spec.size"}]), &[
    "spec.selectableFields[1].jsonPath: Invalid value: \".spec.nope\": is an invalid path: does not refer to a valid field",
    "spec.selectableFields[2].jsonPath: Invalid value: \".spec\": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.",
    "spec.selectableFields[3].jsonPath: Duplicate value: \".spec.size\""])]
fn other_spec_rules(#[case] pointer: &str, #[case] value: Value, #[case] expected: &[&str]) {
    let c = with(crd(), pointer, value);
    assert_eq!(texts(&create_causes(&c)), expected);
}

#[test]
fn protected_groups_need_an_approval() {
    let mut c = crd();
    c["spec"]["group"] = json!("x.k8s.io");
    c["metadata"]["name"] = json!("widgets.x.k8s.io");
    assert_eq!(
        texts(&create_causes(&c)),
        vec!["metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation \"api-approved.kubernetes.io\", see https://github.com/kubernetes/enhancements/pull/1111"]
    );
    c["metadata"]["annotations"] =
        json!({"api-approved.kubernetes.io": "https://github.com/kubernetes/kubernetes/pull/1"});
    assert!(create_causes(&c).is_empty());
    c["metadata"]["annotations"] =
        json!({"api-approved.kubernetes.io": "unapproved, experimental"});
    assert!(create_causes(&c).is_empty());
}

fn established(mut c: Value) -> Value {
    c["status"] = json!({"conditions": [{"type": "Established", "status": "True"}], "storedVersions": ["v1"]});
    c
}

/// `validateCustomResourceDefinitionSpecUpdate`, `ValidateCustomResourceDefinitionStoredVersions`.
#[test]
fn update_rules() {
    let old = established(crd());
    let mut new = old.clone();
    new["spec"]["group"] = json!("other.com");
    new["spec"]["scope"] = json!("Cluster");
    new["spec"]["names"]["kind"] = json!("Gadget");
    new["spec"]["names"]["listKind"] = json!("GadgetList");
    assert_eq!(
        texts(&update_causes(&new, &old)),
        vec![
            "spec.scope: Invalid value: \"Cluster\": field is immutable",
            "spec.names.kind: Invalid value: \"Gadget\": field is immutable",
            "spec.group: Invalid value: \"other.com\": field is immutable",
        ]
    );
    // A version that was stored may not leave spec.versions.
    let mut renamed = old.clone();
    renamed["spec"]["versions"][0]["name"] = json!("v2");
    assert_eq!(
        texts(&update_causes(&renamed, &old)),
        vec!["status.storedVersions[0]: Invalid value: \"v1\": missing from spec.versions; v1 was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in v1 and removes v1 from status.storedVersions"]
    );
    // Scope may change while the CRD is not established.
    let mut not_established = old.clone();
    not_established["status"]["conditions"] = json!([]);
    let mut scoped = not_established.clone();
    scoped["spec"]["scope"] = json!("Cluster");
    assert!(update_causes(&scoped, &not_established).is_empty());
}

/// `allowInvalidCABundle`: a conversion webhook's `caBundle` is checked only on an update of an
/// established CRD whose stored bundle is empty or usable, with the TLS configuration's error.
#[test]
fn a_conversion_ca_bundle_is_checked_once_the_crd_is_established() {
    use base64::Engine;
    let encode = |pem: &str| base64::engine::general_purpose::STANDARD.encode(pem);
    let with_bundle = |bundle: &str| {
        let mut c = crd();
        c["spec"]["conversion"] = json!({"strategy": "Webhook", "webhook": {
            "conversionReviewVersions": ["v1"],
            "clientConfig": {"url": "https://hooks.example.com/convert", "caBundle": bundle}}});
        c
    };
    let valid = with_bundle(&encode(crate::controllers::service_accounts::ROOT_CA_PEM));
    let invalid = with_bundle(&encode("not a certificate"));
    // A create, and an update of a CRD not yet established, take any bundle.
    assert!(create_causes(&invalid).is_empty());
    assert!(update_causes(&invalid, &valid).is_empty());
    assert_eq!(
        texts(&update_causes(&invalid, &established(valid.clone()))),
        vec![format!(
            "spec.conversion.webhookClientConfig.caBundle: Invalid value: \"{}\": unable to load root certificates: unable to parse bytes as PEM block",
            encode("not a certificate")
        )]
    );
    // A stored bundle that is already invalid may stay so.
    assert!(update_causes(&invalid, &established(invalid.clone())).is_empty());
    // So may a fixed one be written.
    assert!(update_causes(&valid, &established(invalid.clone())).is_empty());
}

#[test]
fn an_update_does_not_tighten_what_the_stored_crd_already_breaks() {
    // A stored CRD with a non-structural schema (as written before the rule) may be updated
    // when the rule would still fail... but only when pruning does not need it: with
    // preserveUnknownFields false (v1) the structural rule always applies.
    let bad = with(
        crd(),
        &format!("{SCHEMA}/properties/status/properties/resources/items"),
        json!({}),
    );
    let old = established(bad.clone());
    assert_eq!(update_causes(&bad, &old).len(), 1);
}

#[test]
fn malformed_crds_never_panic() {
    for c in [
        json!(null),
        json!({"spec": 5}),
        json!({"spec": {"versions": [5, {"schema": 3}], "names": []}}),
        json!({"spec": {"versions": [{"name": "v1", "storage": true, "schema": {"openAPIV3Schema": {"type": 3, "properties": [1], "items": [], "anyOf": {}}}}]}}),
    ] {
        let _ = create_causes(&c);
        let _ = update_causes(&c, &c);
    }
}
