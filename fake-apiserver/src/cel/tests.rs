use rstest::rstest;
use serde_json::json;

use super::*;

fn run(expr: &str, self_value: serde_json::Value) -> Result<cel::Value, String> {
    let program = compile(expr, &["self"], ResultKind::Any).map_err(|e| e.detail())?;
    program
        .eval(vec![("self", json_to_val(&self_value))])
        .map_err(|e| e.message)
}

#[rstest]
#[case::size("size(self.items) == 2", json!({"items": [1, 2]}))]
#[case::has("has(self.a) && !has(self.b)", json!({"a": 1}))]
#[case::matches("self.name.matches('^[a-z]+$')", json!({"name": "abc"}))]
#[case::matches_reads_go_syntax("!self.n.matches('^\\\\d$') && matches('a_', 'a\\\\_') && self.n.matches('\\\\pN')", json!({"n": "٣"}))]
#[case::starts_with("self.name.startsWith('ab')", json!({"name": "abc"}))]
#[case::all("self.items.all(x, x > 0)", json!({"items": [1, 2]}))]
#[case::exists("self.items.exists(x, x == 2)", json!({"items": [1, 2]}))]
#[case::is_sorted("self.items.isSorted()", json!({"items": [1, 2, 3]}))]
#[case::sum("self.items.sum() == 6", json!({"items": [1, 2, 3]}))]
#[case::min_max("self.items.min() == 1 && self.items.max() == 3", json!({"items": [3, 1, 2]}))]
#[case::index_of("self.items.indexOf(2) == 1 && self.items.lastIndexOf(9) == -1", json!({"items": [1, 2]}))]
#[case::find("self.s.find('[0-9]+') == '42'", json!({"s": "ab42cd7"}))]
#[case::find_all("self.s.findAll('[0-9]+') == ['42', '7']", json!({"s": "ab42cd7"}))]
#[case::find_reads_go_syntax("self.s.find('\\\\d+') == '42' && self.s.find('\\\\Q.\\\\E') == '.'", json!({"s": "٣ab42.c"}))]
#[case::strings_ext("self.s.lowerAscii() == 'abc' && self.s.split('b').size() == 2", json!({"s": "AbC"}))]
#[case::optional("self.?missing.orValue(5) == 5", json!({}))]
#[case::map_keys("'k' in self.labels", json!({"labels": {"k": "v"}}))]
#[case::durations("duration(self.exec) <= duration(self.pod)", json!({"exec": "1m30s", "pod": "2m"}))]
#[case::duration_units("duration('1h') > duration('59m59.5s') && duration('300ms') < duration('1s')", json!({}))]
fn expressions_hold(#[case] expr: &str, #[case] value: serde_json::Value) {
    assert_eq!(run(expr, value), Ok(cel::Value::Bool(true)), "{expr}");
}

#[rstest]
#[case::no_such_key("self.missing == 1", json!({}), "no such key: missing")]
#[case::division("1 / self.zero == 1", json!({"zero": 0}), "division by zero")]
#[case::overload("self.s > 1", json!({"s": "x"}), "no such overload")]
#[case::matches_invalid_regex("self.s.matches(self.p)", json!({"s": "x", "p": "a**"}), "error parsing regexp: invalid nested repetition operator: `**`")]
#[case::find_invalid_regex("self.s.find(self.p) == ''", json!({"s": "x", "p": "(a"}), "error parsing regexp: missing closing ): `(a`")]
fn runtime_errors_are_worded_as_cel_go(
    #[case] expr: &str,
    #[case] value: serde_json::Value,
    #[case] message: &str,
) {
    assert_eq!(run(expr, value), Err(message.to_string()));
}

#[test]
fn a_syntax_error_is_rendered_as_cel_go_renders_issues() {
    let err = compile("self.a >", &["self"], ResultKind::Bool).unwrap_err();
    let text = err.detail();
    assert!(
        text.starts_with("compilation failed: ERROR: <input>:1:"),
        "{text}"
    );
    assert!(text.contains("\n | self.a >\n | "), "{text}");
}

