//! CEL as the Kubernetes API server evaluates it, on the `cel` crate (cel-rust): compiling
//! (parse, macro expansion and a light check), a cache of compiled programs keyed by
//! expression, evaluation over JSON objects, and the errors worded as cel-go words them.
//!
//! Used by CRD `x-kubernetes-validations` ([`crd_rules`]) and by
//! ValidatingAdmissionPolicies (`crate::admission::policy`) and webhook `matchConditions`.
//!
//! What the environment has (cel-go's base library as Kubernetes configures it, minus what is
//! listed as left out):
//! - the standard library: operators, `size`, `has()`, `matches` (Go's regular expressions,
//!   `crate::rules::go_regexp`), `startsWith`, `endsWith`, `contains`, conversions (`int`, `string`, `double`,
//!   `bool`, `bytes`, `duration`, `timestamp`), `in`, the macros `all`, `exists`, `exists_one`,
//!   `map`, `filter`, and optional values (`?.`, `[?k]`, `optional.of`, `hasValue`, `value`,
//!   `orValue`);
//! - the strings extension (`charAt`, `indexOf`, `lastIndexOf`, `lowerAscii`, `upperAscii`,
//!   `replace`, `split`, `substring`, `trim`, `join`, `format`, `strings.quote`), the lists
//!   extension (`slice`, `flatten`, `distinct`, `reverse`, `sort`, `sortBy`, `lists.range`), the
//!   math extension (`math.greatest`, `math.least`, ...) and `base64`;
//! - the Kubernetes list library: `isSorted`, `sum`, `min`, `max`, `indexOf`, `lastIndexOf`;
//!   the Kubernetes regex library: `find`, `findAll`.
//!
//! - the Kubernetes `quantity`, `ip`, `cidr` and `url` libraries ([`value_types`]), its
//!   `semver` library ([`semver`]) and its `format` library ([`format`]).
//!
//! - the Kubernetes `authorizer` library ([`authz`]), for admission policies.
//!
//! Left out: cost estimation and the runtime cost budget; full static type
//! checking. The check at compile time finds syntax errors, references to undeclared
//! variables, results that are literals of the wrong type and (for CRD rules, with the
//! schema) fields that the schema does not declare; other type errors surface when the
//! expression runs, as `no such overload` errors.

pub(crate) mod authz;
mod check;
pub mod conditions;
mod convert;
pub mod crd_rules;
mod format;
mod library;
mod program;
mod semver;
mod value_types;

pub use check::{check_fields, FieldSchema};
pub(crate) use convert::type_name;
pub use convert::{json_to_val, schema_json_to_val};
pub use program::{compile, CompileError, EvalError, Program, ResultKind};

#[cfg(test)]
mod tests;
