//! YAML answers as `sigs.k8s.io/yaml.JSONToYAML` writes them (go-yaml v2 marshalling the
//! decoded JSON): block style, two-space indentation, a sequence's `- ` at its key's
//! indentation, map keys sorted, `{}` and `[]` for empty collections. A string is written plain
//! unless it would read back as something else: one that resolves to a bool, null, number or
//! timestamp (`"true"`, `"1"`, `"2026-01-02T03:04:05Z"`, `""`) is double-quoted, one that
//! libyaml may not write plain (leading indicator, `: ` or ` #` inside, surrounding spaces) is
//! single-quoted, one with line breaks is a literal block (`|`, `|-`, `|+`).
//!
//! Not done: go-yaml folds long plain and quoted strings at 80 columns; here each stays on one
//! line (the same value either way).

use serde_json::Value;

/// The YAML document of a JSON value (a trailing newline included).
pub fn from_json(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(map) if !map.is_empty() => write_map(&mut out, map, 0),
        Value::Array(items) if !items.is_empty() => write_seq(&mut out, items, 0),
        scalar => {
            write_scalar(&mut out, scalar, 0);
            out.push('\n');
        }
    }
    out
}

fn indent(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

fn write_map(out: &mut String, map: &serde_json::Map<String, Value>, at: usize) {
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort();
    for key in keys {
        indent(out, at);
        write_string(out, key, at);
        out.push(':');
        write_value_after_key(out, &map[key], at);
    }
}

/// A value after `key:` at indentation `at`.
fn write_value_after_key(out: &mut String, value: &Value, at: usize) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push('\n');
            write_map(out, map, at + 2);
        }
        // A sequence in a mapping is not indented (go-yaml v2's compact style).
        Value::Array(items) if !items.is_empty() => {
            out.push('\n');
            write_seq(out, items, at);
        }
        scalar => {
            out.push(' ');
            write_scalar(out, scalar, at);
            out.push('\n');
        }
    }
}

fn write_seq(out: &mut String, items: &[Value], at: usize) {
    for item in items {
        indent(out, at);
        out.push_str("- ");
        match item {
            Value::Object(map) if !map.is_empty() => {
                // The first key on the dash's line, the others under it.
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                for (i, key) in keys.into_iter().enumerate() {
                    if i > 0 {
                        indent(out, at + 2);
                    }
                    write_string(out, key, at + 2);
                    out.push(':');
                    write_value_after_key(out, &map[key], at + 2);
                }
            }
            Value::Array(inner) if !inner.is_empty() => {
                // A sequence in a sequence starts on the dash's line too.
                let mut nested = String::new();
                write_seq(&mut nested, inner, at + 2);
                out.push_str(nested.trim_start());
            }
            scalar => {
                write_scalar(out, scalar, at + 2);
                out.push('\n');
            }
        }
    }
}

fn write_scalar(out: &mut String, value: &Value, at: usize) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => out.push_str(&i.to_string()),
            (_, Some(u), _) => out.push_str(&u.to_string()),
            (_, _, Some(f)) => out.push_str(&crate::rules::validation::go_format_float(f)),
            _ => out.push_str(&n.to_string()),
        },
        Value::String(s) => write_string(out, s, at),
        Value::Array(_) => out.push_str("[]"),
        Value::Object(_) => out.push_str("{}"),
    }
}

/// A string in the style go-yaml v2 picks for it (see the module documentation).
fn write_string(out: &mut String, s: &str, at: usize) {
    let block_allowed = !s.ends_with(' ') && !s.contains(" \n");
    if s.contains('\n') && !has_special(s) && block_allowed {
        write_literal(out, s, at);
    } else if s.contains('\n') || has_special(s) || resolves_to_other_type(s) {
        write_double_quoted(out, s);
    } else if plain_allowed(s) {
        out.push_str(s);
    } else {
        out.push('\'');
        out.push_str(&s.replace('\'', "''"));
        out.push('\'');
    }
}

/// A literal block: `|` keeps one final line break, `|-` strips it, `|+` keeps several; a
/// first line starting with a space gets an indentation indicator.
fn write_literal(out: &mut String, s: &str, at: usize) {
    out.push('|');
    if s.starts_with(' ') {
        out.push('2');
    }
    let trailing = s.len() - s.trim_end_matches('\n').len();
    match trailing {
        0 => out.push('-'),
        1 => {}
        _ => out.push('+'),
    }
    let body = s.strip_suffix('\n').unwrap_or(s);
    for line in body.split('\n') {
        out.push('\n');
        if !line.is_empty() {
            indent(out, at + 2);
            out.push_str(line);
        }
    }
}

