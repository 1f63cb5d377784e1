//! Priority-based Flow Control (IEEE 802.1Qbb) over a shared switch buffer, as DCQCN runs on
//! it (Zhu et al., SIGCOMM 2015, §2: "PFC ... the upstream entity pauses a priority when the
//! ingress queue of the downstream switch exceeds a threshold"), for RoCE's lossless classes.
//!
//! Priorities (802.1Qbb §36.1: up to 8 per link): a switch of `classes` lossless classes
//! keeps one ingress account per (port, class) and pauses only the class that crossed XOFF;
//! a data packet's class rides in its [`Cell::vc`](crate::blocks::cell::Cell::vc) (a frame's
//! priority code point). The upstream port holds back only that class ([`ClassPauses`]), so a
//! pause of one class does not stop another (the head-of-line blocking across priorities that
//! one class for all traffic suffers: DCQCN §2's "victim flow"). A port serves its classes by
//! strict priority, class 0 first, or in round robin (ETS with equal weights, 802.1Qaz;
//! [`PriorityPort`]).
//!
//! Buffer (the Stardust paper's DCQCN baseline: "100 buffers per port, shared between interfaces",
//! App. G). Reading taken: a switch of P ports has one pool of `pool_packets_per_port × P` packet
//! buffers that every output queue draws on; each packet is charged to its **ingress** port and
//! class until it starts leaving on its output. An ingress class that holds `xoff_packets` sends
//! XOFF upstream; the packets already on their way still fit in its `headroom_packets`; when it
//! drains to `xon_packets` it sends XON. Each class of a port has these thresholds, so as long as
//! `classes × (xoff + headroom) ≤ pool_packets_per_port` the pool can never run out (every
//! ingress class stays under its equal part of its port's share), so a switch drops only when an
//! ingress overruns its headroom: each such drop is counted ([`PfcCounters::drops`]) and
//! lands in the run's ledger. The ingress account ([`IngressAccount`]) is one piece: Stardust's
//! adapters that pause their hosts keep one per host port.
//!
//! Frames: XOFF and XON are explicit frames ([`crate::blocks::ethernet::pause`]:
//! [`PAUSE_FRAME_BYTES`](crate::blocks::ethernet::pause::PAUSE_FRAME_BYTES) on the wire, queued in the port's
//! control queue, so they go ahead of data, right after the frame on the wire):
//! XOFF is a PAUSE with the largest quanta (the switch keeps the priority paused until it
//! sends XON, i.e. it refreshes before expiry; refreshes are not modelled as frames), XON a
//! PAUSE with quanta 0. A frame names a [`PauseTarget`]: a traffic class (802.1Qbb), or one
//! queue of the upstream port ([`super::bfc`], BFC's pause). Control packets (ACKs, CNPs, PAUSE
//! frames) ride a strict-priority control queue that PFC does not pause and the pool does
//! not count (RoCE deployments put CNPs on a high priority of their own, DCQCN §3).
//!
//! Marking: the output queue marks ECN-capable arrivals RED-like on its bytes (DCQCN §3.1,
//! the congestion point: no mark below Kmin, probability rising linearly to Pmax at Kmax,
//! every packet above Kmax), or at an instantaneous threshold of packets (DCTCP's rule).

use super::aquarius::port::{AquariusCounters, AquariusPort, FlowFrame};
use super::aquarius::AquariusSpec;
use super::bfc::{flow_key, BfcCounters, BfcPort, BfcSpec};
use super::drop_tail::ArrivalDepths;
use super::ideal::{IdealCounters, IdealPort, IdealSpec};
use super::{check_lossless, EthernetSwitchConfig, PortCheck, PortKind, PFC_THRESHOLD_KEYS};
use crate::blocks::cell::{Cell, CellArena, CellId};
use crate::blocks::ethernet::pause::{
    pause_frame, read_pause_frame, ClassPauses, PauseClock, PauseTarget,
};
use crate::blocks::ethernet::{CE, ECT};
use crate::blocks::link::Link;
use crate::blocks::priority_port::{ClassMask, Departure, PriorityPort};
use crate::blocks::transport::Marks;
use crate::engine::rng::Rng;
use crate::engine::stats::Tally;
use crate::engine::time::TimePs;
use crate::keys::{invalid, ScenarioError};
use rand::Rng as _;
use serde::{Deserialize, Serialize};

/// The data class RoCE's lossless traffic rides when a link has one (Stardust's adapters
/// pause their hosts' class 0).
pub const LOSSLESS_CLASS: u8 = 0;

/// The most priorities a link pauses apart (802.1Qbb: the 8 of a VLAN tag's PCP).
pub const MAX_CLASSES: usize = 8;

/// PFC's lossless ports over a shared buffer, with classes paused apart.
pub const KIND: PortKind = PortKind {
    name: "pfc",
    description: "PFC (IEEE 802.1Qbb): lossless ports over a shared buffer of switch.queue_packets per port, each packet charged to its ingress, which pauses its upstream neighbour at switch.pfc_xoff_packets and resumes it at switch.pfc_xon_packets; switch.pfc_classes priorities paused apart",
    trims: false,
    lossless: true,
    classes: true,
    per_flow_routing: false,
    keys: &[
        &["switch.pfc_classes", "switch.pfc_class_service"],
        PFC_THRESHOLD_KEYS,
    ],
    check,
};

