//! `harness`: explore, replay, shrink and look at the race scenarios of this workspace.
//!
//! ```sh
//! harness list
//! harness race    --seeds 2000 --check-determinism
//! harness explore --scenario eno/without-live-pod-list --seeds 500
//! harness replay  --scenario eno/without-live-pod-list --seed 17
//! harness shrink  --scenario eno/without-live-pod-list --seed 17
//! harness show    --scenario eno/without-live-pod-list --seed 17 --out run.html
//! ```

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use harness::engine::{ExploreOptions, Failure, Target};
use harness::scenario::Scenario;
use harness::strategy::Strategy;
use harness::trace::Run;

/// Explorations build and drop JSON trees by the million; mimalloc serves them faster than the
/// system allocator. Where objects are placed never reaches a trace.
#[global_allocator]
static GLOBAL: fake_apiserver::allocator::MiMalloc = fake_apiserver::allocator::MiMalloc;

#[derive(Parser)]
#[command(
    name = "harness",
    about = "Deterministic race harness for the controllers of this workspace"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Args, Clone)]
struct Pick {
    /// The scenario (see `harness list`).
    #[arg(long)]
    scenario: String,
    /// How seeded runs pick steps: random, pct or pct:DEPTH (default: the scenario's own).
    #[arg(long)]
    strategy: Option<Strategy>,
    /// Steps the schedule decides per run (default: the scenario's own).
    #[arg(long)]
    steps: Option<usize>,
}

#[derive(clap::Args, Clone)]
struct OneRun {
    #[command(flatten)]
    pick: Pick,
    /// The seed.
    #[arg(long)]
    seed: u64,
    /// Replay these decisions (comma-separated, as a shrunk report prints them) instead of the
    /// seed's own.
    #[arg(long, value_delimiter = ',')]
    choices: Option<Vec<usize>>,
}

