//! The fabric of cell switches on multi-tier topologies (design `cell_fabric`): routing
//! mechanisms against the results they are known for, on small versions of the shipped
//! fat-tree and Dragonfly scenarios.

use cellfabric_core::designs::cell_fabric;
use cellfabric_core::{RunError, Scenario, Summary};

fn run(json: &str) -> Summary {
    let scenario = Scenario::from_json(json).expect("valid scenario");
    let (summary, _) = cell_fabric::build(&scenario)
        .expect("buildable fabric")
        .run()
        .expect("run keeps its invariants");
    summary
}

/// A fabric of output-queued switches with 64-cell output queues that drop when full.
fn fabric(topology: &str, mode: &str, destinations: &str, load: f64, cells: u64) -> String {
    format!(
        r#"{{"design": "cell_fabric",
            "run": {{"seed": 3, "duration_ns": {duration_ns}, "warmup_ns": {warmup_ns}}},
            "topology": {topology},
            "routing": {{"mode": "{mode}"}},
            "switch": {{"scheduler": "output_queued", "buffer_cells": 64}},
            "traffic": {{"load": {load}, "destinations": "{destinations}"}}}}"#,
        duration_ns = cells as f64 * CELL_NS,
        warmup_ns = (cells / 5) as f64 * CELL_NS,
    )
}

/// One cell time of 64 bytes at 100 Gbit/s.
const CELL_NS: f64 = 5.12;

const FAT_TREE_8: &str = r#"{"kind": "fat_tree", "k": 8}"#;
const DRAGONFLY_72: &str = r#"{"kind": "dragonfly", "hosts_per_router": 2, "routers_per_group": 4,
    "global_links_per_router": 2, "groups": 9}"#;

/// Balls into bins: under a permutation, flows hashed onto the 4 uplinks of each edge and
/// aggregation switch of a k = 8 fat-tree collide, and the proportional-sharing fluid model
/// (docs/validation/fabric_theory.py --k 8) puts ECMP near 0.47 of line rate; spraying every cell
/// over the uplinks carries the permutation at line rate.
#[test]
fn ecmp_permutation_collides_where_spraying_carries_line_rate() {
    let ecmp = run(&fabric(FAT_TREE_8, "ecmp", "permutation", 1.0, 6_000));
    let spray = run(&fabric(FAT_TREE_8, "spray", "permutation", 1.0, 6_000));
    assert!(
        (0.35..0.6).contains(&ecmp.rates.throughput),
        "ECMP {}",
        ecmp.rates.throughput
    );
    assert!(ecmp.cells.cells_dropped > 0, "collisions overflow queues");
    assert!(
        spray.rates.throughput > 0.95,
        "spray {}",
        spray.rates.throughput
    );
    assert!(
        spray.hosts.cells_out_of_order > Some(0),
        "sprayed cells reorder"
    );
    assert_eq!(
        ecmp.hosts.cells_out_of_order,
        Some(0),
        "a flow keeps one path"
    );
}

/// Kim et al. 2008: under the group shift, minimal routing funnels each group's a·p = 8 hosts
/// through the one global link to the next group (1/8 of line rate each, less the cells lost to
/// the landing router's congested local link); Valiant, whose bound here is
/// (g − 2)/(2·a·p) = 7/16 of line rate, carries 0.35 of line rate, nearly three times as much.
/// UGAL-L sees only its own queues: without back-pressure it cannot see the global link two
/// hops away overflow, so it detours less than Valiant but still well above minimal.
#[test]
fn dragonfly_group_shift_caps_minimal_routing_and_valiant_spreads_it() {
    let minimal = run(&fabric(
        DRAGONFLY_72,
        "deterministic",
        "group_shift",
        1.0,
        6_000,
    ));
    let valiant = run(&fabric(DRAGONFLY_72, "valiant", "group_shift", 0.35, 6_000));
    let ugal = run(&fabric(DRAGONFLY_72, "ugal", "group_shift", 0.35, 6_000));
    let bound = 1.0 / 8.0;
    assert!(
        minimal.rates.throughput <= bound,
        "minimal {}",
        minimal.rates.throughput
    );
    assert!(
        minimal.rates.throughput > 0.75 * bound,
        "minimal {}",
        minimal.rates.throughput
    );
    assert!(
        valiant.rates.throughput > 0.34,
        "valiant {}",
        valiant.rates.throughput
    );
    assert!(valiant.cells.cells_dropped < valiant.cells.cells_injected / 100);
    assert!(
        ugal.rates.throughput > 1.5 * bound,
        "ugal {}",
        ugal.rates.throughput
    );
}