/// 1 to 8 classes, then the lossless buffer's thresholds for them.
fn check(c: &PortCheck<'_>) -> Result<(), ScenarioError> {
    let classes = c.switch.pfc_classes();
    if !(1..=MAX_CLASSES as u32).contains(&classes) {
        return Err(invalid(
            "switch.pfc_classes",
            format!("expected 1 to {MAX_CLASSES} (802.1Qbb priorities), got {classes}"),
        ));
    }
    check_lossless(c, classes)
}

/// How a PFC port serves its data classes (`switch.pfc_class_service`).
#[derive(
    Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ClassService {
    /// Class 0 first, then 1, and so on (802.1Q's strict priority selection).
    #[default]
    StrictPriority,
    /// One packet per class in turn (ETS with equal weights, IEEE 802.1Qaz).
    RoundRobin,
}

impl PfcSpec {
    /// The lossless ports' thresholds and marking `switch` gives, if its ports are lossless;
    /// `marks`: how the transport's data is marked; `hop_bdp_packets`: BFC's default pause.
    pub fn of(
        switch: &EthernetSwitchConfig,
        marks: Marks,
        hop_bdp_packets: u32,
    ) -> Option<PfcSpec> {
        let marking = match marks {
            Marks::Red => Marking::Red {
                kmin_bytes: switch.red_kmin_bytes,
                kmax_bytes: switch.red_kmax_bytes,
                pmax: switch.red_pmax,
            },
            Marks::Threshold => Marking::Threshold(switch.ecn_threshold_packets),
            Marks::None => Marking::None,
        };
        switch.kind().lossless.then_some(PfcSpec {
            pool_packets_per_port: switch.queue_packets,
            classes: switch.pfc_classes() as u8,
            round_robin: switch.pfc_class_service == Some(ClassService::RoundRobin),
            xoff_packets: switch.pfc_xoff_packets,
            xon_packets: switch.pfc_xon_packets,
            headroom_packets: switch.pfc_headroom_packets,
            marking,
            per_flow: BfcSpec::of(switch, hop_bdp_packets)
                .map(PerFlowSpec::Bfc)
                .or(AquariusSpec::of(switch).map(PerFlowSpec::Aquarius))
                .or(IdealSpec::of(switch, hop_bdp_packets).map(PerFlowSpec::Ideal)),
            backstop: !switch.reads("switch.per_flow.backstop") || switch.per_flow.backstop,
        })
    }
}

/// How a switch marks ECN-capable arrivals.
#[derive(Clone, Copy, Debug)]
pub enum Marking {
    /// Never.
    None,
    /// When more than this many data packets are queued (DCTCP).
    Threshold(u32),
    /// RED-like on the queue's bytes (DCQCN's congestion point).
    Red {
        /// No mark at or below this many bytes queued.
        kmin_bytes: u64,
        /// Every packet marked above this many.
        kmax_bytes: u64,
        /// The marking probability at `kmax_bytes`.
        pmax: f64,
    },
}

impl Marking {
    /// True if an ECN-capable arrival finding `depth` data packets of `queued_bytes` queued is
    /// marked; RED draws from `rng` between its thresholds only.
    fn marks(&self, depth: u32, queued_bytes: u64, rng: &mut Rng) -> bool {
        match *self {
            Marking::None => false,
            Marking::Threshold(k) => depth > k,
            Marking::Red {
                kmin_bytes,
                kmax_bytes,
                pmax,
            } => {
                if queued_bytes <= kmin_bytes {
                    false
                } else if queued_bytes > kmax_bytes {
                    true
                } else {
                    let fraction =
                        (queued_bytes - kmin_bytes) as f64 / (kmax_bytes - kmin_bytes) as f64;
                    rng.gen::<f64>() < pmax * fraction
                }
            }
        }
    }
}

/// A PFC switch's buffer and thresholds, in packets.
#[derive(Clone, Copy, Debug)]
pub struct PfcSpec {
    /// Buffers per port in the switch-wide shared pool.
    pub pool_packets_per_port: u32,
    /// Lossless classes (priorities) paused apart, 1 to [`MAX_CLASSES`].
    pub classes: u8,
    /// Ports serve the data classes in round robin (ETS with equal weights, 802.1Qaz), not
    /// by strict priority.
    pub round_robin: bool,
    /// An ingress class holding this many packets sends XOFF.
    pub xoff_packets: u32,
    /// A paused ingress drained to this many sends XON.
    pub xon_packets: u32,
    /// Packets an ingress may take beyond XOFF (what is on its way when it pauses).
    pub headroom_packets: u32,
    /// ECN marking of the output queues.
    pub marking: Marking,
    /// Per-flow queues on every egress port, BFC's or Aquarius' (one class then, its XOFF
    /// the backstop that pauses a whole upstream port); `None`: the classes' queues alone.
    pub per_flow: Option<PerFlowSpec>,
    /// An ingress crossing XOFF pauses its upstream port (PFC, and the per-flow kinds'
    /// backstop); false: it never does, and only a full buffer drops.
    pub backstop: bool,
}

/// The per-flow kind over PFC's ports.
#[derive(Clone, Copy, Debug)]
pub enum PerFlowSpec {
    /// BFC ([`super::bfc`]).
    Bfc(BfcSpec),
    /// Aquarius ([`super::aquarius`]).
    Aquarius(AquariusSpec),
    /// Ideal per-flow queues ([`super::ideal`]).
    Ideal(IdealSpec),
}

