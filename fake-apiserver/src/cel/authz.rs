//! The Kubernetes CEL authorizer library (`k8s.io/apiserver/pkg/cel/library/authz.go`): an
//! admission policy asks the server's authorizer about the requesting user (or a service
//! account), e.g. `authorizer.group('apps').resource('deployments').namespace('prod')
//! .check('delete').allowed()`, `authorizer.path('/healthz').check('get').reason()` or
//! `authorizer.requestResource.subresource('approval').check('update').allowed()`.
//!
//! Selectors (`fieldSelector`, `labelSelector`) are accepted and dropped: the real library
//! passes them on to the authorizer, and RBAC, the authorizer here, does not look at them.

use cel::common::types::{Type, STRING_TYPE};
use cel::common::value::{CowVal, Val};
use cel::objects::Opaque;
use cel::{DeclarationError, Env, ExecutionError, Value};

use super::value_types::{opaque, out, string_arg, typed, Answer};
use crate::auth::{Attributes, Authorizer, UserInfo};
use crate::rules::validation::NameRule;

const AUTHORIZER: &str = "kubernetes.authorization.Authorizer";
const PATH_CHECK: &str = "kubernetes.authorization.PathCheck";
const GROUP_CHECK: &str = "kubernetes.authorization.GroupCheck";
const RESOURCE_CHECK: &str = "kubernetes.authorization.ResourceCheck";
const DECISION: &str = "kubernetes.authorization.Decision";

/// `authorizer`: the authorizer, asking about one user.
#[derive(Debug, Clone)]
pub(crate) struct CelAuthorizer {
    user: UserInfo,
    authorizer: Authorizer,
}

/// A path check (`authorizer.path(...)`).
#[derive(Debug, Clone)]
struct PathCheck {
    authorizer: CelAuthorizer,
    path: String,
}

/// A group check (`authorizer.group(...)`).
#[derive(Debug, Clone)]
struct GroupCheck {
    authorizer: CelAuthorizer,
    group: String,
}

/// A resource check being built (`.resource(...)`, `.namespace(...)`, ...).
#[derive(Debug, Clone)]
pub(crate) struct ResourceCheck {
    authorizer: CelAuthorizer,
    group: String,
    resource: String,
    subresource: String,
    namespace: String,
    name: String,
}

/// The authorizer's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Decision {
    allowed: bool,
    reason: String,
}

// cel-go compares these by their type alone; nothing compares them in practice.
macro_rules! opaque_type {
    ($($ty:ty => $name:expr),* $(,)?) => {$(
        impl PartialEq for $ty {
            fn eq(&self, _: &Self) -> bool {
                true
            }
        }
        impl Eq for $ty {}
        impl Opaque for $ty {
            fn runtime_type_name(&self) -> &str {
                $name
            }
        }
    )*};
}
opaque_type!(
    CelAuthorizer => AUTHORIZER,
    PathCheck => PATH_CHECK,
    GroupCheck => GROUP_CHECK,
    ResourceCheck => RESOURCE_CHECK,
);
impl Opaque for Decision {
    fn runtime_type_name(&self) -> &str {
        DECISION
    }
}

impl CelAuthorizer {
    /// The authorizer asking about `user`.
    pub(crate) fn new(user: UserInfo, authorizer: Authorizer) -> Self {
        CelAuthorizer { user, authorizer }
    }

    fn group_check(&self, group: &str) -> GroupCheck {
        GroupCheck {
            authorizer: self.clone(),
            group: group.to_string(),
        }
    }

    /// `authorizer.requestResource`: a resource check of what the request writes.
    pub(crate) fn request_resource(
        &self,
        group: &str,
        resource: &str,
        subresource: &str,
        namespace: &str,
        name: &str,
    ) -> ResourceCheck {
        let mut check = self.group_check(group).resource_check(resource);
        check.subresource = subresource.to_string();
        check.namespace = namespace.to_string();
        check.name = name.to_string();
        check
    }
}

impl GroupCheck {
    fn resource_check(&self, resource: &str) -> ResourceCheck {
        ResourceCheck {
            authorizer: self.authorizer.clone(),
            group: self.group.clone(),
            resource: resource.to_string(),
            subresource: String::new(),
            namespace: String::new(),
            name: String::new(),
        }
    }
}

