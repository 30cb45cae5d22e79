//! Impersonation headers (`Impersonate-User`, `Impersonate-Group`, `Impersonate-Uid`,
//! `Impersonate-Extra-KEY`), handled as the real server's impersonation filter handles them:
//! each thing impersonated is authorized separately with the `impersonate` verb (`users`,
//! `groups`, `serviceaccounts` in its namespace, `uids`, `userextras/KEY`), then the request
//! continues as the impersonated user. A service account's groups are known and added when no
//! group is asked for; `system:authenticated` is added unless an authenticated or
//! unauthenticated group was named.

use std::collections::BTreeMap;

use http::HeaderMap;

use super::attributes::Attributes;
use super::user::{
    service_account_groups, service_account_username, split_service_account, UserInfo,
    ALL_AUTHENTICATED, ALL_UNAUTHENTICATED, ANONYMOUS,
};
use crate::error::ApiError;

const USER: &str = "impersonate-user";
const GROUP: &str = "impersonate-group";
const UID: &str = "impersonate-uid";
const EXTRA_PREFIX: &str = "impersonate-extra-";

/// Whether the request asks to impersonate anyone.
pub fn requested(headers: &HeaderMap) -> bool {
    headers
        .keys()
        .any(|name| name.as_str().starts_with("impersonate-"))
}

fn values<'a>(headers: &'a HeaderMap, name: &str) -> Vec<&'a str> {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect()
}

/// The user the request continues as, once `authorize` allowed `requestor` every
/// impersonation; a refusal is the real server's 403 for the first thing not allowed.
pub fn impersonate(
    requestor: &UserInfo,
    headers: &HeaderMap,
    path: &str,
    authorize: impl Fn(&Attributes) -> (bool, String),
) -> Result<UserInfo, ApiError> {
    let user = headers
        .get(USER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let groups = values(headers, GROUP);
    let uid = headers
        .get(UID)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let mut extras: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (name, value) in headers {
        if let Some(key) = name.as_str().strip_prefix(EXTRA_PREFIX) {
            // `unescapeExtraKey` of the lower-cased name (header names are lower case here).
            let key = crate::http::request::path_unescape_or_raw(key);
            if let Ok(value) = value.to_str() {
                extras.entry(key).or_default().push(value.to_string());
            }
        }
    }
    if user.is_empty() {
        if groups.is_empty() && extras.is_empty() && uid.is_empty() {
            // An empty Impersonate-User alone asks for nothing.
            return Ok(requestor.clone());
        }
        return Err(ApiError::new(
            500,
            "InternalError",
            format!("Internal Server Error: \"{path}\": requested impersonation of groups, extra or uid without impersonating a user"),
        ));
    }
    let check = |attrs: Attributes| -> Result<(), ApiError> {
        let (allowed, reason) = authorize(&attrs);
        if allowed {
            Ok(())
        } else {
            Err(attrs.forbidden(&reason))
        }
    };
    let mut out = UserInfo::default();
    match split_service_account(user) {
        Some((namespace, name)) => {
            check(Attributes::resource(
                requestor,
                "impersonate",
                "",
                "serviceaccounts",
                namespace,
                name,
            ))?;
            out.name = service_account_username(namespace, name);
            if groups.is_empty() {
                out.groups = service_account_groups(namespace);
            }
        }
        None => {
            check(Attributes::resource(
                requestor,
                "impersonate",
                "",
                "users",
                "",
                user,
            ))?;
            out.name = user.to_string();
        }
    }
    for group in &groups {
        check(Attributes::resource(
            requestor,
            "impersonate",
            "",
            "groups",
            "",
            group,
        ))?;
        out.groups.push(group.to_string());
    }
    for (key, values) in &extras {
        for value in values {
            let mut attrs = Attributes::resource(
                requestor,
                "impersonate",
                "authentication.k8s.io",
                "userextras",
                "",
                value,
            );
            attrs.subresource = key.clone();
            check(attrs)?;
        }
    }
    if !uid.is_empty() {
        check(Attributes::resource(
            requestor,
            "impersonate",
            "authentication.k8s.io",
            "uids",
            "",
            uid,
        ))?;
        out.uid = uid.to_string();
    }
    out.extra = extras;
    if out.name == ANONYMOUS {
        if !out.in_group(ALL_UNAUTHENTICATED) {
            out.groups.push(ALL_UNAUTHENTICATED.into());
        }
    } else if !out.in_group(ALL_AUTHENTICATED) && !out.in_group(ALL_UNAUTHENTICATED) {
        out.groups.push(ALL_AUTHENTICATED.into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn impersonating_a_service_account_gives_its_groups() {
        let admin = UserInfo::admin();
        let user = impersonate(
            &admin,
            &headers(&[("impersonate-user", "system:serviceaccount:ns:sa")]),
            "/api",
            |_| (true, String::new()),
        )
        .unwrap();
        assert_eq!(user.name, "system:serviceaccount:ns:sa");
        assert_eq!(
            user.groups,
            [
                "system:serviceaccounts",
                "system:serviceaccounts:ns",
                "system:authenticated"
            ]
        );
    }

    #[test]
    fn each_impersonation_is_authorized() {
        let alice = UserInfo::authenticated("alice", "", &[]);
        let seen = std::sync::Mutex::new(Vec::new());
        let user = impersonate(
            &alice,
            &headers(&[
                ("impersonate-user", "bob"),
                ("impersonate-group", "dev"),
                ("impersonate-group", "system:unauthenticated"),
                ("impersonate-uid", "u-1"),
                ("impersonate-extra-scopes%2Fa", "x"),
            ]),
            "/api",
            |a| {
                seen.lock().unwrap().push(format!(
                    "{} {}/{} {}",
                    a.group, a.resource, a.subresource, a.name
                ));
                (true, String::new())
            },
        )
        .unwrap();
        assert_eq!(user.groups, ["dev", "system:unauthenticated"]);
        assert_eq!(user.uid, "u-1");
        assert_eq!(user.extra["scopes/a"], ["x"]);
        assert_eq!(
            *seen.lock().unwrap(),
            [
                " users/ bob",
                " groups/ dev",
                " groups/ system:unauthenticated",
                "authentication.k8s.io userextras/scopes/a x",
                "authentication.k8s.io uids/ u-1"
            ]
        );
        let refused = impersonate(
            &alice,
            &headers(&[("impersonate-user", "bob")]),
            "/api",
            |_| (false, String::new()),
        )
        .unwrap_err();
        assert_eq!(refused.code, 403);
        assert_eq!(
            refused.message,
            r#"users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope"#
        );
    }

    #[test]
    fn groups_without_a_user_are_refused() {
        let e = impersonate(
            &UserInfo::admin(),
            &headers(&[("impersonate-group", "dev")]),
            "/api",
            |_| (true, String::new()),
        )
        .unwrap_err();
        assert_eq!(e.code, 500);
    }
}
