//! Label and field selectors, parsed and matched as a real API server does.
//!
//! [`LabelSelector`] parses the query-string syntax of `labels.Parse` (`=`, `==`, `!=`, `in`,
//! `notin`, `key`, `!key`, `>`/`<`, comma-joined) with its error messages, and converts a
//! `metav1.LabelSelector` object. [`FieldSelector`] parses `fields.ParseSelector` syntax and
//! knows which fields each kind lets you select on, with the server's "not supported" errors.

use serde_json::{Map, Value};

use crate::rules::validation::{go_quote, is_label_value, is_qualified_name};

/// A selector that could not be parsed or is not supported; the message is the one a real
/// server puts in its 400 BadRequest.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SelectorError {
    /// Full message.
    pub message: String,
}

impl SelectorError {
    fn new(message: impl Into<String>) -> Self {
        SelectorError {
            message: message.into(),
        }
    }

    /// HTTP status a server answers with (always 400).
    pub fn code(&self) -> u16 {
        400
    }

    /// `Status.reason` (always `BadRequest`).
    pub fn reason(&self) -> &'static str {
        "BadRequest"
    }
}

/// A label requirement operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operator {
    /// `in (a,b)`
    In,
    /// `notin (a,b)`
    NotIn,
    /// `=`
    Equals,
    /// `==`
    DoubleEquals,
    /// `!=`
    NotEquals,
    /// `key`
    Exists,
    /// `!key`
    DoesNotExist,
    /// `>` (integer comparison)
    GreaterThan,
    /// `<` (integer comparison)
    LessThan,
}

/// One `key op values` term.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    /// Label key.
    pub key: String,
    /// Operator.
    pub operator: Operator,
    /// Values (sorted, no duplicates).
    pub values: Vec<String>,
}

impl Requirement {
    /// Builds a requirement with the checks of `NewRequirement`.
    pub fn new(key: &str, operator: Operator, values: Vec<String>) -> Result<Self, SelectorError> {
        let mut errs: Vec<String> = Vec::new();
        let key_msgs = is_qualified_name(key);
        if !key_msgs.is_empty() {
            errs.push(format!(
                "key: Invalid value: {}: {}",
                go_quote(key),
                key_msgs.join("; ")
            ));
        }
        let render = |vals: &[String]| {
            let quoted: Vec<String> = vals.iter().map(|v| go_quote(v)).collect();
            format!("[]string{{{}}}", quoted.join(", "))
        };
        match operator {
            Operator::In | Operator::NotIn if values.is_empty() => errs.push(format!(
                "values: Invalid value: {}: for 'in', 'notin' operators, values set can't be empty",
                render(&values)
            )),
            Operator::Equals | Operator::DoubleEquals | Operator::NotEquals
                if values.len() != 1 =>
            {
                errs.push(format!(
                    "values: Invalid value: {}: exact-match compatibility requires one single value",
                    render(&values)
                ))
            }
            Operator::Exists | Operator::DoesNotExist if !values.is_empty() => errs.push(format!(
                "values: Invalid value: {}: values set must be empty for exists and does not exist",
                render(&values)
            )),
            Operator::GreaterThan | Operator::LessThan => {
                if values.len() != 1 {
                    errs.push(format!(
                        "values: Invalid value: {}: for 'Gt', 'Lt' operators, exactly one value is required",
                        render(&values)
                    ));
                }
                for (i, v) in values.iter().enumerate() {
                    if v.parse::<i64>().is_err() {
                        errs.push(format!(
                            "values[{i}]: Invalid value: {}: for 'Gt', 'Lt' operators, the value must be an integer",
                            go_quote(v)
                        ));
                    }
                }
            }
            _ => {}
        }
        for (i, v) in values.iter().enumerate() {
            let msgs = is_label_value(v);
            if !msgs.is_empty() {
                errs.push(format!(
                    "values[{i}][{key}]: Invalid value: {}: {}",
                    go_quote(v),
                    msgs.join("; ")
                ));
            }
        }
        if !errs.is_empty() {
            return Err(SelectorError::new(
                crate::rules::validation::aggregate_message(&errs),
            ));
        }
        Ok(Requirement {
            key: key.to_string(),
            operator,
            values,
        })
    }

    /// Whether a label set satisfies the requirement.
    pub fn matches(&self, labels: Option<&Map<String, Value>>) -> bool {
        let value = labels
            .and_then(|l| l.get(&self.key))
            .and_then(Value::as_str);
        let has = |v: &str| self.values.iter().any(|x| x == v);
        match self.operator {
            Operator::In | Operator::Equals | Operator::DoubleEquals => value.is_some_and(has),
            Operator::NotIn | Operator::NotEquals => !value.is_some_and(has),
            Operator::Exists => labels.is_some_and(|l| l.contains_key(&self.key)),
            Operator::DoesNotExist => !labels.is_some_and(|l| l.contains_key(&self.key)),
            Operator::GreaterThan | Operator::LessThan => {
                let (Some(v), [limit]) = (value, self.values.as_slice()) else {
                    return false;
                };
                match (v.parse::<i64>(), limit.parse::<i64>()) {
                    (Ok(v), Ok(limit)) if self.operator == Operator::GreaterThan => v > limit,
                    (Ok(v), Ok(limit)) => v < limit,
                    _ => false,
                }
            }
        }
    }
}

