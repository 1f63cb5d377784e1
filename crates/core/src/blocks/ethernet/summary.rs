//! What an Ethernet fabric's hosts and lossless switches counted, as a report shows it: PFC's
//! and BFC's pauses ([`PfcSummary`]), DCQCN's and NDP's end points ([`DcqcnSummary`],
//! [`NdpSummary`]). The Ethernet design's report and Stardust's (whose host ports carry the
//! same hosts, paused by its adapters) both show them.

use serde::Serialize;

use super::host::Host;
use super::ports::aquarius::port::AquariusCounters;
use super::ports::bfc::{BfcCounters, BfcSpec};
use super::ports::ideal::IdealCounters;
use super::ports::pfc::{PfcCounters, PfcPorts};
use super::switch::TrimCounts;
use crate::blocks::transport::ndp::NdpCounters;
use crate::blocks::transport::FlowSender;
use crate::engine::stats::{Spread, Tally};
use crate::engine::time::TimePs;

/// Every flow of a run of transport hosts (an MPTCP connection, its subflows summed): its ends,
/// its goodput over the measurement window and its completion, as both the Ethernet design's
/// report and Stardust's (of its transport hosts and its built-in sources) show them.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FlowGoodput {
    /// Sending host.
    pub src: Vec<u32>,
    /// Receiving host.
    pub dst: Vec<u32>,
    /// Goodput over the measurement window.
    pub goodput_gbps: Vec<f64>,
    /// Finite flows: completion time, from the start of the run (when every finite flow
    /// starts) to its last byte reaching its host, in µs; absent while unfinished.
    pub fct_us: Vec<Option<f64>>,
}

impl FlowGoodput {
    /// Adds the flow from host `src` to host `dst`: its goodput and its completion time.
    pub fn push(&mut self, src: usize, dst: usize, goodput_gbps: f64, fct_us: Option<f64>) {
        self.src.push(src as u32);
        self.dst.push(dst as u32);
        self.goodput_gbps.push(goodput_gbps);
        self.fct_us.push(fct_us);
    }
}

/// What PFC did: pauses sent and how long links stood paused (a pause storm shows as a
/// longest pause as long as the run, and a paused fraction near 1).
#[derive(Clone, Debug, Default, Serialize)]
pub struct PfcSummary {
    /// XOFF frames switches sent upstream.
    pub pause_frames_sent: u64,
    /// XON frames switches sent upstream.
    pub resume_frames_sent: u64,
    /// Data packets dropped at PFC switches (an ingress past its headroom): 0 on a lossless
    /// fabric; part of `packets_dropped`.
    pub lossless_drops: u64,
    /// The most packets any ingress held beyond its XOFF threshold (at most the headroom).
    pub headroom_peak_packets: u32,
    /// Time switch ports stood paused, summed over ports, in µs.
    pub switch_paused_us: f64,
    /// Time hosts' NICs stood paused, summed over hosts, in µs.
    pub host_paused_us: f64,
    /// The longest single pause of any switch port or host, in µs (to the end of the run if
    /// it has not ended).
    pub longest_pause_us: f64,
    /// Paused time of switch ports' and hosts' classes over their number times the run's
    /// length.
    pub paused_fraction: f64,
    /// Per class, with `switch.pfc_classes` above 1 (802.1Qbb priorities; absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classes: Option<Vec<PfcClassSummary>>,
    /// BFC's queue pauses and flow assignments, with `switch.port_kind = "bfc"` (absent otherwise); the
    /// figures above are then PFC's backstop alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bfc: Option<BfcSummary>,
    /// Aquarius' flow pauses and isolation, with `switch.port_kind = "aquarius"` (absent
    /// otherwise); the figures above are then PFC's backstop alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aquarius: Option<AquariusSummary>,
    /// Ideal per-flow queues' flow pauses, with `switch.port_kind = "per_flow_ideal"` (absent
    /// otherwise); the figures above are then PFC's backstop alone.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ideal: Option<IdealSummary>,
}

/// What ideal per-flow queues did: pauses naming a flow, the queues the ports needed, and
/// every drop by its cause.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct IdealSummary {
    /// PAUSE frames naming a flow that switches sent.
    pub flow_pause_frames_sent: u64,
    /// RESUME frames naming a flow that switches sent.
    pub flow_resume_frames_sent: u64,
    /// PAUSE frames naming a flow that hosts' NICs received (they stop that flow alone).
    pub host_flow_pauses: u64,
    /// Flows that became active at a switch port and took a queue of their own.
    pub flows_queued: u64,
    /// The most flows with packets at one port at once: the queues an ideal port needed.
    pub peak_active_flows: u32,
    /// Data packets dropped because an ingress overran its headroom.
    pub headroom_drops: u64,
    /// Data packets dropped because a switch's whole buffer was full.
    pub buffer_drops: u64,
}

