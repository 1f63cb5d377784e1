//! The Ethernet baseline's scenario: the validated description of one run. Unknown keys,
//! wrong types and impossible values are rejected with one [`ScenarioError`] naming the key;
//! keys the chosen transport, pattern or topology ignore are listed by
//! [`EthernetConfig::unused_keys`] for the strict review. Defaults are the Stardust paper's
//! baselines (Stardust §6.3 and App. G, completed from the htsim examples they reuse; see
//! `docs/validation/transports.md`): 10 Gbit/s, 1 µs per link, 9000-byte packets, 100-packet output
//! queues, ECN at K = 15 packets for DCTCP. NDP runs on trimming queues (`switch.trimming`,
//! 8 packets in htsim's setup) and needs per-packet routing; trimming serves NDP only (a TCP
//! receiver has no use for a trimmed header). DCQCN runs on a lossless fabric only (`switch.pfc`):
//! PFC over a shared buffer of `switch.queue_packets` per port, RED-like marking (the DCQCN paper's
//! Kmin = 5 KB, Kmax = 200 KB, Pmax = 1%), its senders' constants from the paper's §5 with the rate
//! steps scaled from 40 to 10 Gbit/s.

use serde::{Deserialize, Serialize};

use crate::blocks::ethernet::bfc::BfcSpec;
use crate::blocks::ethernet::host_config::{HostConfig, DCQCN_HOST_KEYS};
use crate::blocks::ethernet::opening::Opening;
use crate::blocks::ethernet::pause::MAX_PAUSE_TARGETS;
use crate::blocks::ethernet::pfc::{Marking, PauseThresholds, PfcSpec, MAX_CLASSES};
use crate::blocks::ethernet::shared_buffer::DynamicThreshold;
use crate::blocks::link::LinkConfig;
use crate::blocks::patterns::{
    self, closed_loop, fct, incast, pairs, permutation, poisson, PatternKeys, TrafficPattern,
    TransportHosts,
};
use crate::blocks::routing::mode;
use crate::blocks::topology::Topology;
use crate::blocks::transport::Transport;
use crate::blocks::workload::FctKeys;
use crate::engine::time::{ps_from_ns, TimePs};
use crate::scenario::{
    invalid, Named, RoutingConfig, RunConfig, ScenarioError, TopologyConfig, Unused, UnusedKeys,
};

/// A whole Ethernet scenario.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EthernetConfig {
    /// Always `"ethernet"` (read by [`crate::designs::build`]).
    pub design: String,
    /// Run length, warm-up (goodput is measured after it) and seed.
    #[serde(default)]
    pub run: RunConfig,
    /// The switches and how hosts are cabled to them.
    #[serde(default = "default_topology")]
    pub topology: TopologyConfig,
    /// Every cable (a topology file may give a cable its own rate and length).
    #[serde(default)]
    pub link: LinkConfig,
    /// How switches pick among equal-cost next hops (`ecmp`: per flow; `spray`: per packet).
    #[serde(default = "default_routing")]
    pub routing: RoutingConfig,
    /// The switches' output queues.
    #[serde(default)]
    pub switch: SwitchConfig,
    /// The hosts' transport.
    #[serde(default)]
    pub host: HostConfig,
    /// Who sends to whom.
    #[serde(default)]
    pub traffic: TrafficConfig,
}

fn default_topology() -> TopologyConfig {
    TopologyConfig::fat_tree(4)
}

fn default_routing() -> RoutingConfig {
    RoutingConfig {
        mode: "ecmp".into(),
        ..RoutingConfig::default()
    }
}