/// Under light uniform traffic every mechanism delivers what is offered, without loss.
#[test]
fn light_uniform_traffic_is_delivered_by_every_mode() {
    for mode in [
        "deterministic",
        "ecmp",
        "spray",
        "random",
        "least_loaded",
        "valiant",
        "ugal",
    ] {
        let s = run(&fabric(DRAGONFLY_72, mode, "uniform", 0.2, 4_000));
        assert_eq!(s.cells.cells_dropped, 0, "{mode}");
        assert!(
            (s.rates.throughput - s.rates.offered_load).abs() < 0.01,
            "{mode}"
        );
        assert_eq!(s.routing.as_deref(), Some(mode));
    }
}

#[test]
fn same_seed_gives_the_same_adaptive_run() {
    let json = fabric(DRAGONFLY_72, "ugal", "uniform", 0.7, 3_000);
    let a = run(&json);
    assert_eq!(format!("{a:?}"), format!("{:?}", run(&json)));
    let c = run(&json.replace(r#""seed": 3"#, r#""seed": 4"#));
    assert_ne!(a.cells.cells_delivered, c.cells.cells_delivered);
}

/// Credit flow control makes a fabric lossless, but a Dragonfly's routes form cycles of buffer
/// dependencies (there are no virtual channels to break them): under the group shift every
/// buffer on a cycle fills and nothing moves again. The kernel must stop such a run with a
/// deadlock report naming a cycle, not let the switches tick forever.
#[test]
fn a_credit_deadlock_on_a_dragonfly_stops_the_run_and_names_a_cycle() {
    let json = fabric(DRAGONFLY_72, "deterministic", "group_shift", 1.0, 20_000).replace(
        r#""switch": {"scheduler": "output_queued", "buffer_cells": 64}"#,
        r#""switch": {"scheduler": "islip", "buffer_cells": 8},
           "link": {"flow_control": "credit"}"#,
    );
    let scenario = Scenario::from_json(&json).expect("valid scenario");
    let error = cell_fabric::build(&scenario).unwrap().run().unwrap_err();
    let RunError::Deadlock(report) = error else {
        panic!("expected a deadlock, got {error:?}");
    };
    assert!(report.contains("nothing moved"), "{report}");
    assert!(report.contains("cycle of full buffers: switch"), "{report}");
    // The same fabric under uniform traffic at a load its links carry keeps moving.
    let uniform = json
        .replace("group_shift", "uniform")
        .replace(r#""load": 1"#, r#""load": 0.3"#);
    let (s, _) = cell_fabric::build(&Scenario::from_json(&uniform).unwrap())
        .unwrap()
        .run()
        .expect("no deadlock at light uniform load");
    assert_eq!(s.cells.cells_dropped, 0);
}

/// The event order is (time, phase, origin, the origin's own sequence), never the order of
/// insertion: with every same-instant push held back and inserted origin by origin in a random
/// order, a multi-hop adaptive fabric, a single switch and Clint's quick channel give the same
/// summaries, to the last bit, as in normal order.
#[test]
fn results_do_not_depend_on_the_insertion_order_of_same_instant_events() {
    use cellfabric_core::designs::{clint, single_switch};
    use cellfabric_core::engine::kernel::Kernel;
    use cellfabric_core::engine::rng::{stream, ComponentId};
    use cellfabric_core::run::{Design, Simulation};

    use cellfabric_core::blocks::fabric::{Event, FabricModel};
    use cellfabric_core::engine::kernel::Events;
    use cellfabric_core::engine::queue::CalendarQueue;

    fn fabric_queue<D: FabricModel>(design: &mut D) -> &mut CalendarQueue<Event> {
        design.fabric_mut().queue()
    }

    /// The summary of `design`'s run, with the insertion order of its events (the queue
    /// `queue` finds) shuffled by `shuffle`'s seed.
    fn summary<D: Design + Send + Sync + 'static, E: Copy>(
        mut design: D,
        shuffle: Option<u64>,
        queue: fn(&mut D) -> &mut CalendarQueue<E>,
    ) -> String {
        if let Some(seed) = shuffle {
            let rng = stream(seed, ComponentId { kind: 99, index: 0 });
            queue(&mut design).shuffle_insertion_order(rng);
        }
        let end_ps = design.end_ps();
        let mut run: Box<dyn Simulation> = Box::new(Kernel::new(design, end_ps));
        run.advance(u64::MAX);
        run.finish()
            .expect("run keeps its invariants")
            .summary
            .to_string()
    }
    let ugal = Scenario::from_json(&fabric(DRAGONFLY_72, "ugal", "uniform", 0.8, 2_000)).unwrap();
    let islip = Scenario::from_json(
        r#"{"run": {"duration_ns": 15360, "warmup_ns": 1536},
            "switch": {"ports": 16, "scheduler": "islip"}, "traffic": {"load": 0.9}}"#,
    )
    .unwrap();
    let quick = r#"{"design": "clint", "nodes": 16, "run": {"seed": 2, "duration_ns": 200000, "warmup_ns": 20000},
        "channel": {"architecture": "Q2"}, "traffic": {"load": 0.3, "bursty": true}}"#;
    for shuffle in [11, 12] {
        assert_eq!(
            summary(cell_fabric::build(&ugal).unwrap(), None, fabric_queue),
            summary(
                cell_fabric::build(&ugal).unwrap(),
                Some(shuffle),
                fabric_queue
            )
        );
        assert_eq!(
            summary(single_switch::build(&islip).unwrap(), None, fabric_queue),
            summary(
                single_switch::build(&islip).unwrap(),
                Some(shuffle),
                fabric_queue
            )
        );
        assert_eq!(
            summary(clint::build(quick).unwrap(), None, Events::queue),
            summary(clint::build(quick).unwrap(), Some(shuffle), Events::queue)
        );
    }
}

