//! One run on several threads (`run.threads`): the fabric split into partitions run side by
//! side gives the results of one thread, to the last bit.

use cellfabric_core::designs::build;

/// The scenario `json` with `run.threads` set to `threads`.
fn with_threads(json: &str, threads: &str) -> String {
    json.replacen(
        r#""run": {"#,
        &format!(r#""run": {{"threads": {threads}, "#),
        1,
    )
}

/// The summary and tables of `json` run on `threads` threads.
fn results(json: &str, threads: u32) -> String {
    let mut run = build(&with_threads(json, &threads.to_string())).expect("valid scenario");
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

/// A k = 4 fat-tree of iSLIP switches with credit flow control: credits cross between
/// partitions as signals, a cable's delay after they leave.
const FAT_TREE_CREDIT: &str = r#"{"design": "cell_fabric",
    "run": {"seed": 5, "duration_ns": 10240, "warmup_ns": 1024},
    "topology": {"kind": "fat_tree", "k": 4},
    "link": {"propagation_ns": 10, "flow_control": "credit"},
    "routing": {"mode": "spray"},
    "switch": {"scheduler": "islip", "buffer_cells": 16},
    "traffic": {"load": 0.9, "destinations": "uniform"}}"#;

#[test]
fn a_lossless_fat_tree_whose_credits_cross_partitions_gives_the_results_of_one() {
    let one = results(FAT_TREE_CREDIT, 1);
    assert!(one.contains("\"cells_dropped\":0"), "lossless");
    for threads in [2, 5] {
        assert_eq!(results(FAT_TREE_CREDIT, threads), one, "{threads} threads");
    }
}

/// The error `json` on `threads` threads is refused with.
fn refusal(json: &str, threads: &str) -> String {
    match build(&with_threads(json, threads)) {
        Ok(_) => panic!("{threads} threads accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_thread_count_that_cannot_run_is_refused_naming_run_threads() {
    for (threads, expected) in [
        ("0", "expected a count of threads, at least 1, or \"auto\""),
        ("\"many\"", "expected a count of threads"),
        ("21", "expected at most one thread per switch (20 switches)"),
    ] {
        let error = refusal(FAT_TREE_CREDIT, threads);
        assert!(
            error.contains("run.threads") && error.contains(expected),
            "{error}"
        );
    }
    let instant_credits = FAT_TREE_CREDIT.replace(r#""propagation_ns": 10, "#, "");
    let error = refusal(&instant_credits, "2");
    assert!(error.contains("too short to look ahead"), "{error}");
    let single = r#"{"run": {"duration_ns": 1000}, "switch": {"ports": 8}}"#;
    let error = refusal(single, "2");
    assert!(
        error.contains("design single_switch runs on one thread"),
        "{error}"
    );
    // "auto" asks for whatever helps: a design that runs on one thread takes one.
    let single = r#"{"run": {"duration_ns": 1000, "warmup_ns": 100}, "switch": {"ports": 8}}"#;
    assert!(build(&with_threads(single, "\"auto\"")).is_ok());
}

/// The summary and tables of `json` run with `run.threads = "auto"`.
fn results_on_auto(json: &str) -> String {
    let mut run = build(&with_threads(json, "\"auto\"")).expect("auto runs");
    run.advance(u64::MAX);
    let report = run.finish().expect("run keeps its invariants");
    format!("{}\n{}", report.summary, report.tables)
}

#[test]
fn auto_takes_one_thread_where_a_count_above_one_is_refused() {
    // Cables too short to look ahead: a count is refused, "auto" runs on one thread.
    let instant_credits = FAT_TREE_CREDIT.replace(r#""propagation_ns": 10, "#, "");
    assert_eq!(
        results_on_auto(&instant_credits),
        results(&instant_credits, 1)
    );
    // One switch: "auto" takes at most one thread per switch.
    let star = r#"{"design": "cell_fabric", "run": {"seed": 2, "duration_ns": 2048, "warmup_ns": 256},
        "topology": {"kind": "star"}, "switch": {"ports": 8}, "traffic": {"load": 0.5}}"#;
    let error = refusal(star, "2");
    assert!(
        error.contains("at most one thread per switch (1 switches)"),
        "{error}"
    );
    assert_eq!(results_on_auto(star), results(star, 1));
    // A fabric that splits: "auto" gives the results of one thread.
    assert_eq!(results_on_auto(DRAGONFLY_72), results(DRAGONFLY_72, 1));
}

/// The check that keeps partitions in step can fire: with windows four times the lookahead, a
/// partition receives cells it should already have run, and the run fails saying so instead
/// of reporting results that differ from one thread's.
#[test]
fn partitions_run_further_apart_than_the_lookahead_fail_the_run() {
    use cellfabric_core::blocks::fabric::parallel::Sharded;
    use cellfabric_core::designs::cell_fabric;
    use cellfabric_core::engine::kernel::Kernel;
    use cellfabric_core::run::{Design, RunError, Simulation};
    use cellfabric_core::Scenario;

    let scenario = Scenario::from_json(FAT_TREE_CREDIT).unwrap();
    let built: Vec<_> = (0..2)
        .map(|me| cell_fabric::build_partition(&scenario, 2, me).unwrap())
        .collect();
    let mut partition = built[0].1.clone();
    partition.lookahead_ps *= 4;
    let shards = built.into_iter().map(|(shard, _)| shard).collect();
    let sharded = Sharded::new(shards, partition);
    let end_ps = sharded.end_ps();
    let mut run: Box<dyn Simulation> = Box::new(Kernel::new(sharded, end_ps));
    run.advance(u64::MAX);
    match run.finish() {
        Err(RunError::Lookahead(why)) => assert!(why.contains("before its window's end"), "{why}"),
        other => panic!(
            "expected the partitions out of step, got {:?}",
            other.map(|r| r.summary)
        ),
    }
}

/// A run on several threads cut into steps of no wall time (as a front end stops a run to show
/// progress) goes on from where it stopped: the results of one uncut step.
#[test]
fn a_run_on_threads_stepped_by_wall_time_gives_the_results_of_one_step() {
    use std::time::Duration;
    let mut run = build(&with_threads(DRAGONFLY_72, "2")).expect("valid scenario");
    let mut steps = 1;
    while !run.advance_within(u64::MAX, Duration::ZERO) {
        steps += 1;
    }
    assert!(steps > 10, "{steps} steps");
    let report = run.finish().expect("run keeps its invariants");
    assert_eq!(
        format!("{}\n{}", report.summary, report.tables),
        results(DRAGONFLY_72, 1)
    );
}

/// A run on several threads reports how its partitions spent their wall time (the figures the
/// speed-up model starts from); a run on one thread reports none.
#[test]
fn a_run_on_threads_reports_its_windows_and_each_partitions_busy_time() {
    let finish = |threads: &str| {
        let mut run = build(&with_threads(DRAGONFLY_72, threads)).expect("valid scenario");
        run.advance(u64::MAX);
        run.finish().expect("run keeps its invariants").perf
    };
    assert!(finish("1").threads.is_none());
    let perf = finish("2").threads.expect("figures of the threads");
    assert_eq!(perf.partitions, 2);
    // The Dragonfly's local cables (20 ns) cross between partitions: windows of their delay
    // plus a cell's time over the 10 240 ns run, and a few more where the kernel's checks (64
    // backlog samples among them) end one early.
    let windows = (10_240.0 / perf.lookahead_ns).ceil() as u64;
    assert!(
        perf.windows >= windows && perf.windows <= windows + 80,
        "{perf:?}"
    );
    assert!(
        0.0 < perf.busy_s_mean && perf.busy_s_mean <= perf.busy_s_max,
        "{perf:?}"
    );
}

/// The runs of a k = 4 fat-tree by Ethernet (DCTCP) and by Stardust (whose cells cross with
/// the packets they carry).
fn ethernet_fat_tree() -> String {
    r#"{"design": "ethernet", "run": {"seed": 5, "duration_ns": 400000, "warmup_ns": 100000},
        "topology": {"kind": "fat_tree", "k": 4}, "link": {"propagation_ns": 500},
        "host": {"transport": "dctcp", "initial_ssthresh_packets": 15}}"#
        .to_string()
}

fn stardust_fat_tree() -> String {
    r#"{"design": "stardust", "run": {"seed": 5, "duration_ns": 100000, "warmup_ns": 20000},
        "topology": {"kind": "fat_tree", "k": 4}, "link": {"propagation_ns": 100}}"#
        .to_string()
}

/// The summary and tables of the partitions `build` makes, run side by side, with the
/// insertion order of each partition's same-instant events shuffled by a seed of its own where
/// `shuffle` is set.
fn on_threads<D>(
    parts: usize,
    shuffle: bool,
    build: impl Fn(u16) -> (D, cellfabric_core::blocks::fabric::partition::Partition),
) -> String
where
    D: cellfabric_core::blocks::fabric::FabricModel
        + cellfabric_core::run::Design
        + Send
        + Sync
        + 'static,
{
    use cellfabric_core::blocks::fabric::parallel::Sharded;
    use cellfabric_core::engine::kernel::Kernel;
    use cellfabric_core::engine::rng::{stream, ComponentId};
    use cellfabric_core::run::{Design, Simulation};

    let mut shards = Vec::new();
    let mut partition = None;
    for me in 0..parts as u16 {
        let (mut shard, part) = build(me);
        if shuffle {
            let rng = stream(40 + me as u64, ComponentId { kind: 99, index: 0 });
            shard.fabric_mut().queue().shuffle_insertion_order(rng);
        }
        shards.push(shard);
        partition = Some(part);
    }
    let sharded = Sharded::new(shards, partition.expect("at least one partition"));
    let end_ps = sharded.end_ps();
    let mut run: Box<dyn Simulation> = Box::new(Kernel::new(sharded, end_ps));
    run.advance(u64::MAX);
    let report = run.finish().expect("run keeps its invariants");
    format!("{}\n{}", report.summary, report.tables)
}

/// Same-instant events in any insertion order, on threads: with every partition's same-instant
/// pushes held back and inserted origin by origin in a random order of its own, a cell fabric,
/// an Ethernet fabric and a Stardust fabric (whose cells cross with their packets) on two and
/// three threads give the results of normal order, to the last bit (and those are one
/// thread's, by the tests above).
#[test]
fn same_instant_events_in_any_order_on_threads_give_the_same_results() {
    use cellfabric_core::designs::{cell_fabric, ethernet, stardust};
    use cellfabric_core::Scenario;

    let dragonfly = Scenario::from_json(DRAGONFLY_72).unwrap();
    let (ethernet_json, stardust_json) = (ethernet_fat_tree(), stardust_fat_tree());
    for parts in [2, 3] {
        let runs = |shuffle: bool| {
            [
                on_threads(parts, shuffle, |me| {
                    cell_fabric::build_partition(&dragonfly, parts, me).unwrap()
                }),
                on_threads(parts, shuffle, |me| {
                    ethernet::build_partition(&ethernet_json, parts, me).unwrap()
                }),
                on_threads(parts, shuffle, |me| {
                    stardust::build_partition(&stardust_json, parts, me).unwrap()
                }),
            ]
        };
        let (normal, shuffled) = (runs(false), runs(true));
        for (design, (a, b)) in ["cell_fabric", "ethernet", "stardust"]
            .iter()
            .zip(normal.iter().zip(&shuffled))
        {
            assert!(
                a.contains("cells_delivered") || a.contains("packets_delivered"),
                "{a}"
            );
            assert_eq!(a, b, "{design} on {parts} threads");
        }
    }
}