/// Output queues, one per switch port.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct SwitchConfig {
    /// Packets an output queue holds (100 in the paper's DCTCP and MPTCP runs).
    pub queue_packets: u32,
    /// Bytes an output queue holds, if bounded in bytes too; absent: packets only.
    pub queue_bytes: Option<u64>,
    /// DCTCP: an arriving ECN-capable packet is marked CE when more than this many packets
    /// are queued (K = 15 in the htsim runs the paper used).
    pub ecn_threshold_packets: u32,
    /// Every packet a switch takes is lost with this probability, independently (a lossy
    /// link, for checking NewReno against the Mathis et al. formula); 0: none.
    pub loss_probability: f64,
    /// htsim's `RandomQueue` (the queues of the MPTCP runs the Stardust paper used): an
    /// arrival finding the output queue within this many packets of full is dropped with
    /// `random_drop_probability` even if it fits (htsim: 3 of 100); 0: drop-tail only.
    pub random_drop_packets: u32,
    /// The probability of a random drop near the top of the queue (htsim: 0.1).
    pub random_drop_probability: f64,
    /// Cut-through switching: a switch takes a frame once its first 64 bytes are in and may
    /// send it on at once, instead of storing it whole first (store-and-forward, the
    /// default and htsim's). Hosts still take a frame at its last bit. Drop-tail FIFO ports
    /// only (not with `trimming` or `pfc`).
    pub cut_through: bool,
    /// NDP's trimming ports (Handley et al. 2017 §3.1): a full data queue of `queue_packets`
    /// (the one on the wire counted, as in htsim) trims a packet to its header instead of
    /// dropping it; headers and control packets share a header queue of `queue_packets` full
    /// packets' bytes, served 10:1 over data. Only with `host.transport = "ndp"`.
    pub trimming: bool,
    /// NDP's return-to-sender (Handley et al. 2017 §3.1, htsim's `CompositeQueue`): a trimmed
    /// header that finds its header queue full goes back toward its sender (source and
    /// destination swapped, queued as a header), which resends the packet without waiting
    /// for its RTO; false: it is dropped. Only with `trimming`. Off by default, which keeps
    /// earlier NDP results as they were.
    pub return_to_sender: bool,
    /// PFC (IEEE 802.1Qbb): a lossless switch whose ports share one buffer of
    /// `queue_packets` per port, each packet charged to its ingress until it leaves; an
    /// ingress holding `pfc_xoff_packets` pauses its upstream neighbour with a PAUSE frame,
    /// one drained to `pfc_xon_packets` resumes it. Required by DCQCN.
    pub pfc: bool,
    /// PFC: lossless classes (802.1Qbb priorities) paused apart, 1 to 8; absent: 1. Each
    /// ingress port keeps an account per class with the thresholds below, so
    /// `pfc_classes × (pfc_xoff_packets + pfc_headroom_packets)` must fit `queue_packets`;
    /// a port serves its classes as `pfc_class_service` says.
    pub pfc_classes: Option<u32>,
    /// PFC: how a port serves its data classes: `strict_priority` (class 0 first, the
    /// default) or `round_robin` (ETS with equal weights, IEEE 802.1Qaz).
    pub pfc_class_service: Option<ClassService>,
    /// PFC: packets an ingress class holds when it sends XOFF.
    pub pfc_xoff_packets: u32,
    /// PFC: packets a paused ingress class drains to before it sends XON.
    pub pfc_xon_packets: u32,
    /// PFC: packets an ingress class may take beyond XOFF, for what is already on its way
    /// (one cable round trip plus a frame each end: 4 packets of 9000 B at 10 Gbit/s, 1 µs).
    pub pfc_headroom_packets: u32,
    /// BFC (Goyal et al., NSDI 2022 §3): each egress port of a PFC switch (`pfc` must be
    /// true, one class) serves `bfc_queues` physical queues in round robin, gives each flow
    /// with packets buffered there an empty queue if one is free (else shares one), and a
    /// flow holding `bfc_pause_packets` there pauses the upstream queue it came from; PFC's
    /// XOFF stays as the backstop. Hosts' NICs honour the pauses of their queues.
    pub bfc: bool,
    /// BFC: physical data queues per egress port (and host NIC), 1 to 64 (BFC: 32).
    pub bfc_queues: u32,
    /// BFC: packets a flow holds at an egress port when it pauses its upstream queue; it
    /// resumes it when it holds fewer (about one hop's pause round trip: at 10 Gbit/s, 1 µs
    /// and 9000-byte packets, 2 packets arrive after a pause, so 4 keeps the port busy).
    pub bfc_pause_packets: u32,
    /// How the drop-tail (ECN-marking) output queues hold packets: `per_port` (each its own
    /// `queue_packets`, the default) or `shared` (one buffer per switch under Choudhury &
    /// Hahne's dynamic threshold: a queue takes a packet only while it holds fewer than
    /// `dt_alpha` × the free buffer). Not with `trimming` or `pfc`.
    pub buffer: BufferKind,
    /// With `buffer = "shared"`: packets the whole switch buffer holds (B); absent:
    /// `queue_packets` × the switch's ports (the per-port buffers pooled).
    pub shared_buffer_packets: Option<u32>,
    /// With `buffer = "shared"`: the dynamic threshold's α (a queue may hold α × the free
    /// buffer); absent: 1.
    pub dt_alpha: Option<f64>,
    /// DCQCN: no ECN mark while an output queue holds at most this many bytes (Kmin).
    pub red_kmin_bytes: u64,
    /// DCQCN: every ECN-capable arrival marked above this many bytes queued (Kmax).
    pub red_kmax_bytes: u64,
    /// DCQCN: the marking probability at Kmax, rising linearly from Kmin (Pmax).
    pub red_pmax: f64,
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            queue_packets: 100,
            queue_bytes: None,
            ecn_threshold_packets: 15,
            loss_probability: 0.0,
            random_drop_packets: 0,
            random_drop_probability: 0.1,
            cut_through: false,
            trimming: false,
            return_to_sender: false,
            pfc: false,
            pfc_classes: None,
            pfc_class_service: None,
            buffer: BufferKind::PerPort,
            shared_buffer_packets: None,
            dt_alpha: None,
            pfc_xoff_packets: 96,
            pfc_xon_packets: 94,
            pfc_headroom_packets: 4,
            bfc: false,
            bfc_queues: 32,
            bfc_pause_packets: 4,
            red_kmin_bytes: 5_000,
            red_kmax_bytes: 200_000,
            red_pmax: 0.01,
        }
    }
}

