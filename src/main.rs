//! The `agentcard` binary: `serve`, `migrate` and `admin …`. Everything else is the library.

use agentcard::config::Config;
use agentcard::{abc_txt, admin, edge, startup};
use clap::{Parser, Subcommand};
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use std::io::Write;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "agentcard",
    version,
    about = "Cards for AI agents reading publishers' pages"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the management API, the fragment endpoint and the other routes.
    Serve {
        /// Address to listen on (overrides AGENTCARD_LISTEN).
        #[arg(long)]
        listen: Option<std::net::SocketAddr>,
    },
    /// Apply the migrations of sql/ (serve applies them too).
    Migrate,
    /// Console-only actions, from a shell. Each prints one JSON object (`report` and `demo`
    /// also text: a table or CSV, lines to paste).
    Admin {
        #[command(subcommand)]
        command: admin::AdminCommand,
    },
    /// The reference edge: a reverse proxy in front of a publisher's origin that places cards
    /// for AI agents (the delivery key comes from AGENTCARD_EDGE_KEY only).
    Edge(edge::EdgeArgs),
    /// Print the management API's OpenAPI description, this build's `openapi.json`.
    Openapi,
    /// abc.txt files (edge client rule 7).
    AbcTxt {
        #[command(subcommand)]
        command: AbcTxtCommand,
    },
    /// Bench only (scripts/bench-fleet-pg.sh): records RATE requests a second of the load
    /// benchmark's mix for SECONDS through the report's counters and flusher, then prints how
    /// many.
    #[cfg(feature = "bench-fleet")]
    #[command(hide = true)]
    BenchFlush {
        #[arg(long)]
        rate: u64,
        #[arg(long)]
        seconds: u64,
    },
}

#[derive(Subcommand)]
enum AbcTxtCommand {
    /// Reads FILE as the service reads abc.txt: prints its records, one JSON object, or each
    /// refused line with its number on stderr and a failing exit.
    Check { file: std::path::PathBuf },
}

/// Our own events at `info`; dependencies only at `warn`, since `may` logs every connection
/// at `info`. `RUST_LOG` replaces the whole filter.
const DEFAULT_LOG_FILTER: &str = "warn,agentcard=info";

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(DEFAULT_LOG_FILTER))
        .init();
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("agentcard: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(command: Command) -> Result<(), String> {
    match command {
        Command::Serve { listen } => {
            let mut config = Config::from_env().map_err(|e| e.to_string())?;
            if let Some(listen) = listen {
                config.listen = listen;
            }
            // Registered before the service starts: a signal during the start is kept for below.
            let mut signals = Signals::new([SIGTERM, SIGINT]).map_err(|e| e.to_string())?;
            let running = agentcard::start(config).map_err(|e| e.to_string())?;
            log::info!("listening on {}", running.server.local_addr());
            if let Some(signal) = signals.forever().next() {
                let drain = running.app.config.drain;
                log::info!("signal {signal}: shutting down after a drain of {drain:?}");
            }
            running.shut_down();
            log::info!("stopped");
            Ok(())
        }
        Command::Edge(args) => {
            let key = std::env::var(edge::KEY_VAR).ok();
            let config = edge::EdgeConfig::from_args(args, key).map_err(|e| e.to_string())?;
            let mut signals = Signals::new([SIGTERM, SIGINT]).map_err(|e| e.to_string())?;
            let running = edge::start(config)?;
            log::info!("edge listening on {}", running.local_addr());
            if let Some(signal) = signals.forever().next() {
                log::info!("signal {signal}: stopping");
            }
            Ok(())
        }
        Command::Migrate => {
            let config = Config::from_env().map_err(|e| e.to_string())?;
            let applied = startup::migrate(&config.database_url).map_err(|e| e.to_string())?;
            print(&format!("{}\n", serde_json::json!({ "applied": applied })))
        }
        Command::Openapi => print(&agentcard::openapi_description()?),
        Command::AbcTxt {
            command: AbcTxtCommand::Check { file },
        } => {
            let bytes = std::fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))?;
            match abc_txt::parse(&bytes) {
                Ok(records) => {
                    let lines: Vec<String> = records.iter().map(ToString::to_string).collect();
                    print(&format!("{}\n", serde_json::json!({ "records": lines })))
                }
                Err(errors) => Err(errors
                    .iter()
                    .map(|error| format!("{}: {error}", file.display()))
                    .collect::<Vec<_>>()
                    .join("\nagentcard: ")),
            }
        }
        #[cfg(feature = "bench-fleet")]
        Command::BenchFlush { rate, seconds } => {
            let config = Config::from_env().map_err(|e| e.to_string())?;
            let settings = agentcard::counting::ReportSettings::from(&config);
            let duration = std::time::Duration::from_secs(seconds);
            let recorded = agentcard::counting::synthetic::run(settings, rate, duration)?;
            print(&format!(
                "{}\n",
                serde_json::json!({ "recorded": recorded })
            ))
        }
        Command::Admin { command } => {
            let config = Config::from_env().map_err(|e| e.to_string())?;
            let url = admin::database_url(&command, &config);
            let mut db = startup::connect(url).map_err(|e| e.to_string())?;
            let output =
                admin::run(command, &config, &mut db).map_err(|e| admin::error_line(&e))?;
            print(&output.to_string())
        }
    }
}

/// Writes to standard output. A reader that has gone (`agentcard admin report | head`) ends
/// the command quietly, as it ends any command-line tool's output.
fn print(text: &str) -> Result<(), String> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => Err(error.to_string()),
        _ => Ok(()),
    }
}
