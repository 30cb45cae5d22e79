//! The `controllers` binary: one subcommand per controller, plus the in-pod executor and the
//! CRD printer. Each arm only dispatches; the work lives in the library.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use controllers::operator::logging::{self, LogFormat};

/// Typed objects decoded from every watch event and response make many small allocations;
/// mimalloc serves them faster than the system allocator (as in the `fake-apiserver` binary).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: fake_apiserver::allocator::MiMalloc = fake_apiserver::allocator::MiMalloc;

#[derive(Debug, Parser)]
#[command(
    name = "controllers",
    version,
    about = "Rust ports of Eno's and Karpenter's controllers"
)]
struct Cli {
    /// Log line format.
    #[arg(long, value_enum, env = "LOG_FORMAT", default_value_t = LogFormat::Text, global = true)]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Eno's synthesis pod lifecycle controller and its status controller.
    Eno(controllers::eno::cli::EnoArgs),
    /// The synthesis executor, run inside a synthesizer pod.
    Synthesize(controllers::eno::cli::SynthesizeArgs),
    /// Karpenter's NodeClaim lifecycle and termination controllers.
    Karpenter(controllers::karpenter::cli::KarpenterArgs),
    /// Print every CRD as YAML.
    Crds,
    /// Run both controllers against the embedded, in-process fake API server.
    Demo(controllers::demo::DemoArgs),
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    logging::init(cli.log_format);
    let result = match cli.command {
        Command::Eno(args) => controllers::eno::cli::run_eno(args).await,
        Command::Synthesize(args) => controllers::eno::cli::run_synthesize(args).await,
        Command::Karpenter(args) => controllers::karpenter::cli::run(args).await,
        Command::Demo(args) => controllers::demo::run(args).await,
        Command::Crds => controllers::crds::to_yaml(&controllers::crds::all())
            .map(|yaml| print!("{yaml}"))
            .map_err(Into::into),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %format!("{e:#}"), "exiting");
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