/// How a switch's drop-tail output queues hold packets (`switch.buffer`).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum BufferKind {
    /// Each output queue its own buffer of `switch.queue_packets`.
    #[default]
    PerPort,
    /// One buffer per switch under a dynamic threshold (Choudhury & Hahne 1998).
    Shared,
}

impl Named for BufferKind {
    const ALL: &'static [BufferKind] = &[BufferKind::PerPort, BufferKind::Shared];

    fn entry(self) -> (&'static str, &'static str) {
        match self {
            BufferKind::PerPort => ("per_port", "drop-tail output queues of switch.queue_packets each"),
            BufferKind::Shared => ("shared", "output queues over one switch buffer (switch.shared_buffer_packets, default switch.queue_packets per port) under the dynamic threshold alpha x free buffer (switch.dt_alpha; Choudhury & Hahne 1998)"),
        }
    }
}

/// How a PFC port serves its data classes (`switch.pfc_class_service`).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ClassService {
    /// Class 0 first, then 1, and so on (802.1Q's strict priority selection).
    #[default]
    StrictPriority,
    /// One packet per class in turn (ETS with equal weights, IEEE 802.1Qaz).
    RoundRobin,
}

/// α of the dynamic threshold when `switch.dt_alpha` is absent.
pub const DEFAULT_DT_ALPHA: f64 = 1.0;

/// The patterns the Ethernet baseline runs, in the order its messages list them.
pub const PATTERNS: &[&TrafficPattern] = &[
    &permutation::PATTERN,
    &incast::PATTERN,
    &pairs::PATTERN,
    &fct::PATTERN,
    &poisson::PATTERN,
    &closed_loop::PATTERN,
];

/// Who sends to whom.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrafficConfig {
    /// The pattern, one of [`PATTERNS`] (what each sends: `blocks/patterns/`).
    pub pattern: String,
    /// Bytes each flow sends (450 KB in the paper's incast); absent: flows never end.
    pub flow_bytes: Option<u64>,
    /// Incast: the receiving host.
    pub incast_host: u32,
    /// Incast: how many hosts send (drawn from the run's seed); absent: every other host.
    pub senders: Option<u32>,
    /// MPTCP: this many of the pattern's flows (its first) run one subflow, which LIA leaves
    /// a TCP NewReno flow: TCP beside MPTCP (RFC 6356 §2's fairness goal).
    pub single_path_flows: u32,
    /// Fct: the host whose flows are timed, and the host it sends them to.
    pub fct_src: u32,
    /// Fct: see `fct_src`.
    pub fct_dst: u32,
    /// Fct: the timed flows' offered load, a fraction of the source's line rate.
    pub fct_load: f64,
    /// Fct, poisson, closed loop: a flow-size distribution file (`size cdf` lines; relative
    /// paths in a scenario file are resolved against its folder by the front end).
    pub flow_sizes: Option<String>,
    /// Fct: unending flows per background host.
    pub background_flows: u32,
    /// Poisson: every host's offered load, a fraction of its line rate.
    pub load: f64,
    /// Closed loop: flows each host keeps in flight.
    pub flows_per_host: u32,
    /// Pairs: the flows, `[sending host, receiving host]` each.
    pub pairs: Vec<[u32; 2]>,
    /// PFC: the traffic class of each of the pattern's flows, cycled: flow k (in the
    /// pattern's order) rides `flow_classes[k % len]`; absent: class `k % switch.pfc_classes`.
    /// Flows opened during the run ride class 0.
    pub flow_classes: Option<Vec<u32>>,
}

