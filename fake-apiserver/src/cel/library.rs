//! The Kubernetes CEL library functions controllers' policies use most, beyond cel-go's
//! standard library: lists (`isSorted`, `sum`, `min`, `max`, `indexOf`, `lastIndexOf`) and
//! regular expressions (`find`, `findAll`), with Kubernetes' semantics and error texts; and the
//! standard library's `matches`, because cel-go reads its pattern as Go's `regexp` does
//! ([`crate::rules::go_regexp`]), not as the `regex` crate would.

use std::cmp::Ordering;

use cel::common::types::{Type, DYN_TYPE, INT_TYPE, LIST_TYPE, STRING_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError, Value};

/// Adds the functions to `env`.
pub(crate) fn add(env: &mut Env) -> Result<(), DeclarationError> {
    let list = |name: &str, id: &str, args: Vec<Type>, f: cel::common::functions::Function| {
        (name.to_string(), id.to_string(), LIST_TYPE, args, f)
    };
    let overloads = [
        list("isSorted", "list_is_sorted", vec![], is_sorted),
        list("sum", "list_sum", vec![], sum),
        list("min", "list_min", vec![], min),
        list("max", "list_max", vec![], max),
        list("indexOf", "list_index_of", vec![DYN_TYPE], index_of),
        list(
            "lastIndexOf",
            "list_last_index_of",
            vec![DYN_TYPE],
            last_index_of,
        ),
        (
            "find".to_string(),
            "string_find".to_string(),
            STRING_TYPE,
            vec![STRING_TYPE],
            find,
        ),
        (
            "findAll".to_string(),
            "string_find_all".to_string(),
            STRING_TYPE,
            vec![STRING_TYPE],
            find_all,
        ),
        (
            "findAll".to_string(),
            "string_find_all_n".to_string(),
            STRING_TYPE,
            vec![STRING_TYPE, INT_TYPE],
            find_all_n,
        ),
    ];
    for (name, id, target, args, f) in overloads {
        env.add_member_overload(&name, &id, target, args, f)?;
    }
    env.add_member_overload(
        "matches",
        "matches_string",
        STRING_TYPE,
        vec![STRING_TYPE],
        matches,
    )?;
    env.add_overload(
        "matches",
        "matches",
        vec![STRING_TYPE, STRING_TYPE],
        matches,
    )?;
    Ok(())
}

fn values(args: &[CowVal<'_, '_>]) -> Result<Vec<Value>, ExecutionError> {
    args.iter().map(|a| Value::try_from(a.as_ref())).collect()
}

fn list_of(v: &Value) -> Result<&[Value], ExecutionError> {
    match v {
        Value::List(items) => Ok(items),
        _ => Err(ExecutionError::no_such_overload("list", vec![])),
    }
}

fn out<'b, 'v>(v: Value) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let boxed: Box<dyn Val> = v.try_into()?;
    Ok(CowVal::Owned(boxed))
}

fn compare(a: &Value, b: &Value) -> Result<Ordering, ExecutionError> {
    let ord = match (a, b) {
        (Value::Int(x), Value::Int(y)) => x.partial_cmp(y),
        (Value::UInt(x), Value::UInt(y)) => x.partial_cmp(y),
        (Value::Float(x), Value::Float(y)) => x.partial_cmp(y),
        (Value::Int(x), Value::Float(y)) => (*x as f64).partial_cmp(y),
        (Value::Float(x), Value::Int(y)) => x.partial_cmp(&(*y as f64)),
        (Value::String(x), Value::String(y)) => x.partial_cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.partial_cmp(y),
        (Value::Duration(x), Value::Duration(y)) => x.partial_cmp(y),
        (Value::Timestamp(x), Value::Timestamp(y)) => x.partial_cmp(y),
        _ => None,
    };
    ord.ok_or_else(|| ExecutionError::no_such_overload("compare", vec![]))
}

fn is_sorted<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let vals = values(&args)?;
    let items = list_of(&vals[0])?;
    for pair in items.windows(2) {
        if compare(&pair[0], &pair[1])? == Ordering::Greater {
            return out(Value::Bool(false));
        }
    }
    out(Value::Bool(true))
}