/// Cables between groups can be longer than the rest (a Dragonfly's global links): under
/// minimal routing every cell between groups crosses exactly one global link, so at light load
/// the mean latency grows by the extra delay times the share of cells that leave their group
/// (64 of 72 destinations under uniform traffic).
#[test]
fn longer_global_cables_add_their_delay_to_every_cell_that_crosses_one() {
    let base = fabric(DRAGONFLY_72, "deterministic", "uniform", 0.1, 4_000);
    let longer = base.replace(
        r#""groups": 9}"#,
        r#""groups": 9, "global_propagation_ns": 500}"#,
    );
    assert_ne!(base, longer);
    let (short, long) = (run(&base), run(&longer));
    let extra_ns = long.latency.latency_ns.mean - short.latency.latency_ns.mean;
    let expected_ns = 500.0 * 64.0 / 72.0;
    assert!(
        (extra_ns - expected_ns).abs() < 0.03 * expected_ns,
        "{extra_ns} ns more, expected {expected_ns}"
    );
    assert!(long.latency.latency_ns.max >= 500.0);
}

/// A leaf-spine written as a topology file: 4 leaves of 4 hosts and 2 uplinks, 2 spines;
/// `uplink` is appended to every leaf-spine cable line.
fn leaf_spine_file(uplink: &str) -> String {
    let mut text = String::new();
    for leaf in 0..4 {
        text += &format!("switch leaf{leaf} ports=6 group={leaf}\n");
    }
    text += "switch spine0 ports=4 group=4\nswitch spine1 ports=4 group=4\n";
    for host in 0..16 {
        text += &format!(
            "host h{host}\ncable h{host} leaf{}:{}\n",
            host / 4,
            host % 4
        );
    }
    for leaf in 0..4 {
        for spine in 0..2 {
            text += &format!(
                "cable leaf{leaf}:{} spine{spine}:{leaf} {uplink}\n",
                4 + spine
            );
        }
    }
    text
}

/// A scenario over `file_text` (written to a file of its own), with `extra` JSON sections.
fn file_scenario(name: &str, file_text: &str, extra: &str) -> Scenario {
    let path = std::env::temp_dir().join(format!(
        "cellfabric-test-{name}-{}.topo",
        std::process::id()
    ));
    std::fs::write(&path, file_text).unwrap();
    let json = format!(
        r#"{{"design": "cell_fabric",
            "run": {{"seed": 5, "duration_ns": {duration_ns}, "warmup_ns": {warmup_ns}}},
            "topology": {{"kind": "file", "file": {path:?}}},
            "routing": {{"mode": "spray"}},
            "traffic": {{"load": 1.0, "destinations": "uniform"}}
            {extra}}}"#,
        duration_ns = 8_000.0 * CELL_NS,
        warmup_ns = 1_600.0 * CELL_NS,
    );
    Scenario::from_json(&json).expect("valid scenario")
}

