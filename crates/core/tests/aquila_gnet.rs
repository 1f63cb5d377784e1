//! IP over GNet in Aquila's Clique (Gibson et al., "Aquila: A unified, low-latency fabric for
//! datacenter networks", NSDI '22, §3.3, Fig. 3): hosts send 4 KB packets by RTS/CTS over VC
//! routers whose flits are 16 bytes, RTS, CTS and CTD on their own high-priority VC class.

use cellfabric_core::designs::cell_fabric;
use cellfabric_core::{Scenario, Summary};

/// Six pods of four TiNs with two hosts each (48 hosts), two local links per TiN pair, two
/// links per pod pair, hosts at 50 Gb/s and GNet links at 25 Gb/s; iSLIP VC routers with
/// 16-byte flits, 3 routing VCs per class and 2 classes; `gnet` the section's extra keys.
fn clique(mode: &str, destinations: &str, load: f64, gnet: &str) -> String {
    format!(
        r#"{{"design": "cell_fabric",
            "run": {{"seed": 5, "duration_ns": 30000, "warmup_ns": 10000}},
            "topology": {{"kind": "clique", "global_propagation_ns": 250,
                "clique": {{"pods": 6, "tins_per_pod": 4, "local_ports": 6, "global_ports": 3}}}},
            "routing": {{"mode": "{mode}"}},
            "switch": {{"scheduler": "vc_islip", "pipeline_ns": 40}},
            "vc": {{"count": 6, "classes": 2, "assignment": "global_local_increment", "buffer_cells": 160}},
            "link": {{"rate_gbps": 50, "propagation_ns": 2, "flow_control": "credit"}},
            "cell": {{"size_bytes": 16, "payload_bytes": 8}},
            "traffic": {{"load": {load}, "destinations": "{destinations}"}},
            "gnet": {{"packet_bytes": 4096 {gnet}}}}}"#
    )
}

fn build(json: &str) -> Result<cell_fabric::CellFabric, String> {
    let scenario = Scenario::from_json(json).map_err(|e| format!("{}: {}", e.key, e.message))?;
    cell_fabric::build(&scenario).map_err(|e| format!("{}: {}", e.key, e.message))
}

fn run(json: &str) -> Summary {
    let (summary, _) = build(json)
        .expect("buildable Clique")
        .run()
        .expect("no deadlock, every cell accounted for");
    summary
}

#[test]
fn smoke() {
    let s = run(&clique("aquila_fully_adaptive", "uniform", 0.7, ""));
    println!("{}", serde_json::to_string_pretty(&s).unwrap());
}
