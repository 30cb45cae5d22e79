//! Who a request is from: the authenticated (or impersonated) user, and the well-known names the
//! real server gives to anonymous users, service accounts and the groups every user gets.

use std::collections::BTreeMap;

use crate::rules::validation::go_quote;

/// The user anonymous requests are made as.
pub const ANONYMOUS: &str = "system:anonymous";
/// The group of every authenticated user.
pub const ALL_AUTHENTICATED: &str = "system:authenticated";
/// The group of anonymous requests.
pub const ALL_UNAUTHENTICATED: &str = "system:unauthenticated";
/// The group that may do anything, whatever RBAC says (the real server's privileged group).
pub const MASTERS: &str = "system:masters";
/// The group of every service account.
pub const ALL_SERVICE_ACCOUNTS: &str = "system:serviceaccounts";
/// The user a request without credentials is made as while authentication is off.
pub const ADMIN: &str = "system:admin";

const SERVICE_ACCOUNT_PREFIX: &str = "system:serviceaccount:";

/// A user as the authorizer sees it (the real server's `user.Info`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UserInfo {
    /// User name, e.g. `alice` or `system:serviceaccount:ns:name`.
    pub name: String,
    /// Unique id, if the authenticator knows one.
    pub uid: String,
    /// Groups, in the order the authenticator gave them.
    pub groups: Vec<String>,
    /// Extra attributes (from impersonation headers or the token).
    pub extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    /// A user with these groups, with `system:authenticated` added as the real server's
    /// authenticator chain adds it.
    pub fn authenticated(name: &str, uid: &str, groups: &[&str]) -> Self {
        let mut user = Self {
            name: name.to_string(),
            uid: uid.to_string(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            extra: BTreeMap::new(),
        };
        user.add_authenticated_group();
        user
    }

    /// The anonymous user (`system:anonymous`, group `system:unauthenticated`).
    pub fn anonymous() -> Self {
        Self {
            name: ANONYMOUS.into(),
            groups: vec![ALL_UNAUTHENTICATED.into()],
            ..Default::default()
        }
    }

    /// The identity of requests without credentials while authentication is off: the cluster
    /// admin, in `system:masters`.
    pub fn admin() -> Self {
        Self::authenticated(ADMIN, "", &[MASTERS])
    }

    /// The identity of a service account: its user name, uid and groups.
    pub fn service_account(namespace: &str, name: &str, uid: &str) -> Self {
        let groups = service_account_groups(namespace);
        let refs: Vec<&str> = groups.iter().map(String::as_str).collect();
        Self::authenticated(&service_account_username(namespace, name), uid, &refs)
    }

    /// Adds `system:authenticated` unless the user already has it or is anonymous (the real
    /// server's `AuthenticatedGroupAdder`).
    pub fn add_authenticated_group(&mut self) {
        if self.name == ANONYMOUS
            || self
                .groups
                .iter()
                .any(|g| g == ALL_AUTHENTICATED || g == ALL_UNAUTHENTICATED)
        {
            return;
        }
        self.groups.push(ALL_AUTHENTICATED.into());
    }

    /// Whether the user is in `group`.
    pub fn in_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }

    /// The groups as Go's `%q` prints a string slice: `["a" "b"]`.
    pub fn groups_go_quoted(&self) -> String {
        go_quote_list(&self.groups)
    }
}

/// `system:serviceaccount:NS:NAME`.
pub fn service_account_username(namespace: &str, name: &str) -> String {
    format!("{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}")
}

/// The groups of a service account in `namespace`.
pub fn service_account_groups(namespace: &str) -> Vec<String> {
    vec![
        ALL_SERVICE_ACCOUNTS.to_string(),
        format!("{ALL_SERVICE_ACCOUNTS}:{namespace}"),
    ]
}

/// Splits `system:serviceaccount:NS:NAME` into `(NS, NAME)`; `None` for other names (and for
/// names with an empty or extra part, as the real `SplitUsername` refuses them).
pub fn split_service_account(username: &str) -> Option<(&str, &str)> {
    let rest = username.strip_prefix(SERVICE_ACCOUNT_PREFIX)?;
    let (namespace, name) = rest.split_once(':')?;
    if namespace.is_empty() || name.is_empty() || name.contains(':') {
        return None;
    }
    Some((namespace, name))
}

/// A string slice as Go's `%q` verb prints it: `["a" "b"]`.
pub fn go_quote_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| go_quote(s)).collect();
    format!("[{}]", quoted.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_account_names_split_as_the_real_server_splits_them() {
        assert_eq!(
            split_service_account("system:serviceaccount:ns:sa"),
            Some(("ns", "sa"))
        );
        assert_eq!(split_service_account("system:serviceaccount:ns"), None);
        assert_eq!(split_service_account("system:serviceaccount::sa"), None);
        assert_eq!(split_service_account("system:serviceaccount:a:b:c"), None);
        assert_eq!(split_service_account("alice"), None);
    }

    #[test]
    fn authenticated_users_get_the_authenticated_group_once() {
        let user = UserInfo::service_account("ns", "sa", "u1");
        assert_eq!(user.name, "system:serviceaccount:ns:sa");
        assert_eq!(
            user.groups,
            [
                "system:serviceaccounts",
                "system:serviceaccounts:ns",
                "system:authenticated"
            ]
        );
        let mut again = user.clone();
        again.add_authenticated_group();
        assert_eq!(again, user);
        assert_eq!(UserInfo::anonymous().groups, ["system:unauthenticated"]);
        assert_eq!(
            UserInfo::admin().groups_go_quoted(),
            r#"["system:masters" "system:authenticated"]"#
        );
    }
}