#[test]
fn an_undeclared_reference_is_refused() {
    let err = compile("foo == 1", &["self"], ResultKind::Bool).unwrap_err();
    assert_eq!(
        err.detail(),
        "compilation failed: ERROR: <input>:1:1: undeclared reference to 'foo' (in container '')\n | foo == 1\n | ^"
    );
    // Comprehension variables are bound.
    assert!(compile("self.all(x, x > 0)", &["self"], ResultKind::Bool).is_ok());
}

#[test]
fn a_rule_must_be_a_bool() {
    let err = compile("'text'", &["self"], ResultKind::Bool).unwrap_err();
    assert_eq!(err.detail(), "cel expression must evaluate to a bool");
}

#[test]
fn an_undefined_field_is_refused_with_the_schema() {
    let schema = json!({"type": "object", "properties": {"replicas": {"type": "integer"}, "x-y": {"type": "string"}}});
    let fields = FieldSchema {
        schema: &schema,
        resource_root: false,
    };
    let ok = compile(
        "self.replicas > 0 && self.x__dash__y != ''",
        &["self"],
        ResultKind::Bool,
    )
    .unwrap();
    assert!(check_fields(&ok, &fields).is_ok());
    let bad = compile("self.replica > 0", &["self"], ResultKind::Bool).unwrap();
    assert_eq!(
        check_fields(&bad, &fields).unwrap_err().message,
        "ERROR: <input>:1:5: undefined field 'replica'\n | self.replica > 0\n | ....^"
    );
}

#[test]
fn compiled_programs_are_cached() {
    let a = compile("self.x == 1", &["self"], ResultKind::Bool).unwrap();
    let b = compile("self.x == 1", &["self"], ResultKind::Bool).unwrap();
    assert!(std::sync::Arc::ptr_eq(&a, &b));
}

#[test]
fn schema_conversion_escapes_names_and_types_numbers() {
    let schema = json!({"type": "object", "properties": {"x-y": {"type": "number"}}});
    let obj = json!({"x-y": 2});
    let program = compile(
        "self.x__dash__y == 2.0 && type(self.x__dash__y) == double",
        &["self"],
        ResultKind::Bool,
    )
    .unwrap();
    let result = program.eval(vec![(
        "self",
        schema_json_to_val(&obj, Some(&schema), false),
    )]);
    assert_eq!(result, Ok(cel::Value::Bool(true)));
}