/// The CEL values of `authorizer` and `authorizer.requestResource`.
pub(crate) fn values(
    authorizer: &CelAuthorizer,
    request: &ResourceCheck,
) -> [(&'static str, Box<dyn Val>); 2] {
    let boxed = |v: Value| -> Box<dyn Val> {
        let converted: Result<Box<dyn Val>, _> = v.try_into();
        converted.unwrap_or_else(|_| super::json_to_val(&serde_json::Value::Null))
    };
    [
        (
            "authorizer",
            boxed(Value::Opaque(std::sync::Arc::new(authorizer.clone()))),
        ),
        (
            "authorizer.requestResource",
            boxed(Value::Opaque(std::sync::Arc::new(request.clone()))),
        ),
    ]
}

/// Adds the library's functions to `env`.
pub(crate) fn add(env: &mut Env) -> Result<(), DeclarationError> {
    let authorizer = Type::new_opaque_type(AUTHORIZER);
    let path = Type::new_opaque_type(PATH_CHECK);
    let group = Type::new_opaque_type(GROUP_CHECK);
    let resource = Type::new_opaque_type(RESOURCE_CHECK);
    let decision = Type::new_opaque_type(DECISION);
    let members: Vec<super::value_types::MemberOverload<'_>> = vec![
        (
            "path",
            "authorizer_path",
            authorizer.to_owned(),
            vec![STRING_TYPE],
            authorizer_path,
        ),
        (
            "group",
            "authorizer_group",
            authorizer.to_owned(),
            vec![STRING_TYPE],
            authorizer_group,
        ),
        (
            "serviceAccount",
            "authorizer_serviceaccount",
            authorizer,
            vec![STRING_TYPE, STRING_TYPE],
            authorizer_service_account,
        ),
        (
            "resource",
            "groupcheck_resource",
            group,
            vec![STRING_TYPE],
            group_resource,
        ),
        (
            "subresource",
            "resourcecheck_subresource",
            resource.to_owned(),
            vec![STRING_TYPE],
            |args| with(args, "subresource", |c, v| c.subresource = v),
        ),
        (
            "namespace",
            "resourcecheck_namespace",
            resource.to_owned(),
            vec![STRING_TYPE],
            |args| with(args, "namespace", |c, v| c.namespace = v),
        ),
        (
            "name",
            "resourcecheck_name",
            resource.to_owned(),
            vec![STRING_TYPE],
            |args| with(args, "name", |c, v| c.name = v),
        ),
        (
            "fieldSelector",
            "authorizer_fieldselector",
            resource.to_owned(),
            vec![STRING_TYPE],
            |args| with(args, "fieldSelector", |_, _| {}),
        ),
        (
            "labelSelector",
            "authorizer_labelselector",
            resource.to_owned(),
            vec![STRING_TYPE],
            |args| with(args, "labelSelector", |_, _| {}),
        ),
        (
            "check",
            "pathcheck_check",
            path,
            vec![STRING_TYPE],
            path_check,
        ),
        (
            "check",
            "resourcecheck_check",
            resource,
            vec![STRING_TYPE],
            resource_check,
        ),
        (
            "allowed",
            "decision_allowed",
            decision.to_owned(),
            vec![],
            |args| out(Value::Bool(decision_of(&args)?.allowed)),
        ),
        (
            "reason",
            "decision_reason",
            decision.to_owned(),
            vec![],
            |args| out(Value::String(decision_of(&args)?.reason.into())),
        ),
        // The authorizers here never fail: a decision carries no error.
        (
            "errored",
            "decision_errored",
            decision.to_owned(),
            vec![],
            |args| {
                decision_of(&args)?;
                out(Value::Bool(false))
            },
        ),
        ("error", "decision_error", decision, vec![], |args| {
            decision_of(&args)?;
            out(Value::String(String::new().into()))
        }),
    ];
    super::value_types::add_members(env, members)
}

/// The string argument of `function` (`path`, `resource`), which may not be blank: `PATH must
/// not be empty`.
fn non_empty_arg(args: &[CowVal<'_, '_>], function: &str) -> Result<String, ExecutionError> {
    let value = string_arg(args, 1, function)?;
    if value.trim().is_empty() {
        let message = format!("{function} must not be empty");
        return Err(ExecutionError::function_error(function, message));
    }
    Ok(value)
}

fn decision_of(args: &[CowVal<'_, '_>]) -> Result<Decision, ExecutionError> {
    typed::<Decision>(args, 0, "decision")
}

fn authorizer_path<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    let authorizer = typed::<CelAuthorizer>(&args, 0, "path")?;
    let path = non_empty_arg(&args, "path")?;
    opaque(PathCheck { authorizer, path })
}

fn authorizer_group<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    let authorizer = typed::<CelAuthorizer>(&args, 0, "group")?;
    opaque(authorizer.group_check(&string_arg(&args, 1, "group")?))
}