impl PfcSpec {
    /// BFC's settings, if the ports are BFC's.
    pub fn bfc(&self) -> Option<BfcSpec> {
        match self.per_flow {
            Some(PerFlowSpec::Bfc(b)) => Some(b),
            _ => None,
        }
    }

    /// Aquarius' settings, if the ports are Aquarius'.
    pub fn aquarius(&self) -> Option<AquariusSpec> {
        match self.per_flow {
            Some(PerFlowSpec::Aquarius(a)) => Some(a),
            _ => None,
        }
    }

    /// Ideal per-flow queues' settings, if the ports are those.
    pub fn ideal(&self) -> Option<IdealSpec> {
        match self.per_flow {
            Some(PerFlowSpec::Ideal(i)) => Some(i),
            _ => None,
        }
    }

    /// The thresholds every ingress of the switch keeps.
    pub fn thresholds(&self) -> PauseThresholds {
        PauseThresholds {
            xoff_packets: self.xoff_packets,
            xon_packets: self.xon_packets,
            headroom_packets: self.headroom_packets,
        }
    }
}

/// When one ingress pauses and resumes the sender upstream of it, in packets (802.1Qbb as
/// DCQCN §2 runs it): a PFC switch's ingress port, or a Stardust adapter's host port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PauseThresholds {
    /// An ingress holding this many packets sends XOFF.
    pub xoff_packets: u32,
    /// A paused ingress drained to this many sends XON.
    pub xon_packets: u32,
    /// Packets an ingress may take beyond XOFF (what is on its way when it pauses).
    pub headroom_packets: u32,
}

impl PauseThresholds {
    /// Checks that XOFF is at least one packet and XON below it, naming the scenario keys
    /// `{prefix}xoff_packets` and `{prefix}xon_packets` (`switch.pfc_`, `adapter.pause_`).
    pub fn validate(&self, prefix: &str) -> Result<(), ScenarioError> {
        let xoff_key = format!("{prefix}xoff_packets");
        if self.xoff_packets == 0 {
            return Err(invalid(&xoff_key, "expected at least 1 packet"));
        }
        if self.xon_packets >= self.xoff_packets {
            return Err(invalid(
                &format!("{prefix}xon_packets"),
                format!("expected fewer than {xoff_key} ({})", self.xoff_packets),
            ));
        }
        Ok(())
    }
}

/// One ingress's account (802.1Qbb): the data packets it holds downstream of its link and
/// whether it has paused its upstream sender. One piece for every device that pauses its
/// neighbour: [`PfcPorts`]' ingress ports and Stardust's adapters' host ports.
#[derive(Clone, Copy, Debug, Default)]
pub struct IngressAccount {
    held_packets: u32,
    pausing: bool,
}

impl IngressAccount {
    /// True if one more packet fits: below XOFF plus the headroom.
    pub fn has_room(&self, t: &PauseThresholds) -> bool {
        self.held_packets < t.xoff_packets + t.headroom_packets
    }

    /// Charges one admitted packet; true if the ingress must now send XOFF upstream.
    pub fn charge(&mut self, t: &PauseThresholds) -> bool {
        self.held_packets += 1;
        let pause = !self.pausing && self.held_packets >= t.xoff_packets;
        self.pausing |= pause;
        pause
    }

    /// Releases one packet that left; true if the ingress must now send XON upstream.
    pub fn release(&mut self, t: &PauseThresholds) -> bool {
        self.held_packets -= 1;
        let resume = self.pausing && self.held_packets <= t.xon_packets;
        self.pausing &= !resume;
        resume
    }

    /// Packets held beyond the XOFF threshold (the headroom in use).
    pub fn beyond_xoff(&self, t: &PauseThresholds) -> u32 {
        self.held_packets.saturating_sub(t.xoff_packets)
    }

    /// Packets held.
    pub fn held_packets(&self) -> u32 {
        self.held_packets
    }
}

/// What a PFC switch counts.
#[derive(Clone, Copy, Debug, Default)]
pub struct PfcCounters {
    /// XOFF frames sent upstream.
    pub pause_frames_sent: u64,
    /// XON frames sent upstream.
    pub resume_frames_sent: u64,
    /// PAUSE frames (either kind) that arrived from downstream.
    pub frames_received: u64,
    /// Data packets dropped because their ingress overran its headroom (or the pool was
    /// full): each one breaks the fabric's losslessness.
    pub drops: u64,
    /// ... of them, because the switch's whole buffer was full (the rest: an ingress past its
    /// headroom).
    pub buffer_drops: u64,
    /// The most packets an ingress held beyond its XOFF threshold.
    pub headroom_peak_packets: u32,
    /// XOFF frames sent upstream, by the class they name.
    pub class_pause_frames_sent: [u64; MAX_CLASSES],
}

/// One output port: its link and queues (control strictly first, then the data classes by
/// strict priority) and the bytes of data queued.
struct PfcPort {
    port: PriorityPort,
    data_bytes: u64,
    /// The far end's pauses of the classes.
    pause: ClassPauses,
    peak_packets: u32,
    measured: ArrivalDepths,
    /// BFC's queues' pauses and flow table (`None` without BFC).
    bfc: Option<BfcPort>,
    /// Aquarius' flow table and isolation queue (`None` without Aquarius).
    aquarius: Option<AquariusPort>,
    /// Ideal per-flow queues (`None` without them): they hold the port's data but the one
    /// packet picked for the link, which waits in `port`.
    ideal: Option<IdealPort>,
}

