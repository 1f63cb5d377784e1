//! Flows opened during a run on transport hosts, for every design that carries them (the
//! Ethernet baseline, and Stardust's host ports): the transports that can open flows, each
//! host's source of flows (the timed-flow `fct` workload, Poisson or closed-loop arrivals),
//! and the completion-time report (every timed flow with its ideal and slowdown, slot reuse).
//! One piece, so that pull and push run the same flows (same seed: same sizes, arrival times
//! and background pairs) and report them under the same keys.

use rand::Rng as _;
use serde::Serialize;
use std::sync::Arc;

use super::host::{Destination, FlowSource, Host};
use crate::blocks::link::LinkConfig;
use crate::blocks::stream_kind;
use crate::blocks::transport::host_config::HostConfig;
use crate::blocks::transport::Transport;
use crate::blocks::workload::{
    exponential_ps, mean_gap_ps, pattern_rng, FctBySize, FctKeys, FctStats, FlowSizes, TimedCounts,
    TimedFlow,
};
use crate::engine::rng::{stream, ComponentId};
use crate::engine::time::{serialization_ps, TimePs};
use crate::keys::{invalid, ScenarioError};

/// How hosts open flows during a run.
#[derive(Clone, Copy, Debug)]
pub enum Opening<'a> {
    /// The timed host's Poisson arrivals to one receiver, and every other host's unending
    /// background flows opened at the start (Stardust Fig. 10b).
    Fct(FctKeys<'a>),
    /// Every host's Poisson arrivals at `load` of its line rate, to uniform destinations.
    Poisson {
        /// A fraction of the line rate.
        load: f64,
    },
    /// Every host keeps `flows_per_host` flows in flight, to uniform destinations.
    ClosedLoop {
        /// Flows in flight per host.
        flows_per_host: u32,
    },
}

/// Refuses what a pattern that opens flows cannot run (`pattern`: its name as JSON): the
/// transports that cannot open flows during a run (naming `host.transport`), and a fixed
/// flow size (`traffic.flow_bytes`: sizes are drawn from `traffic.flow_sizes`).
pub fn check_opening(
    transport: Transport,
    pattern: &str,
    flow_bytes: Option<u64>,
) -> Result<(), ScenarioError> {
    if let Some(why) = transport.kind().no_opening {
        return Err(invalid(
            "host.transport",
            format!(
                "{:?} cannot open flows during a run yet (traffic.pattern = {pattern}): {why}; use {}",
                transport.kind().name,
                crate::blocks::transport::names_where(|t| t.no_opening.is_none())
            ),
        ));
    }
    if flow_bytes.is_some() {
        return Err(invalid(
            "traffic.flow_bytes",
            format!("traffic.pattern = {pattern} draws flow sizes from traffic.flow_sizes; remove traffic.flow_bytes"),
        ));
    }
    Ok(())
}

/// Lets every host open flows during the run and gives each its source of flows, as
/// `opening` says, with sizes drawn from `sizes`; `host_rate_bps[h]` is host `h`'s line rate.
/// The `fct` background flows are opened at time 0, drawn from the run's pattern stream.
pub fn open_flows(
    opening: &Opening,
    sizes: FlowSizes,
    seed: u64,
    host_rate_bps: &[u64],
    hosts: &mut [Host],
) -> Result<(), ScenarioError> {
    let n = hosts.len();
    if let Opening::Fct(keys) = opening {
        keys.check_hosts(n)?;
    }
    let sizes = Arc::new(sizes);
    for (h, host) in hosts.iter_mut().enumerate() {
        let id = ComponentId {
            kind: stream_kind::ETHERNET_FLOWS,
            index: h as u32,
        };
        let source = |destination, mean_gap_ps, in_flight| FlowSource {
            destination,
            sizes: Arc::clone(&sizes),
            mean_gap_ps,
            in_flight,
            rng: stream(seed, id),
        };
        let uniform = Destination::Uniform { hosts: n as u16 };
        let rate_bps = host_rate_bps[h];
        host.open_flows(match *opening {
            Opening::Fct(k) if h == k.src as usize => Some(source(
                Destination::Host(k.dst as u16),
                Some(mean_gap_ps(&sizes, k.load, rate_bps)),
                0,
            )),
            Opening::Fct(_) => None,
            Opening::Poisson { load } => Some(source(
                uniform,
                Some(mean_gap_ps(&sizes, load, rate_bps)),
                0,
            )),
            Opening::ClosedLoop { flows_per_host } => Some(source(uniform, None, flows_per_host)),
        });
    }
    if let Opening::Fct(keys) = opening {
        for (h, dst) in keys.background(n, &mut pattern_rng(seed)) {
            hosts[h].open(0, dst as u16, None, false);
        }
    }
    Ok(())
}

