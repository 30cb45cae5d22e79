//! Authentication and authorization through `kubectl`, as a user of a secured cluster meets
//! them: static tokens in the real `--token-auth-file` CSV format, `kubectl auth can-i` (as
//! several users through `--as`, and through a kubeconfig carrying a token), `kubectl auth
//! whoami`, `kubectl create token` and the token it prints, impersonation refused, and
//! anonymous requests: a `403` for `system:anonymous` when anonymous auth is on, `401` when it is
//! off or the token is unknown.

use crate::kubectl_support;

use fake_apiserver::auth::{AuthorizationMode, StaticTokens};
use fake_apiserver::FakeApiServer;
use kubectl_support::Cluster;
use serde_json::json;

/// The static tokens, one `token,user,uid,"group1,group2"` record a line.
const TOKENS: &str = "admin-token,admin,u-admin,system:masters\n\
                      alice-token,alice,u-alice,\"dev,qa\"\n\
                      bob-token,bob,u-bob\n";

/// A server with the static tokens, RBAC and the ServiceAccount admission on; `anonymous_auth`
/// as the real `--anonymous-auth`.
fn secured_server(anonymous_auth: bool) -> FakeApiServer {
    FakeApiServer::builder()
        .static_tokens(StaticTokens::parse("tokens.csv", TOKENS).expect("token file"))
        .anonymous_auth(anonymous_auth)
        .authorization_mode(AuthorizationMode::Rbac)
        .service_account_admission(true)
        .build()
}

/// [`secured_server`] over HTTPS: kubectl sends a kubeconfig's credentials only over TLS.
fn secured(anonymous_auth: bool) -> Cluster {
    Cluster::start_tls_with(move || secured_server(anonymous_auth))
}

/// [`secured_server`] over plain HTTP, for requests without credentials (over TLS, kubectl
/// would prompt for a user name when its kubeconfig names no credentials).
fn secured_plain(anonymous_auth: bool) -> Cluster {
    Cluster::start_with(move || secured_server(anonymous_auth))
}

/// As the cluster admin (`system:masters`, by token): alice may read pods in `default`, the
/// service account `default/builder` may edit there.
fn with_policy(cluster: &Cluster) -> std::path::PathBuf {
    let admin = cluster.token_kubeconfig("admin", "admin-token");
    for args in [
        &[
            "create",
            "role",
            "pod-reader",
            "--verb=get,list,watch",
            "--resource=pods",
        ][..],
        &[
            "create",
            "rolebinding",
            "alice-reads-pods",
            "--role=pod-reader",
            "--user=alice",
        ],
        &["create", "serviceaccount", "builder"],
        &[
            "create",
            "rolebinding",
            "builder-edits",
            "--clusterrole=edit",
            "--serviceaccount=default:builder",
        ],
    ] {
        cluster.kubectl_with(&admin, args).ok();
    }
    admin
}

#[test]
fn can_i_answers_for_several_users_through_as() {
    let cluster = secured(true);
    let admin = with_policy(&cluster);
    let can_i = |args: &[&str]| {
        let mut all = vec!["auth", "can-i"];
        all.extend_from_slice(args);
        cluster.kubectl_with(&admin, &all)
    };
    // (arguments, allowed)
    let cases: &[(&[&str], bool)] = &[
        (&["*", "*"], true),
        (&["list", "pods", "--as", "alice"], true),
        (&["watch", "pods", "--as", "alice"], true),
        (&["delete", "pods", "--as", "alice"], false),
        (
            &["list", "pods", "-n", "kube-system", "--as", "alice"],
            false,
        ),
        (&["list", "pods", "--as", "bob"], false),
        (&["list", "pods", "--as", "bob", "--as-group", "dev"], false),
        (
            &[
                "create",
                "deployments.apps",
                "--as",
                "system:serviceaccount:default:builder",
            ],
            true,
        ),
        (
            &[
                "create",
                "roles.rbac.authorization.k8s.io",
                "--as",
                "system:serviceaccount:default:builder",
            ],
            false,
        ),
        (&["get", "/healthz", "--as", "bob"], true),
        (&["get", "/metrics", "--as", "bob"], false),
    ];
    for (args, allowed) in cases {
        let run = can_i(args);
        if *allowed {
            run.ok().stdout_is("yes\n");
        } else {
            run.fails();
            assert_eq!(run.stdout, "no\n", "{run}");
        }
    }
    // What alice may do in `default`, from a SelfSubjectRulesReview.
    let run = can_i(&["--list", "--as", "alice"]);
    run.ok();
    let pods = run
        .stdout
        .lines()
        .find(|l| l.starts_with("pods "))
        .unwrap_or_else(|| panic!("no pods row: {run}"));
    assert!(pods.ends_with("[get list watch]"), "{run}");
}