impl PfcPort {
    /// The queue data packet `c` (from `in_port`, of class `class`) joins here, and the
    /// frames upstream its per-flow kind sends because of it: BFC's (a resume of the queue a
    /// pause moves off, then the pause) or Aquarius' (a PAUSE naming its flow); without one,
    /// its class's queue. `c.vc` then names the queue (as the next hop's upstream queue). Last,
    /// the flow BFC's frames name beside their queue (0 for the others).
    fn per_flow_queue(
        &mut self,
        spec: &PfcSpec,
        c: &mut Cell,
        in_port: u16,
        class: u8,
        now_ps: TimePs,
    ) -> (usize, [Option<FlowFrame>; 2], u64) {
        let size_bytes = c.payload_bytes as u64;
        let mut flow_named = 0;
        let (queue, frames) = match (&mut self.bfc, &mut self.aquarius) {
            (Some(bfc), _) => {
                let port = &self.port;
                let got = bfc.enqueue(&spec.bfc().unwrap(), flow_key(c), c.vc, |q| {
                    port.class_cells(q as usize)
                });
                let on_in_port = |f: Option<(PauseTarget, bool)>| f.map(|(t, p)| (in_port, t, p));
                flow_named = got.flow;
                (got.queue, got.frames.map(on_in_port))
            }
            (None, Some(aquarius)) => {
                let backlog_bytes = self.data_bytes + size_bytes;
                let a_spec = &spec.aquarius().unwrap();
                let key = flow_key(c);
                let got = aquarius.enqueue(a_spec, key, in_port, size_bytes, backlog_bytes, now_ps);
                (got.queue, [got.frame, None])
            }
            (None, None) => return (class as usize, [None; 2], 0),
        };
        c.vc = queue;
        (queue as usize, frames, flow_named)
    }

    /// True with a per-flow kind's ports (BFC, Aquarius, ideal per-flow queues).
    fn per_flow(&self) -> bool {
        self.bfc.is_some() || self.aquarius.is_some() || self.ideal.is_some()
    }

    /// Data packets here: in the port's queues and (ideal per-flow queues) the flows'.
    fn data_cells(&self) -> u32 {
        self.port.data_cells() + self.ideal.as_ref().map_or(0, IdealPort::packets)
    }

    /// Ideal per-flow queues: if the link is free at `now_ps` and no packet waits for it,
    /// moves the next flow's packet to the port (with the RESUME its departure from its flow's
    /// queue sends); if the link is busy, the wake-up for when it frees, if a flow waits.
    fn pick_for_link(
        &mut self,
        spec: &PfcSpec,
        cells: &mut CellArena,
        now_ps: TimePs,
        wake: &mut Option<TimePs>,
    ) -> Option<FlowFrame> {
        let (ideal, spec) = (self.ideal.as_mut()?, spec.ideal()?);
        if !self.port.link.is_idle(now_ps) {
            *wake = ideal.wake_for(self.port.link.busy_until_ps()).or(*wake);
            return None;
        }
        if self.port.data_cells() > 0 {
            return None;
        }
        let (cell, resume) = ideal.next(&spec, cells)?;
        self.port.push_data(cells, cell, 0);
        resume
    }

    /// Applies the far end's pauses to the data queues: a paused class stops its queue, or,
    /// with BFC or Aquarius, every queue (the backstop); BFC's paused queues stop, and
    /// Aquarius' rsvQ while it may not send.
    fn apply_pauses(&mut self) {
        let mask = match (&self.bfc, &self.aquarius) {
            _ if self.per_flow() && self.pause.any_paused() => ClassMask::MAX,
            _ if self.ideal.is_some() => 0,
            (Some(bfc), _) => bfc.pauses.paused_mask(),
            (None, Some(aquarius)) => aquarius.paused_mask(),
            (None, None) => self.pause.paused_mask(),
        };
        self.port.set_paused(mask);
    }
}

/// What became of a packet offered to a PFC switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admitted {
    /// Queued at its output; `pause_port`: an XOFF (or BFC's queue PAUSE) was queued on that
    /// port (serve it too).
    Queued {
        /// CE was set.
        marked: bool,
        /// The ingress port that now sends XOFF (or a queue PAUSE) upstream.
        pause_port: Option<usize>,
    },
    /// Its ingress overran its headroom: the caller drops it.
    Dropped,
}

/// A PFC switch's ports, ingress accounts and shared pool.
pub struct PfcPorts {
    ports: Vec<PfcPort>,
    /// By (ingress port, class): `port * classes + class`.
    ingress: Vec<IngressAccount>,
    spec: PfcSpec,
    /// Breaks 802.1Qbb and BFC on purpose (tests): a PAUSE of any class or queue stops
    /// every class and queue.
    #[cfg(test)]
    pub pause_every_class: bool,
    pool_packets: u32,
    pool_used: u32,
    measure_from_ps: TimePs,
    /// The RED coin.
    rng: Rng,
    /// What it counted.
    pub counters: PfcCounters,
}

