//! What a host counts ([`HostCounters`]), and the figures every design with transport hosts
//! reports from them: each flow's goodput through the run ([`FlowSeries`]) and its senders'
//! sums ([`SenderTotals`]).

use serde::Serialize;

use super::Host;
use crate::blocks::transport::ndp::NdpCounters;
use crate::blocks::transport::{FlowSender, SenderCounters};
use crate::engine::stats::Tally;
use crate::engine::time::TimePs;

/// What a host counts.
#[derive(Clone, Copy, Debug, Default)]
pub struct HostCounters {
    /// Packets it created: data segments and ACKs (an ACK waits at the NIC once created).
    pub packets_created: u64,
    /// ACKs among them.
    pub acks_sent: u64,
    /// Packets that reached it.
    pub packets_received: u64,
    /// Data segments that reached it (retransmitted duplicates included).
    pub segments_received: u64,
    /// Of them, segments carrying CE.
    pub segments_marked: u64,
    /// DCTCP window cuts of its senders in the measurement window.
    pub ecn_cuts_measured: u64,
    /// Round-trip samples of its senders in the measurement window.
    pub rtt_samples_measured: u64,
    /// Their sum.
    pub rtt_sum_ps_measured: u64,
    /// NDP: trimmed headers that reached it.
    pub headers_received: u64,
    /// NDP: NACKs among the ACKs it sent.
    pub nacks_sent: u64,
    /// NDP: PULLs it sent.
    pub pulls_sent: u64,
    /// DCQCN: CNPs it sent (among `acks_sent`).
    pub cnps_sent: u64,
    /// Aquarius: PAUSE frames naming one of its flows that reached it (its NIC stops that
    /// flow alone until the RESUME).
    pub flow_pauses_received: u64,
}

impl HostCounters {
    /// Adds what a sender counted between `before` and `after` to the measured counts.
    pub(super) fn add_measured(&mut self, before: &SenderCounters, after: &SenderCounters) {
        self.ecn_cuts_measured += after.ecn_cuts - before.ecn_cuts;
        self.rtt_samples_measured += after.rtt_samples - before.rtt_samples;
        self.rtt_sum_ps_measured += after.rtt_sum_ps - before.rtt_sum_ps;
    }
}

/// Every flow's goodput through a run, one row per flow per `run.sample_ns` interval: the
/// bytes its receiver delivered in order in the interval (an MPTCP connection's once). Every
/// design with transport hosts keeps one (the Ethernet baseline, Stardust's host ports).
#[derive(Clone, Debug, Default, Serialize)]
pub struct FlowSeries {
    /// End of the interval, nanoseconds.
    pub time_ns: Vec<f64>,
    /// The flow's row in the run's `flows` table.
    pub flow: Vec<u32>,
    /// Its goodput over the interval.
    pub goodput_gbps: Vec<f64>,
    /// Each flow's bytes at the last sample.
    #[serde(skip)]
    bytes_seen: Vec<u64>,
}

impl FlowSeries {
    /// True without a row.
    pub fn is_empty(&self) -> bool {
        self.time_ns.is_empty()
    }

    /// Adds the goodputs that partition `other` of a run on several threads sampled, row by
    /// row: each flow's are those of the partition that runs its receiving host (the others
    /// sampled none, exactly 0).
    pub fn absorb(&mut self, other: &FlowSeries) {
        assert_eq!(
            self.flow, other.flow,
            "partitions sample at the same instants"
        );
        for (mine, theirs) in self.goodput_gbps.iter_mut().zip(&other.goodput_gbps) {
            *mine += theirs;
        }
    }

    /// Adds a row per flow for the interval of `every_ns` ending at `at_ps`, from each flow's
    /// bytes delivered in order so far (`bytes`, in flow order).
    pub fn record(&mut self, at_ps: TimePs, every_ns: f64, bytes: impl Iterator<Item = u64>) {
        for (k, bytes) in bytes.enumerate() {
            if k == self.bytes_seen.len() {
                self.bytes_seen.push(0);
            }
            let delta = bytes - std::mem::replace(&mut self.bytes_seen[k], bytes);
            self.time_ns.push(at_ps as f64 / 1e3);
            self.flow.push(k as u32);
            self.goodput_gbps.push(delta as f64 * 8.0 / every_ns);
        }
    }
}

/// What the senders of a set of hosts counted, summed: the transport columns every design
/// with transport hosts reports (the Ethernet baseline, Stardust's host ports).
#[derive(Clone, Copy, Debug, Default)]
pub struct SenderTotals {
    /// Segments sent, retransmissions included.
    pub segments_sent: u64,
    /// Retransmissions.
    pub retransmissions: u64,
    /// Fast retransmits.
    pub fast_retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// DCTCP's window cuts.
    pub ecn_cuts: u64,
    /// Mean round-trip sample in the measurement window, in µs.
    pub rtt_mean_us: Option<f64>,
}

impl SenderTotals {
    /// The sums over every send side of `hosts`.
    pub fn of(hosts: &[&Host]) -> Self {
        let mut totals = SenderTotals::default();
        for c in hosts.iter().flat_map(|h| {
            let retired = h.opened.as_ref().map(|o| &o.retired);
            h.out.iter().map(|f| f.sender.counters()).chain(retired)
        }) {
            totals.segments_sent += c.segments_sent;
            totals.retransmissions += c.retransmissions;
            totals.fast_retransmits += c.fast_retransmits;
            totals.timeouts += c.timeouts;
            totals.ecn_cuts += c.ecn_cuts;
        }
        let rtt_sum_ps: u64 = hosts.iter().map(|h| h.counters.rtt_sum_ps_measured).sum();
        let samples: u64 = hosts.iter().map(|h| h.counters.rtt_samples_measured).sum();
        totals.rtt_mean_us = (samples > 0).then(|| rtt_sum_ps as f64 / 1e6 / samples as f64);
        totals
    }
}

impl Host {
    /// What its NDP senders counted, those whose slots were reused included.
    pub fn ndp_counters(&self) -> NdpCounters {
        let retired = self
            .opened
            .as_ref()
            .map_or_else(NdpCounters::default, |o| o.retired_ndp);
        self.out
            .iter()
            .filter_map(|f| match &f.sender {
                FlowSender::Ndp(s) => Some(s.ndp),
                FlowSender::Window(_) | FlowSender::Dcqcn(_) => None,
            })
            .fold(retired, |sum, c| sum.plus(&c))
    }

    /// In-order bytes its receive sides delivered in the measurement window, over all flows.
    pub fn bytes_received_measured(&self) -> u64 {
        self.inflows.iter().map(|f| f.bytes_measured).sum()
    }

    /// What receive side `at_dst` measured over a window of `window_s`: its goodput in Gbit/s
    /// and, for a finite flow that completed, its completion time in µs.
    pub fn received(&self, at_dst: u32, window_s: f64) -> (f64, Option<f64>) {
        let flow = &self.inflows[at_dst as usize];
        let gbps = flow.bytes_measured as f64 * 8.0 / window_s / 1e9;
        (gbps, flow.done_ps.map(|ps| ps as f64 / 1e6))
    }
}