fn write_double_quoted(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\0' => out.push_str("\\0"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{b}' => out.push_str("\\v"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            '\u{1b}' => out.push_str("\\e"),
            '\u{feff}' => out.push_str("\\uFEFF"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02X}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Characters libyaml will not write outside double quotes (what is not printable: controls,
/// tabs included, DEL and the byte order mark).
fn has_special(s: &str) -> bool {
    s.chars()
        .any(|c| (c < ' ' && c != '\n') || c == '\u{7f}' || c == '\u{feff}')
}

/// go-yaml v2's `resolve`: whether the plain form reads back as anything but this string (a
/// bool, null, number, timestamp or base-60 float).
fn resolves_to_other_type(s: &str) -> bool {
    const WORDS: &[&str] = &[
        "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON", "n", "N", "no",
        "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF", "", "~", "null", "Null",
        "NULL", ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf",
        "-.Inf", "-.INF", "<<",
    ];
    if WORDS.contains(&s) {
        return true;
    }
    let Some(first) = s.chars().next() else {
        return true;
    };
    if !(first.is_ascii_digit() || matches!(first, '+' | '-' | '.')) {
        return false;
    }
    is_int(s) || is_float(s) || is_base60_float(s) || (first.is_ascii_digit() && is_timestamp(s))
}

/// `strconv.ParseInt(plain, 0, 64)` (or unsigned) of the string without `_`, or `0b` binary.
fn is_int(s: &str) -> bool {
    let plain = s.replace('_', "");
    let digits = plain
        .strip_prefix('-')
        .or_else(|| plain.strip_prefix('+'))
        .unwrap_or(&plain);
    let (radix, digits) = if let Some(d) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        (16, d)
    } else if let Some(d) = digits
        .strip_prefix("0b")
        .or_else(|| digits.strip_prefix("0B"))
    {
        (2, d)
    } else if let Some(d) = digits
        .strip_prefix("0o")
        .or_else(|| digits.strip_prefix("0O"))
    {
        (8, d)
    } else if digits.len() > 1 && digits.starts_with('0') {
        (8, &digits[1..])
    } else {
        (10, digits)
    };
    !digits.is_empty() && u128::from_str_radix(digits, radix).is_ok_and(|v| v <= u64::MAX as u128)
}

/// `yamlStyleFloat`: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn is_float(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(at) => (&s[..at], Some(&s[at + 1..])),
        None => (s, None),
    };
    let digits = |d: &str| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", frac)) => digits(frac),
        Some((int, frac)) => digits(int) && (frac.is_empty() || digits(frac)),
        None => digits(mantissa),
    };
    let exponent_ok = exponent.is_none_or(|e| digits(e.strip_prefix(['-', '+']).unwrap_or(e)));
    mantissa_ok && exponent_ok
}

/// `isBase60Float`: `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`.
fn is_base60_float(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    let (whole, _frac) = match s.split_once('.') {
        Some((w, f)) if f.bytes().all(|b| b.is_ascii_digit() || b == b'_') => (w, f),
        Some(_) => return false,
        None => (s, ""),
    };
    let mut parts = whole.split(':');
    let head = parts.next().unwrap_or_default();
    let head_ok = head.starts_with(|c: char| c.is_ascii_digit())
        && head.bytes().all(|b| b.is_ascii_digit() || b == b'_');
    let rest: Vec<&str> = parts.collect();
    head_ok
        && !rest.is_empty()
        && rest.iter().all(|p| {
            let b = p.as_bytes();
            match b.len() {
                1 => b[0].is_ascii_digit(),
                2 => (b'0'..=b'5').contains(&b[0]) && b[1].is_ascii_digit(),
                _ => false,
            }
        })
}

/// go-yaml v2's `parseTimestamp`: a date (`2006-1-2`), optionally with a time after `T`, `t`
/// or a space.
fn is_timestamp(s: &str) -> bool {
    let (date, time) = match s.find(['T', 't', ' ']) {
        Some(at) => (&s[..at], Some(&s[at + 1..])),
        None => (s, None),
    };
    let fields: Vec<&str> = date.split('-').collect();
    let numeric = |f: &str, min: usize, max: usize| {
        (min..=max).contains(&f.len()) && f.bytes().all(|b| b.is_ascii_digit())
    };
    let date_ok = fields.len() == 3
        && numeric(fields[0], 4, 4)
        && numeric(fields[1], 1, 2)
        && numeric(fields[2], 1, 2);
    if !date_ok {
        return false;
    }
    match time {
        None => true,
        Some(time) => {
            // `15:4:5` with optional fraction and zone (`Z` or `±hh:mm`).
            let end = time.find(['Z', '+', '-']).unwrap_or(time.len());
            let (clock, zone) = time.split_at(end);
            let clock = clock.split('.').next().unwrap_or_default();
            let parts: Vec<&str> = clock.split(':').collect();
            parts.len() == 3
                && parts.iter().all(|p| numeric(p, 1, 2))
                && (zone.is_empty() || zone == "Z" || zone.len() >= 3)
        }
    }
}

