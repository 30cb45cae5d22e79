//! Compiling expressions into cached [`Program`]s and running them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use cel::common::value::Val;
use cel::{Context, Env, ExecutionError, Value};

/// How many compiled programs the cache keeps before it starts over.
const CACHE_LIMIT: usize = 8192;

/// The type an expression must evaluate to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResultKind {
    /// A validation rule or condition.
    Bool,
    /// A `messageExpression`.
    String,
    /// A variable or anything else.
    Any,
}

/// An expression that did not compile; `message` is what cel-go's `Issues.String()` gives
/// (`ERROR: <input>:1:6: ...` with the source line and a caret), or a sentence of the
/// Kubernetes compiler (`cel expression must evaluate to a bool`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct CompileError {
    /// The text a real server puts after `compilation failed: ` (or alone, for a wrong result
    /// type: see [`CompileError::is_type_error`]).
    pub message: String,
    /// Whether the expression compiled but evaluates to the wrong type.
    pub wrong_type: bool,
    /// Whether it compiled but the program could not be made (a literal `find`/`findAll`
    /// pattern Go's regexp refuses: Kubernetes compiles those when it builds the program).
    pub instantiation: bool,
}

impl CompileError {
    /// Whether this is a result type error rather than a compilation failure.
    pub fn is_type_error(&self) -> bool {
        self.wrong_type
    }

    /// The detail a real server reports: `compilation failed: ERROR: ...`, the type error, or
    /// `program instantiation failed: ...`.
    pub fn detail(&self) -> String {
        if self.wrong_type {
            self.message.clone()
        } else if self.instantiation {
            format!("program instantiation failed: {}", self.message)
        } else {
            format!("compilation failed: {}", self.message)
        }
    }
}

/// An error while an expression ran, worded as cel-go words it (`no such key: foo`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct EvalError {
    /// The message.
    pub message: String,
    /// A call had no overload for its arguments' types.
    pub no_such_overload: bool,
}

/// A compiled expression.
#[derive(Debug)]
pub struct Program {
    source: String,
    program: cel::Program,
    variables: Vec<String>,
}

impl Program {
    /// The expression as written.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Whether the expression refers to the variable `name` (e.g. `oldSelf`).
    pub fn uses(&self, name: &str) -> bool {
        self.variables.iter().any(|v| v == name)
    }

    /// The expression's AST, for checks that need it.
    pub(crate) fn inner(&self) -> &cel::Program {
        &self.program
    }

    /// Runs the program with the given variables bound.
    pub fn eval<'v>(&self, vars: Vec<(&str, Box<dyn Val + 'v>)>) -> Result<Value, EvalError> {
        let mut context = Context::with_env(env().clone());
        for (name, value) in vars {
            context.add_variable_as_val(name, value);
        }
        self.program.execute(&context).map_err(eval_error)
    }

    /// Runs a condition: `Ok(true)` only for the boolean `true`.
    pub fn eval_bool<'v>(&self, vars: Vec<(&str, Box<dyn Val + 'v>)>) -> Result<bool, EvalError> {
        match self.eval(vars)? {
            Value::Bool(b) => Ok(b),
            other => Err(EvalError {
                message: format!(
                    "expected a bool, got {}",
                    crate::cel::convert::type_name(&other)
                ),
                no_such_overload: false,
            }),
        }
    }
}

/// A cel-rust extension library's registration function.
type Extension = fn(&mut Env) -> Result<(), cel::DeclarationError>;

/// The environment every expression is compiled and run in.
pub(crate) fn env() -> &'static Arc<Env> {
    static ENV: OnceLock<Arc<Env>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Env::stdlib();
        let extensions: [Extension; 3] = [
            cel::extensions::strings,
            cel::extensions::lists,
            cel::extensions::math,
        ];
        for add in extensions {
            if let Err(e) = add(&mut env) {
                tracing::error!(error = %e, "CEL: an extension could not be added");
            }
        }
        if let Err(e) = crate::cel::library::add(&mut env) {
            tracing::error!(error = %e, "CEL: the Kubernetes library could not be added");
        }
        if let Err(e) = crate::cel::value_types::add(&mut env) {
            tracing::error!(error = %e, "CEL: the Kubernetes value types could not be added");
        }
        if let Err(e) = crate::cel::semver::add(&mut env) {
            tracing::error!(error = %e, "CEL: the Kubernetes semver library could not be added");
        }
        if let Err(e) = crate::cel::format::add(&mut env) {
            tracing::error!(error = %e, "CEL: the Kubernetes format library could not be added");
        }
        if let Err(e) = crate::cel::authz::add(&mut env) {
            tracing::error!(error = %e, "CEL: the Kubernetes authorizer library could not be added");
        }
        Arc::new(env)
    })
}

type CacheKey = (String, ResultKind, Vec<String>);
type Cache = Mutex<HashMap<CacheKey, Result<Arc<Program>, CompileError>>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// Compiles `expr` for an environment declaring the variables `declared`, expecting a result of
/// `kind`; the result (program or error) is cached by expression, kind and variables.
pub fn compile(
    expr: &str,
    declared: &[&str],
    kind: ResultKind,
) -> Result<Arc<Program>, CompileError> {
    let key: CacheKey = (
        expr.to_string(),
        kind,
        declared.iter().map(|d| d.to_string()).collect(),
    );
    if let Some(found) = cache().lock().ok().and_then(|c| c.get(&key).cloned()) {
        return found;
    }
    let result = compile_uncached(expr, declared, kind).map(Arc::new);
    if let Ok(mut c) = cache().lock() {
        if c.len() >= CACHE_LIMIT {
            c.clear();
        }
        c.insert(key, result.clone());
    }
    result
}

fn compile_uncached(
    expr: &str,
    declared: &[&str],
    kind: ResultKind,
) -> Result<Program, CompileError> {
    let program = env().compile(expr).map_err(|errors| CompileError {
        message: errors
            .errors
            .iter()
            .map(|e| {
                let (line, col) = (e.pos.0.max(1) as usize, e.pos.1.max(1) as usize);
                crate::cel::check::render_error(expr, line, col - 1, &e.msg)
            })
            .collect::<Vec<_>>()
            .join("\n"),
        wrong_type: false,
        instantiation: false,
    })?;
    let variables = crate::cel::check::check(expr, &program, declared, kind)?;
    Ok(Program {
        source: expr.to_string(),
        program,
        variables,
    })
}

/// cel-go's wording of a runtime error.
fn eval_error(e: ExecutionError) -> EvalError {
    let no_such_overload = matches!(e, ExecutionError::NoSuchOverload(_));
    let message = match &e {
        ExecutionError::NoSuchKey(k) => format!("no such key: {k}"),
        ExecutionError::DivisionByZero(_) => "division by zero".to_string(),
        ExecutionError::RemainderByZero(_) => "modulus by zero".to_string(),
        ExecutionError::Overflow(..) => "integer overflow".to_string(),
        ExecutionError::NoSuchOverload(_) => "no such overload".to_string(),
        ExecutionError::IndexOutOfBounds(v) => {
            format!("index out of bounds: {}", crate::cel::convert::display(v))
        }
        ExecutionError::UndeclaredReference(name) => {
            format!("no such attribute(s): {name}")
        }
        ExecutionError::FunctionError { message, .. } => message.clone(),
        other => other.to_string(),
    };
    EvalError {
        message,
        no_such_overload,
    }
}