impl PfcPorts {
    /// Idle ports on `links` (one per port), measuring what arrivals find from
    /// `measure_from_ps` on, drawing RED's coin from `rng`.
    pub fn new(links: Vec<Link>, spec: PfcSpec, measure_from_ps: TimePs, rng: Rng) -> Self {
        let n = links.len();
        let classes = spec.classes as usize;
        PfcPorts {
            ports: links
                .into_iter()
                .map(|link| PfcPort {
                    port: {
                        let queues = match spec.per_flow {
                            Some(PerFlowSpec::Bfc(b)) => b.queues as usize,
                            Some(PerFlowSpec::Aquarius(a)) => a.queues as usize,
                            Some(PerFlowSpec::Ideal(_)) => 1,
                            None => classes,
                        };
                        let mut port = PriorityPort::new(link, queues);
                        if spec.round_robin || spec.per_flow.is_some() {
                            port.serve_classes_round_robin();
                        }
                        port
                    },
                    data_bytes: 0,
                    pause: ClassPauses::new(classes),
                    peak_packets: 0,
                    measured: ArrivalDepths::default(),
                    bfc: spec.bfc().map(|b| BfcPort::new(b.queues, b.bloom())),
                    aquarius: spec.aquarius().as_ref().map(AquariusPort::new),
                    ideal: spec.ideal().map(|_| IdealPort::new()),
                })
                .collect(),
            ingress: vec![IngressAccount::default(); n * classes],
            spec,
            #[cfg(test)]
            pause_every_class: false,
            pool_packets: spec.pool_packets_per_port * n as u32,
            pool_used: 0,
            measure_from_ps,
            rng,
            counters: PfcCounters::default(),
        }
    }

    /// Ports.
    pub fn port_count(&self) -> usize {
        self.ports.len()
    }

    /// Data packets waiting at `output`.
    pub fn data_packets(&self, output: usize) -> u32 {
        self.ports[output].data_cells()
    }

    /// Injects `fault` into every port's queues (test only).
    #[cfg(test)]
    pub(crate) fn inject_fault(&mut self, fault: crate::blocks::switch::Fault) {
        self.ports.iter_mut().for_each(|p| p.port.fault = fault);
    }

    /// Data packets the ports took from their queues under a fault (test only).
    #[cfg(test)]
    pub(crate) fn fault_taken(&self) -> u64 {
        self.ports.iter().map(|p| p.port.fault.taken).sum()
    }

    /// Packets the ports hold (control and data, not on the wire).
    pub fn packets_queued(&self) -> u64 {
        self.ports
            .iter()
            .map(|p| {
                p.port.queued_cells() as u64 + p.ideal.as_ref().map_or(0, |i| i.packets() as u64)
            })
            .sum()
    }

    /// Deepest data queue seen, in packets.
    pub fn peak_packets(&self) -> u32 {
        self.ports.iter().map(|p| p.peak_packets).max().unwrap_or(0)
    }

    /// What data arrivals found at each output in the measurement window.
    pub fn measured(&self) -> Vec<ArrivalDepths> {
        self.ports.iter().map(|p| p.measured).collect()
    }

    /// Time the ports' classes were paused up to `now_ps`, summed over ports and classes,
    /// and the longest single pause.
    pub fn paused_ps(&self, now_ps: TimePs) -> (TimePs, TimePs) {
        self.ports.iter().fold((0, 0), |(sum, longest), p| {
            let (paused, long) = p.pause.totals_ps(now_ps);
            (sum + paused, longest.max(long))
        })
    }

    /// The ports' pause clocks of class `class` (what the far ends' frames did to it).
    pub fn class_clocks(&self, class: usize) -> impl Iterator<Item = &PauseClock> {
        self.ports.iter().map(move |p| p.pause.class(class))
    }

    /// BFC's ports (what the far ends' frames did to their queues, what they counted), or
    /// nothing without BFC.
    pub fn bfc_ports(&self) -> impl Iterator<Item = &BfcPort> {
        self.ports.iter().filter_map(|p| p.bfc.as_ref())
    }

    /// What BFC's ports counted, summed (zeros without BFC).
    pub fn bfc_counters(&self) -> BfcCounters {
        self.bfc_ports()
            .fold(BfcCounters::default(), |sum, b| sum.plus(&b.counters))
    }

    /// Queues a PAUSE or resume frame for `target` on `port`.
    fn send_frame(
        &mut self,
        cells: &mut CellArena,
        port: usize,
        target: PauseTarget,
        pause: bool,
        now_ps: TimePs,
    ) {
        self.send_frame_naming(cells, port, (target, 0), pause, now_ps);
    }

    /// Queues a PAUSE or resume frame for `target` on `port` that also names flow `flow` (a
    /// BFC queue's frame names the flow that caused it, for the far end's Bloom filter).
    fn send_frame_naming(
        &mut self,
        cells: &mut CellArena,
        port: usize,
        (target, flow): (PauseTarget, u64),
        pause: bool,
        now_ps: TimePs,
    ) {
        let mut cell = pause_frame(target, pause, now_ps);
        if let PauseTarget::Queue(_) = target {
            cell.route_tag = flow;
        }
        let frame = cells.alloc(cell);
        self.ports[port].port.push_control(cells, frame);
        let c = &mut self.counters;
        match (target, pause) {
            (PauseTarget::Class(class), true) => {
                c.pause_frames_sent += 1;
                c.class_pause_frames_sent[class as usize] += 1;
            }
            (PauseTarget::Class(_), false) => c.resume_frames_sent += 1,
            (PauseTarget::Queue(_), _) => {
                let bfc = self.ports[port].bfc.as_mut().expect("a BFC port");
                bfc.counters.count_frame(pause);
            }
            // Counted by the Aquarius port whose congestion sent it.
            (PauseTarget::Flow(_), _) => {}
        }
    }

