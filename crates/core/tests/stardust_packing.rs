//! Stardust's packing and what cells and packets cost (Zilberman, Bracha and Schzukin, NSDI '19,
//! §2.3, §3.4, App. B): packed against unpacked cells, an element's pipeline slot per cell, and
//! the gap and preamble every packet pays on an Ethernet host link.

#[allow(dead_code)] // this file reads no table columns
mod columns;

use columns::{f, run};

/// Four adapters of one host each on a one-tier fabric of `uplinks` elements (10G links, 256-byte
/// cells with 16-byte headers), every host sending `packet_bytes` packets at line rate to the
/// next, with `extra` JSON members.
fn ring(packet_bytes: u32, uplinks: u32, extra: &str) -> String {
    format!(
        r#"{{"design": "stardust", "run": {{"seed": 3, "duration_ns": 400000, "warmup_ns": 100000}},
            "topology": {{"kind": "clos", "tiers": 1, "radix": 4, "hosts_per_edge": 1,
                          "uplinks_per_edge": {uplinks}}},
            "link": {{"rate_gbps": 10, "propagation_ns": 100}},
            "traffic": {{"pattern": "permutation", "packet_bytes": {packet_bytes}}} {extra}}}"#
    )
}

/// §3.4: "sending packets that are just one byte bigger than a cell size can lead to 50% waste".
/// Packed, a credit's 241-byte packets fill their cells but the burst's last; unpacked, each
/// takes two cells, one of them carrying a single byte, so the cells carry 241 of 480 payload
/// bytes, and the padded cells cost the fabric twice the packed bandwidth: with a fabric
/// speed-up of 2 the unpacked hosts lose throughput the packed ones keep. Nothing is lost
/// either way. (Credits are spent at once, so packets wait for them and a credit packs what
/// came meanwhile; a kept balance sends a packet that finds it positive alone, in its own
/// cell.)
#[test]
fn unpacked_cells_waste_half_a_cell_on_a_packet_one_byte_over() {
    let spent = r#", "credit": {"unused": "forfeited"}"#;
    let packed = run(&ring(241, 2, spent));
    let unpacked = run(&ring(
        241,
        2,
        &format!(r#"{spent}, "stardust": {{"packing": false}}"#),
    ));
    assert!(f(&packed, "data_cell_fill") > 0.85, "packed cells are full");
    let fill = f(&unpacked, "data_cell_fill");
    assert!((fill - 241.0 / 480.0).abs() < 1e-12, "unpacked fill {fill}");
    let (g_packed, g_unpacked) = (f(&packed, "goodput"), f(&unpacked, "goodput"));
    assert!(g_packed > 0.95, "packed goodput {g_packed}");
    assert!(
        g_unpacked < 0.96 * g_packed,
        "unpacked {g_unpacked} against packed {g_packed}"
    );
    for report in [&packed, &unpacked] {
        assert_eq!(f(report, "cells_dropped"), 0.0);
        assert_eq!(f(report, "packets_dropped_fabric"), 0.0);
    }
}

/// App. B: a pipeline takes one unit per slot, so cells per second bound an element beside bits
/// per second. A slot of two cell times halves what a fabric of one uplink per adapter carries;
/// a slot of exactly one full cell's time costs full cells nothing (the same run, bit for bit).
#[test]
fn an_elements_cell_slot_bounds_its_cells_per_second() {
    let plain = run(&ring(240, 1, ""));
    let cell_ns = 256.0 * 8.0 / 10.0;
    let one_cell = run(&ring(
        240,
        1,
        &format!(r#", "element": {{"cell_slot_ns": {cell_ns}}}"#),
    ));
    assert_eq!(
        plain.summary, one_cell.summary,
        "full cells already take a cell time"
    );
    // Without the FCI reaction, which would also throttle this over-subscribed fabric (to
    // about 0.31 of the host port), so that the slot's bound shows alone.
    let two_cells = run(&ring(
        240,
        1,
        &format!(
            r#", "element": {{"cell_slot_ns": {}}}, "adapter": {{"fci_decrease": 0}}"#,
            2.0 * cell_ns
        ),
    ));
    let (g_plain, g_slow) = (f(&plain, "goodput"), f(&two_cells, "goodput"));
    assert!(g_plain > 0.85, "plain {g_plain}");
    // One 240-byte payload per 409.6 ns: 4.69 Gbit/s of a 10G host port.
    assert!((0.44..0.48).contains(&g_slow), "two-cell slot {g_slow}");
    assert_eq!(
        f(&two_cells, "cells_dropped"),
        0.0,
        "the fabric pauses, loses nothing"
    );
}

/// App. B's G: on an Ethernet host link every packet also pays 20 bytes of gap and preamble, so
/// 64-byte packets at line rate carry 64 / 84 of it; 1500-byte packets nearly all of it.
#[test]
fn a_host_links_gap_costs_small_packets_most() {
    let gap = r#", "adapter": {"host_gap_bytes": 20}"#;
    for (packet_bytes, expected) in [(64u32, 64.0 / 84.0), (1500, 1500.0 / 1520.0)] {
        let report = run(&ring(packet_bytes, 2, gap));
        let goodput = f(&report, "goodput");
        assert!(
            (goodput - expected).abs() < 0.01,
            "{packet_bytes} B: {goodput} against {expected}"
        );
    }
    let without = f(&run(&ring(64, 2, "")), "goodput");
    assert!(without > 0.97, "no gap: {without}");
}

/// Bad values name their key.
#[test]
fn bad_packing_keys_are_refused_by_name() {
    let refused = |json: &str| match cellfabric_core::build(json) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("accepted {json}"),
    };
    let slot = refused(&ring(240, 1, r#", "element": {"cell_slot_ns": -1}"#));
    assert!(slot.contains("element.cell_slot_ns"), "{slot}");
    let gap = refused(&ring(240, 1, r#", "adapter": {"host_gap_bytes": 20000}"#));
    assert!(gap.contains("adapter.host_gap_bytes"), "{gap}");
    let transport = refused(
        r#"{"design": "stardust", "adapter": {"host_gap_bytes": 20}, "host": {"transport": "tcp"}}"#,
    );
    assert!(
        transport.contains("adapter.host_gap_bytes") && transport.contains("host.transport"),
        "{transport}"
    );
    let packing = refused(&ring(240, 1, r#", "stardust": {"packing": 1}"#));
    assert!(packing.contains("packing"), "{packing}");
}
