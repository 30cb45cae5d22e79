//! The check a compiled expression gets before it is used: references to undeclared variables,
//! a result of the wrong type where the AST shows it, and (for CRD rules) fields the schema does
//! not declare. Errors are rendered as cel-go renders its issues.

use cel::common::ast::{Expr, IdedExpr, LiteralValue};
use serde_json::Value;

use super::program::{CompileError, ResultKind};

/// Type names and library namespaces an identifier may name without being a variable.
const KNOWN_IDENTS: &[&str] = &[
    "int",
    "uint",
    "double",
    "bool",
    "string",
    "bytes",
    "list",
    "map",
    "null_type",
    "type",
    "dyn",
    "google",
    "optional",
    "math",
    "strings",
    "lists",
    "base64",
    "cel",
    // `ip.isCanonical(...)`, a function of the Kubernetes IP library.
    "ip",
    // `format.named(...)`, `format.dns1123Label()`: the Kubernetes format library.
    "format",
];

/// One cel-go issue: `ERROR: <input>:LINE:COL: MESSAGE`, the source line and a caret under the
/// column (`col0` counts characters from 0).
pub(crate) fn render_error(src: &str, line: usize, col0: usize, msg: &str) -> String {
    let mut out = format!("ERROR: <input>:{line}:{}: {msg}", col0 + 1);
    if let Some(snippet) = src.lines().nth(line.saturating_sub(1)) {
        let snippet = snippet.replace('\t', " ");
        let mut ind = String::new();
        let mut chars = snippet.chars();
        for _ in 0..col0 {
            match chars.next() {
                Some(c) if c.len_utf8() > 1 => ind.push('\u{FF0E}'),
                Some(_) => ind.push('.'),
                None => break,
            }
        }
        match chars.next() {
            Some(c) if c.len_utf8() > 1 => ind.push('\u{FF3E}'),
            _ => ind.push('^'),
        }
        out.push_str(&format!("\n | {snippet}\n | {ind}"));
    }
    out
}

/// Line (from 1) and column (from 0, in characters) of a node.
fn position(src: &str, program: &cel::Program, id: u64) -> (usize, usize) {
    let start = program
        .source_info()
        .offset_for(id)
        .map_or(0, |(s, _)| s as usize);
    let (mut line, mut col) = (1, 0);
    for (i, c) in src.chars().enumerate() {
        if i >= start {
            break;
        }
        if c == '\n' {
            line += 1;
            col = 0;
        } else {
            col += 1;
        }
    }
    (line, col)
}

fn issue(src: &str, program: &cel::Program, id: u64, msg: &str) -> CompileError {
    let (line, col) = position(src, program, id);
    CompileError {
        message: render_error(src, line, col, msg),
        wrong_type: false,
        instantiation: false,
    }
}

/// Checks a parsed expression; returns the declared variables it uses.
pub(crate) fn check(
    src: &str,
    program: &cel::Program,
    declared: &[&str],
    kind: ResultKind,
) -> Result<Vec<String>, CompileError> {
    let mut used = Vec::new();
    let mut bound: Vec<String> = Vec::new();
    walk_idents(program.expression(), declared, &mut bound, &mut used).map_err(|(id, name)| {
        issue(
            src,
            program,
            id,
            &format!("undeclared reference to '{name}' (in container '')"),
        )
    })?;
    validate_literals(program.expression(), false)
        .map_err(|(id, msg)| issue(src, program, id, &msg))?;
    let result = result_kind(program.expression());
    match (kind, result) {
        (ResultKind::Bool, Some(k)) if k != "bool" => Err(CompileError {
            message: "cel expression must evaluate to a bool".into(),
            wrong_type: true,
            instantiation: false,
        }),
        (ResultKind::String, Some(k)) if k != "string" => Err(CompileError {
            message: "must evaluate to a string".into(),
            wrong_type: true,
            instantiation: false,
        }),
        _ => match literal_pattern_error(program.expression()) {
            Some(message) => Err(CompileError {
                message,
                wrong_type: false,
                instantiation: true,
            }),
            None => Ok(used),
        },
    }
}

/// Kubernetes' regex optimization (`FindRegexOptimization`, `FindAllRegexOptimization`)
/// compiles a literal `find`/`findAll` pattern when the program is built: Go's error for the
/// first one it refuses.
fn literal_pattern_error(e: &IdedExpr) -> Option<String> {
    let mut found = None;
    visit(e, &mut |node| {
        if let Expr::Call(c) = &node.expr {
            if matches!(c.func_name.as_str(), "find" | "findAll") && c.target.is_some() {
                if let Some(Expr::Literal(LiteralValue::String(pattern))) =
                    c.args.first().map(|a| &a.expr)
                {
                    if let Err(crate::rules::go_regexp::CompileError::Go(message)) =
                        crate::rules::go_regexp::compiled(pattern)
                    {
                        found.get_or_insert(message);
                    }
                }
            }
        }
    });
    found
}