fn sum<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let vals = values(&args)?;
    let items = list_of(&vals[0])?;
    let mut total = match items.first() {
        Some(Value::Float(_)) => Value::Float(0.0),
        Some(Value::UInt(_)) => Value::UInt(0),
        _ => Value::Int(0),
    };
    for item in items {
        total = match (&total, item) {
            (Value::Int(a), Value::Int(b)) => Value::Int(
                a.checked_add(*b)
                    .ok_or_else(|| ExecutionError::function_error("sum", "integer overflow"))?,
            ),
            (Value::UInt(a), Value::UInt(b)) => {
                Value::UInt(a.checked_add(*b).ok_or_else(|| {
                    ExecutionError::function_error("sum", "unsigned integer overflow")
                })?)
            }
            (Value::Float(a), Value::Float(b)) => Value::Float(a + b),
            _ => return Err(ExecutionError::no_such_overload("sum", vec![])),
        };
    }
    out(total)
}

fn extreme<'b, 'v>(
    args: Vec<CowVal<'b, 'v>>,
    name: &str,
    want: Ordering,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let vals = values(&args)?;
    let items = list_of(&vals[0])?;
    let Some(mut best) = items.first() else {
        return Err(ExecutionError::function_error(
            name,
            format!("{name}(list) argument must not be empty"),
        ));
    };
    for item in &items[1..] {
        if compare(item, best)? == want {
            best = item;
        }
    }
    out(best.clone())
}

fn min<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    extreme(args, "min", Ordering::Less)
}

fn max<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    extreme(args, "max", Ordering::Greater)
}

fn index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let vals = values(&args)?;
    let items = list_of(&vals[0])?;
    let at = items.iter().position(|x| x == &vals[1]);
    out(Value::Int(at.map_or(-1, |i| i as i64)))
}

fn last_index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let vals = values(&args)?;
    let items = list_of(&vals[0])?;
    let at = items.iter().rposition(|x| x == &vals[1]);
    out(Value::Int(at.map_or(-1, |i| i as i64)))
}

/// The string and the compiled pattern `function` is called with.
fn strings(
    args: &[CowVal<'_, '_>],
    function: &str,
) -> Result<(String, std::sync::Arc<regex::Regex>), ExecutionError> {
    let vals = values(args)?;
    let (Some(Value::String(s)), Some(Value::String(re))) = (vals.first(), vals.get(1)) else {
        return Err(ExecutionError::no_such_overload(function, vec![]));
    };
    // Go's regexp syntax and its error text (`error parsing regexp: missing closing ): ...`).
    let re = crate::rules::go_regexp::compiled(re)
        .map_err(|e| ExecutionError::function_error(function, e.to_string()))?;
    Ok((s.to_string(), re))
}

/// `matches`, as cel-go's `regexp.MatchString`: anywhere in the string unless anchored.
fn matches<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (s, re) = strings(&args, "matches")?;
    out(Value::Bool(re.is_match(&s)))
}

fn find<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (s, re) = strings(&args, "find")?;
    let found = re.find(&s).map_or("", |m| m.as_str()).to_string();
    out(Value::String(found.into()))
}

fn find_all_limited<'b, 'v>(
    args: &[CowVal<'b, 'v>],
    limit: Option<usize>,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (s, re) = strings(args, "findAll")?;
    let found: Vec<Value> = re
        .find_iter(&s)
        .take(limit.unwrap_or(usize::MAX))
        .map(|m| Value::String(m.as_str().to_string().into()))
        .collect();
    out(Value::List(found.into()))
}

fn find_all<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    find_all_limited(&args, None)
}

fn find_all_n<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let n = match Value::try_from(args[2].as_ref())? {
        Value::Int(n) => n,
        _ => return Err(ExecutionError::no_such_overload("findAll", vec![])),
    };
    // A negative limit finds all, as Go's FindAllString.
    let limit = usize::try_from(n).ok();
    find_all_limited(&args[..2], limit)
}
