//! One run on several threads (`run.threads`): the fabric split into partitions run side by
//! side gives the results of one thread, to the last bit.

use cellfabric_core::designs::build;

/// The summary and tables of `json` run on `threads` threads.
fn results(json: &str, threads: u32) -> String {
    let with_threads = json.replacen(
        r#""run": {"#,
        &format!(r#""run": {{"threads": {threads}, "#),
        1,
    );
    let mut run = build(&with_threads).expect("valid scenario");
    run.advance(u64::MAX);
    let report = run.finish().expect("run keeps its invariants");
    format!("{}\n{}", report.summary, report.tables)
}

const DRAGONFLY_72: &str = r#"{"design": "cell_fabric",
    "run": {"seed": 3, "duration_ns": 10240, "warmup_ns": 2048},
    "topology": {"kind": "dragonfly", "hosts_per_router": 2, "routers_per_group": 4,
                 "global_links_per_router": 2, "groups": 9, "global_propagation_ns": 50},
    "link": {"propagation_ns": 20},
    "routing": {"mode": "ugal"},
    "switch": {"scheduler": "output_queued", "buffer_cells": 64},
    "traffic": {"load": 0.8, "destinations": "uniform"}}"#;

#[test]
fn a_dragonfly_on_two_three_and_eight_threads_gives_the_results_of_one() {
    let one = results(DRAGONFLY_72, 1);
    for threads in [2, 3, 8] {
        assert_eq!(results(DRAGONFLY_72, threads), one, "{threads} threads");
    }
}
