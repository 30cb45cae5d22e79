//! Shared helpers for the `kubectl_*` integration tests: a fake API server on `127.0.0.1:0`
//! served from a background tokio runtime, a kubeconfig and a kubectl cache in a temporary
//! directory, and `kubectl` runs with a deadline so a hang fails the test instead of blocking CI.
//!
//! Each test file includes this with `mod kubectl_support;` (a directory module, so Cargo does not
//! build it as a test of its own).

#![allow(dead_code)] // Each test file uses a different subset.

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use fake_apiserver::kubeconfig::kubeconfig_yaml;
use fake_apiserver::FakeApiServer;
use serde_json::Value;

/// How long one kubectl run may take before the test fails.
pub const KUBECTL_TIMEOUT: Duration = Duration::from_secs(30);

/// A running fake API server and a place for kubectl's files. Stops the server when dropped.
pub struct Cluster {
    /// The server, for reading and writing objects directly.
    pub server: FakeApiServer,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    runtime: Option<tokio::runtime::Runtime>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    dir: tempfile::TempDir,
    kubeconfig: PathBuf,
    /// The server's self-signed certificate, when it serves HTTPS.
    certificate: Option<PathBuf>,
}

/// What a finished kubectl run printed and how it exited.
#[derive(Debug)]
pub struct Run {
    /// The command line, for messages.
    pub command: String,
    /// The exit code (`None` if killed by a signal).
    pub code: Option<i32>,
    /// Everything written to stdout.
    pub stdout: String,
    /// Everything written to stderr.
    pub stderr: String,
}

impl Run {
    /// Asserts exit status 0 and returns `self`.
    #[track_caller]
    pub fn ok(&self) -> &Self {
        assert_eq!(self.code, Some(0), "{self}");
        self
    }

    /// Asserts a non-zero exit status and returns `self`.
    #[track_caller]
    pub fn fails(&self) -> &Self {
        assert!(
            matches!(self.code, Some(c) if c != 0),
            "expected failure: {self}"
        );
        self
    }

    /// Asserts stdout is exactly `expected` (trailing newline included).
    #[track_caller]
    pub fn stdout_is(&self, expected: &str) -> &Self {
        assert_eq!(self.stdout, expected, "{self}");
        self
    }

    /// Asserts stderr contains `phrase`.
    #[track_caller]
    pub fn stderr_has(&self, phrase: &str) -> &Self {
        assert!(
            self.stderr.contains(phrase),
            "stderr lacks {phrase:?}: {self}"
        );
        self
    }

    /// stdout parsed as JSON.
    #[track_caller]
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {self}"))
    }

    /// The whitespace-separated fields of each non-empty stdout line.
    pub fn rows(&self) -> Vec<Vec<String>> {
        self.stdout
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| l.split_whitespace().map(str::to_string).collect())
            .collect()
    }
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`{}` exited {:?}\n--- stdout ---\n{}--- stderr ---\n{}",
            self.command, self.code, self.stdout, self.stderr
        )
    }
}

/// A kubectl process left running (e.g. `get -w`, `wait`, `delete --wait`). Killed when dropped.
pub struct Background {
    command: String,
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
    stderr: std::thread::JoinHandle<String>,
}

impl Background {
    /// Waits until a stdout line satisfies `matches`; returns it, or panics with what was seen.
    #[track_caller]
    pub fn expect_line(&mut self, matches: impl Fn(&str) -> bool, timeout: Duration) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if matches(&line) {
                        return line;
                    }
                }
                Err(_) => panic!(
                    "`{}` printed no matching line within {timeout:?}; saw {:?}",
                    self.command, self.seen
                ),
            }
        }
    }

    /// Whether the process has exited.
    pub fn has_exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// Waits for the process to exit (killing it after `timeout`) and returns its run.
    #[track_caller]
    pub fn finish(mut self, timeout: Duration) -> Run {
        let code = wait_with_deadline(&mut self.child, timeout, &self.command);
        let mut stdout = self.seen.join("\n");
        if !stdout.is_empty() {
            stdout.push('\n');
        }
        // The reader thread ends at EOF, which follows the exit.
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(2)) {
            stdout.push_str(&line);
            stdout.push('\n');
        }
        let stderr = std::mem::replace(&mut self.stderr, std::thread::spawn(String::new))
            .join()
            .unwrap_or_default();
        Run {
            command: self.command.clone(),
            code,
            stdout,
            stderr,
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        if !self.has_exited() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Waits for `child` until `timeout`; kills it and panics past the deadline.
#[track_caller]
fn wait_with_deadline(child: &mut Child, timeout: Duration, command: &str) -> Option<i32> {
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.code(),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("`{command}` did not finish within {timeout:?}; killed");
            }
            Err(e) => panic!("waiting for `{command}`: {e}"),
        }
    }
}