    /// PAUSE and resume frames its ports made, of every kind (each a packet of the run's
    /// account until its far end takes it).
    pub fn frames_sent(&self) -> u64 {
        let (c, bfc, aquarius) = (
            &self.counters,
            self.bfc_counters(),
            self.aquarius_counters(),
        );
        c.pause_frames_sent
            + c.resume_frames_sent
            + bfc.queue_pause_frames_sent
            + bfc.queue_resume_frames_sent
            + aquarius.flow_pause_frames_sent
            + aquarius.flow_resume_frames_sent
            + self.ideal_counters().flow_pause_frames_sent
            + self.ideal_counters().flow_resume_frames_sent
    }

    /// Aquarius' ports (what they counted, their rsvQs' pause clocks), or nothing without
    /// Aquarius.
    pub fn aquarius_ports(&self) -> impl Iterator<Item = &AquariusPort> {
        self.ports.iter().filter_map(|p| p.aquarius.as_ref())
    }

    /// What Aquarius' ports counted, summed (zeros without Aquarius).
    pub fn aquarius_counters(&self) -> AquariusCounters {
        self.aquarius_ports()
            .fold(AquariusCounters::default(), |sum, a| sum.plus(&a.counters))
    }

    /// What ideal per-flow queues' ports counted, summed (zeros without them).
    pub fn ideal_counters(&self) -> IdealCounters {
        let ports = self.ports.iter().filter_map(|p| p.ideal.as_ref());
        ports.fold(IdealCounters::default(), |sum, i| sum.plus(&i.counters))
    }

    /// Offers `cell`, which arrived on `in_port` at `now_ps`, to output `output`: a control
    /// packet joins the control queue; a data packet is charged to its ingress port and
    /// class (`Cell::vc`; which may send XOFF for that class), marked, and queued in its
    /// class, or dropped if its ingress class has used its headroom. With BFC the class is
    /// 0, `Cell::vc` names the upstream queue it left, and it joins its flow's queue (which
    /// `Cell::vc` then names), maybe pausing that upstream queue.
    pub fn offer(
        &mut self,
        cells: &mut CellArena,
        cell: CellId,
        in_port: usize,
        output: usize,
        now_ps: TimePs,
        control: bool,
    ) -> Admitted {
        if control {
            self.ports[output].port.push_control(cells, cell);
            return Admitted::Queued {
                marked: false,
                pause_port: None,
            };
        }
        let spec = self.spec;
        let size_bytes = cells[cell].payload_bytes as u64;
        let p = &mut self.ports[output];
        let depth = p.data_cells();
        if now_ps >= self.measure_from_ps {
            p.measured.record(size_bytes, depth);
        }
        let thresholds = spec.thresholds();
        let class = if p.per_flow() {
            0
        } else {
            cells[cell].vc as u8
        };
        debug_assert!(class < spec.classes, "a class the switch keeps");
        let ingress = &mut self.ingress[in_port * spec.classes as usize + class as usize];
        let buffer_full = self.pool_used >= self.pool_packets;
        if buffer_full || (spec.backstop && !ingress.has_room(&thresholds)) {
            self.counters.drops += 1;
            self.counters.buffer_drops += buffer_full as u64;
            return Admitted::Dropped;
        }
        self.pool_used += 1;
        let pause_port = (ingress.charge(&thresholds) && spec.backstop).then_some(in_port);
        let beyond = ingress.beyond_xoff(&thresholds);
        self.counters.headroom_peak_packets = self.counters.headroom_peak_packets.max(beyond);
        let c = &mut cells[cell];
        c.in_port = in_port as u16;
        let marked = c.flags & ECT != 0 && spec.marking.marks(depth, p.data_bytes, &mut self.rng);
        if marked {
            c.flags |= CE;
        }
        let (frames, flow_named) = match (&mut p.ideal, spec.ideal()) {
            (Some(ideal), Some(i_spec)) => {
                let key = flow_key(c);
                c.vc = 0;
                let frame = ideal.enqueue(&i_spec, cells, cell, key, in_port as u16);
                ([frame, None], 0)
            }
            _ => {
                let (queue, frames, flow_named) =
                    p.per_flow_queue(&spec, c, in_port as u16, class, now_ps);
                p.port.push_data(cells, cell, queue);
                (frames, flow_named)
            }
        };
        p.data_bytes += size_bytes;
        p.peak_packets = p.peak_packets.max(depth + 1);
        if p.aquarius.is_some() {
            self.refresh_pauses(output);
        }
        if let Some(port) = pause_port {
            self.send_frame(cells, port, PauseTarget::Class(class), true, now_ps);
        }
        for (port, target, pause) in frames.into_iter().flatten() {
            self.send_frame_naming(cells, port as usize, (target, flow_named), pause, now_ps);
        }
        let pause_port = pause_port.or(frames[0].map(|(port, ..)| port as usize));
        Admitted::Queued { marked, pause_port }
    }