/// libyaml's analysis for a plain scalar in block context.
fn plain_allowed(s: &str) -> bool {
    if s.starts_with(' ') || s.ends_with(' ') || s.starts_with("---") || s.starts_with("...") {
        return false;
    }
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let next_blank = chars.get(i + 1).is_none_or(|n| *n == ' ' || *n == '\t');
        let prev_blank = i > 0 && (chars[i - 1] == ' ' || chars[i - 1] == '\t');
        let indicator = if i == 0 {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => true,
                '?' | ':' | '-' => next_blank,
                _ => false,
            }
        } else {
            match c {
                ':' => next_blank,
                '#' => prev_blank,
                _ => false,
            }
        };
        if indicator {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    #[test]
    fn an_object_is_written_as_kubectl_prints_it() {
        let object = json!({"kind": "ConfigMap", "apiVersion": "v1",
            "metadata": {"name": "a", "labels": {"app": "web"}, "finalizers": ["x/y"],
                "creationTimestamp": "2026-12-03T19:27:18Z"},
            "data": {"flag": "true", "port": "8080", "empty": "", "text": "line1\nline2\n"},
            "list": [{"b": 1, "a": [1, 2]}, "s", []], "none": {}, "nothing": null});
        assert_eq!(
            from_json(&object),
            "apiVersion: v1\n\
             data:\n  empty: \"\"\n  flag: \"true\"\n  port: \"8080\"\n  text: |\n    line1\n    line2\n\
             kind: ConfigMap\n\
             list:\n- a:\n  - 1\n  - 2\n  b: 1\n- s\n- []\n\
             metadata:\n  creationTimestamp: \"2026-12-03T19:27:18Z\"\n  finalizers:\n  - x/y\n  labels:\n    app: web\n  name: a\n\
             none: {}\n\
             nothing: null\n"
        );
    }

    #[rstest]
    #[case::plain("web", "web")]
    #[case::url("http://example.com/a", "http://example.com/a")]
    #[case::with_colon_space("a: b", "'a: b'")]
    #[case::leading_star("*", "'*'")]
    #[case::leading_dash_space("- x", "'- x'")]
    #[case::dash_word("-x", "-x")]
    #[case::comment("a #b", "'a #b'")]
    #[case::quote_inside("it's", "it's")]
    #[case::leading_quote("'q'", "'''q'''")]
    #[case::bool_word("yes", "\"yes\"")]
    #[case::null_word("null", "\"null\"")]
    #[case::int("42", "\"42\"")]
    #[case::octal("0755", "\"0755\"")]
    #[case::hex("0x1F", "\"0x1F\"")]
    #[case::float("1.5e3", "\"1.5e3\"")]
    #[case::quantity("100m", "100m")]
    #[case::version("1.2.3", "1.2.3")]
    #[case::date("2026-01-02", "\"2026-01-02\"")]
    #[case::base60("1:20", "\"1:20\"")]
    #[case::strip("a\nb", "|-\n  a\n  b")]
    #[case::keep("a\n\n", "|+\n  a\n")]
    #[case::tab("a\tb", "\"a\\tb\"")]
    #[case::trailing_space_block("a \nb", "\"a \\nb\"")]
    #[case::control("a\u{1}b", "\"a\\x01b\"")]
    fn strings_take_go_yamls_style(#[case] s: &str, #[case] expected: &str) {
        let mut out = String::new();
        write_string(&mut out, s, 0);
        assert_eq!(out, expected);
    }

    #[test]
    fn every_document_reads_back_as_the_same_value() {
        let object = json!({"a": ["x: y", "yes", "", " lead", "trail ", "#c", "multi\nline", "1:20", "12:3"],
            "b": {"c": [[1, [2]], {"d": "e"}]}, "f": 1.5, "g": -3, "h": "2026-12-03T19:27:18.123456+01:00"});
        let yaml = from_json(&object);
        let back: Value = serde_yaml::from_str(&yaml).unwrap();
        assert_eq!(back, object, "{yaml}");
    }
}