impl Default for TrafficConfig {
    fn default() -> Self {
        TrafficConfig {
            pattern: permutation::PATTERN.name.into(),
            flow_bytes: None,
            incast_host: 0,
            senders: None,
            single_path_flows: 0,
            fct_src: 0,
            fct_dst: 1,
            fct_load: 0.5,
            flow_sizes: None,
            background_flows: 4,
            load: 0.5,
            flows_per_host: 1,
            pairs: Vec::new(),
            flow_classes: None,
        }
    }
}

impl TrafficConfig {
    /// The section as the traffic patterns read it; the error names `traffic.pattern` if it
    /// is not one of [`PATTERNS`].
    pub fn keys(&self) -> Result<PatternKeys<'_>, ScenarioError> {
        Ok(PatternKeys {
            pattern: patterns::resolve(PATTERNS, &self.pattern)?,
            flow_bytes: self.flow_bytes,
            incast_host: self.incast_host,
            senders: self.senders,
            fct: FctKeys {
                src: self.fct_src,
                dst: self.fct_dst,
                load: self.fct_load,
                flow_sizes: self.flow_sizes.as_deref(),
                background_flows: self.background_flows,
            },
            load: self.load,
            flows_per_host: self.flows_per_host,
            pairs: &self.pairs,
            flows: &[],
            classes: 0,
        })
    }

    /// How hosts open flows during the run (`None` for the patterns whose flows are made at
    /// build).
    pub fn opening(&self) -> Option<Opening<'_>> {
        self.keys().ok()?.opening()
    }
}

impl EthernetConfig {
    /// Reads and validates a scenario.
    pub fn from_json(json: &str) -> Result<EthernetConfig, ScenarioError> {
        let config: EthernetConfig = crate::scenario::parse(json)?;
        config.validate()?;
        Ok(config)
    }

    /// The cabling.
    pub fn topology(&self) -> Result<Topology, ScenarioError> {
        let topology = self.topology.standalone()?;
        if topology.endpoints() < 2 {
            return Err(invalid("topology", "expected at least 2 hosts"));
        }
        Ok(topology)
    }

    /// Fabric line rate in bit/s.
    pub fn rate_bps(&self) -> u64 {
        (self.link.rate_gbps * 1e9).round() as u64
    }

    /// A host link's line rate in bit/s.
    pub fn host_rate_bps(&self) -> u64 {
        (self.link.host_rate_gbps.unwrap_or(self.link.rate_gbps) * 1e9).round() as u64
    }

    /// A cable's propagation delay.
    pub fn propagation_ps(&self) -> TimePs {
        ps_from_ns(self.link.propagation_ns)
    }