/// `authorizer.serviceAccount(namespace, name)`: the same authorizer asking about the
/// service account's user (`serviceaccount.ServiceAccountInfo.UserInfo`).
fn authorizer_service_account<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    let authorizer = typed::<CelAuthorizer>(&args, 0, "serviceAccount")?;
    let namespace = string_arg(&args, 1, "serviceAccount")?;
    let name = string_arg(&args, 2, "serviceAccount")?;
    let fail = |message: &str| ExecutionError::function_error("serviceAccount", message);
    if !NameRule::Dns1123Subdomain.check(&name, false).is_empty() {
        return Err(fail("Invalid service account name"));
    }
    if !NameRule::Dns1123Label.check(&namespace, false).is_empty() {
        return Err(fail("Invalid service account namespace"));
    }
    // Its name and groups only: no `system:authenticated`, as `UserInfo()` builds it.
    let user = UserInfo {
        name: crate::auth::user::service_account_username(&namespace, &name),
        groups: crate::auth::user::service_account_groups(&namespace),
        ..UserInfo::default()
    };
    opaque(CelAuthorizer {
        user,
        authorizer: authorizer.authorizer,
    })
}

fn group_resource<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    let group = typed::<GroupCheck>(&args, 0, "resource")?;
    let resource = non_empty_arg(&args, "resource")?;
    opaque(group.resource_check(&resource))
}

/// A resource check with one more part set.
fn with<'b, 'v>(
    args: Vec<CowVal<'b, 'v>>,
    function: &str,
    set: fn(&mut ResourceCheck, String),
) -> Answer<'b, 'v> {
    let mut check = typed::<ResourceCheck>(&args, 0, function)?;
    set(&mut check, string_arg(&args, 1, function)?);
    opaque(check)
}

fn path_check<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    let check = typed::<PathCheck>(&args, 0, "check")?;
    let verb = string_arg(&args, 1, "check")?;
    let attrs = Attributes::non_resource(&check.authorizer.user, &verb, &check.path);
    decide(&check.authorizer, &attrs)
}

/// A resource check is asked with the API version `*`, as the library asks it.
fn resource_check<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Answer<'b, 'v> {
    let check = typed::<ResourceCheck>(&args, 0, "check")?;
    let verb = string_arg(&args, 1, "check")?;
    let mut attrs = Attributes::resource(
        &check.authorizer.user,
        &verb,
        &check.group,
        &check.resource,
        &check.namespace,
        &check.name,
    );
    attrs.version = "*".to_string();
    attrs.subresource = check.subresource.clone();
    decide(&check.authorizer, &attrs)
}

fn decide<'b, 'v>(authorizer: &CelAuthorizer, attrs: &Attributes) -> Answer<'b, 'v> {
    let decision = authorizer.authorizer.authorize(attrs);
    opaque(Decision {
        allowed: decision.allowed,
        reason: decision.reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn run(expr: &str) -> Result<cel::Value, String> {
        let authorizer = CelAuthorizer::new(UserInfo::admin(), Authorizer::allow_all());
        let request = authorizer.request_resource("apps", "deployments", "scale", "prod", "web");
        crate::cel::conditions::run(
            expr,
            &["authorizer", "authorizer.requestResource"],
            crate::cel::ResultKind::Any,
            values(&authorizer, &request).into(),
        )
    }

    #[rstest]
    #[case::resource("authorizer.group('apps').resource('deployments').namespace('prod').name('web').check('delete').allowed()")]
    #[case::request_resource("authorizer.requestResource.check('update').allowed()")]
    #[case::path("authorizer.path('/healthz').check('get').allowed()")]
    #[case::decision("!authorizer.path('/x').check('get').errored() && authorizer.path('/x').check('get').error() == '' && authorizer.path('/x').check('get').reason() == ''")]
    #[case::selectors("authorizer.group('').resource('pods').fieldSelector('spec.nodeName=n1').labelSelector('app=x').check('list').allowed()")]
    #[case::service_account("authorizer.serviceAccount('default', 'builder').group('').resource('pods').check('get').allowed()")]
    fn checks_answer_decisions(#[case] expr: &str) {
        assert_eq!(run(expr), Ok(cel::Value::Bool(true)), "{expr}");
    }

    #[rstest]
    #[case::empty_path(
        "authorizer.path(' ').check('get').allowed()",
        "path must not be empty"
    )]
    #[case::empty_resource(
        "authorizer.group('').resource('').check('get').allowed()",
        "resource must not be empty"
    )]
    #[case::service_account_name(
        "authorizer.serviceAccount('ns', 'Bad_Name').path('/x').check('get').allowed()",
        "Invalid service account name"
    )]
    #[case::service_account_namespace(
        "authorizer.serviceAccount('Bad_NS', 'sa').path('/x').check('get').allowed()",
        "Invalid service account namespace"
    )]
    fn bad_arguments_are_the_library_s_errors(#[case] expr: &str, #[case] message: &str) {
        let error = run(expr).expect_err(expr);
        assert!(error.ends_with(message), "{error}");
    }
}