/// Reads all of `source` on a thread.
fn read_all(mut source: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = source.read_to_string(&mut text);
        text
    })
}

/// A self-signed loopback certificate and key in `dir` (made with `openssl`).
pub fn self_signed_certificate(dir: &std::path::Path) -> (PathBuf, PathBuf) {
    fake_apiserver::tls::self_signed_loopback_certificate(dir).expect("a self-signed certificate")
}

impl Cluster {
    /// Starts a fresh server on a free loopback port.
    pub fn start() -> Self {
        Self::start_with(FakeApiServer::new)
    }

    /// Starts the server `build` makes (called inside the server's runtime) on a free loopback
    /// port; the kubeconfig carries no credentials.
    pub fn start_with(build: impl FnOnce() -> FakeApiServer) -> Self {
        Self::start_inner(build, false)
    }

    /// Like [`Cluster::start_with`], serving HTTPS with a fresh self-signed certificate (made
    /// with `openssl`) that the kubeconfigs trust: kubectl sends tokens and impersonation
    /// headers only over TLS.
    pub fn start_tls_with(build: impl FnOnce() -> FakeApiServer) -> Self {
        Self::start_inner(build, true)
    }

    fn start_inner(build: impl FnOnce() -> FakeApiServer, tls: bool) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("tokio runtime");
        let server = runtime.block_on(async { build() });
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("bind 127.0.0.1:0");
        let address = listener.local_addr().expect("local address");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let stopped = async {
            let _ = stopped.await;
        };
        let dir = tempfile::tempdir().expect("temporary directory");
        let kubeconfig = dir.path().join("kubeconfig");
        let (url, certificate) = if tls {
            let (cert, key) = self_signed_certificate(dir.path());
            let config = fake_apiserver::tls::TlsConfig::from_pem_files(&cert, &key)
                .expect("TLS configuration");
            runtime.spawn(server.clone().serve_tls(listener, config, stopped));
            let url = format!("https://{address}");
            let yaml =
                fake_apiserver::kubeconfig::kubeconfig_yaml_tls(&url, &cert, None, "default");
            std::fs::write(&kubeconfig, yaml).expect("write kubeconfig");
            (url, Some(cert))
        } else {
            runtime.spawn(server.clone().serve(listener, stopped));
            let url = format!("http://{address}");
            std::fs::write(&kubeconfig, kubeconfig_yaml(&url)).expect("write kubeconfig");
            (url, None)
        };
        Cluster {
            server,
            url,
            runtime: Some(runtime),
            stop: Some(stop),
            dir,
            kubeconfig,
            certificate,
        }
    }

    fn command(&self, args: &[&str]) -> (Command, String) {
        self.command_with(&self.kubeconfig, args)
    }

    fn command_with(&self, kubeconfig: &std::path::Path, args: &[&str]) -> (Command, String) {
        let mut command = Command::new("kubectl");
        command
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .arg("--cache-dir")
            .arg(self.dir.path().join("cache"))
            .args(args)
            .env_remove("KUBECONFIG")
            .env("HOME", self.dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        (command, format!("kubectl {}", args.join(" ")))
    }

    /// Runs kubectl with `args` to completion (at most [`KUBECTL_TIMEOUT`]).
    #[track_caller]
    pub fn kubectl(&self, args: &[&str]) -> Run {
        self.kubectl_with(&self.kubeconfig, args)
    }

    /// Like [`Cluster::kubectl`], with another kubeconfig (e.g. one carrying a token).
    #[track_caller]
    pub fn kubectl_with(&self, kubeconfig: &std::path::Path, args: &[&str]) -> Run {
        let (mut command, line) = self.command_with(kubeconfig, args);
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run kubectl: {e}"));
        let stdout = read_all(child.stdout.take().expect("stdout"));
        let stderr = read_all(child.stderr.take().expect("stderr"));
        let code = wait_with_deadline(&mut child, KUBECTL_TIMEOUT, &line);
        Run {
            command: line,
            code,
            stdout: stdout.join().unwrap_or_default(),
            stderr: stderr.join().unwrap_or_default(),
        }
    }

    /// Starts kubectl with `args` and leaves it running; its stdout lines arrive as printed.
    #[track_caller]
    pub fn kubectl_background(&self, args: &[&str]) -> Background {
        let (mut command, line) = self.command(args);
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run kubectl: {e}"));
        let stdout = child.stdout.take().expect("stdout");
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = read_all(child.stderr.take().expect("stderr"));
        Background {
            command: line,
            child,
            lines,
            seen: Vec::new(),
            stderr,
        }
    }

    /// Writes a kubeconfig for this server whose user authenticates with the bearer `token`
    /// (namespace `default`) and returns its path.
    pub fn token_kubeconfig(&self, name: &str, token: &str) -> PathBuf {
        let path = self.dir.path().join(format!("{name}.kubeconfig"));
        let yaml = match &self.certificate {
            Some(cert) => fake_apiserver::kubeconfig::kubeconfig_yaml_tls(
                &self.url,
                cert,
                Some(token),
                "default",
            ),
            None => {
                fake_apiserver::kubeconfig::kubeconfig_yaml_with_token(&self.url, token, "default")
            }
        };
        std::fs::write(&path, yaml).expect("write kubeconfig");
        path
    }

    /// Writes a file in the test's directory and returns its path.
    pub fn write(&self, name: &str, contents: &str) -> String {
        let path = self.dir.path().join(name);
        std::fs::write(&path, contents).expect("write file");
        path.to_string_lossy().into_owned()
    }

    /// Writes `object` as JSON to a file in the test's directory and returns its path.
    pub fn write_json(&self, name: &str, object: &Value) -> String {
        self.write(name, &object.to_string())
    }

    /// Reads an object straight from the server's store.
    pub fn object(
        &self,
        api_version: &str,
        plural: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<Value> {
        self.server.get_object(api_version, plural, namespace, name)
    }

    /// Reads an object that must exist.
    #[track_caller]
    pub fn must_get(
        &self,
        api_version: &str,
        plural: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Value {
        self.object(api_version, plural, namespace, name)
            .unwrap_or_else(|| panic!("{plural}/{name} does not exist"))
    }

    /// Polls until `check` holds on the object (or its absence), or panics after `timeout`.
    #[track_caller]
    pub fn eventually(&self, what: &str, timeout: Duration, check: impl Fn() -> bool) {
        let deadline = Instant::now() + timeout;
        while !check() {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Runs `future` on the server's runtime (for kube client calls).
    pub fn block_on<F: std::future::Future>(&self, future: F) -> F::Output {
        self.runtime
            .as_ref()
            .expect("runtime is running")
            .block_on(future)
    }

    /// A kube client reaching this server over loopback TCP with the generated kubeconfig, as a
    /// program run against a cluster would.
    pub fn tcp_client(&self) -> kube::Client {
        use kube::config::{KubeConfigOptions, Kubeconfig};
        let kubeconfig = Kubeconfig::from_yaml(&kubeconfig_yaml(&self.url)).expect("kubeconfig");
        self.block_on(async {
            let config =
                kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                    .await
                    .expect("kube-rs accepts the kubeconfig");
            kube::Client::try_from(config).expect("client")
        })
    }

    /// A kube-rs client over loopback that does not retry 429/503/504 answers (kube-rs retries
    /// them by default, which turns a refused eviction into minutes of backoff).
    pub fn tcp_client_without_retry(&self) -> kube::Client {
        use kube::config::{KubeConfigOptions, Kubeconfig};
        let kubeconfig = Kubeconfig::from_yaml(&kubeconfig_yaml(&self.url)).expect("kubeconfig");
        self.block_on(async {
            let mut config =
                kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                    .await
                    .expect("kube-rs accepts the kubeconfig");
            config.default_retry = false;
            kube::Client::try_from(config).expect("client")
        })
    }

    /// An in-process kube client for this server.
    pub fn client(&self) -> kube::Client {
        let _guard = self.runtime.as_ref().expect("runtime is running").enter();
        self.server.client()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_timeout(Duration::from_secs(2));
        }
    }
}