#[test]
fn can_i_whoami_and_refusals_through_a_token_kubeconfig() {
    let cluster = secured(true);
    with_policy(&cluster);
    let alice = cluster.token_kubeconfig("alice", "alice-token");
    cluster
        .kubectl_with(&alice, &["auth", "can-i", "list", "pods"])
        .ok()
        .stdout_is("yes\n");
    let run = cluster.kubectl_with(&alice, &["auth", "can-i", "create", "pods"]);
    run.fails();
    assert_eq!(run.stdout, "no\n", "{run}");

    let whoami = cluster.kubectl_with(&alice, &["auth", "whoami", "-o", "json"]);
    assert_eq!(
        whoami.ok().json()["status"]["userInfo"],
        json!({"username": "alice", "uid": "u-alice", "groups": ["dev", "qa", "system:authenticated"]})
    );

    cluster.kubectl_with(&alice, &["get", "pods"]).ok();
    cluster
        .kubectl_with(&alice, &["get", "pods", "-n", "kube-system"])
        .fails()
        .stderr_has(
            "Error from server (Forbidden): pods is forbidden: User \"alice\" cannot list resource \"pods\" in API group \"\" in the namespace \"kube-system\"",
        );
    cluster
        .kubectl_with(&alice, &["delete", "pod", "web"])
        .fails()
        .stderr_has(
            "Error from server (Forbidden): pods \"web\" is forbidden: User \"alice\" cannot delete resource \"pods\" in API group \"\" in the namespace \"default\"",
        );
    // Impersonation needs the `impersonate` verb.
    cluster
        .kubectl_with(&alice, &["get", "pods", "--as", "bob"])
        .fails()
        .stderr_has(
            "Error from server (Forbidden): users \"bob\" is forbidden: User \"alice\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope",
        );
}

#[test]
fn create_token_issues_a_service_account_token() {
    let cluster = secured(true);
    let admin = with_policy(&cluster);
    let run = cluster.kubectl_with(&admin, &["create", "token", "builder"]);
    let token = run.ok().stdout.trim().to_string();
    assert!(
        !token.is_empty() && !token.contains(char::is_whitespace),
        "{run}"
    );
    // A JWT, as kube-apiserver issues: its claims name the service account.
    let parts: Vec<&str> = token.split('.').collect();
    assert_eq!(parts.len(), 3, "{token}");
    let claims: serde_json::Value = serde_json::from_slice(
        &base64::engine::Engine::decode(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
            parts[1],
        )
        .expect("base64url claims"),
    )
    .expect("JSON claims");
    assert_eq!(claims["sub"], "system:serviceaccount:default:builder");
    assert_eq!(claims["kubernetes.io"]["serviceaccount"]["name"], "builder");
    assert_eq!(
        claims["aud"],
        json!(["https://kubernetes.default.svc.cluster.local"])
    );
    assert_eq!(
        claims["exp"].as_i64().unwrap() - claims["iat"].as_i64().unwrap(),
        3600
    );

    let builder = cluster.token_kubeconfig("builder", &token);
    let whoami = cluster.kubectl_with(&builder, &["auth", "whoami", "-o", "json"]);
    let user = &whoami.ok().json()["status"]["userInfo"];
    assert_eq!(user["username"], "system:serviceaccount:default:builder");
    assert_eq!(
        user["groups"],
        json!([
            "system:serviceaccounts",
            "system:serviceaccounts:default",
            "system:authenticated"
        ])
    );
    // The service account authenticator names the token it read (its `jti`).
    assert_eq!(
        user["extra"],
        json!({"authentication.kubernetes.io/credential-id": [format!("JTI={}", claims["jti"].as_str().unwrap())]})
    );
    cluster
        .kubectl_with(&builder, &["auth", "can-i", "create", "deployments.apps"])
        .ok()
        .stdout_is("yes\n");
    cluster
        .kubectl_with(&builder, &["create", "configmap", "made-by-builder"])
        .ok();
    cluster
        .kubectl_with(&builder, &["create", "role", "r", "--verb=get", "--resource=pods"])
        .fails()
        .stderr_has("User \"system:serviceaccount:default:builder\" cannot create resource \"roles\" in API group \"rbac.authorization.k8s.io\" in the namespace \"default\"");

    // The real server's validation of the request.
    cluster
        .kubectl_with(&admin, &["create", "token", "missing"])
        .fails()
        .stderr_has("serviceaccounts \"missing\" not found");
    cluster
        .kubectl_with(&admin, &["create", "token", "builder", "--duration", "5m"])
        .fails()
        .stderr_has("may not specify a duration less than 10 minutes");
    // Creating tokens is itself authorized: alice may not.
    let alice = cluster.token_kubeconfig("alice", "alice-token");
    cluster
        .kubectl_with(&alice, &["create", "token", "builder"])
        .fails()
        .stderr_has("User \"alice\" cannot create resource \"serviceaccounts/token\" in API group \"\" in the namespace \"default\"");

    // The token dies with its service account.
    cluster
        .kubectl_with(&admin, &["delete", "serviceaccount", "builder"])
        .ok();
    cluster
        .kubectl_with(&builder, &["get", "configmaps"])
        .fails()
        .stderr_has("error: You must be logged in to the server (Unauthorized)");
}