#[derive(Subcommand)]
enum Command {
    /// Every scenario, one a line, name first.
    List,
    /// Run many seeds; exits non-zero when a run breaks an invariant or a goal.
    Explore {
        #[command(flatten)]
        pick: Pick,
        /// Number of seeds.
        #[arg(long, default_value_t = 100)]
        seeds: u64,
        /// First seed.
        #[arg(long, default_value_t = 0)]
        from: u64,
        /// Run each seed twice and compare the traces.
        #[arg(long)]
        check_determinism: bool,
        /// Keep going after the first failure.
        #[arg(long)]
        keep_going: bool,
        /// Do not shrink the first failure.
        #[arg(long)]
        no_shrink: bool,
        /// This is slice INDEX of a larger exploration: seeds start at `from + INDEX * seeds`.
        /// An Indexed Job passes `--index-from-env JOB_COMPLETION_INDEX` instead.
        #[arg(long)]
        index: Option<u64>,
        /// Read the slice index from this environment variable.
        #[arg(long, conflicts_with = "index")]
        index_from_env: Option<String>,
        /// Also write the slice's report as one JSON line to this file (`-`: stdout, with the
        /// human summary going to stderr) for `harness merge`.
        #[arg(long)]
        json: Option<std::path::PathBuf>,
    },
    /// Every interleaving of the first DEPTH steps (faults off), equivalent orders pruned;
    /// exits non-zero when one breaks an invariant.
    Exhaust {
        /// The scenario (see `harness list`).
        #[arg(long)]
        scenario: String,
        /// Steps per schedule.
        #[arg(long)]
        depth: usize,
        /// The seed of everything but the schedule (ids, names).
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Give up after this many executions.
        #[arg(long, default_value_t = 200_000)]
        max_executions: u64,
        /// Run just this schedule of the search (as a violation prints it) and show its trace.
        #[arg(long, value_delimiter = ',')]
        choices: Option<Vec<usize>>,
    },
    /// Speed figures with their targets: steps/s and runs/s per scenario, and the time from
    /// seed 0 until each removed guard's failure is found.
    Bench {
        /// Seeds per guarded scenario.
        #[arg(long, default_value_t = 200)]
        seeds: u64,
    },
    /// The whole suite, guard by guard: each guard held over many seeds (which invariants and
    /// goals), each removed guard's failure found (after how many runs, how long); exits
    /// non-zero when a guard does not hold or a removed one is not found.
    Race {
        /// Seeds per scenario that must hold.
        #[arg(long, default_value_t = 2000)]
        seeds: u64,
        /// Seeds for scenarios running both controllers at once (`both/…`).
        #[arg(long, default_value_t = 10_000)]
        combined_seeds: u64,
        /// Seeds searched, from 0, for each removed guard's failure.
        #[arg(long, default_value_t = 5_000)]
        find_within: u64,
        /// Run every held seed twice and compare the traces.
        #[arg(long)]
        check_determinism: bool,
    },
    /// Merge slice reports (JSON lines from `explore --json`, e.g. the logs of the
    /// `deploy/harness` Job's pods); exits non-zero when a slice failed.
    Merge {
        /// Files of JSON lines (`-` for stdin).
        files: Vec<std::path::PathBuf>,
    },
    /// Run one seed and print its trace.
    Replay(OneRun),
    /// Shrink a failing seed to the shortest schedule that still fails.
    Shrink(OneRun),
    /// Render one run as a timeline: HTML (`--out FILE.html`) or text.
    Show {
        #[command(flatten)]
        run: OneRun,
        /// Where to write the page; without it, a text timeline goes to stdout.
        #[arg(long)]
        out: Option<std::path::PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::List => {
            for s in harness::scenarios::all() {
                println!("{}  {}", s.name, s.about);
            }
            ExitCode::SUCCESS
        }
        Command::Explore {
            pick,
            seeds,
            from,
            check_determinism,
            keep_going,
            no_shrink,
            index,
            index_from_env,
            json,
        } => {
            let Some(scenario) = scenario(&pick) else {
                return ExitCode::from(2);
            };
            let index = match (index, index_from_env) {
                (Some(i), _) => i,
                (None, Some(var)) => match std::env::var(&var).ok().and_then(|v| v.parse().ok()) {
                    Some(i) => i,
                    None => {
                        eprintln!("--index-from-env {var}: the variable is not set to a number");
                        return ExitCode::from(2);
                    }
                },
                (None, None) => 0,
            };
            let options = Options {
                check_determinism,
                keep_going,
                shrink: !no_shrink,
                json,
            };
            explore(&scenario, from + index * seeds, seeds, options)
        }
        Command::Merge { files } => merge(&files),
        Command::Race {
            seeds,
            combined_seeds,
            find_within,
            check_determinism,
        } => race(harness::race::SuiteOptions {
            seeds,
            combined_seeds,
            find_within,
            check_determinism,
        }),
        Command::Bench { seeds } => bench(seeds),
        Command::Exhaust {
            scenario: name,
            depth,
            seed,
            max_executions,
            choices,
        } => {
            let Some(scenario) = harness::scenarios::find(&name) else {
                eprintln!("no scenario {name:?}; `harness list` prints them all");
                return ExitCode::from(2);
            };
            if let Some(choices) = choices {
                let run = harness::exhaustive::replay(&scenario, seed, &choices);
                print!("{}", run.render());
                return if run.violation.is_some() {
                    ExitCode::FAILURE
                } else {
                    ExitCode::SUCCESS
                };
            }
            let started = std::time::Instant::now();
            let coverage = harness::exhaustive::explore(
                &scenario,
                seed,
                harness::exhaustive::Bounds {
                    depth,
                    max_executions,
                },
            );
            println!(
                "{} ({:.2}s)",
                coverage.summary(&name, depth),
                started.elapsed().as_secs_f64()
            );
            match coverage.violation {
                Some(run) => {
                    print!("{}", run.render());
                    let choices: Vec<String> = run.choices.iter().map(|c| c.to_string()).collect();
                    println!(
                        "replay: cargo run -p harness -- exhaust --scenario {name} --depth {depth} --seed {seed} --choices {}",
                        choices.join(",")
                    );
                    ExitCode::FAILURE
                }
                None if coverage.truncated => ExitCode::from(3),
                None => ExitCode::SUCCESS,
            }
        }
        Command::Replay(one) => {
            let Some(scenario) = scenario(&one.pick) else {
                return ExitCode::from(2);
            };
            let run = one_run(&scenario, &one);
            print!("{}", run.render());
            let choices: Vec<String> = run.choices.iter().map(|c| c.to_string()).collect();
            println!("decisions: {}", choices.join(","));
            if run.violation.is_some() {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            }
        }
        Command::Shrink(one) => {
            let Some(scenario) = scenario(&one.pick) else {
                return ExitCode::from(2);
            };
            let run = one_run(&scenario, &one);
            if run.violation.is_none() {
                eprintln!(
                    "seed {} of {} does not fail; nothing to shrink",
                    one.seed, scenario.name
                );
                return ExitCode::from(2);
            }
            let failure = Failure {
                seed: one.seed,
                run,
            };
            let shrunk = scenario.shrink(&failure);
            print!("{}", scenario.report(&failure, &shrunk));
            ExitCode::FAILURE
        }
        Command::Show { run: one, out } => {
            let Some(scenario) = scenario(&one.pick) else {
                return ExitCode::from(2);
            };
            let run = one_run(&scenario, &one);
            let title = format!("{} seed {}", scenario.name, one.seed);
            match out {
                Some(path) => {
                    if let Err(e) = std::fs::write(&path, harness::show::html(&run, &title)) {
                        eprintln!("writing {}: {e}", path.display());
                        return ExitCode::from(2);
                    }
                    println!("wrote {} ({} steps)", path.display(), run.trace.len());
                }
                None => print!("{}", harness::show::text(&run, &title)),
            }
            ExitCode::SUCCESS
        }
    }
}