fn visit_entry(entry: &cel::common::ast::EntryExpr, f: &mut dyn FnMut(&IdedExpr)) {
    match entry {
        cel::common::ast::EntryExpr::MapEntry(me) => {
            visit(&me.key, f);
            visit(&me.value, f);
        }
        cel::common::ast::EntryExpr::StructField(sf) => visit(&sf.value, f),
    }
}

/// Calls `f` on every node of the expression, parents first.
/// A comprehension's sub-expressions, in the order the walks visit them.
fn comprehension_parts(c: &cel::common::ast::ComprehensionExpr) -> [&IdedExpr; 5] {
    [
        &c.iter_range,
        &c.accu_init,
        &c.loop_cond,
        &c.loop_step,
        &c.result,
    ]
}

fn visit(e: &IdedExpr, f: &mut dyn FnMut(&IdedExpr)) {
    f(e);
    match &e.expr {
        Expr::Call(c) => {
            if let Some(t) = &c.target {
                visit(t, f);
            }
            c.args.iter().for_each(|a| visit(a, f));
        }
        Expr::Select(s) => visit(&s.operand, f),
        Expr::List(l) => l.elements.iter().for_each(|x| visit(x, f)),
        Expr::Map(m) => m
            .entries
            .iter()
            .for_each(|entry| visit_entry(&entry.expr, f)),
        Expr::Struct(s) => s
            .entries
            .iter()
            .for_each(|entry| visit_entry(&entry.expr, f)),
        Expr::Comprehension(c) => {
            for x in comprehension_parts(c) {
                visit(x, f);
            }
        }
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
    }
}

fn walk_idents(
    e: &IdedExpr,
    declared: &[&str],
    bound: &mut Vec<String>,
    used: &mut Vec<String>,
) -> Result<(), (u64, String)> {
    match &e.expr {
        Expr::Ident(name) => {
            if bound.iter().any(|b| b == name) || name.starts_with('@') {
                return Ok(());
            }
            if declared.contains(&name.as_str()) {
                if !used.contains(name) {
                    used.push(name.clone());
                }
                return Ok(());
            }
            if KNOWN_IDENTS.contains(&name.as_str()) {
                return Ok(());
            }
            Err((e.id, name.clone()))
        }
        Expr::Select(s) => walk_idents(&s.operand, declared, bound, used),
        Expr::Call(c) => {
            if let Some(t) = &c.target {
                walk_idents(t, declared, bound, used)?;
            }
            for a in &c.args {
                walk_idents(a, declared, bound, used)?;
            }
            Ok(())
        }
        Expr::List(l) => l
            .elements
            .iter()
            .try_for_each(|x| walk_idents(x, declared, bound, used)),
        Expr::Map(m) => m.entries.iter().try_for_each(|entry| match &entry.expr {
            cel::common::ast::EntryExpr::MapEntry(me) => {
                walk_idents(&me.key, declared, bound, used)?;
                walk_idents(&me.value, declared, bound, used)
            }
            cel::common::ast::EntryExpr::StructField(f) => {
                walk_idents(&f.value, declared, bound, used)
            }
        }),
        Expr::Struct(s) => s.entries.iter().try_for_each(|entry| match &entry.expr {
            cel::common::ast::EntryExpr::MapEntry(me) => {
                walk_idents(&me.key, declared, bound, used)?;
                walk_idents(&me.value, declared, bound, used)
            }
            cel::common::ast::EntryExpr::StructField(f) => {
                walk_idents(&f.value, declared, bound, used)
            }
        }),
        Expr::Comprehension(c) => {
            walk_idents(&c.iter_range, declared, bound, used)?;
            walk_idents(&c.accu_init, declared, bound, used)?;
            let before = bound.len();
            bound.push(c.iter_var.clone());
            if let Some(v) = &c.iter_var2 {
                bound.push(v.clone());
            }
            bound.push(c.accu_var.clone());
            let result = walk_idents(&c.loop_cond, declared, bound, used)
                .and_then(|_| walk_idents(&c.loop_step, declared, bound, used))
                .and_then(|_| walk_idents(&c.result, declared, bound, used));
            bound.truncate(before);
            result
        }
        Expr::Literal(_) | Expr::Unspecified => Ok(()),
    }
}