    /// The keys the chosen transport, pattern, routing and topology leave unused.
    pub fn unused_keys(&self) -> Vec<Unused> {
        let mut unused = UnusedKeys::default();
        unused.add_other_shapes(&self.topology);
        if self.switch.buffer == BufferKind::Shared && self.switch.shared_buffer_packets.is_some() {
            unused.add(
                &["switch.queue_packets"],
                "switch.shared_buffer_packets",
                "switch.shared_buffer_packets set (it gives the shared buffer's size)",
            );
        }
        if self.switch.random_drop_packets == 0 {
            unused.add(
                &["switch.random_drop_probability"],
                "switch.random_drop_packets",
                "switch.random_drop_packets = 0 (drop-tail only)",
            );
        }
        if self.host.transport != Transport::Ndp {
            unused.add(
                &["host.ndp_pull_rate", "host.ndp_paths"],
                "host.transport",
                format!("host.transport = {:?}", self.host.transport.as_str()),
            );
        }
        if self.host.transport != Transport::Dcqcn {
            unused.add(
                DCQCN_HOST_KEYS,
                "host.transport",
                format!("host.transport = {:?}", self.host.transport.as_str()),
            );
            unused.add(
                &[
                    "switch.red_kmin_bytes",
                    "switch.red_kmax_bytes",
                    "switch.red_pmax",
                ],
                "host.transport",
                format!("host.transport = {:?}", self.host.transport.as_str()),
            );
        }
        if !self.switch.pfc {
            unused.add(
                &[
                    "switch.pfc_xoff_packets",
                    "switch.pfc_xon_packets",
                    "switch.pfc_headroom_packets",
                ],
                "switch.pfc",
                "switch.pfc = false (drop-tail queues)",
            );
        }
        if !self.switch.bfc {
            unused.add(
                &["switch.bfc_queues", "switch.bfc_pause_packets"],
                "switch.bfc",
                "switch.bfc = false (no per-flow queues)",
            );
        }
        if self.host.transport != Transport::Mptcp {
            unused.add(
                &["host.subflows", "traffic.single_path_flows"],
                "host.transport",
                format!(
                    "host.transport = {:?} (one path per flow)",
                    self.host.transport.as_str()
                ),
            );
        }
        match self.host.transport {
            Transport::Tcp => unused.add(
                &["switch.ecn_threshold_packets", "host.dctcp_g"],
                "host.transport",
                "host.transport = \"tcp\" (NewReno is not ECN-capable)",
            ),
            Transport::Mptcp => unused.add(
                &["switch.ecn_threshold_packets", "host.dctcp_g"],
                "host.transport",
                "host.transport = \"mptcp\" (its subflows are not ECN-capable)",
            ),
            Transport::Dctcp => {}
            Transport::Dcqcn | Transport::Ndp => {
                let (keys, because) = self.host.unused_by_transport();
                unused.add(&["switch.ecn_threshold_packets"], "host.transport", because);
                unused.add(keys, "host.transport", because);
            }
        }
        if !self.host.delayed_ack
            && !matches!(self.host.transport, Transport::Ndp | Transport::Dcqcn)
        {
            unused.add(
                &["host.delayed_ack_ns"],
                "host.delayed_ack",
                "host.delayed_ack = false (an ACK per segment)",
            );
        }
        if let Ok(keys) = self.traffic.keys() {
            for (key, because) in keys.unused(PATTERNS) {
                unused.add(&[key], "traffic.pattern", because);
            }
        }
        if self.routing.mode != "spray" {
            unused.add(
                &["routing.spray_rounds"],
                "routing.mode",
                format!("routing.mode = {:?}", self.routing.mode),
            );
        }
        unused.into_vec()
    }

    fn validate(&self) -> Result<(), ScenarioError> {
        self.run.validate()?;
        self.link.validate()?;
        match mode(&self.routing.mode) {
            Some(m) if !m.needs_groups => {}
            _ => {
                return Err(invalid(
                    "routing.mode",
                    format!(
                        "expected ecmp, spray, deterministic, rr_fixed, random or least_loaded, got {:?}",
                        self.routing.mode
                    ),
                ))
            }
        }
        if self.routing.spray_rounds == 0 {
            return Err(invalid("routing.spray_rounds", "expected at least 1"));
        }
        let s = &self.switch;
        if s.queue_packets == 0 {
            return Err(invalid(
                "switch.queue_packets",
                "expected at least 1 packet",
            ));
        }
        if !(s.loss_probability.is_finite() && (0.0..1.0).contains(&s.loss_probability)) {
            return Err(invalid(
                "switch.loss_probability",
                "expected at least 0, below 1",
            ));
        }
        if s.random_drop_packets > s.queue_packets {
            return Err(invalid(
                "switch.random_drop_packets",
                format!(
                    "expected at most switch.queue_packets ({})",
                    s.queue_packets
                ),
            ));
        }
        if !(s.random_drop_probability > 0.0 && s.random_drop_probability <= 1.0) {
            return Err(invalid(
                "switch.random_drop_probability",
                "expected above 0, at most 1",
            ));
        }
        if s.cut_through && (s.trimming || s.pfc) {
            return Err(invalid(
                "switch.cut_through",
                "expected false with switch.trimming or switch.pfc (cut-through is modelled for drop-tail FIFO ports)",
            ));
        }
        if s.random_drop_packets > 0 && (s.trimming || s.pfc) {
            return Err(invalid(
                "switch.random_drop_packets",
                "expected 0 with switch.trimming or switch.pfc (random drop is a drop-tail FIFO's)",
            ));
        }
        let h = &self.host;
        if s.queue_bytes.is_some_and(|b| b < h.packet_bytes as u64) {
            return Err(invalid(
                "switch.queue_bytes",
                format!(
                    "expected at least one packet (host.packet_bytes = {})",
                    h.packet_bytes
                ),
            ));
        }
        let ndp = h.transport == Transport::Ndp;
        if ndp && !s.trimming {
            return Err(invalid(
                "host.transport",
                "\"ndp\" needs trimming switch queues: set switch.trimming = true",
            ));
        }
        if s.trimming && !ndp {
            return Err(invalid(
                "switch.trimming",
                format!(
                    "expected host.transport = \"ndp\" ({:?} has no use for a trimmed header)",
                    h.transport.as_str()
                ),
            ));
        }
        if s.trimming && s.queue_bytes.is_some() {
            return Err(invalid(
                "switch.queue_bytes",
                "trimming queues count packets (switch.queue_packets); remove switch.queue_bytes",
            ));
        }
        if s.trimming && s.loss_probability > 0.0 {
            return Err(invalid(
                "switch.loss_probability",
                "expected 0 with switch.trimming (NDP's model has no random loss)",
            ));
        }
        if s.return_to_sender && !s.trimming {
            return Err(invalid(
                "switch.return_to_sender",
                "expected false without switch.trimming (only trimming ports return headers)",
            ));
        }
        if ndp && h.ndp_paths > 0 && self.routing.mode != "ecmp" {
            return Err(invalid(
                "host.ndp_paths",
                format!(
                    "expected 0 unless routing.mode = \"ecmp\" (ECMP hashes a packet's path label to its path), got routing.mode = {:?}",
                    self.routing.mode
                ),
            ));
        }
        if ndp && h.ndp_paths == 0 && matches!(self.routing.mode.as_str(), "ecmp" | "deterministic")
        {
            return Err(invalid(
                "routing.mode",
                format!(
                    "NDP sprays every packet: expected spray, random, rr_fixed or least_loaded (or ecmp with host.ndp_paths), got {:?}",
                    self.routing.mode
                ),
            ));
        }
        self.validate_pfc()?;
        self.validate_bfc()?;
        self.validate_shared_buffer()?;
        if h.transport == Transport::Dctcp
            && s.buffer == BufferKind::PerPort
            && s.ecn_threshold_packets >= s.queue_packets
        {
            return Err(invalid(
                "switch.ecn_threshold_packets",
                format!(
                    "expected fewer packets than switch.queue_packets ({}): a full queue drops before it marks",
                    s.queue_packets
                ),
            ));
        }
        h.validate()?;
        let hosts = TransportHosts {
            transport: h.transport,
            packet_bytes: h.packet_bytes,
        };
        self.traffic.keys()?.validate(PATTERNS, Some(hosts))
    }
}