impl IdealSummary {
    /// What `pfc`'s ideal ports and `hosts` counted.
    pub(crate) fn of(pfc: &[&PfcPorts], hosts: &[&Host]) -> Self {
        let c = pfc.iter().fold(IdealCounters::default(), |sum, p| {
            sum.plus(&p.ideal_counters())
        });
        let drops: u64 = pfc.iter().map(|p| p.counters.drops).sum();
        let buffer_drops: u64 = pfc.iter().map(|p| p.counters.buffer_drops).sum();
        IdealSummary {
            flow_pause_frames_sent: c.flow_pause_frames_sent,
            flow_resume_frames_sent: c.flow_resume_frames_sent,
            host_flow_pauses: hosts.iter().map(|h| h.counters.flow_pauses_received).sum(),
            flows_queued: c.flows_queued,
            peak_active_flows: c.peak_active_flows,
            headroom_drops: drops - buffer_drops,
            buffer_drops,
        }
    }
}

/// What Aquarius did (Li, Zeng, Hu and Chen, slides "Contribution-aware Pausing" and
/// "Opportunistic Re-assigning"): pauses naming a flow, flows isolated in reserved queues, how
/// long those stood paused, and every drop by its cause.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct AquariusSummary {
    /// Queues per egress port, the reserved isolation queue among them.
    pub queues: u16,
    /// PAUSE frames naming a flow that switches sent (❷).
    pub flow_pause_frames_sent: u64,
    /// RESUME frames naming a flow that switches sent.
    pub flow_resume_frames_sent: u64,
    /// ... of the pauses, sent above the high threshold (every arriving flow paused).
    pub pauses_above_high: u64,
    /// PAUSE frames naming a flow that hosts' NICs received (they stop that flow alone).
    pub host_flow_pauses: u64,
    /// Flows a switch port isolated in its reserved queue when its far end paused them (❸).
    pub flows_isolated: u64,
    /// Packets that joined a reserved queue.
    pub isolated_packets: u64,
    /// Flows mapped to a normal queue as they became active at a port (❶).
    pub flows_mapped: u64,
    /// Time reserved queues stood paused, summed over switch ports, in µs.
    pub isolation_paused_us: f64,
    /// Data packets dropped because an ingress overran its headroom (none with the backstop
    /// on and its headroom enough).
    pub headroom_drops: u64,
    /// Data packets dropped because a switch's whole buffer was full.
    pub buffer_drops: u64,
}

impl AquariusSummary {
    /// What `pfc`'s Aquarius ports and `hosts` counted, up to `now_ps`.
    pub(crate) fn of(queues: u16, pfc: &[&PfcPorts], hosts: &[&Host], now_ps: TimePs) -> Self {
        let c = pfc.iter().fold(AquariusCounters::default(), |sum, p| {
            sum.plus(&p.aquarius_counters())
        });
        let paused_ps: TimePs = pfc
            .iter()
            .flat_map(|p| p.aquarius_ports())
            .map(|a| a.isolation_clock.totals_ps(now_ps).0)
            .sum();
        let drops: u64 = pfc.iter().map(|p| p.counters.drops).sum();
        let buffer_drops: u64 = pfc.iter().map(|p| p.counters.buffer_drops).sum();
        AquariusSummary {
            queues,
            flow_pause_frames_sent: c.flow_pause_frames_sent,
            flow_resume_frames_sent: c.flow_resume_frames_sent,
            pauses_above_high: c.pauses_above_high,
            host_flow_pauses: hosts.iter().map(|h| h.counters.flow_pauses_received).sum(),
            flows_isolated: c.flows_isolated,
            isolated_packets: c.isolated_packets,
            flows_mapped: c.flows_mapped,
            isolation_paused_us: paused_ps as f64 / 1e6,
            headroom_drops: drops - buffer_drops,
            buffer_drops,
        }
    }
}

/// What BFC did (Goyal et al. 2022 §3): pauses naming a queue, and how often an active flow
/// found no empty queue and shared one (the head-of-line blocking BFC keeps).
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct BfcSummary {
    /// Queues per egress port and host NIC (`switch.per_flow.queues`).
    pub queues: u16,
    /// PAUSE frames naming an upstream queue that switches sent.
    pub queue_pause_frames_sent: u64,
    /// Resume frames naming an upstream queue that switches sent.
    pub queue_resume_frames_sent: u64,
    /// Flows that became active at a switch port and took a queue.
    pub flows_assigned: u64,
    /// ... a queue another active flow held (none was empty).
    pub flow_collisions: u64,
    /// With a finite flow table (`switch.per_flow.flow_table_entries`): flows that found
    /// their entry held by another flow and shared it (absent: an entry per flow).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table_collisions: Option<u64>,
    /// With a Bloom filter of paused flows (`switch.per_flow.bloom_filter_bits`): flows that
    /// became active at a port, tested present and joined a paused queue (absent: no filter).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filter_positives: Option<u64>,
    /// ... of them, flows the far end had not paused: the filter's false positives.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filter_false_positives: Option<u64>,
    /// Time queues stood paused, summed over switch ports' and host NICs' queues, in µs.
    pub queue_paused_us: f64,
    /// The longest single pause of any queue, in µs (to the end of the run if open).
    pub longest_queue_pause_us: f64,
}