/// cel-go's AST validators as Kubernetes turns them on (since 1.29): a literal argument of
/// `matches` (a Go regular expression), `duration` or `timestamp` must be valid (`invalid
/// matches argument`), and a list or map literal must not mix element types (`expected type
/// 'int' but found 'string'`), except inside the arguments of the strings extension's
/// `format`. Element types are known here only for literals: a list with other elements is not
/// judged. `in_format`: `e` is such an argument (or nested in one through lists and maps).
fn validate_literals(e: &IdedExpr, in_format: bool) -> Result<(), (u64, String)> {
    match &e.expr {
        Expr::Call(c) => {
            if let Some(Expr::Literal(LiteralValue::String(text))) = c.args.first().map(|a| &a.expr)
            {
                let valid = match c.func_name.as_str() {
                    "matches" => crate::rules::go_regexp::compiled(text).is_ok(),
                    "duration" | "timestamp" => converts(&c.func_name, text),
                    _ => true,
                };
                if !valid {
                    return Err((c.args[0].id, format!("invalid {} argument", c.func_name)));
                }
            }
            let format = c.func_name == "format";
            if let Some(t) = &c.target {
                validate_literals(t, format)?;
            }
            c.args.iter().try_for_each(|a| validate_literals(a, format))
        }
        Expr::List(l) => {
            if !in_format {
                let types: Vec<(u64, Option<&str>)> = l
                    .elements
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !l.optional_indices.contains(i))
                    .map(|(_, x)| (x.id, literal_type(x)))
                    .collect();
                if types.iter().all(|(_, t)| t.is_some()) {
                    let mut first: Option<&str> = None;
                    for (id, t) in &types {
                        let t = t.unwrap_or_default();
                        match first {
                            None => first = Some(t),
                            Some(f) if f != t => {
                                return Err((*id, format!("expected type '{f}' but found '{t}'")));
                            }
                            Some(_) => {}
                        }
                    }
                }
            }
            l.elements
                .iter()
                .try_for_each(|x| validate_literals(x, in_format))
        }
        Expr::Map(m) => {
            let mut entries = Vec::new();
            for entry in &m.entries {
                if let cel::common::ast::EntryExpr::MapEntry(me) = &entry.expr {
                    entries.push(me);
                }
            }
            if !in_format && entries.iter().all(|me| !me.optional) {
                let typed: Option<Vec<_>> = entries
                    .iter()
                    .map(|me| {
                        Some((
                            me.key.id,
                            literal_type(&me.key)?,
                            me.value.id,
                            literal_type(&me.value)?,
                        ))
                    })
                    .collect();
                if let Some(typed) = typed {
                    if let Some((_, key0, _, value0)) = typed.first().copied() {
                        for (key_id, key, value_id, value) in typed {
                            if key != key0 {
                                return Err((
                                    key_id,
                                    format!("expected type '{key0}' but found '{key}'"),
                                ));
                            }
                            if value != value0 {
                                return Err((
                                    value_id,
                                    format!("expected type '{value0}' but found '{value}'"),
                                ));
                            }
                        }
                    }
                }
            }
            entries.iter().try_for_each(|me| {
                validate_literals(&me.key, in_format)?;
                validate_literals(&me.value, in_format)
            })
        }
        Expr::Select(s) => validate_literals(&s.operand, false),
        Expr::Comprehension(c) => comprehension_parts(c)
            .into_iter()
            .try_for_each(|x| validate_literals(x, false)),
        Expr::Struct(s) => s.entries.iter().try_for_each(|entry| match &entry.expr {
            cel::common::ast::EntryExpr::StructField(f) => validate_literals(&f.value, false),
            cel::common::ast::EntryExpr::MapEntry(me) => validate_literals(&me.value, false),
        }),
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => Ok(()),
    }
}

/// The CEL type name of a literal; `None` for anything else.
fn literal_type(e: &IdedExpr) -> Option<&'static str> {
    match &e.expr {
        Expr::Literal(LiteralValue::Boolean(_)) => Some("bool"),
        Expr::Literal(LiteralValue::String(_)) => Some("string"),
        Expr::Literal(LiteralValue::Int(_)) => Some("int"),
        Expr::Literal(LiteralValue::UInt(_)) => Some("uint"),
        Expr::Literal(LiteralValue::Double(_)) => Some("double"),
        Expr::Literal(LiteralValue::Bytes(_)) => Some("bytes"),
        Expr::Literal(LiteralValue::Null) => Some("null_type"),
        _ => None,
    }
}