impl EthernetConfig {
    /// PFC and DCQCN's settings: DCQCN only over PFC, PFC only over packet-counted FIFOs,
    /// thresholds within each port's share of the buffer.
    fn validate_pfc(&self) -> Result<(), ScenarioError> {
        let (s, h) = (&self.switch, &self.host);
        if h.transport == Transport::Dcqcn && !s.pfc {
            return Err(invalid(
                "host.transport",
                "\"dcqcn\" needs a lossless fabric (RoCE does not retransmit): set switch.pfc = true",
            ));
        }
        if !s.pfc {
            for (key, set) in [
                ("switch.pfc_classes", s.pfc_classes.is_some()),
                ("switch.pfc_class_service", s.pfc_class_service.is_some()),
                ("traffic.flow_classes", self.traffic.flow_classes.is_some()),
            ] {
                if set {
                    return Err(invalid(
                        key,
                        "expected only with switch.pfc = true (classes are PFC's priorities)",
                    ));
                }
            }
            return Ok(());
        }
        let classes = self.pfc_classes();
        if !(1..=MAX_CLASSES as u32).contains(&classes) {
            return Err(invalid(
                "switch.pfc_classes",
                format!("expected 1 to {MAX_CLASSES} (802.1Qbb priorities), got {classes}"),
            ));
        }
        if let Some(list) = &self.traffic.flow_classes {
            if list.is_empty() {
                return Err(invalid(
                    "traffic.flow_classes",
                    "expected at least one class",
                ));
            }
            if let Some(bad) = list.iter().find(|&&c| c >= classes) {
                return Err(invalid(
                    "traffic.flow_classes",
                    format!("expected classes below switch.pfc_classes ({classes}), got {bad}"),
                ));
            }
        }
        if h.transport == Transport::Ndp {
            return Err(invalid(
                "switch.pfc",
                "expected false with host.transport = \"ndp\" (NDP trims instead of pausing)",
            ));
        }
        if s.queue_bytes.is_some() {
            return Err(invalid(
                "switch.queue_bytes",
                "a PFC buffer counts packets (switch.queue_packets per port, shared); remove switch.queue_bytes",
            ));
        }
        if s.loss_probability > 0.0 {
            return Err(invalid(
                "switch.loss_probability",
                "expected 0 with switch.pfc (a lossless fabric)",
            ));
        }
        PauseThresholds {
            xoff_packets: s.pfc_xoff_packets,
            xon_packets: s.pfc_xon_packets,
            headroom_packets: s.pfc_headroom_packets,
        }
        .validate("switch.pfc_")?;
        if classes * (s.pfc_xoff_packets + s.pfc_headroom_packets) > s.queue_packets {
            let (xoff, headroom) = (s.pfc_xoff_packets, s.pfc_headroom_packets);
            let terms = "switch.pfc_xoff_packets + switch.pfc_headroom_packets";
            let (sum, values, share) = match classes {
                1 => (terms.to_string(), format!("{xoff} + {headroom}"), ""),
                _ => (
                    format!("switch.pfc_classes x ({terms})"),
                    format!("{classes} x ({xoff} + {headroom})"),
                    " split between its classes",
                ),
            };
            return Err(invalid(
                "switch.pfc_xoff_packets",
                format!(
                    "expected {sum} ({values}) at most switch.queue_packets ({}), a port's share of the shared buffer{share}",
                    s.queue_packets
                ),
            ));
        }
        if h.transport == Transport::Dcqcn {
            if s.red_kmin_bytes >= s.red_kmax_bytes {
                return Err(invalid(
                    "switch.red_kmin_bytes",
                    format!(
                        "expected fewer bytes than switch.red_kmax_bytes ({})",
                        s.red_kmax_bytes
                    ),
                ));
            }
            if !(s.red_pmax.is_finite() && s.red_pmax > 0.0 && s.red_pmax <= 1.0) {
                return Err(invalid("switch.red_pmax", "expected above 0, at most 1"));
            }
        }
        Ok(())
    }