impl BfcSummary {
    /// What `pfc`'s BFC ports counted and how long their and `hosts`' queues stood paused, up
    /// to `now_ps`.
    pub(crate) fn of(spec: &BfcSpec, pfc: &[&PfcPorts], hosts: &[&Host], now_ps: TimePs) -> Self {
        let counted = pfc
            .iter()
            .fold(BfcCounters::default(), |sum, p| sum.plus(&p.bfc_counters()));
        let ports = pfc.iter().flat_map(|p| p.bfc_ports().map(|b| &b.pauses));
        let (paused_ps, longest_ps) = ports
            .chain(hosts.iter().map(|h| &h.queue_pause))
            .map(|q| q.totals_ps(now_ps))
            .fold((0, 0), |(a, b), (c, d)| (a + c, b.max(d)));
        BfcSummary {
            queues: spec.queues,
            queue_pause_frames_sent: counted.queue_pause_frames_sent,
            queue_resume_frames_sent: counted.queue_resume_frames_sent,
            flows_assigned: counted.flows_assigned,
            flow_collisions: counted.flow_collisions,
            table_collisions: spec.table_entries.map(|_| counted.table_collisions),
            filter_positives: spec.bloom_bits.map(|_| counted.filter_positives),
            filter_false_positives: spec.bloom_bits.map(|_| counted.filter_false_positives),
            queue_paused_us: paused_ps as f64 / 1e6,
            longest_queue_pause_us: longest_ps as f64 / 1e6,
        }
    }
}

/// What PFC did to one class (priority): pauses of that class alone.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct PfcClassSummary {
    /// The class.
    pub class: u8,
    /// XOFF frames naming it that switches sent upstream.
    pub pause_frames_sent: u64,
    /// XOFF frames naming it that switch ports and hosts received.
    pub pauses_received: u64,
    /// Time it stood paused, summed over switch ports and hosts, in µs.
    pub paused_us: f64,
    /// Its longest single pause at any switch port or host, in µs.
    pub longest_pause_us: f64,
}

impl PfcClassSummary {
    /// Class `class` of `pfc`'s switches' ports and `hosts`' NICs up to `now_ps`.
    pub(crate) fn of(class: usize, pfc: &[&PfcPorts], hosts: &[&Host], now_ps: TimePs) -> Self {
        let ports = pfc.iter().flat_map(|p| p.class_clocks(class));
        let clocks = ports.chain(hosts.iter().map(|h| h.pause.class(class)));
        let (mut pauses, mut paused_ps, mut longest_ps) = (0u64, 0, 0);
        for clock in clocks {
            let (paused, long) = clock.totals_ps(now_ps);
            pauses += clock.pauses as u64;
            paused_ps += paused;
            longest_ps = longest_ps.max(long);
        }
        PfcClassSummary {
            class: class as u8,
            pause_frames_sent: pfc
                .iter()
                .map(|p| p.counters.class_pause_frames_sent[class])
                .sum(),
            pauses_received: pauses,
            paused_us: paused_ps as f64 / 1e6,
            longest_pause_us: longest_ps as f64 / 1e6,
        }
    }
}

impl PfcSummary {
    /// What devices that pause their neighbours counted (`counters`), with their `ports`
    /// ports' paused time (summed, longest) in `switch_paused_ps`, and how long `hosts`' NICs
    /// stood paused, up to `now_ps`: an Ethernet fabric's PFC switches, or Stardust's adapters
    /// pausing their hosts (whose ports nothing pauses).
    pub fn of(
        counters: &[PfcCounters],
        switch_paused_ps: (TimePs, TimePs),
        ports: usize,
        hosts: &[&Host],
        now_ps: TimePs,
    ) -> Self {
        let (switch_ps, switch_longest_ps) = switch_paused_ps;
        let (host_ps, host_longest_ps) = hosts
            .iter()
            .map(|h| h.pause.totals_ps(now_ps))
            .fold((0, 0), |(a, b), (c, d)| (a + c, b.max(d)));
        let clocks = (ports + hosts.len()).max(1) as f64;
        PfcSummary {
            pause_frames_sent: counters.iter().map(|c| c.pause_frames_sent).sum(),
            resume_frames_sent: counters.iter().map(|c| c.resume_frames_sent).sum(),
            lossless_drops: counters.iter().map(|c| c.drops).sum(),
            headroom_peak_packets: counters
                .iter()
                .map(|c| c.headroom_peak_packets)
                .max()
                .unwrap_or(0),
            switch_paused_us: switch_ps as f64 / 1e6,
            host_paused_us: host_ps as f64 / 1e6,
            longest_pause_us: switch_longest_ps.max(host_longest_ps) as f64 / 1e6,
            paused_fraction: (switch_ps + host_ps) as f64 / (clocks * now_ps.max(1) as f64),
            classes: None,
            bfc: None,
            aquarius: None,
            ideal: None,
        }
    }
}