/// Whether `function(text)` (`duration` or `timestamp`) converts, as evaluating the call
/// would: cel-go's validator evaluates it.
fn converts(function: &str, text: &str) -> bool {
    let Ok(program) = super::compile(&format!("{function}(x)"), &["x"], ResultKind::Any) else {
        return true;
    };
    let text = Value::String(text.to_string());
    program.eval(vec![("x", super::json_to_val(&text))]).is_ok()
}

/// The result type where the top of the AST shows it.
fn result_kind(e: &IdedExpr) -> Option<&'static str> {
    if let Some(literal) = literal_type(e) {
        return Some(literal);
    }
    match &e.expr {
        Expr::List(_) => Some("list"),
        Expr::Map(_) => Some("map"),
        Expr::Call(c) => match c.func_name.as_str() {
            "_==_" | "_!=_" | "_<_" | "_<=_" | "_>_" | "_>=_" | "_&&_" | "_||_" | "!_" | "@in"
            | "startsWith" | "endsWith" | "matches" | "contains" => Some("bool"),
            "size" | "int" => Some("int"),
            "string" => Some("string"),
            "_+_" => c.args.iter().find_map(|a| match result_kind(a) {
                Some("string") => Some("string"),
                _ => None,
            }),
            _ => None,
        },
        _ => None,
    }
}

/// The schema `self` (and `oldSelf`) have, for checking field selections of a CRD rule.
pub struct FieldSchema<'a> {
    /// The structural schema of the node the rule is on.
    pub schema: &'a Value,
    /// The node is a resource root (or an embedded resource): `apiVersion`, `kind` and
    /// `metadata` are fields too.
    pub resource_root: bool,
}

/// Finds a selection of a field the schema does not declare (`self.nope`): cel-go's checker
/// refuses it with `undefined field 'nope'`.
pub fn check_fields(
    program: &super::Program,
    fields: &FieldSchema<'_>,
) -> Result<(), CompileError> {
    let inner = program.inner();
    match find_undefined(inner.expression(), fields) {
        Some((id, name)) => Err(issue(
            program.source(),
            inner,
            id,
            &format!("undefined field '{name}'"),
        )),
        None => Ok(()),
    }
}

/// What a node of the expression is known to be, schema-wise.
enum Known<'a> {
    Node(&'a Value, bool),
    Unknown,
}

fn find_undefined(e: &IdedExpr, fields: &FieldSchema<'_>) -> Option<(u64, String)> {
    if let Expr::Select(s) = &e.expr {
        if let Err(found) = schema_of(e, fields) {
            return Some(found);
        }
        return find_undefined(&s.operand, fields);
    }
    match &e.expr {
        Expr::Call(c) => c
            .target
            .iter()
            .map(|t| t.as_ref())
            .chain(c.args.iter())
            .find_map(|x| find_undefined(x, fields)),
        Expr::List(l) => l.elements.iter().find_map(|x| find_undefined(x, fields)),
        Expr::Comprehension(c) => comprehension_parts(c)
            .into_iter()
            .find_map(|x| find_undefined(x, fields)),
        _ => None,
    }
}

fn schema_of<'a>(e: &IdedExpr, fields: &FieldSchema<'a>) -> Result<Known<'a>, (u64, String)> {
    match &e.expr {
        Expr::Ident(name) if name == "self" => Ok(Known::Node(fields.schema, fields.resource_root)),
        Expr::Select(s) => {
            let Known::Node(node, root) = schema_of(&s.operand, fields)? else {
                return Ok(Known::Unknown);
            };
            if root && matches!(s.field.as_str(), "apiVersion" | "kind" | "metadata") {
                return Ok(Known::Unknown);
            }
            if let Some(props) = node.get("properties").and_then(Value::as_object) {
                for (k, prop) in props {
                    if super::convert::escape(k).as_deref() == Some(s.field.as_str()) {
                        let embedded = prop
                            .get("x-kubernetes-embedded-resource")
                            .and_then(Value::as_bool)
                            == Some(true);
                        return Ok(Known::Node(prop, embedded));
                    }
                }
            }
            if let Some(additional) = node.get("additionalProperties").filter(|a| a.is_object()) {
                return Ok(Known::Node(additional, false));
            }
            let open = node
                .get("x-kubernetes-preserve-unknown-fields")
                .and_then(Value::as_bool)
                == Some(true)
                || node.get("additionalProperties") == Some(&Value::Bool(true));
            if open || node.get("type").and_then(Value::as_str) != Some("object") {
                return Ok(Known::Unknown);
            }
            Err((e.id, s.field.clone()))
        }
        _ => Ok(Known::Unknown),
    }
}
