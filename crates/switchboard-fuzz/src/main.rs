//! `switchboard-fuzz`: a fuzzing campaign against every decoder.
//!
//! ```text
//! cargo run --release -p switchboard-fuzz -- --inputs 2000000 [--seed N] [--target jsonrpc]...
//! ```
//! Exits 1 when anything was found, writing each failing input to
//! `--out` (default `target/fuzz-findings/`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use switchboard_fuzz::{Harness, Target};

#[derive(Debug, Parser)]
#[command(about = "Fuzz every switchboard decoder through the real server")]
struct Args {
    /// Inputs per target.
    #[arg(long, default_value_t = 100_000)]
    inputs: u64,
    /// Campaign seed (the same seed replays the same inputs).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Only these targets (jsonrpc, rest, grpc, progress, agui); default all.
    #[arg(long = "target")]
    targets: Vec<String>,
    /// Where failing inputs are written.
    #[arg(long, default_value = "target/fuzz-findings")]
    out: PathBuf,
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    let mut targets = Vec::new();
    for name in &args.targets {
        match Target::from_name(name) {
            Some(t) => targets.push(t),
            None => {
                eprintln!("unknown target {name:?}");
                return ExitCode::from(2);
            }
        }
    }
    if targets.is_empty() {
        targets = Target::ALL.to_vec();
    }
    // Panics are caught and reported as findings; keep their default
    // messages off the terminal.
    std::panic::set_hook(Box::new(|_| {}));
    let started = std::time::Instant::now();
    let harness = Harness::start().await;
    let report = switchboard_fuzz::run(&harness, &targets, args.inputs, args.seed, |t, n| {
        eprintln!("{t}: {n} inputs ({:.0?})", started.elapsed());
    })
    .await;
    for (target, n) in &report.inputs {
        println!("{target}: {n} inputs");
    }
    println!(
        "fuzz: {} inputs, {} findings, seed {}, {:.0?}",
        report.total(),
        report.findings,
        args.seed,
        started.elapsed()
    );
    if report.findings == 0 {
        return ExitCode::SUCCESS;
    }
    let _ = std::fs::create_dir_all(&args.out);
    for f in &report.failures {
        let path = args
            .out
            .join(format!("{}-{}-{}.bin", f.target, args.seed, f.index));
        let _ = std::fs::write(&path, &f.input);
        println!(
            "{} #{}: {:?} -> {}",
            f.target,
            f.index,
            f.finding,
            path.display()
        );
    }
    ExitCode::FAILURE
}