/// What DCQCN's end points did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DcqcnSummary {
    /// CNPs receivers sent.
    pub cnps_sent: u64,
    /// CNPs senders reacted to (rate cuts).
    pub rate_cuts: u64,
    /// Senders' current rates at the end, in Gbit/s.
    pub rate_gbps: Option<Spread>,
}

/// What an NDP run counts beside the window transports' figures.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct NdpSummary {
    /// Data packets switches trimmed to their headers.
    pub packets_trimmed: u64,
    /// Headers and control packets dropped at full header queues (part of
    /// `packets_dropped`).
    pub headers_dropped: u64,
    /// Trimmed headers that reached their receiver.
    pub headers_received: u64,
    /// NACKs receivers sent.
    pub nacks_sent: u64,
    /// PULLs receivers' pacers sent.
    pub pulls_sent: u64,
    /// Pulls senders received with nothing left to send.
    pub pulls_unused: u64,
    /// With `switch.return_to_sender`: what became of headers returned to their senders.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub return_to_sender: Option<ReturnSummary>,
    /// With `host.ndp.paths`: the senders' path choice.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paths: Option<PathChoiceSummary>,
}

/// NDP's return-to-sender (§3.1): headers a full header queue sent back.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct ReturnSummary {
    /// Trimmed headers switches returned toward their senders.
    pub headers_returned: u64,
    /// Of them, dropped on the way back at another full header queue (part of
    /// `headers_dropped`).
    pub returns_dropped: u64,
    /// Returned headers that reached their senders (each a packet queued for resending).
    pub returns_received: u64,
    /// Of them, resent at once (no pull was due to send them, or a bad path returned them).
    pub returns_resent_at_once: u64,
}

/// NDP senders' own path choice (§3.3).
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct PathChoiceSummary {
    /// Turns of a penalized path label that senders skipped.
    pub path_skips: u64,
}

impl NdpSummary {
    /// What `hosts`' NDP end points counted, with what the switches' trimming ports did;
    /// `returns` and `paths` say whether the run returns headers and labels paths.
    pub fn of(hosts: &[&Host], trims: TrimCounts, returns: bool, paths: bool) -> Self {
        let sum = |f: fn(&Host) -> u64| hosts.iter().map(|h| f(h)).sum::<u64>();
        let senders = hosts
            .iter()
            .map(|h| h.ndp_counters())
            .fold(NdpCounters::default(), |sum, c| sum.plus(&c));
        NdpSummary {
            packets_trimmed: trims.trimmed,
            headers_dropped: trims.headers_dropped,
            headers_received: sum(|h| h.counters.headers_received),
            nacks_sent: sum(|h| h.counters.nacks_sent),
            pulls_sent: sum(|h| h.counters.pulls_sent),
            pulls_unused: senders.pulls_unused,
            return_to_sender: returns.then_some(ReturnSummary {
                headers_returned: trims.headers_returned,
                returns_dropped: trims.returns_dropped,
                returns_received: senders.returns,
                returns_resent_at_once: senders.returns_resent_at_once,
            }),
            paths: paths.then_some(PathChoiceSummary {
                path_skips: senders.path_skips,
            }),
        }
    }
}

impl DcqcnSummary {
    /// What `hosts`' DCQCN end points counted.
    pub fn of(hosts: &[&Host]) -> Self {
        let senders = hosts
            .iter()
            .flat_map(|h| &h.out)
            .filter_map(|f| match &f.sender {
                FlowSender::Dcqcn(s) => Some(s),
                _ => None,
            });
        DcqcnSummary {
            cnps_sent: hosts.iter().map(|h| h.counters.cnps_sent).sum(),
            rate_cuts: senders.clone().map(|s| s.cnps).sum(),
            rate_gbps: Spread::of(senders.map(|s| s.rate_bps / 1e9).collect()),
        }
    }
}