    /// BFC's settings: over PFC's buffer with one class, per-flow routing (a flow's packets
    /// reach a port from one upstream queue), 1 to 64 queues, a flow's pause before the
    /// ingress's XOFF.
    fn validate_bfc(&self) -> Result<(), ScenarioError> {
        let s = &self.switch;
        if !s.bfc {
            return Ok(());
        }
        if !s.pfc {
            return Err(invalid(
                "switch.bfc",
                "expected switch.pfc = true (BFC runs over PFC's lossless buffer, its XOFF the backstop)",
            ));
        }
        if self.pfc_classes() != 1 {
            return Err(invalid(
                "switch.pfc_classes",
                "expected 1 with switch.bfc = true (BFC's queues stand for the classes)",
            ));
        }
        if self.traffic.flow_classes.is_some() {
            return Err(invalid(
                "traffic.flow_classes",
                "expected none with switch.bfc = true (BFC's queues stand for the classes)",
            ));
        }
        if !matches!(self.routing.mode.as_str(), "ecmp" | "deterministic") {
            return Err(invalid(
                "routing.mode",
                format!(
                    "expected ecmp or deterministic with switch.bfc = true (a flow's pause names one upstream queue), got {:?}",
                    self.routing.mode
                ),
            ));
        }
        if !(1..=MAX_PAUSE_TARGETS as u32).contains(&s.bfc_queues) {
            return Err(invalid(
                "switch.bfc_queues",
                format!(
                    "expected 1 to {MAX_PAUSE_TARGETS} queues per port, got {}",
                    s.bfc_queues
                ),
            ));
        }
        if s.bfc_pause_packets == 0 || s.bfc_pause_packets >= s.pfc_xoff_packets {
            return Err(invalid(
                "switch.bfc_pause_packets",
                format!(
                    "expected at least 1 packet and fewer than switch.pfc_xoff_packets ({}): a flow pauses its upstream queue before the backstop pauses the port, got {}",
                    s.pfc_xoff_packets, s.bfc_pause_packets
                ),
            ));
        }
        Ok(())
    }

    /// BFC's settings of the ports, if the switches run it.
    pub fn bfc_spec(&self) -> Option<BfcSpec> {
        let s = &self.switch;
        s.bfc.then_some(BfcSpec {
            queues: s.bfc_queues as u16,
            pause_packets: s.bfc_pause_packets,
        })
    }