/// The Kubernetes `quantity`, `ip` and `cidr` libraries (`value_types`).
#[rstest]
#[case::quantity_compare("quantity(self.mem).isGreaterThan(quantity('1Gi'))", json!({"mem": "2Gi"}))]
#[case::quantity_less("quantity('500m').isLessThan(quantity('1'))", json!({}))]
#[case::quantity_equal("quantity('1Gi') == quantity('1024Mi')", json!({}))]
#[case::quantity_compare_to("quantity('1k').compareTo(quantity('1000')) == 0 && quantity('1').compareTo(quantity('2')) == -1", json!({}))]
#[case::quantity_arith("quantity('1Gi').add(quantity('1Gi')) == quantity('2Gi') && quantity('1').sub(1).sign() == 0", json!({}))]
#[case::quantity_integer("quantity('1k').asInteger() == 1000 && !quantity('1.5').isInteger()", json!({}))]
#[case::quantity_float("quantity('1.5').asApproximateFloat() == 1.5", json!({}))]
#[case::is_quantity("isQuantity('10Mi') && !isQuantity('ten')", json!({}))]
#[case::ip_family("ip(self.addr).family() == 4 && ip('fe80::1').family() == 6", json!({"addr": "10.0.0.1"}))]
#[case::ip_kinds("ip('127.0.0.1').isLoopback() && ip('::').isUnspecified() && ip('169.254.1.1').isLinkLocalUnicast() && ip('10.1.2.3').isGlobalUnicast() && ip('ff02::1').isLinkLocalMulticast()", json!({}))]
#[case::is_ip("isIP('1.2.3.4') && !isIP('1.2.3') && !isIP('::ffff:1.2.3.4')", json!({}))]
#[case::ip_canonical("ip.isCanonical('2001:db8::1') && !ip.isCanonical('2001:DB8::1')", json!({}))]
#[case::ip_string("string(ip('10.0.0.1')) == '10.0.0.1' && ip('10.0.0.1') == ip('10.0.0.1')", json!({}))]
#[case::cidr_contains("cidr('10.0.0.0/8').containsIP('10.1.2.3') && !cidr('10.0.0.0/8').containsIP(ip('11.0.0.1'))", json!({}))]
#[case::cidr_contains_cidr("cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16') && !cidr('10.1.0.0/16').containsCIDR(cidr('10.0.0.0/8'))", json!({}))]
#[case::cidr_parts("cidr('10.1.2.3/8').masked() == cidr('10.0.0.0/8') && cidr('10.1.2.3/8').ip() == ip('10.1.2.3') && cidr('fd00::/64').prefixLength() == 64", json!({}))]
#[case::is_cidr("isCIDR('10.0.0.0/8') && !isCIDR('10.0.0.0/33') && !isCIDR('10.0.0.0')", json!({}))]
#[case::cidr_string("string(cidr('10.0.0.0/8')) == '10.0.0.0/8'", json!({}))]
#[case::url_parts("url(self.u).getScheme() == 'https' && url(self.u).getHostname() == 'example.com' && url(self.u).getPort() == '8443' && url(self.u).getHost() == 'example.com:8443'", json!({"u": "HTTPS://example.com:8443/a/b?x=1#top"}))]
#[case::url_path_query("url('https://x/a%20b?k=1&k=2&v=a+b').getEscapedPath() == '/a%20b' && url('https://x/?k=1&k=2&v=a+b').getQuery() == {'k': ['1', '2'], 'v': ['a b']}", json!({}))]
#[case::semver("semver(self.v).isGreaterThan(semver('1.2.3')) && semver('1.2.3-alpha').isLessThan(semver('1.2.3')) && semver('v1.2', true).compareTo(semver('1.2.0')) == 0", json!({"v": "1.10.0"}))]
#[case::semver_parts("semver('3.4.5').major() == 3 && semver('3.4.5').minor() == 4 && semver('3.4.5').patch() == 5 && isSemver('1.0.0') && !isSemver('v1.0') && isSemver('v1.0', true)", json!({}))]
#[case::is_url("isURL('https://example.com') && isURL('/path') && !isURL('example.com')", json!({}))]
fn kubernetes_value_type_libraries_hold(#[case] expr: &str, #[case] value: serde_json::Value) {
    assert_eq!(run(expr, value), Ok(cel::Value::Bool(true)), "{expr}");
}

#[rstest]
#[case::bad_quantity(
    "quantity('ten') == quantity('1')",
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)]
#[case::not_integer("quantity('1.5').asInteger() == 1", "cannot convert value to integer")]
#[case::bad_url(
    "url('example.com').getScheme() == ''",
    "URL parse error during conversion from string: parse \"example.com\": invalid URI for request"
)]
#[case::bad_semver("semver('1.0').major() == 1", "No Major.Minor.Patch elements found")]
#[case::mapped_ip(
    "ip('::ffff:1.2.3.4').family() == 6",
    "IPv4-mapped IPv6 address \"::ffff:1.2.3.4\" is not allowed"
)]
fn kubernetes_value_type_errors(#[case] expr: &str, #[case] message: &str) {
    assert_eq!(run(expr, json!({})), Err(message.to_string()));
}

