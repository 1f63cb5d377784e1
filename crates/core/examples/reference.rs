//! The performance reference run, without Python: `cargo run --release --example reference [SCENARIO.json]`.
//! Prints the summary JSON, with the wall-clock figures under `perf`. The default scenario matches `scenarios/bench/islip-reference.toml`;
//! any design's scenario, as JSON, may be given instead.

use std::io::Write;

const REFERENCE: &str = r#"{
    "run": {"seed": 1, "duration_ns": 51200000, "warmup_ns": 512000},
    "switch": {"ports": 32, "scheduler": "islip", "iterations": 1},
    "link": {"rate_gbps": 100.0}, "cell": {"size_bytes": 64},
    "traffic": {"load": 0.9, "arrival": "bernoulli", "destinations": "uniform"}
}"#;

fn main() {
    let json = match std::env::args().nth(1) {
        Some(path) => std::fs::read_to_string(path).expect("readable scenario JSON"),
        None => REFERENCE.to_string(),
    };
    let mut sim = cellfabric_core::build(&json).unwrap_or_else(|e| panic!("bad scenario: {e}"));
    sim.advance(u64::MAX);
    let report = sim.finish().unwrap_or_else(|e| panic!("run failed: {e}"));
    let mut printed = report.summary;
    printed["perf"] = serde_json::to_value(&report.perf).expect("perf serializes");
    let text = serde_json::to_string_pretty(&printed).expect("summary serializes");
    // A reader that stops early (`| head`) closes the pipe: that ends the output, not a panic.
    let _ = writeln!(std::io::stdout(), "{text}");
}