/// A parsed label selector: all requirements must hold. Empty matches everything.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LabelSelector {
    /// Requirements, sorted by key.
    pub requirements: Vec<Requirement>,
    /// Set when the selector can never match (a `metav1.LabelSelector` that selects nothing).
    pub nothing: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    End,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
    Error,
}

fn symbol_token(s: &str) -> Option<Token> {
    Some(match s {
        ")" => Token::ClosedPar,
        "," => Token::Comma,
        "!" => Token::DoesNotExist,
        "==" => Token::DoubleEquals,
        "=" => Token::Equals,
        ">" => Token::GreaterThan,
        "in" => Token::In,
        "<" => Token::LessThan,
        "!=" => Token::NotEquals,
        "notin" => Token::NotIn,
        "(" => Token::OpenPar,
        _ => return None,
    })
}

fn is_special(b: u8) -> bool {
    matches!(b, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// The label-selector lexer: a list of (token, literal).
fn lex(input: &str) -> Vec<(Token, String)> {
    let bytes = input.as_bytes();
    let mut pos = 0;
    let mut out = Vec::new();
    loop {
        while pos < bytes.len() && is_space(bytes[pos]) {
            pos += 1;
        }
        if pos >= bytes.len() {
            out.push((Token::End, String::new()));
            return out;
        }
        if is_special(bytes[pos]) {
            let mut buffer = String::new();
            let mut last: Option<(Token, String)> = None;
            while pos < bytes.len() && is_special(bytes[pos]) {
                buffer.push(bytes[pos] as char);
                if let Some(t) = symbol_token(&buffer) {
                    last = Some((t, buffer.clone()));
                    pos += 1;
                } else if last.is_some() {
                    break;
                } else {
                    pos += 1;
                }
            }
            match last {
                Some(item) => out.push(item),
                None => out.push((
                    Token::Error,
                    format!("error expected: keyword found '{buffer}'"),
                )),
            }
        } else {
            let start = pos;
            while pos < bytes.len() && !is_special(bytes[pos]) && !is_space(bytes[pos]) {
                pos += 1;
            }
            let word = String::from_utf8_lossy(&bytes[start..pos]).into_owned();
            match symbol_token(&word) {
                Some(t) => out.push((t, word)),
                None => out.push((Token::Identifier, word)),
            }
        }
    }
}

struct Parser {
    items: Vec<(Token, String)>,
    position: usize,
}

impl Parser {
    /// Token at the cursor; `in`/`notin` read as identifiers in value context.
    fn lookahead(&self, values: bool) -> (Token, String) {
        let (t, lit) = self
            .items
            .get(self.position)
            .cloned()
            .unwrap_or((Token::End, String::new()));
        (Self::in_context(t, values), lit)
    }

    fn consume(&mut self, values: bool) -> (Token, String) {
        let item = self.lookahead(values);
        if self.position < self.items.len() {
            self.position += 1;
        }
        item
    }

    fn in_context(t: Token, values: bool) -> Token {
        if values && matches!(t, Token::In | Token::NotIn) {
            Token::Identifier
        } else {
            t
        }
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, String> {
        let mut reqs = Vec::new();
        loop {
            let (t, lit) = self.lookahead(true);
            match t {
                Token::Identifier | Token::DoesNotExist => {
                    let r = self
                        .parse_requirement()
                        .map_err(|e| format!("unable to parse requirement: {e}"))?;
                    reqs.push(r);
                    let (t, lit) = self.consume(true);
                    match t {
                        Token::End => return Ok(reqs),
                        Token::Comma => {
                            let (t2, lit2) = self.lookahead(true);
                            if t2 != Token::Identifier && t2 != Token::DoesNotExist {
                                return Err(format!(
                                    "found '{lit2}', expected: identifier after ','"
                                ));
                            }
                        }
                        _ => {
                            return Err(format!("found '{lit}', expected: ',' or 'end of string'"))
                        }
                    }
                }
                Token::End => return Ok(reqs),
                _ => {
                    return Err(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    ))
                }
            }
        }
    }

    fn parse_requirement(&mut self) -> Result<Requirement, String> {
        let (key, op) = self.parse_key_and_infer_operator()?;
        if let Some(op @ (Operator::Exists | Operator::DoesNotExist)) = op {
            return Requirement::new(&key, op, Vec::new()).map_err(|e| e.message);
        }
        let op = self.parse_operator()?;
        let values = match op {
            Operator::In | Operator::NotIn => self.parse_values()?,
            _ => self.parse_exact_value()?,
        };
        Requirement::new(&key, op, values).map_err(|e| e.message)
    }

    fn parse_key_and_infer_operator(&mut self) -> Result<(String, Option<Operator>), String> {
        let mut op = None;
        let (mut t, mut lit) = self.consume(true);
        if t == Token::DoesNotExist {
            op = Some(Operator::DoesNotExist);
            (t, lit) = self.consume(true);
        }
        if t != Token::Identifier {
            return Err(format!("found '{lit}', expected: identifier"));
        }
        let msgs = is_qualified_name(&lit);
        if !msgs.is_empty() {
            return Err(format!(
                "<nil>: Invalid value: {}: {}",
                go_quote(&lit),
                msgs.join("; ")
            ));
        }
        let (next, _) = self.lookahead(true);
        if (next == Token::End || next == Token::Comma) && op.is_none() {
            op = Some(Operator::Exists);
        }
        Ok((lit, op))
    }

    fn parse_operator(&mut self) -> Result<Operator, String> {
        let (t, lit) = self.consume(false);
        Ok(match t {
            Token::In => Operator::In,
            Token::Equals => Operator::Equals,
            Token::DoubleEquals => Operator::DoubleEquals,
            Token::GreaterThan => Operator::GreaterThan,
            Token::LessThan => Operator::LessThan,
            Token::NotIn => Operator::NotIn,
            Token::NotEquals => Operator::NotEquals,
            _ => {
                return Err(format!(
                    "found '{lit}', expected: in, notin, =, ==, !=, gt, lt"
                ))
            }
        })
    }

    fn parse_values(&mut self) -> Result<Vec<String>, String> {
        let (t, lit) = self.consume(true);
        if t != Token::OpenPar {
            return Err(format!("found '{lit}' expected: '('"));
        }
        let (t, lit) = self.lookahead(true);
        match t {
            Token::Identifier | Token::Comma => {
                let set = self.parse_identifiers_list()?;
                let (t, _) = self.consume(true);
                if t != Token::ClosedPar {
                    return Err(format!("found '{lit}', expected: ')'"));
                }
                Ok(set)
            }
            Token::ClosedPar => {
                self.consume(true);
                Ok(vec![String::new()])
            }
            _ => Err(format!("found '{lit}', expected: ',', ')' or identifier")),
        }
    }

    fn parse_identifiers_list(&mut self) -> Result<Vec<String>, String> {
        let mut set: Vec<String> = Vec::new();
        let insert = |set: &mut Vec<String>, v: String| {
            if !set.contains(&v) {
                set.push(v);
            }
        };
        loop {
            let (t, lit) = self.consume(true);
            match t {
                Token::Identifier => {
                    insert(&mut set, lit);
                    let (t2, lit2) = self.lookahead(true);
                    match t2 {
                        Token::Comma => continue,
                        Token::ClosedPar => break,
                        _ => return Err(format!("found '{lit2}', expected: ',' or ')'")),
                    }
                }
                Token::Comma => {
                    if set.is_empty() {
                        insert(&mut set, String::new());
                    }
                    let (t2, _) = self.lookahead(true);
                    if t2 == Token::ClosedPar {
                        insert(&mut set, String::new());
                        break;
                    }
                    if t2 == Token::Comma {
                        insert(&mut set, String::new());
                    }
                }
                _ => return Err(format!("found '{lit}', expected: ',', or identifier")),
            }
        }
        set.sort();
        Ok(set)
    }

    fn parse_exact_value(&mut self) -> Result<Vec<String>, String> {
        let (t, _) = self.lookahead(true);
        if t == Token::End || t == Token::Comma {
            return Ok(vec![String::new()]);
        }
        let (t, lit) = self.consume(true);
        if t == Token::Identifier {
            Ok(vec![lit])
        } else {
            Err(format!("found '{lit}', expected: identifier"))
        }
    }
}

impl LabelSelector {
    /// Parses the `labelSelector` query-string syntax. The error message is the one a real
    /// server returns in its 400 (e.g. `unable to parse requirement: found 'a' expected: '('`).
    pub fn parse(selector: &str) -> Result<Self, SelectorError> {
        let mut parser = Parser {
            items: lex(selector),
            position: 0,
        };
        let mut requirements = parser.parse().map_err(SelectorError::new)?;
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(LabelSelector {
            requirements,
            nothing: false,
        })
    }

    /// Converts a `metav1.LabelSelector` object (`matchLabels`, `matchExpressions`), as
    /// `LabelSelectorAsSelector` does: `null` selects nothing, `{}` everything.
    pub fn from_label_selector_json(selector: &Value) -> Result<Self, SelectorError> {
        let Some(obj) = selector.as_object() else {
            if selector.is_null() {
                return Ok(LabelSelector {
                    requirements: Vec::new(),
                    nothing: true,
                });
            }
            return Err(SelectorError::new("a label selector must be an object"));
        };
        let mut requirements = Vec::new();
        if let Some(labels) = obj.get("matchLabels").and_then(Value::as_object) {
            for (k, v) in labels {
                let value = v.as_str().unwrap_or_default().to_string();
                requirements.push(Requirement::new(k, Operator::Equals, vec![value])?);
            }
        }
        if let Some(exprs) = obj.get("matchExpressions").and_then(Value::as_array) {
            for expr in exprs {
                let key = expr.get("key").and_then(Value::as_str).unwrap_or_default();
                let op_text = expr
                    .get("operator")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let op = match op_text {
                    "In" => Operator::In,
                    "NotIn" => Operator::NotIn,
                    "Exists" => Operator::Exists,
                    "DoesNotExist" => Operator::DoesNotExist,
                    other => {
                        return Err(SelectorError::new(format!(
                            "{} is not a valid label selector operator",
                            go_quote(other)
                        )))
                    }
                };
                let mut values: Vec<String> = expr
                    .get("values")
                    .and_then(Value::as_array)
                    .map(|vs| {
                        vs.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default();
                values.sort();
                values.dedup();
                requirements.push(Requirement::new(key, op, values)?);
            }
        }
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(LabelSelector {
            requirements,
            nothing: false,
        })
    }

    /// Whether the selector has no requirements (matches everything).
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty() && !self.nothing
    }

    /// Whether a label set (an object's `metadata.labels`) satisfies every requirement.
    pub fn matches(&self, labels: Option<&Map<String, Value>>) -> bool {
        !self.nothing && self.requirements.iter().all(|r| r.matches(labels))
    }

    /// A label `(key, value)` every matching object carries, when a requirement asks for exactly
    /// one value (`k=v`, `k==v`, `k in (v)`; Go's `Selector.RequiresExactMatch`): the first such
    /// requirement by key.
    pub fn exact_match(&self) -> Option<(&str, &str)> {
        self.requirements
            .iter()
            .find_map(|r| match (r.operator, r.values.as_slice()) {
                (Operator::Equals | Operator::DoubleEquals | Operator::In, [value]) => {
                    Some((r.key.as_str(), value.as_str()))
                }
                _ => None,
            })
    }
}

/// One `field op value` term of a field selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldTerm {
    /// Field path, e.g. `spec.nodeName`.
    pub field: String,
    /// `true` for `!=`.
    pub negated: bool,
    /// Value (unescaped).
    pub value: String,
}

/// A parsed field selector: all terms must hold. Empty matches everything.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FieldSelector {
    /// Terms, sorted as the server sorts them.
    pub terms: Vec<FieldTerm>,
    /// The built-in `(group, kind)` whose field set the terms read, once converted with
    /// [`FieldSelector::convert_for`]; `None` reads each field as a plain JSON path.
    pub target: Option<(String, String)>,
}

fn split_terms(selector: &str) -> Vec<String> {
    let mut terms = Vec::new();
    let mut current = String::new();
    let mut in_slash = false;
    for c in selector.chars() {
        if in_slash {
            in_slash = false;
            current.push(c);
        } else if c == '\\' {
            in_slash = true;
            current.push(c);
        } else if c == ',' {
            terms.push(std::mem::take(&mut current));
        } else {
            current.push(c);
        }
    }
    terms.push(current);
    terms
}

fn unescape_field_value(s: &str) -> Result<String, SelectorError> {
    if !s.contains(['\\', ',', '=']) {
        return Ok(s.to_string());
    }
    let mut out = String::new();
    let mut in_slash = false;
    for c in s.chars() {
        if in_slash {
            match c {
                '\\' | ',' | '=' => out.push(c),
                other => {
                    return Err(SelectorError::new(format!(
                        "invalid field selector: invalid escape sequence: \\{other}"
                    )))
                }
            }
            in_slash = false;
            continue;
        }
        match c {
            '\\' => in_slash = true,
            ',' | '=' => {
                return Err(SelectorError::new(format!(
                    "invalid field selector: unescaped character in value: {}",
                    c as u32
                )))
            }
            other => out.push(other),
        }
    }
    if in_slash {
        return Err(SelectorError::new(
            "invalid field selector: invalid escape sequence: \\",
        ));
    }
    Ok(out)
}

impl FieldSelector {
    /// Parses `fields.ParseSelector` syntax: `a=b,c!=d,e==f` with `\,` `\=` `\\` escapes.
    pub fn parse(selector: &str) -> Result<Self, SelectorError> {
        if selector.is_empty() {
            return Ok(FieldSelector::default());
        }
        let mut parts = split_terms(selector);
        parts.sort();
        let mut terms = Vec::new();
        for part in parts.iter().filter(|p| !p.is_empty()) {
            let Some((field, op_len, negated)) = split_term(part) else {
                return Err(SelectorError::new(format!(
                    "invalid selector: '{selector}'; can't understand '{part}'"
                )));
            };
            let lhs = part.get(..field).unwrap_or_default().to_string();
            let rhs = part.get(field + op_len..).unwrap_or_default();
            terms.push(FieldTerm {
                field: lhs,
                negated,
                value: unescape_field_value(rhs)?,
            });
        }
        Ok(FieldSelector {
            terms,
            target: None,
        })
    }

    /// Runs every term through the field label conversion of the built-in `group/version`
    /// `kind` ([`crate::rules::field_labels::conversion`]): the selector to match with, its labels
    /// renamed to the internal fields they read, or the conversion's 400 message.
    pub fn convert_for(
        &self,
        group: &str,
        version: &str,
        kind: &str,
    ) -> Result<FieldSelector, SelectorError> {
        let conversion = crate::rules::field_labels::conversion(group, version, kind);
        let terms = self
            .terms
            .iter()
            .map(|term| {
                let field = conversion
                    .convert(&term.field)
                    .map_err(SelectorError::new)?;
                Ok(FieldTerm {
                    field: field.to_string(),
                    ..term.clone()
                })
            })
            .collect::<Result<Vec<_>, SelectorError>>()?;
        Ok(FieldSelector {
            terms,
            target: Some((group.to_string(), kind.to_string())),
        })
    }

    /// Checks the fields for a custom resource: `metadata.name`, `metadata.namespace` (when
    /// namespaced) and the CRD's `selectableFields` (JSON paths like `.spec.color`).
    pub fn validate_for_custom(
        &self,
        namespaced: bool,
        selectable_fields: &[String],
    ) -> Result<(), SelectorError> {
        for term in &self.terms {
            let label = term.field.as_str();
            let ok = label == "metadata.name"
                || (namespaced && label == "metadata.namespace")
                || selectable_fields
                    .iter()
                    .any(|f| f.trim_start_matches('.') == label);
            if !ok {
                return Err(SelectorError::new(format!(
                    "field label not supported: {label}"
                )));
            }
        }
        Ok(())
    }

    /// Whether the selector has no terms.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// Whether an object satisfies every term (missing fields read as the empty string).
    pub fn matches(&self, obj: &Value) -> bool {
        self.terms.iter().all(|t| {
            let actual = match &self.target {
                Some((group, kind)) => {
                    crate::rules::field_labels::selectable_value(group, kind, obj, &t.field)
                }
                None => field_value(obj, &t.field),
            };
            (actual == t.value) != t.negated
        })
    }
}

fn split_term(term: &str) -> Option<(usize, usize, bool)> {
    for (i, _) in term.char_indices() {
        let rest = &term[i..];
        for (op, negated) in [("!=", true), ("==", false), ("=", false)] {
            if rest.starts_with(op) {
                return Some((i, op.len(), negated));
            }
        }
    }
    None
}

/// The string value of a selectable field of an object, as the server's field sets give it,
/// for an object that names its own `apiVersion` and `kind`
/// (see [`crate::rules::field_labels::selectable_value`]).
pub fn field_value(obj: &Value, field: &str) -> String {
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
    let api_version = obj
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let group = api_version.split_once('/').map_or("", |(g, _)| g);
    crate::rules::field_labels::selectable_value(group, kind, obj, field)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    #[rstest]
    #[case::eq("app=a", Some(("app", "a")))]
    #[case::double_eq("app==a", Some(("app", "a")))]
    #[case::in_one("app in (a)", Some(("app", "a")))]
    #[case::in_two("app in (a,b)", None)]
    #[case::not_eq("app!=a", None)]
    #[case::exists("app", None)]
    #[case::first_by_key("z=1,b in (x),a!=2", Some(("b", "x")))]
    #[case::empty("", None)]
    fn exact_match_is_a_label_every_match_carries(
        #[case] selector: &str,
        #[case] expected: Option<(&str, &str)>,
    ) {
        assert_eq!(
            LabelSelector::parse(selector).unwrap().exact_match(),
            expected
        );
    }

    fn labels(v: Value) -> Option<Map<String, Value>> {
        v.as_object().cloned()
    }

    #[rstest]
    #[case::eq("app=a", &["a1", "a2"])]
    #[case::double_eq("app==a", &["a1", "a2"])]
    #[case::not_eq("app!=a", &["b1", "c1", "none"])]
    #[case::in_set("app in (a,b)", &["a1", "a2", "b1"])]
    #[case::not_in("app notin (a,b)", &["c1", "none"])]
    #[case::exists("tier", &["a1", "b1"])]
    #[case::not_exists("!tier", &["a2", "c1", "none"])]
    #[case::and("app=a,tier", &["a1"])]
    #[case::in_and_not("app in (a),!tier", &["a2"])]
    #[case::key_only("app", &["a1", "a2", "b1", "c1"])]
    #[case::no_match("app=zzz", &[])]
    #[case::empty("", &["a1", "a2", "b1", "c1", "none"])]
    #[case::spaces("  app  in ( a , b ) ", &["a1", "a2", "b1"])]
    #[case::gt("n>5", &["b1"])]
    #[case::lt("n<5", &["a1"])]
    fn label_selector_matches_like_the_golden_run(#[case] sel: &str, #[case] expected: &[&str]) {
        let objects = [
            ("a1", json!({"app": "a", "tier": "fe", "n": "1"})),
            ("a2", json!({"app": "a"})),
            ("b1", json!({"app": "b", "tier": "be", "n": "10"})),
            ("c1", json!({"app": "c", "n": "x"})),
            ("none", json!(null)),
        ];
        let s = LabelSelector::parse(sel).unwrap();
        let got: Vec<&str> = objects
            .iter()
            .filter(|(_, l)| s.matches(labels(l.clone()).as_ref()))
            .map(|(n, _)| *n)
            .collect();
        assert_eq!(got, expected, "{sel}");
    }

    #[rstest]
    #[case::in_without_parens("app in a", "unable to parse requirement: found 'a' expected: '('")]
    #[case::double_value("app=a=b", "found '=', expected: ',' or 'end of string'")]
    #[case::trailing_comma("app=a,", "found '', expected: identifier after ','")]
    #[case::leading_op("=a", "found '=', expected: !, identifier, or 'end of string'")]
    #[case::bad_key(
        "a b",
        "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"
    )]
    #[case::bad_value("app=a b c", "found 'b', expected: ',' or 'end of string'")]
    #[case::symbol_run(
        "app=>a",
        "unable to parse requirement: found '>', expected: identifier"
    )]
    #[case::bang_only("!", "unable to parse requirement: found '', expected: identifier")]
    #[case::unclosed(
        "app in (a",
        "unable to parse requirement: found '', expected: ',' or ')'"
    )]
    #[case::invalid_key("-app=x", "unable to parse requirement: <nil>: Invalid value: \"-app\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")]
    #[case::invalid_value("app=-x", "unable to parse requirement: values[0][app]: Invalid value: \"-x\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")]
    #[case::gt_not_int("n>x", "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer")]
    fn label_selector_parse_errors(#[case] sel: &str, #[case] message: &str) {
        let err = LabelSelector::parse(sel).unwrap_err();
        assert_eq!(err.to_string(), message);
        assert_eq!((err.code(), err.reason()), (400, "BadRequest"));
    }

    #[rstest]
    #[case::empty_set("app in ()", "", true)]
    #[case::empty_value("app=", "", true)]
    #[case::in_keyword_as_value("app in (in,notin)", "notin", true)]
    #[case::commas("app in (,a)", "", true)]
    fn label_selector_edge_values(#[case] sel: &str, #[case] value: &str, #[case] matched: bool) {
        let s = LabelSelector::parse(sel).unwrap();
        assert_eq!(s.matches(labels(json!({"app": value})).as_ref()), matched);
    }

    #[test]
    fn label_selector_from_object() {
        let s = LabelSelector::from_label_selector_json(&json!({
            "matchLabels": {"app": "a"},
            "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["be"]}]
        }))
        .unwrap();
        assert!(s.matches(labels(json!({"app": "a", "tier": "fe"})).as_ref()));
        assert!(!s.matches(labels(json!({"app": "a", "tier": "be"})).as_ref()));
        assert!(!s.matches(labels(json!({"app": "b"})).as_ref()));
        let everything = LabelSelector::from_label_selector_json(&json!({})).unwrap();
        assert!(everything.is_empty() && everything.matches(None));
        let nothing = LabelSelector::from_label_selector_json(&json!(null)).unwrap();
        assert!(!nothing.matches(labels(json!({"a": "b"})).as_ref()));
        assert!(LabelSelector::from_label_selector_json(
            &json!({"matchExpressions": [{"key": "a", "operator": "Foo"}]})
        )
        .is_err());
        assert!(LabelSelector::from_label_selector_json(
            &json!({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]})
        )
        .is_err());
        assert!(LabelSelector::from_label_selector_json(&json!([1])).is_err());
    }

    fn pod(node: &str, phase: &str) -> Value {
        json!({"kind": "Pod", "metadata": {"name": "p", "namespace": "ns"},
               "spec": {"nodeName": node, "restartPolicy": "Always"},
               "status": {"phase": phase, "podIPs": [{"ip": "10.0.0.1"}]}})
    }

    #[rstest]
    #[case::node("spec.nodeName=n1", true)]
    #[case::double("spec.nodeName==n1", true)]
    #[case::not_node("spec.nodeName!=n1", false)]
    #[case::unbound("spec.nodeName=", false)]
    #[case::phase_and_name("status.phase=Running,metadata.name=p", true)]
    #[case::ns("metadata.namespace=other", false)]
    #[case::pod_ip("status.podIP=10.0.0.1", true)]
    #[case::host_network("spec.hostNetwork=false", true)]
    #[case::legacy_host("spec.host=n1", true)]
    fn field_selector_matches_pods(#[case] sel: &str, #[case] matched: bool) {
        let s = FieldSelector::parse(sel)
            .unwrap()
            .convert_for("", "v1", "Pod")
            .unwrap();
        assert_eq!(s.matches(&pod("n1", "Running")), matched, "{sel}");
    }

    #[test]
    fn field_selector_unbound_pods() {
        let s = FieldSelector::parse("spec.nodeName=").unwrap();
        let unbound = json!({"kind": "Pod", "metadata": {"name": "p"}, "spec": {}});
        assert!(s.matches(&unbound));
    }

    /// Every conversion function's refusal, worded as that function words it.
    #[rstest]
    #[case::node_provider(
        "",
        "Node",
        "spec.providerID",
        "field label not supported: spec.providerID"
    )]
    #[case::node_namespace(
        "",
        "Node",
        "metadata.namespace",
        "field label not supported: metadata.namespace"
    )]
    #[case::pod_unknown("", "Pod", "spec.priority", "field label not supported: spec.priority")]
    #[case::pod_host_ip("", "Pod", "status.hostIP", "field label not supported: status.hostIP")]
    #[case::namespace_ns(
        "",
        "Namespace",
        "metadata.namespace",
        "field label not supported: metadata.namespace"
    )]
    #[case::secret_data("", "Secret", "data.a", "field label not supported: data.a")]
    #[case::service_ports("", "Service", "spec.ports", "field label not supported: spec.ports")]
    #[case::rc_spec(
        "",
        "ReplicationController",
        "spec.replicas",
        "field label not supported: spec.replicas"
    )]
    #[case::core_event_regarding(
        "",
        "Event",
        "regarding.name",
        "field label not supported: regarding.name"
    )]
    #[case::events_v1_involved(
        "events.k8s.io",
        "Event",
        "involvedObject.name",
        "field label not supported: involvedObject.name"
    )]
    #[case::events_v1_reporting_component(
        "events.k8s.io",
        "Event",
        "reportingComponent",
        "field label not supported: reportingComponent"
    )]
    #[case::job_succeeded(
        "batch",
        "Job",
        "status.succeeded",
        "field label \"status.succeeded\" not supported for batchv1.Job"
    )]
    #[case::csr_namespace(
        "certificates.k8s.io",
        "CertificateSigningRequest",
        "metadata.namespace",
        "field label not supported: metadata.namespace"
    )]
    #[case::configmap(
        "",
        "ConfigMap",
        "data.a",
        "\"data.a\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
    )]
    #[case::service_account(
        "",
        "ServiceAccount",
        "secrets",
        "\"secrets\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
    )]
    #[case::lease("coordination.k8s.io", "Lease", "spec.holderIdentity", "\"spec.holderIdentity\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"")]
    #[case::replica_set("apps", "ReplicaSet", "status.replicas", "\"status.replicas\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"")]
    #[case::stateful_set("apps", "StatefulSet", "status.successful", "\"status.successful\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"")]
    #[case::cron_job("batch", "CronJob", "status.successful", "\"status.successful\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"")]
    fn field_selector_unsupported(
        #[case] group: &str,
        #[case] kind: &str,
        #[case] label: &str,
        #[case] message: &str,
    ) {
        let err = FieldSelector::parse(&format!("{label}=x"))
            .unwrap()
            .convert_for(group, "v1", kind)
            .unwrap_err();
        assert_eq!(err.to_string(), message);
        assert_eq!((err.code(), err.reason()), (400, "BadRequest"));
    }

    /// Labels each conversion accepts, and the internal field each one reads.
    #[rstest]
    #[case::secret("", "Secret", "type", "type")]
    #[case::ns("", "Namespace", "status.phase", "status.phase")]
    #[case::node("", "Node", "spec.unschedulable", "spec.unschedulable")]
    #[case::pod_host("", "Pod", "spec.host", "spec.nodeName")]
    #[case::pod_ips("", "Pod", "status.podIPs", "status.podIPs")]
    #[case::pod_host_network("", "Pod", "spec.hostNetwork", "spec.hostNetwork")]
    #[case::service_type("", "Service", "spec.type", "spec.type")]
    #[case::service_ip("", "Service", "spec.clusterIP", "spec.clusterIP")]
    #[case::rc("", "ReplicationController", "status.replicas", "status.replicas")]
    #[case::event_source("", "Event", "source", "source")]
    #[case::event_reporting("", "Event", "reportingComponent", "reportingComponent")]
    #[case::event_involved("", "Event", "involvedObject.uid", "involvedObject.uid")]
    #[case::events_v1_regarding("events.k8s.io", "Event", "regarding.name", "involvedObject.name")]
    #[case::events_v1_reporting(
        "events.k8s.io",
        "Event",
        "reportingController",
        "reportingComponent"
    )]
    #[case::events_v1_type("events.k8s.io", "Event", "type", "type")]
    #[case::job("batch", "Job", "status.successful", "status.successful")]
    #[case::csr(
        "certificates.k8s.io",
        "CertificateSigningRequest",
        "spec.signerName",
        "spec.signerName"
    )]
    #[case::deploy_name("apps", "Deployment", "metadata.name", "metadata.name")]
    #[case::cm_namespace("", "ConfigMap", "metadata.namespace", "metadata.namespace")]
    #[case::cluster_scoped_namespace(
        "",
        "PersistentVolume",
        "metadata.namespace",
        "metadata.namespace"
    )]
    fn field_selector_supported(
        #[case] group: &str,
        #[case] kind: &str,
        #[case] label: &str,
        #[case] internal: &str,
    ) {
        let s = FieldSelector::parse(&format!("{label}=x"))
            .unwrap()
            .convert_for(group, "v1", kind)
            .unwrap();
        assert_eq!(s.terms[0].field, internal);
        assert_eq!(s.terms[0].value, "x");
    }

    /// Without a conversion, the object's own apiVersion and kind pick the field set: a custom
    /// kind named `Job` reads its fields as plain paths.
    #[test]
    fn field_value_reads_the_objects_own_kind() {
        let custom =
            json!({"apiVersion": "example.com/v1", "kind": "Job", "status": {"successful": "yes"}});
        assert_eq!(field_value(&custom, "status.successful"), "yes");
        let job = json!({"apiVersion": "batch/v1", "kind": "Job", "status": {"succeeded": 2}});
        assert_eq!(field_value(&job, "status.successful"), "2");
    }

    /// An API version without a conversion of its own gets the default one.
    #[test]
    fn field_selector_other_versions_use_the_default() {
        let err = FieldSelector::parse("spec.nodeName=a")
            .unwrap()
            .convert_for("", "v2", "Pod")
            .unwrap_err();
        assert!(err.message.contains("is not a known field selector"));
    }

    /// What a selector matches: the values each registry's `GetAttrs` puts in the field set.
    #[rstest]
    #[case::job_successful(json!({"apiVersion": "batch/v1", "kind": "Job", "status": {"succeeded": 1}}), "batch", "Job", "status.successful=1", true)]
    #[case::job_successful_other(json!({"apiVersion": "batch/v1", "kind": "Job", "status": {"succeeded": 2}}), "batch", "Job", "status.successful=1", false)]
    #[case::job_unset_is_zero(json!({"apiVersion": "batch/v1", "kind": "Job", "status": {}}), "batch", "Job", "status.successful=0", true)]
    #[case::job_not_zero(json!({"apiVersion": "batch/v1", "kind": "Job"}), "batch", "Job", "status.successful!=0", false)]
    #[case::rc_unset_is_zero(json!({"apiVersion": "v1", "kind": "ReplicationController"}), "", "ReplicationController", "status.replicas=0", true)]
    #[case::rc_replicas(json!({"apiVersion": "v1", "kind": "ReplicationController", "status": {"replicas": 3}}), "", "ReplicationController", "status.replicas=3", true)]
    #[case::service_type(json!({"apiVersion": "v1", "kind": "Service", "spec": {"type": "NodePort", "clusterIP": "10.0.0.5"}}), "", "Service", "spec.type=NodePort,spec.clusterIP=10.0.0.5", true)]
    #[case::service_headless(json!({"apiVersion": "v1", "kind": "Service", "spec": {"type": "ClusterIP", "clusterIP": "None"}}), "", "Service", "spec.clusterIP!=None", false)]
    #[case::pod_ips_read_empty(json!({"apiVersion": "v1", "kind": "Pod", "status": {"podIPs": [{"ip": "10.0.0.1"}]}}), "", "Pod", "status.podIPs=10.0.0.1", false)]
    #[case::pod_ips_empty_matches(json!({"apiVersion": "v1", "kind": "Pod", "status": {"podIPs": [{"ip": "10.0.0.1"}]}}), "", "Pod", "status.podIPs=", true)]
    #[case::pod_host_network(json!({"apiVersion": "v1", "kind": "Pod", "spec": {"hostNetwork": true}}), "", "Pod", "spec.hostNetwork=true", true)]
    #[case::node_schedulable(json!({"apiVersion": "v1", "kind": "Node", "spec": {}}), "", "Node", "spec.unschedulable=false", true)]
    #[case::event_source(json!({"apiVersion": "v1", "kind": "Event", "source": {"component": "kubelet"}}), "", "Event", "source=kubelet", true)]
    #[case::event_source_falls_back(json!({"apiVersion": "v1", "kind": "Event", "reportingComponent": "ctrl"}), "", "Event", "source=ctrl,reportingComponent=ctrl", true)]
    #[case::events_v1_regarding(json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "regarding": {"kind": "Pod", "name": "p"}}), "events.k8s.io", "Event", "regarding.kind=Pod,regarding.name=p", true)]
    #[case::events_v1_reporting(json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "reportingController": "ctrl"}), "events.k8s.io", "Event", "reportingController=ctrl,source=ctrl", true)]
    #[case::events_v1_deprecated_source(json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "reportingController": "ctrl", "deprecatedSource": {"component": "kubelet"}}), "events.k8s.io", "Event", "source=kubelet", true)]
    fn field_selector_values(
        #[case] object: Value,
        #[case] group: &str,
        #[case] kind: &str,
        #[case] sel: &str,
        #[case] matched: bool,
    ) {
        let s = FieldSelector::parse(sel)
            .unwrap()
            .convert_for(group, "v1", kind)
            .unwrap();
        assert_eq!(s.matches(&object), matched, "{sel} on {object}");
    }

    #[test]
    fn field_selector_custom_resources() {
        let s = FieldSelector::parse("spec.color=red").unwrap();
        assert!(s
            .validate_for_custom(true, &[".spec.color".to_string()])
            .is_ok());
        assert_eq!(
            s.validate_for_custom(true, &[]).unwrap_err().to_string(),
            "field label not supported: spec.color"
        );
        let ns = FieldSelector::parse("metadata.namespace=a").unwrap();
        assert!(ns.validate_for_custom(true, &[]).is_ok());
        assert!(ns.validate_for_custom(false, &[]).is_err());
        assert!(s.matches(&json!({"spec": {"color": "red"}})));
    }

    #[rstest]
    #[case::no_operator("abc", "invalid selector: 'abc'; can't understand 'abc'")]
    #[case::second_bad("a=b,c", "invalid selector: 'a=b,c'; can't understand 'c'")]
    #[case::unescaped("a=b=c", "invalid field selector: unescaped character in value: 61")]
    #[case::bad_escape("a=b\\x", "invalid field selector: invalid escape sequence: \\x")]
    #[case::dangling("a=b\\", "invalid field selector: invalid escape sequence: \\")]
    fn field_selector_parse_errors(#[case] sel: &str, #[case] message: &str) {
        assert_eq!(FieldSelector::parse(sel).unwrap_err().to_string(), message);
    }

    #[test]
    fn field_selector_escapes_and_event_fields() {
        let s = FieldSelector::parse("reason=a\\,b\\=c,source=kubelet").unwrap();
        let ev = json!({"kind": "Event", "reason": "a,b=c", "source": {"component": "kubelet"}});
        assert!(s.matches(&ev));
        assert!(FieldSelector::parse("").unwrap().matches(&ev));
        assert!(FieldSelector::parse(",,").unwrap().is_empty());
    }

    #[test]
    fn garbage_never_panics() {
        for s in [
            "((",
            "!!=",
            "a in (b",
            "in",
            "notin (a)",
            "a,,b",
            "ü=ö",
            "a=ü\\",
            "\u{0}",
            "=",
            "!=",
            "a!=",
            "a notin",
        ] {
            let _ = LabelSelector::parse(s);
            if let Ok(f) = FieldSelector::parse(s) {
                let _ = f.convert_for("", "v1", "Pod");
                let _ = f.matches(&json!(null));
            }
        }
    }
}
