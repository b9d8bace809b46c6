//! Fuzzing every switchboard decoder on stable Rust.
//!
//! [`targets`] names what is fuzzed (JSON-RPC 1.0 and 0.3, HTTP+JSON, gRPC
//! 1.0 and 0.3, task-progress payloads, AG-UI input) and the oracle (no
//! panic, no hang, no 5xx, no gRPC INTERNAL); [`mutate`] makes the inputs.
//! [`run`] drives them: `inputs` inputs per target, from seed `seed`, and
//! reports every finding with the index that reproduces it.
//!
//! The test suite runs a short campaign (`tests/short.rs`); a long one runs
//! on demand: `cargo run --release -p switchboard-fuzz -- --inputs 2000000`
//! (see `docs/security.md` for the recorded runs).

pub mod mutate;
pub mod targets;

pub use targets::{Finding, Harness, Target};

/// One reproducible failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The target.
    pub target: &'static str,
    /// The input's index in its target's sequence (with the campaign's seed).
    pub index: u64,
    /// What went wrong.
    pub finding: Finding,
    /// The input, for a regression test.
    pub input: Vec<u8>,
}

/// What a campaign did.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Inputs run, per target.
    pub inputs: Vec<(&'static str, u64)>,
    /// Findings in all (each is a failing input).
    pub findings: u64,
    /// The first 20 findings of each target.
    pub failures: Vec<Failure>,
}

impl Report {
    /// All inputs run.
    pub fn total(&self) -> u64 {
        self.inputs.iter().map(|(_, n)| n).sum()
    }
}

/// Largest input generated.
pub const MAX_INPUT: usize = 256 * 1024;

/// Runs `inputs` mutated inputs against each of `targets`, from `seed`.
/// `progress` is told after every 10,000 inputs.
pub async fn run(
    harness: &Harness,
    targets: &[Target],
    inputs: u64,
    seed: u64,
    mut progress: impl FnMut(&'static str, u64),
) -> Report {
    let mut report = Report::default();
    for (t, target) in targets.iter().enumerate() {
        let seeds = harness.seeds(*target);
        let mut rng = mutate::Rng::new(seed ^ ((t as u64 + 1) << 56));
        let mut kept = 0;
        let mut ran = 0;
        for index in 0..inputs {
            let base = rng.pick(&seeds).clone();
            let other = rng.pick(&seeds).clone();
            // Every seed as is first, then mutations.
            let input = match seeds.get(index as usize) {
                Some(seed) => seed.clone(),
                None => mutate::mutate(&mut rng, &base, &other, MAX_INPUT),
            };
            let outcome = harness.run(*target, &input).await;
            ran += 1;
            if ran % 10_000 == 0 {
                progress(target.name(), ran);
            }
            if let Err(finding) = outcome {
                report.findings += 1;
                if kept < 20 {
                    report.failures.push(Failure {
                        target: target.name(),
                        index,
                        finding,
                        input,
                    });
                    kept += 1;
                }
            }
        }
        report.inputs.push((target.name(), ran));
    }
    report
}