fn run_scenario(scenario: &Scenario) -> Summary {
    let (summary, _) = cell_fabric::build(scenario).unwrap().run().unwrap();
    summary
}

/// A cable's own rate is the rate its cells cross it at: with the uplinks at half the line rate
/// a host of the 2:1 oversubscribed leaf-spine gets 1/4 (local) + 2/4 · 1/2 (its share of the
/// uplinks) = 1/2 of line rate at full load, against 1/4 + 2/4 = 3/4 at full rate.
#[test]
fn a_slower_cable_carries_cells_at_its_own_rate() {
    let buffers = r#", "switch": {"scheduler": "output_queued", "buffer_cells": 64}"#;
    let full = run_scenario(&file_scenario("full", &leaf_spine_file(""), buffers));
    let half = run_scenario(&file_scenario(
        "half",
        &leaf_spine_file("rate_gbps=50"),
        buffers,
    ));
    assert!(
        (0.72..0.76).contains(&full.rates.throughput),
        "full rate {}",
        full.rates.throughput
    );
    assert!(
        (0.47..0.51).contains(&half.rates.throughput),
        "half rate {}",
        half.rates.throughput
    );
}

/// Per-cell overhead (FEC, framing) lengthens the cell time: 64 + 16 bytes at 100 Gbit/s.
#[test]
fn overhead_bytes_lengthen_the_cell_time() {
    let extra = r#", "link": {"overhead_bytes": 16}"#;
    let summary = run_scenario(&file_scenario("overhead", &leaf_spine_file(""), extra));
    assert_eq!(summary.run.cell_time_ps, 6_400);
}

/// A cable's own flow control: credits on the uplinks and the host links make a network whose
/// default is none lossless; one cable left without makes it lossy again.
#[test]
fn each_cable_may_name_its_own_flow_control() {
    let buffers = r#", "switch": {"scheduler": "islip", "buffer_cells": 8}"#;
    let mut credited = leaf_spine_file("flow_control=credit");
    credited = credited.replace("leaf0:0\n", "leaf0:0 flow_control=credit\n");
    for host in 1..16 {
        credited = credited.replace(
            &format!("cable h{host} leaf{}:{}\n", host / 4, host % 4),
            &format!(
                "cable h{host} leaf{}:{} flow_control=credit\n",
                host / 4,
                host % 4
            ),
        );
    }
    let lossless = file_scenario("credited", &credited, buffers);
    assert!(lossless.is_lossless());
    let summary = run_scenario(&lossless);
    assert_eq!(summary.cells.cells_dropped, 0);
    assert!(
        summary.rates.throughput > 0.4,
        "credits hold cells back but keep them moving (0.48 at seed 5): {}",
        summary.rates.throughput
    );
    let one_plain = credited.replacen(
        "cable h0 leaf0:0 flow_control=credit",
        "cable h0 leaf0:0",
        1,
    );
    assert!(!file_scenario("one-plain", &one_plain, buffers).is_lossless());
    let plain = run_scenario(&file_scenario("plain", &leaf_spine_file(""), buffers));
    assert!(
        plain.cells.cells_dropped > 0,
        "without flow control 8-cell buffers overflow"
    );
}

/// Flow-control headroom counts a cable's own rate: a host on a 400 Gbit/s cable puts four times
/// as many cells in flight during a round trip as one at the scenario's 100 Gbit/s.
#[test]
fn a_faster_cable_needs_more_headroom() {
    let link = r#", "link": {"propagation_ns": 51.2}"#;
    let plain = file_scenario("rtt-plain", &leaf_spine_file(""), link);
    assert_eq!(plain.round_trip_cells(), 2 * 10 + 2);
    let fast =
        leaf_spine_file("").replace("cable h0 leaf0:0\n", "cable h0 leaf0:0 rate_gbps=400\n");
    let fast = file_scenario("rtt-fast", &fast, link);
    assert_eq!(fast.round_trip_cells(), 2 * 40 + 2);
}