/// The Kubernetes `format` library: a valid string is `optional.none()`, an invalid one the
/// format's messages; `format.named` knows the library's names only.
#[rstest]
#[case::label_valid("!format.dns1123Label().validate(self.s).hasValue()", json!({"s": "my-name"}))]
#[case::label_invalid(
    "format.dns1123Label().validate(self.s).value() == ['a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \\'-\\', and must start and end with an alphanumeric character (e.g. \\'my-name\\',  or \\'123-abc\\', regex used for validation is \\'[a-z0-9]([-a-z0-9]*[a-z0-9])?\\')']",
    json!({"s": "My_Name"})
)]
#[case::prefix_allows_trailing_dash("!format.dns1123SubdomainPrefix().validate(self.s).hasValue()", json!({"s": "web-"}))]
#[case::subdomain_rejects_trailing_dash("format.dns1123Subdomain().validate(self.s).hasValue()", json!({"s": "web-"}))]
#[case::named("format.named('uuid').hasValue() && !format.named('nope').hasValue()", json!({}))]
#[case::named_validates("format.named('uuid').value().validate(self.s).value() == ['does not match the UUID format']", json!({"s": "x"}))]
#[case::uri("format.uri().validate(self.s).value() == ['parse \"x\": invalid URI for request']", json!({"s": "x"}))]
#[case::datetime("!format.datetime().validate('2026-12-04T10:00:00Z').hasValue() && format.date().validate('2026-13-01').value() == ['invalid date']", json!({}))]
#[case::byte_and_label_value("format.byte().validate('!').value() == ['invalid base64'] && !format.labelValue().validate('a.b_c').hasValue()", json!({}))]
fn the_format_library_validates(#[case] expr: &str, #[case] value: serde_json::Value) {
    assert_eq!(run(expr, value), Ok(cel::Value::Bool(true)), "{expr}");
}

/// cel-go's literal validators, as Kubernetes enables them: a bad literal argument of
/// `matches`, `duration` or `timestamp`, or a list or map literal of mixed types, is a compile
/// error at the offending literal.
#[rstest]
#[case::regex("self.s.matches('(a')", "1:16: invalid matches argument")]
#[case::duration("duration('1x') > duration('1s')", "1:10: invalid duration argument")]
#[case::timestamp(
    "timestamp('yesterday') < timestamp('2026-01-01T00:00:00Z')",
    "1:11: invalid timestamp argument"
)]
#[case::mixed_list("[1, 'a'].size() == 2", "1:5: expected type 'int' but found 'string'")]
#[case::mixed_map(
    "{'a': 1, 'b': true}.size() == 2",
    "1:15: expected type 'int' but found 'bool'"
)]
fn bad_literals_are_compile_errors(#[case] expr: &str, #[case] position_and_message: &str) {
    let err = compile(expr, &["self"], ResultKind::Bool).unwrap_err();
    let text = err.detail();
    assert!(
        text.contains(&format!("ERROR: <input>:{position_and_message}")),
        "{text}"
    );
}

#[rstest]
#[case::format_arguments("'%s %s'.format([1, 'a']) == '1 a'")]
#[case::good_literals(
    "self.s.matches('^\\\\d+$') || duration('1h') > duration('1m') || [1, 2].size() == 2"
)]
fn good_literals_compile(#[case] expr: &str) {
    assert!(compile(expr, &["self"], ResultKind::Bool).is_ok(), "{expr}");
}

/// A literal `find`/`findAll` pattern Go refuses fails when the program is built (Kubernetes'
/// regex optimization compiles it then), after compilation succeeded.
#[test]
fn a_bad_literal_find_pattern_fails_the_program_instantiation() {
    let err = compile(
        "self.s.findAll('a**').size() == 0",
        &["self"],
        ResultKind::Bool,
    )
    .unwrap_err();
    assert_eq!(
        err.detail(),
        "program instantiation failed: error parsing regexp: invalid nested repetition operator: `**`"
    );
}
