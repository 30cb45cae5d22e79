//! Exploration past one machine: `deploy/harness/job.yaml` runs one slice of the seed space per
//! index, and `harness merge` collects the slices. This runs the Job's own container arguments
//! (with its `$(VAR)` references expanded from its env, as the kubelet does) for two indices,
//! with fewer seeds per index, then merges what the two "pods" printed.

use std::process::Command;

/// The Job's container: its args and env.
fn job_container() -> (Vec<String>, Vec<(String, String)>) {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../deploy/harness/job.yaml"
    ))
    .expect("deploy/harness/job.yaml");
    let job: serde_yaml::Value = serde_yaml::from_str(&text).expect("the Job is YAML");
    assert_eq!(job["spec"]["completionMode"].as_str(), Some("Indexed"));
    let container = &job["spec"]["template"]["spec"]["containers"][0];
    let args = container["args"]
        .as_sequence()
        .expect("args")
        .iter()
        .map(|a| a.as_str().expect("string args").to_string())
        .collect();
    let env = container["env"]
        .as_sequence()
        .expect("env")
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap_or_default().to_string(),
                e["value"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    (args, env)
}

/// `$(NAME)` expanded from `env`, as Kubernetes expands container args.
fn expand(arg: &str, env: &[(String, String)]) -> String {
    env.iter().fold(arg.to_string(), |a, (k, v)| {
        a.replace(&format!("$({k})"), v)
    })
}

fn run_index(index: u64, seeds_per_index: &str) -> String {
    let (args, mut env) = job_container();
    for (k, v) in env.iter_mut() {
        if k == "SEEDS" {
            *v = seeds_per_index.to_string();
        }
    }
    let args: Vec<String> = args.iter().map(|a| expand(a, &env)).collect();
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(&args)
        .env("JOB_COMPLETION_INDEX", index.to_string())
        .output()
        .expect("the harness runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

#[test]
fn two_indices_of_the_job_cover_disjoint_seeds_and_merge() {
    let logs = format!("{}{}", run_index(0, "4"), run_index(1, "4"));
    let slices: Vec<serde_json::Value> = logs
        .lines()
        .map(|l| serde_json::from_str(l).expect("each pod prints one JSON report line"))
        .collect();
    assert_eq!(slices.len(), 2);
    assert_eq!(slices[0]["from"], 0);
    assert_eq!(slices[1]["from"], 4, "index 1 starts where index 0 ended");

    let merged = harness::report::merge(&logs).expect("mergeable");
    let s = &merged.scenarios[0];
    assert_eq!(s.scenario, "eno/live-pod-list");
    assert_eq!((s.slices, s.runs), (2, 8));
    assert!(s.distinct > 1 && !s.overlapping && s.failures.is_empty());

    let mut merge = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args(["merge", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("harness merge");
    use std::io::Write;
    merge
        .stdin
        .take()
        .expect("stdin")
        .write_all(logs.as_bytes())
        .expect("write");
    let out = merge.wait_with_output().expect("merge output");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("eno/live-pod-list: 2 slices, 8 runs"),
        "{text}"
    );
}

#[test]
fn a_failing_slice_fails_the_merge_with_its_replay_line() {
    let out = Command::new(env!("CARGO_BIN_EXE_harness"))
        .args([
            "explore",
            "--scenario",
            "karpenter/without-launch-cache",
            "--seeds",
            "10",
            "--index",
            "0",
            "--no-shrink",
            "--json",
            "-",
        ])
        .output()
        .expect("harness explore");
    assert!(!out.status.success(), "the removed guard is found");
    let report = String::from_utf8_lossy(&out.stdout);
    let merged = harness::report::merge(&report).expect("a report line");
    let s = &merged.scenarios[0];
    assert_eq!(s.failures.len(), 1);
    assert!(s.render().contains(
        "replay: cargo run -p harness -- replay --scenario karpenter/without-launch-cache --seed"
    ));
}