/// What a run whose flows are opened during it reports beside [`TimedCounts`]: completion
/// times by size, slowdowns, and how flow slots were reused.
#[derive(Clone, Debug, Serialize)]
pub struct OpenedDetail {
    /// Completion times by size, and slowdowns.
    #[serde(flatten)]
    pub by_size: FctBySize,
    /// Timed flows started per second of simulated time (the offered arrival rate measured).
    pub timed_flow_arrivals_per_s: f64,
    /// Flows opened, unending background flows included.
    pub flows_opened: u64,
    /// Packets of an earlier flow of a reused slot that arrived and were ignored.
    pub stale_packets: u64,
    /// Most send-side slots one host holds (its flows in flight at their peak).
    pub send_slots_peak: u32,
    /// Most receive-side slots one host holds.
    pub receive_slots_peak: u32,
}

/// What a run whose flows are opened during it reports: the timed flows' completion times
/// (`fct`: the timed host's; otherwise every flow a source opened) and slot reuse.
#[derive(Clone, Debug, Serialize)]
pub struct OpenedSummary {
    /// Counts and completion times (the keys of Stardust's built-in `fct` report).
    #[serde(flatten)]
    pub counts: TimedCounts,
    /// The rest.
    #[serde(flatten)]
    pub detail: OpenedDetail,
}

/// The timed flows: one row each, in the order their sources opened them.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TimedTable {
    /// Sending host.
    pub src: Vec<u32>,
    /// Receiving host.
    pub dst: Vec<u32>,
    /// Bytes.
    pub size_bytes: Vec<u64>,
    /// When it arrived at its source, in µs.
    pub start_us: Vec<f64>,
    /// From its arrival to its last byte at the receiving host, in µs; absent while
    /// unfinished.
    pub fct_us: Vec<Option<f64>>,
    /// The least it could take on one path, in µs: its bytes at line rate, every link's
    /// propagation and its largest packet's store-and-forward at every device between the
    /// hosts (a sprayed flow's last packet need not wait behind its largest, cut-through
    /// switches forward before the whole packet is in, and Stardust's elements forward cells,
    /// so any of them may take less; Stardust adds a request and credit round trip).
    pub ideal_us: Vec<f64>,
    /// `fct_us / ideal_us`.
    pub slowdown: Vec<Option<f64>>,
}

impl TimedTable {
    /// True without a row.
    pub fn is_empty(&self) -> bool {
        self.src.is_empty()
    }
}

/// What a flow's ideal completion time reads of the fabric beside the hosts' line rates: the
/// largest segment and each link's propagation.
#[derive(Clone, Copy, Debug)]
pub struct IdealPath {
    /// Bytes of the largest segment (the hosts' packet size).
    pub mss_bytes: u64,
    /// Propagation of every link.
    pub propagation_ps: TimePs,
}

impl IdealPath {
    /// The path of `host`'s segments over `link`'s cables.
    pub fn of(host: &HostConfig, link: &LinkConfig) -> IdealPath {
        IdealPath {
            mss_bytes: host.packet_bytes as u64,
            propagation_ps: link.propagation_ps(),
        }
    }

    /// The least time a flow of `size_bytes` from a host at `rate_bps` can take over `links`
    /// links: its bytes at line rate, every link's propagation, and its largest segment stored
    /// and forwarded at every device between the hosts. One formula for every fabric, so a
    /// flow has one ideal in each design's report.
    pub fn flow_ps(&self, size_bytes: u64, rate_bps: u64, links: u64) -> TimePs {
        let largest_bytes = size_bytes.min(self.mss_bytes);
        serialization_ps(size_bytes, rate_bps)
            + links * self.propagation_ps
            + (links - 1) * serialization_ps(largest_bytes, rate_bps)
    }
}