#[test]
fn anonymous_requests_are_forbidden_or_unauthorized_as_on_a_real_server() {
    // --anonymous-auth=true (the real default): no credentials is `system:anonymous`, which
    // the bootstrap policy lets read /version and /healthz and nothing else.
    let cluster = secured_plain(true);
    cluster.kubectl(&["get", "--raw", "/version"]).ok();
    cluster
        .kubectl(&["get", "--raw", "/healthz"])
        .ok()
        .stdout_is("ok");
    cluster
        .kubectl(&["get", "--raw", "/api/v1/namespaces/default/pods"])
        .fails()
        .stderr_has(
            "Error from server (Forbidden): pods is forbidden: User \"system:anonymous\" cannot list resource \"pods\" in API group \"\" in the namespace \"default\"",
        );
    // Discovery is not theirs either (`system:discovery` is bound to `system:authenticated`),
    // so `kubectl get pods` fails finding out what `pods` is.
    cluster
        .kubectl(&["get", "pods"])
        .fails()
        .stderr_has("Error from server (Forbidden)");
    cluster.kubectl(&["get", "--raw", "/api"]).fails().stderr_has(
        "Error from server (Forbidden): forbidden: User \"system:anonymous\" cannot get path \"/api\"",
    );
    // Anonymous users are not `system:authenticated`, so not even `auth can-i` is theirs.
    cluster
        .kubectl(&["auth", "can-i", "list", "pods"])
        .fails()
        .stderr_has("User \"system:anonymous\" cannot create resource \"selfsubjectaccessreviews\" in API group \"authorization.k8s.io\" at the cluster scope");
    // An unknown token is refused outright, never downgraded to anonymous.
    let cluster = secured(true);
    let stranger = cluster.token_kubeconfig("stranger", "no-such-token");
    cluster
        .kubectl_with(&stranger, &["get", "--raw", "/version"])
        .fails()
        .stderr_has("Unauthorized");
    cluster
        .kubectl_with(&stranger, &["get", "pods"])
        .fails()
        .stderr_has("error: You must be logged in to the server");

    // --anonymous-auth=false: a request without credentials gets 401 everywhere.
    let closed = secured_plain(false);
    closed
        .kubectl(&["get", "pods"])
        .fails()
        .stderr_has("error: You must be logged in to the server");
    closed
        .kubectl(&["get", "--raw", "/version"])
        .fails()
        .stderr_has("Unauthorized");
    // ... while a known token still works.
    let closed = secured(false);
    let admin = closed.token_kubeconfig("admin", "admin-token");
    closed.kubectl_with(&admin, &["get", "pods"]).ok();
}