fn scenario(pick: &Pick) -> Option<Scenario> {
    let Some(mut scenario) = harness::scenarios::find(&pick.scenario) else {
        eprintln!(
            "no scenario {:?}; `harness list` prints them all",
            pick.scenario
        );
        return None;
    };
    if let Some(strategy) = pick.strategy {
        scenario.config.strategy = strategy;
    }
    if let Some(steps) = pick.steps {
        scenario.config.steps = steps;
    }
    Some(scenario)
}

fn one_run(scenario: &Scenario, one: &OneRun) -> Run {
    match &one.choices {
        Some(choices) => scenario.replay(one.seed, choices.clone()),
        None => scenario.run(one.seed),
    }
}

struct Options {
    check_determinism: bool,
    keep_going: bool,
    shrink: bool,
    json: Option<std::path::PathBuf>,
}

fn explore(scenario: &Scenario, from: u64, total: u64, options: Options) -> ExitCode {
    let to_stdout = options.json.as_deref() == Some(std::path::Path::new("-"));
    // With the report on stdout, the human summary goes to stderr.
    let say = |text: String| {
        if to_stdout {
            eprint!("{text}");
        } else {
            print!("{text}");
        }
    };
    let explore_options = ExploreOptions {
        stop_after: if options.keep_going { 0 } else { 1 },
        check_determinism: options.check_determinism,
    };
    let mut stderr = std::io::stderr();
    let terminal = std::io::IsTerminal::is_terminal(&stderr);
    let mut shown = usize::MAX;
    let report = scenario.explore(from..from + total, explore_options, |runs, failures| {
        let width = 40usize;
        let done = (runs as usize * width) / total.max(1) as usize;
        if !terminal || (done == shown && runs < total) {
            return;
        }
        shown = done;
        let _ = write!(
            stderr,
            "\r{} [{}{}] {runs}/{total} runs, {failures} failing",
            scenario.name,
            "#".repeat(done),
            " ".repeat(width - done.min(width)),
        );
        let _ = stderr.flush();
    });
    if terminal {
        eprintln!();
    }
    say(format!(
        "{}: {} runs, {} steps, {} distinct traces, {} failing, {:.2}s ({:.0} steps/s)\n",
        scenario.name,
        report.runs,
        report.steps,
        report.distinct,
        report.failures.len(),
        report.elapsed.as_secs_f64(),
        report.steps as f64 / report.elapsed.as_secs_f64().max(1e-9),
    ));
    let mut ok = report.failures.is_empty();
    if options.check_determinism {
        if report.nondeterministic.is_empty() {
            say("determinism: every seed ran twice with the same trace\n".into());
        } else {
            ok = false;
            say(format!(
                "determinism: seeds whose two runs differ: {:?}\n",
                report.nondeterministic
            ));
        }
    }
    for failure in &report.failures {
        say(format!(
            "seed {} fails: {}\nreplay: {}\n",
            failure.seed,
            failure.run.violation.as_deref().unwrap_or("?"),
            scenario.replay_line(failure.seed)
        ));
    }
    if options.shrink {
        if let Some(failure) = report.failures.first() {
            let shrunk = scenario.shrink(failure);
            say(scenario.report(failure, &shrunk));
        }
    }
    if let Some(path) = &options.json {
        let slice = harness::report::SliceReport::new(scenario, from, total, &report);
        let line = serde_json::to_string(&slice).unwrap_or_default();
        let written = if to_stdout {
            println!("{line}");
            Ok(())
        } else {
            std::fs::write(path, format!("{line}\n"))
        };
        if let Err(e) = written {
            eprintln!("writing {}: {e}", path.display());
            return ExitCode::from(2);
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn race(options: harness::race::SuiteOptions) -> ExitCode {
    let scenarios = harness::scenarios::all();
    let reports = harness::race::run(&scenarios, options, |report| {
        print!("{}", report.render());
        let _ = std::io::stdout().flush();
    });
    print!("{}", harness::race::summary(&reports));
    if reports.iter().all(|r| r.ok()) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn merge(files: &[std::path::PathBuf]) -> ExitCode {
    let mut text = String::new();
    for file in files {
        let read = if file.as_os_str() == "-" {
            std::io::read_to_string(std::io::stdin())
        } else {
            std::fs::read_to_string(file)
        };
        match read {
            Ok(t) => {
                text.push_str(&t);
                text.push('\n');
            }
            Err(e) => {
                eprintln!("reading {}: {e}", file.display());
                return ExitCode::from(2);
            }
        }
    }
    match harness::report::merge(&text) {
        Ok(merged) => {
            let mut ok = true;
            for s in &merged.scenarios {
                print!("{}", s.render());
                ok &= s.failures.is_empty() && s.nondeterministic.is_empty() && !s.overlapping;
            }
            if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}

/// Targets of issue 8, on one core of a release build.
const TARGET_STEPS_PER_SEC: f64 = 20_000.0;
const TARGET_FIND_SECS: f64 = 1.0;
const TARGET_500_SEEDS_SECS: f64 = 30.0;

/// Writes per measurement of [`gate_cost`].
const GATE_WRITES: u64 = 2_000;

type BoxError = Box<dyn std::error::Error>;

/// Pairs of measurements of [`gate_cost`].
const GATE_PAIRS: usize = 15;

/// What the request gate adds to a write (issue 13: nothing beyond ±10%), measured with the same
/// sequence of ConfigMap updates from a client straight to the server and through
/// [`harness::net::Net`], each request released as soon as it is held, by a loop that sleeps
/// until one arrives ([`harness::net::Net::activity_changed`]). Both run on the simulation's
/// runtime ([`harness::rt::SimRuntime`]: no I/O driver, paused clock), as a harness run does.
#[derive(Debug, Clone, Copy)]
struct GateCost {
    /// Best µs per write, straight to the server.
    direct: f64,
    /// Best µs per write, through the gate.
    gated: f64,
    /// Median over the pairs of (gated / direct): each pair is measured back to back, so a
    /// drift of the machine's speed over the run cancels out of it.
    ratio: f64,
}

fn gate_cost() -> Result<GateCost, BoxError> {
    let runtime = harness::rt::SimRuntime::new()?;
    runtime.block_on(gate_cost_pairs())
}

/// [`GATE_PAIRS`] pairs of one run each way, back to back; which way goes first alternates from
/// pair to pair, so that neither profits from the other's warm caches.
async fn gate_cost_pairs() -> Result<GateCost, BoxError> {
    use harness::net::{Net, Verdict};

    let server = fake_apiserver::FakeApiServer::builder().seed(1).build();
    let start = std::time::Instant::now();
    let net = Net::new(&server, move || start.elapsed());
    let direct_run = |pair: usize| gate_writes(server.client(), format!("d{pair}"));
    let gated_run = |pair: usize| {
        let net = &net;
        async move {
            let work = gate_writes(net.client("bench"), format!("g{pair}"));
            let release = async {
                loop {
                    for held in net.held() {
                        net.release(held.id, Verdict::Pass);
                    }
                    net.activity_changed().await;
                }
            };
            tokio::select! {
                took = work => took,
                _ = release => Err("the releasing loop ended".into()),
            }
        }
    };
    let mut pairs = Vec::with_capacity(GATE_PAIRS);
    for pair in 0..GATE_PAIRS {
        let (direct, gated) = if pair % 2 == 0 {
            let direct = direct_run(pair).await?;
            (direct, gated_run(pair).await?)
        } else {
            let gated = gated_run(pair).await?;
            (direct_run(pair).await?, gated)
        };
        pairs.push((direct.as_secs_f64(), gated.as_secs_f64()));
    }
    let per_write = |secs: f64| secs * 1e6 / GATE_WRITES as f64;
    let best = |f: fn(&(f64, f64)) -> f64| pairs.iter().map(f).fold(f64::MAX, f64::min);
    let mut ratios: Vec<f64> = pairs.iter().map(|(d, g)| g / d).collect();
    ratios.sort_by(f64::total_cmp);
    Ok(GateCost {
        direct: per_write(best(|p| p.0)),
        gated: per_write(best(|p| p.1)),
        ratio: ratios[ratios.len() / 2],
    })
}

/// Creates ConfigMap `name` through `client`, then replaces it [`GATE_WRITES`] times; returns
/// the time the replaces took.
async fn gate_writes(client: kube::Client, name: String) -> Result<std::time::Duration, BoxError> {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{Api, PostParams};

    let api = Api::<ConfigMap>::namespaced(client, "default");
    let mut cm: ConfigMap = serde_json::from_value(serde_json::json!({
        "metadata": {"name": name}, "data": {"n": "0"}
    }))?;
    cm = api.create(&PostParams::default(), &cm).await?;
    let started = std::time::Instant::now();
    for i in 0..GATE_WRITES {
        cm.data
            .get_or_insert_with(Default::default)
            .insert("n".into(), i.to_string());
        cm = api.replace(&name, &PostParams::default(), &cm).await?;
    }
    Ok(started.elapsed())
}

fn bench(seeds: u64) -> ExitCode {
    let verdict = |ok: bool| if ok { "PASS" } else { "MISS" };
    if cfg!(debug_assertions) {
        println!("(a debug build: figures are ~8x lower than release; use cargo run --release)");
    }
    match gate_cost() {
        Ok(GateCost {
            direct,
            gated,
            ratio,
        }) => {
            println!(
                "harness.gate.write  direct {direct:.1} us  gated {gated:.1} us (best of {GATE_PAIRS})  median ratio of pairs {ratio:.3} (target 0.9..1.1) {}",
                verdict((0.9..=1.1).contains(&ratio))
            );
        }
        Err(e) => println!("harness.gate.write failed: {e}"),
    }
    for scenario in harness::scenarios::all() {
        if scenario.expect_failure {
            let started = std::time::Instant::now();
            let report = scenario.explore(0..5_000, ExploreOptions::default(), |_, _| {});
            let secs = started.elapsed().as_secs_f64();
            match report.failures.first() {
                Some(f) => println!(
                    "harness.find.{:<44} seed {:>4} after {:>4} runs  {:>7.3}s  target < {TARGET_FIND_SECS}s  {}",
                    scenario.name,
                    f.seed,
                    report.runs,
                    secs,
                    verdict(secs < TARGET_FIND_SECS)
                ),
                None => println!(
                    "harness.find.{:<44} NOT FOUND in {} runs ({secs:.1}s)  MISS",
                    scenario.name, report.runs
                ),
            }
        } else {
            let report = scenario.explore(
                0..seeds,
                ExploreOptions {
                    stop_after: 0,
                    check_determinism: false,
                },
                |_, _| {},
            );
            let secs = report.elapsed.as_secs_f64().max(1e-9);
            let steps = report.steps as f64 / secs;
            let runs = report.runs as f64 / secs;
            let for_500 = 500.0 / runs;
            println!(
                "harness.explore.{:<41} {:>7.0} steps/s (target {TARGET_STEPS_PER_SEC:.0}) {}  {:>6.1} runs/s  500 seeds in {:>5.1}s (target < {TARGET_500_SEEDS_SECS}s) {}",
                scenario.name,
                steps,
                verdict(steps >= TARGET_STEPS_PER_SEC),
                runs,
                for_500,
                verdict(for_500 < TARGET_500_SEEDS_SECS)
            );
        }
    }
    ExitCode::SUCCESS
}