/// The completion-time summary and table of a run whose hosts opened flows as `opening`
/// says, and its goodput: the mean over receiving hosts of what they received in the
/// window (`window_s`), as a fraction of line rate. A flow's ideal is `path`'s over the
/// `links(src, dst)` links of the design's shortest path between its hosts.
pub fn report(
    opening: &Opening,
    hosts: &[&Host],
    host_rate_bps: &[u64],
    now_ps: TimePs,
    window_s: f64,
    path: IdealPath,
    links: impl Fn(usize, usize) -> u64,
) -> (OpenedSummary, TimedTable, f64) {
    let mut table = TimedTable::default();
    let mut timed = Vec::new();
    let mut flows_opened = 0;
    let mut stale_packets = 0;
    for (src, host) in hosts.iter().enumerate() {
        let Some(opened) = &host.opened else { continue };
        stale_packets += opened.stale_packets;
        flows_opened += opened.flows.len() as u64;
        for f in &opened.flows {
            let dst = f.dst as usize;
            let ideal_ps = path.flow_ps(f.size_bytes, host_rate_bps[src], links(src, dst));
            let fct_ps = f.done_ps.map(|done| done - f.start_ps);
            timed.push(TimedFlow {
                size_bytes: f.size_bytes,
                start_ps: f.start_ps,
                fct_ps,
                ideal_ps,
            });
            table.src.push(src as u32);
            table.dst.push(dst as u32);
            table.size_bytes.push(f.size_bytes);
            table.start_us.push(f.start_ps as f64 / 1e6);
            table.fct_us.push(fct_ps.map(|ps| ps as f64 / 1e6));
            table.ideal_us.push(ideal_ps as f64 / 1e6);
            table
                .slowdown
                .push(fct_ps.map(|ps| ps as f64 / ideal_ps as f64));
        }
    }
    // Background flows are opened without a record: count them from the pattern.
    let background = match opening {
        Opening::Fct(k) => (hosts.len() as u64 - 2) * k.background_flows as u64,
        _ => 0,
    };
    let mut fractions = Vec::new();
    for (h, host) in hosts.iter().enumerate() {
        if host.inflows.is_empty() {
            continue;
        }
        let bytes = host.bytes_received_measured();
        fractions.push(bytes as f64 * 8.0 / window_s / host_rate_bps[h] as f64);
    }
    let goodput = fractions.iter().sum::<f64>() / fractions.len().max(1) as f64;
    let stats = FctStats::of(&timed, now_ps);
    let summary = OpenedSummary {
        counts: stats.counts,
        detail: OpenedDetail {
            by_size: stats.by_size,
            timed_flow_arrivals_per_s: timed.len() as f64 / (now_ps.max(1) as f64 * 1e-12),
            flows_opened: flows_opened + background,
            stale_packets,
            send_slots_peak: hosts.iter().map(|h| h.out.len() as u32).max().unwrap_or(0),
            receive_slots_peak: hosts
                .iter()
                .map(|h| h.inflows.len() as u32)
                .max()
                .unwrap_or(0),
        },
    };
    (summary, table, goodput)
}

/// Incasts mixed into flows opened during the run (the Aquarius slides' "Realistic Traffic":
/// the Web Server workload at 70% load plus a 5% 100-to-1 incast): events arriving as a
/// Poisson process, each `fan_in` senders drawn at random opening a flow of `flow_bytes` to
/// one receiver drawn at random, all at once; the events' bytes are `load` of the hosts'
/// line rates summed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IncastMix {
    /// The incasts' share of the hosts' line rates (`traffic.incast_load`).
    pub load: f64,
    /// Senders per incast (`traffic.incast_fan_in`).
    pub fan_in: u32,
    /// Bytes each sender's flow carries (`traffic.incast_flow_bytes`).
    pub flow_bytes: u64,
}

/// Schedules `mix`'s incasts on `hosts` (which open flows during the run) from time 0 to
/// `until_ps`, drawn from the pattern stream of `seed`; `host_rate_bps[h]` is host `h`'s line
/// rate. Returns the incasts scheduled, or the error naming `traffic.incast_fan_in` if it
/// is not below the hosts.
pub fn schedule_incasts(
    mix: IncastMix,
    seed: u64,
    until_ps: TimePs,
    host_rate_bps: &[u64],
    hosts: &mut [Host],
) -> Result<u64, ScenarioError> {
    let n = hosts.len();
    if mix.fan_in == 0 || mix.fan_in as usize >= n {
        return Err(invalid(
            "traffic.incast_fan_in",
            format!(
                "expected 1 to {} senders (the other hosts), got {}",
                n - 1,
                mix.fan_in
            ),
        ));
    }
    let rate_bps: u64 = host_rate_bps.iter().sum();
    let event_bits = (mix.fan_in as u64 * mix.flow_bytes * 8) as f64;
    let mean_gap_ps = (event_bits / (mix.load * rate_bps as f64) * 1e12).max(1.0) as TimePs;
    let mut rng = pattern_rng(seed);
    let mut events = 0;
    let mut at_ps = exponential_ps(mean_gap_ps, &mut rng);
    while at_ps < until_ps {
        let dst = rng.gen_range(0..n);
        let others = rand::seq::index::sample(&mut rng, n - 1, mix.fan_in as usize);
        for other in others {
            let src = other + (other >= dst) as usize;
            hosts[src].schedule(at_ps, dst as u16, mix.flow_bytes);
        }
        events += 1;
        at_ps += exponential_ps(mean_gap_ps, &mut rng);
    }
    Ok(events)
}