    /// A PAUSE or resume frame `cell` arrived on `port` at `now_ps` (the caller consumes it
    /// and then serves the port).
    pub fn frame_arrives(&mut self, cells: &CellArena, cell: CellId, port: usize, now_ps: TimePs) {
        let (target, pause) = read_pause_frame(&cells[cell]);
        let p = &mut self.ports[port];
        match target {
            PauseTarget::Class(class) => p.pause.apply(class as u16, pause, now_ps),
            PauseTarget::Queue(queue) => {
                let bfc = p.bfc.as_mut().expect("queue pauses reach BFC ports only");
                bfc.far_end(queue, cells[cell].route_tag, pause, now_ps);
            }
            PauseTarget::Flow(flow) if p.ideal.is_some() => {
                p.ideal.as_mut().unwrap().far_end(flow, pause);
            }
            PauseTarget::Flow(flow) => {
                let aquarius = p
                    .aquarius
                    .as_mut()
                    .expect("flow pauses reach Aquarius ports only");
                aquarius.far_end(flow, pause, now_ps);
            }
        }
        self.refresh_pauses(port);
        self.counters.frames_received += 1;
    }

    /// Applies port `output`'s pauses to its queues (in tests, broken on purpose with
    /// `pause_every_class`).
    fn refresh_pauses(&mut self, output: usize) {
        let p = &mut self.ports[output];
        p.apply_pauses();
        #[cfg(test)]
        if self.pause_every_class {
            let queues = p.bfc.as_ref().is_some_and(|b| b.pauses.any_paused())
                || p.aquarius.as_ref().is_some_and(|a| a.any_flow_paused())
                || p.ideal.as_ref().is_some_and(|i| i.any_flow_paused());
            p.port.pause_data(p.pause.any_paused() || queues);
        }
    }