    /// A shared buffer's keys: only with `switch.buffer = "shared"`, which the drop-tail
    /// FIFOs alone have (PFC pools its own buffer per ingress; trimming ports are NDP's), a
    /// buffer of at least one packet and a positive α.
    fn validate_shared_buffer(&self) -> Result<(), ScenarioError> {
        let s = &self.switch;
        if s.buffer == BufferKind::PerPort {
            for (key, set) in [
                (
                    "switch.shared_buffer_packets",
                    s.shared_buffer_packets.is_some(),
                ),
                ("switch.dt_alpha", s.dt_alpha.is_some()),
            ] {
                if set {
                    return Err(invalid(
                        key,
                        "expected switch.buffer = \"shared\" (per-port queues have no shared buffer)",
                    ));
                }
            }
            return Ok(());
        }
        if s.pfc {
            return Err(invalid(
                "switch.buffer",
                "expected \"per_port\" with switch.pfc (PFC's switches share their buffer per ingress, with static thresholds)",
            ));
        }
        if s.trimming {
            return Err(invalid(
                "switch.buffer",
                "expected \"per_port\" with switch.trimming (NDP's trimming queues are per port)",
            ));
        }
        if s.shared_buffer_packets == Some(0) {
            return Err(invalid(
                "switch.shared_buffer_packets",
                "expected at least 1 packet",
            ));
        }
        if let Some(alpha) = s.dt_alpha {
            if !(alpha.is_finite() && alpha > 0.0) {
                return Err(invalid(
                    "switch.dt_alpha",
                    format!("expected a finite number above 0, got {alpha}"),
                ));
            }
        }
        if s.queue_bytes.is_some() {
            return Err(invalid(
                "switch.queue_bytes",
                "a shared buffer counts packets (switch.shared_buffer_packets); remove switch.queue_bytes",
            ));
        }
        if s.random_drop_packets > 0 {
            return Err(invalid(
                "switch.random_drop_packets",
                "expected 0 with switch.buffer = \"shared\" (random drop is near the top of a static queue)",
            ));
        }
        Ok(())
    }

    /// The dynamic threshold of a switch of `ports` ports, if its queues share a buffer;
    /// with DCTCP, an error unless one queue can grow past its marking threshold K.
    pub fn dynamic_threshold(
        &self,
        ports: usize,
    ) -> Result<Option<DynamicThreshold>, ScenarioError> {
        let s = &self.switch;
        if s.buffer == BufferKind::PerPort {
            return Ok(None);
        }
        let pooled = (s.queue_packets as u64 * ports as u64).min(u32::MAX as u64) as u32;
        let threshold = DynamicThreshold {
            buffer_packets: s.shared_buffer_packets.unwrap_or(pooled),
            alpha: s.dt_alpha.unwrap_or(DEFAULT_DT_ALPHA),
        };
        let longest = threshold.longest_queue_packets();
        if self.host.transport == Transport::Dctcp && s.ecn_threshold_packets >= longest {
            return Err(invalid(
                "switch.ecn_threshold_packets",
                format!(
                    "expected fewer packets than the longest queue the dynamic threshold allows ({longest} of a {}-packet shared buffer, α = {}): a full queue drops before it marks",
                    threshold.buffer_packets, threshold.alpha
                ),
            ));
        }
        Ok(Some(threshold))
    }

    /// PFC's lossless classes (`switch.pfc_classes`, default 1).
    pub fn pfc_classes(&self) -> u32 {
        self.switch.pfc_classes.unwrap_or(1)
    }

    /// The traffic class of the pattern's `k`-th flow (`traffic.flow_classes`, cycled; absent:
    /// `k` modulo the classes).
    pub fn flow_class(&self, k: usize) -> u8 {
        let class = match &self.traffic.flow_classes {
            Some(classes) => classes[k % classes.len()],
            None => k as u32 % self.pfc_classes(),
        };
        class as u8
    }

    /// The PFC ports' thresholds and marking, if the switches run PFC.
    pub fn pfc_spec(&self) -> Option<PfcSpec> {
        let s = &self.switch;
        let marking = match self.host.transport {
            Transport::Dcqcn => Marking::Red {
                kmin_bytes: s.red_kmin_bytes,
                kmax_bytes: s.red_kmax_bytes,
                pmax: s.red_pmax,
            },
            Transport::Dctcp => Marking::Threshold(s.ecn_threshold_packets),
            _ => Marking::None,
        };
        s.pfc.then_some(PfcSpec {
            pool_packets_per_port: s.queue_packets,
            classes: self.pfc_classes() as u8,
            round_robin: s.pfc_class_service == Some(ClassService::RoundRobin),
            xoff_packets: s.pfc_xoff_packets,
            xon_packets: s.pfc_xon_packets,
            headroom_packets: s.pfc_headroom_packets,
            marking,
            bfc: self.bfc_spec(),
        })
    }
}