    /// If `output`'s link is free at `now_ps`, puts its next packet on it and returns it,
    /// with the ingress port that sends XON (or BFC's queue resume) because of it (its frame
    /// queued there: serve that port too). Otherwise returns `None` and, if packets may go when the link frees
    /// and no wake-up is set for then, that time in `wake`.
    pub fn send_next(
        &mut self,
        output: usize,
        now_ps: TimePs,
        cells: &mut CellArena,
        wake: &mut Option<TimePs>,
    ) -> Option<(Departure, Option<usize>)> {
        let size = |c: CellId, cells: &CellArena| cells[c].payload_bytes as u64;
        let spec = self.spec;
        let p = &mut self.ports[output];
        let picked_resume = p.pick_for_link(&spec, cells, now_ps, wake);
        if let Some((port, target, pause)) = picked_resume {
            self.send_frame(cells, port as usize, target, pause, now_ps);
        }
        let picked_port = picked_resume.map(|(port, ..)| port as usize);
        let p = &mut self.ports[output];
        let departure = p.port.send_next(now_ps, cells, size, wake)?;
        if departure.data_depth == 0 {
            return Some((departure, picked_port));
        }
        p.data_bytes -= cells[departure.cell].payload_bytes as u64;
        self.pool_used -= 1;
        let left = &cells[departure.cell];
        let in_port = left.in_port as usize;
        let mut flow_resume = None;
        let (class, queue_resume) = match (&mut p.bfc, &self.spec.bfc()) {
            _ if p.aquarius.is_some() => {
                let (aquarius, spec) =
                    (p.aquarius.as_mut().unwrap(), &self.spec.aquarius().unwrap());
                let size_bytes = left.payload_bytes as u64;
                flow_resume = aquarius.dequeue(
                    spec,
                    flow_key(left),
                    left.vc,
                    size_bytes,
                    p.data_bytes,
                    now_ps,
                );
                (0, None)
            }
            (Some(bfc), Some(spec)) => (0, bfc.dequeue(spec, flow_key(left))),
            _ if p.ideal.is_some() => (0, None),
            _ => (left.vc as u8, None),
        };
        if self.spec.aquarius().is_some() {
            self.refresh_pauses(output);
        }
        let account = in_port * self.spec.classes as usize + class as usize;
        let resume = self.ingress[account].release(&self.spec.thresholds()) && self.spec.backstop;
        if resume {
            self.send_frame(cells, in_port, PauseTarget::Class(class), false, now_ps);
        }
        if let Some(named) = queue_resume {
            self.send_frame_naming(cells, in_port, named, false, now_ps);
        }
        if let Some((port, target, pause)) = flow_resume {
            self.send_frame(cells, port as usize, target, pause, now_ps);
        }
        let frame_sent = resume || queue_resume.is_some();
        let frame_port = flow_resume.map(|(port, ..)| port as usize).or(picked_port);
        Some((departure, frame_port.or(frame_sent.then_some(in_port))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{stream, ComponentId};

    fn ports(n: usize, spec: PfcSpec) -> PfcPorts {
        let rng = stream(
            3,
            ComponentId {
                kind: crate::blocks::stream_kind::ETHERNET_PFC,
                index: 0,
            },
        );
        // 1 byte per ns.
        let links = (0..n).map(|_| Link::new(8_000_000_000, 0)).collect();
        PfcPorts::new(links, spec, 0, rng)
    }

    fn spec(xoff: u32, xon: u32, headroom: u32) -> PfcSpec {
        PfcSpec {
            pool_packets_per_port: 100,
            classes: 1,
            round_robin: false,
            xoff_packets: xoff,
            xon_packets: xon,
            headroom_packets: headroom,
            marking: Marking::Red {
                kmin_bytes: 1_500,
                kmax_bytes: 3_500,
                pmax: 0.0,
            },
            per_flow: None,
            backstop: true,
        }
    }

    fn data(cells: &mut CellArena) -> CellId {
        super::super::test_packet(cells, |c| c.flags = ECT)
    }

    /// Ingress 0 feeds output 1, whose far end paused it: XOFF at 3 held, headroom for 2
    /// more, the sixth dropped; draining to XON = 1 sends the resume upstream.
    #[test]
    fn xoff_at_the_threshold_headroom_then_drop_and_xon_when_drained() {
        let mut cells = CellArena::new();
        let mut pfc = ports(2, spec(3, 1, 2));
        let pause_out = cells.alloc(pause_frame(PauseTarget::Class(0), true, 0));
        pfc.frame_arrives(&cells, pause_out, 1, 0);
        cells.free(pause_out);
        let got: Vec<Admitted> = (0..6)
            .map(|_| {
                let c = data(&mut cells);
                pfc.offer(&mut cells, c, 0, 1, 0, false)
            })
            .collect();
        let pauses: Vec<Option<usize>> = got
            .iter()
            .map(|a| match a {
                Admitted::Queued { pause_port, .. } => *pause_port,
                Admitted::Dropped => None,
            })
            .collect();
        assert_eq!(pauses, vec![None, None, Some(0), None, None, None]);
        assert_eq!(got[5], Admitted::Dropped);
        assert_eq!(pfc.counters.pause_frames_sent, 1);
        assert_eq!(
            (pfc.counters.drops, pfc.counters.headroom_peak_packets),
            (1, 2)
        );
        // Marks: depths 0, 1000, 2000, 3000, 4000 B: only the last is above Kmax.
        let marked: Vec<bool> = got
            .iter()
            .map(|a| matches!(a, Admitted::Queued { marked: true, .. }))
            .collect();
        assert_eq!(marked, vec![false, false, false, false, true, false]);
        // The XOFF frame waits on port 0's control queue; output 1 is paused: nothing goes.
        let mut wake = None;
        assert!(pfc.send_next(1, 0, &mut cells, &mut wake).is_none());
        let (xoff, _) = pfc.send_next(0, 0, &mut cells, &mut wake).unwrap();
        assert_eq!(
            read_pause_frame(&cells[xoff.cell]),
            (PauseTarget::Class(0), true)
        );
        assert_eq!(xoff.arrive_ps, 64_000, "64 B at 1 byte/ns");
        // Output 1 resumes: its five packets leave one per µs; XON when 1 is held.
        let resume = cells.alloc(pause_frame(PauseTarget::Class(0), false, 0));
        pfc.frame_arrives(&cells, resume, 1, 10_000);
        let mut resumed_at = None;
        for k in 0..5u64 {
            let at_ps = 10_000 + k * 1_000_000;
            let (d, xon) = pfc.send_next(1, at_ps, &mut cells, &mut wake).unwrap();
            assert_ne!(d.data_depth, 0);
            if xon.is_some() {
                resumed_at.get_or_insert(k);
            }
        }
        assert_eq!(resumed_at, Some(3), "held 5, 4, 3, 2, then 1 = XON");
        assert_eq!(pfc.counters.resume_frames_sent, 1);
        assert_eq!(pfc.paused_ps(20_000_000), (10_000, 10_000));
    }

    /// Two classes from ingress 0 to output 1: class 1's account crosses XOFF alone and its
    /// XOFF names class 1; a PAUSE of class 0 at output 1 stops class 0 while class 1 goes.
    #[test]
    fn each_class_has_its_own_account_and_pause() {
        let mut cells = CellArena::new();
        let mut pfc = ports(
            2,
            PfcSpec {
                classes: 2,
                ..spec(3, 1, 2)
            },
        );
        let pause0 = cells.alloc(pause_frame(PauseTarget::Class(0), true, 0));
        pfc.frame_arrives(&cells, pause0, 1, 0);
        let mut offer = |cells: &mut CellArena, class: u16| {
            let cell = data(cells);
            cells[cell].vc = class;
            pfc.offer(cells, cell, 0, 1, 0, false)
        };
        for _ in 0..2 {
            offer(&mut cells, 0);
        }
        let pauses: Vec<_> = (0..3)
            .map(|_| match offer(&mut cells, 1) {
                Admitted::Queued { pause_port, .. } => pause_port,
                Admitted::Dropped => unreachable!("room"),
            })
            .collect();
        assert_eq!(pauses, vec![None, None, Some(0)], "class 1 alone holds 3");
        assert_eq!(
            pfc.counters.class_pause_frames_sent,
            [0, 1, 0, 0, 0, 0, 0, 0]
        );
        let mut wake = None;
        let (xoff, _) = pfc.send_next(0, 0, &mut cells, &mut wake).unwrap();
        assert_eq!(
            read_pause_frame(&cells[xoff.cell]),
            (PauseTarget::Class(1), true)
        );
        // Output 1: class 0 paused, its two packets wait; class 1's three go.
        for k in 0..3u64 {
            let (d, _) = pfc
                .send_next(1, k * 1_000_000, &mut cells, &mut wake)
                .unwrap();
            assert_eq!(cells[d.cell].vc, 1);
        }
        assert!(pfc.send_next(1, 3_000_000, &mut cells, &mut wake).is_none());
        assert_eq!(pfc.data_packets(1), 2);
        assert_eq!(pfc.counters.resume_frames_sent, 1, "class 1 drained to XON");
    }
}
