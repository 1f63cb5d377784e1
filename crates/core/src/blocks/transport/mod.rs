//! Host transports, one package each, both ends in it: the TCP family in [`tcp`] (NewReno,
//! DCTCP, and MPTCP's coupler over one window sender), NDP's pulled sender and its receiving
//! end with the pull pacer in [`ndp`], DCQCN's reaction point (the rate-based sender) and
//! notification point in [`dcqcn`], and BFC's line-rate sender capped at one bandwidth-delay
//! product of inflight in [`line_rate`] (TCP's window sender with that cap as its window).
//! Beside them: the in-order receive side every transport
//! keeps ([`receiver`]), the retransmission timer's value ([`rto`]), and the `[host]` section
//! that names a transport and holds its constants ([`host_config`]).
//!
//! A transport is described by a [`TransportKind`] in its own file (its name, what it needs of
//! the switches, the keys it reads, its checks), listed once in [`TRANSPORTS`]; validators ask
//! the descriptor, never the name. [`Transport`] is the value a scenario's `host.transport`
//! takes, read and written through the registry; [`FlowSender`] puts every kind of sender
//! behind one face for the host. Sequence numbers count segments; every segment but a finite
//! flow's last is one maximum segment.

pub mod dcqcn;
pub mod host_config;
pub mod line_rate;
pub mod ndp;
pub mod receiver;
pub mod rto;
pub mod tcp;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::blocks::routing::Mode;
use crate::engine::stats::{only_counts, Tally};
use crate::engine::time::TimePs;
use crate::keys::{Named, ScenarioError};
use dcqcn::DcqcnSender;
use host_config::HostConfig;
use line_rate::InflightCap;
use ndp::NdpSender;
use tcp::Sender;

/// [`Sender::rto_deadline_ps`] when the retransmission timer is off.
pub const TIMER_OFF: TimePs = TimePs::MAX;

/// How the switches mark a transport's data packets (ECN, RFC 3168).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marks {
    /// Not ECN-capable: never marked.
    None,
    /// Marked when more than `switch.ecn_threshold_packets` are queued (DCTCP's K).
    Threshold,
    /// Marked RED-like on the queue's bytes (`switch.red_*`, DCQCN's congestion point).
    Red,
}

/// What one transport is: its name and what it needs of the rest of the fabric. Each lives in
/// its transport's own file; [`TRANSPORTS`] lists them.
pub struct TransportKind {
    /// Name in scenarios (`host.transport`).
    pub name: &'static str,
    /// What it does, in one line.
    pub description: &'static str,
    /// How switches mark its data (its data carries ECT unless [`Marks::None`]).
    pub marks: Marks,
    /// It recovers trimmed packets: it runs only over ports that trim, and they only under it.
    pub needs_trimming: bool,
    /// It never retransmits: it runs only over a lossless fabric.
    pub needs_lossless: bool,
    /// Its receivers send cumulative ACKs that may be delayed (`host.delayed_ack` applies).
    pub delayed_acks: bool,
    /// A connection is `host.subflows` subflows, made at build.
    pub subflows: bool,
    /// Why flows opened during a run cannot use it, if they cannot.
    pub no_opening: Option<&'static str>,
    /// The keys only it reads.
    pub own_keys: &'static [&'static str],
    /// Keys the window transports read that it does not, in groups (a group several
    /// transports ignore, such as [`host_config::RECOVERY_KEYS`], is one list they share).
    pub ignored_keys: &'static [&'static [&'static str]],
    /// Why it ignores `ignored_keys`.
    pub ignored_because: &'static str,
    /// Checks the values of its own keys (every transport's, whichever runs).
    pub check_keys: fn(&HostConfig) -> Result<(), ScenarioError>,
    /// Checks the routing mode it runs over.
    pub check_routing: fn(&HostConfig, &Mode) -> Result<(), ScenarioError>,
}

/// A check that finds nothing wrong: for a transport with no keys or routing of its own.
pub fn no_check(_: &HostConfig, _: &Mode) -> Result<(), ScenarioError> {
    Ok(())
}

/// Every transport, in the order of [`Transport`]'s values.
pub const TRANSPORTS: &[TransportKind] = &[
    tcp::newreno::TRANSPORT,
    tcp::dctcp::TRANSPORT,
    tcp::mptcp::TRANSPORT,
    ndp::TRANSPORT,
    dcqcn::TRANSPORT,
    line_rate::TRANSPORT,
];

/// A transport a scenario names (`host.transport`), read and written by its name in
/// [`TRANSPORTS`]; its value indexes the registry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// TCP NewReno ([`tcp::newreno`]).
    #[default]
    Tcp,
    /// DCTCP over NewReno's loss recovery ([`tcp::dctcp`]).
    Dctcp,
    /// MPTCP: NewReno subflows coupled by LIA ([`tcp::mptcp`]).
    Mptcp,
    /// NDP over trimming switches ([`ndp`]).
    Ndp,
    /// DCQCN over a lossless fabric ([`dcqcn`]).
    Dcqcn,
    /// Line rate within one bandwidth-delay product of inflight ([`line_rate`]).
    LineRate,
}

impl Transport {
    /// Its descriptor.
    pub fn kind(self) -> &'static TransportKind {
        &TRANSPORTS[self as usize]
    }

    /// The transport called `name`.
    pub fn named(name: &str) -> Option<Transport> {
        let at = TRANSPORTS.iter().position(|t| t.name == name)?;
        Some(<Transport as Named>::ALL[at])
    }
}

impl Named for Transport {
    const ALL: &'static [Transport] = &[
        Transport::Tcp,
        Transport::Dctcp,
        Transport::Mptcp,
        Transport::Ndp,
        Transport::Dcqcn,
        Transport::LineRate,
    ];

    fn entry(self) -> (&'static str, &'static str) {
        (self.kind().name, self.kind().description)
    }
}

impl Serialize for Transport {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.kind().name)
    }
}

impl<'de> Deserialize<'de> for Transport {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        Transport::named(&name).ok_or_else(|| {
            let names: Vec<String> = TRANSPORTS.iter().map(|t| format!("`{}`", t.name)).collect();
            serde::de::Error::custom(format!(
                "unknown variant `{name}`, expected one of {}",
                names.join(", ")
            ))
        })
    }
}

/// The names of the transports that `keep` picks, quoted, for a message.
pub fn names_where(keep: impl Fn(&TransportKind) -> bool) -> String {
    let names: Vec<String> = TRANSPORTS
        .iter()
        .filter(|t| keep(t))
        .map(|t| format!("{:?}", t.name))
        .collect();
    names.join(", ")
}

/// How a sender starts and times out, the same for every flow of a run.
#[derive(Clone, Copy, Debug)]
pub struct SenderParams {
    /// Maximum segment (the size of every data packet on the wire).
    pub mss_bytes: u64,
    /// Initial window in segments.
    pub initial_cwnd_packets: u32,
    /// Initial slow-start threshold in segments (`None`: unbounded).
    pub initial_ssthresh_packets: Option<u32>,
    /// The smallest retransmission timeout.
    pub min_rto_ps: TimePs,
    /// The largest (a backed-off timeout stops doubling here).
    pub max_rto_ps: TimePs,
    /// What limits a window sender's segments in flight.
    pub window: WindowRule,
}

#[cfg(test)]
impl SenderParams {
    /// NewReno's window over segments of `mss_bytes`, starting at `initial_cwnd_packets` with
    /// no slow-start threshold, timeouts from 1 ms to 1 s: the senders' tests' flow.
    pub fn newreno(mss_bytes: u64, initial_cwnd_packets: u32) -> SenderParams {
        SenderParams {
            mss_bytes,
            initial_cwnd_packets,
            initial_ssthresh_packets: None,
            min_rto_ps: 1_000_000,
            max_rto_ps: 1_000_000_000,
            window: WindowRule::NewReno,
        }
    }
}

/// What limits a window sender's segments in flight.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WindowRule {
    /// NewReno's congestion window (TCP; NDP and DCQCN senders ignore it).
    NewReno,
    /// NewReno's window cut by DCTCP's ECN reaction, with gain `g`.
    Dctcp {
        /// DCTCP's gain g.
        g: f64,
    },
    /// The line-rate sender's cap on inflight bytes instead of a congestion window
    /// ([`line_rate`]).
    Capped(InflightCap),
}

/// What a sender counts.
#[derive(Clone, Copy, Debug, Default)]
pub struct SenderCounters {
    /// Segments sent, retransmissions included.
    pub segments_sent: u64,
    /// Retransmissions (fast, partial-ACK and after timeouts).
    pub retransmissions: u64,
    /// Fast retransmits (entries into fast recovery).
    pub fast_retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// DCTCP's window cuts on ECN-Echo.
    pub ecn_cuts: u64,
    /// Round-trip samples taken (one per acknowledgment of new data).
    pub rtt_samples: u64,
    /// Their sum.
    pub rtt_sum_ps: u64,
}

impl Tally for SenderCounters {
    fn counts_mut(&mut self) -> impl IntoIterator<Item = &mut u64> {
        [
            &mut self.segments_sent,
            &mut self.retransmissions,
            &mut self.fast_retransmits,
            &mut self.timeouts,
            &mut self.ecn_cuts,
            &mut self.rtt_samples,
            &mut self.rtt_sum_ps,
        ]
    }
}

const _: () = assert!(only_counts::<SenderCounters>(7));

/// One flow's send side, whichever transport: a window sender (TCP, DCTCP), NDP's or DCQCN's.
#[derive(Clone, Debug)]
pub enum FlowSender {
    /// NewReno's window, with DCTCP's reaction for a DCTCP flow.
    Window(Sender),
    /// NDP's pulled sender.
    Ndp(NdpSender),
    /// DCQCN's rate-based sender.
    Dcqcn(DcqcnSender),
}

impl FlowSender {
    /// True if a segment may go now.
    pub fn can_send(&self) -> bool {
        match self {
            FlowSender::Window(s) => s.can_send(),
            FlowSender::Ndp(s) => s.can_send(),
            FlowSender::Dcqcn(s) => s.has_data(),
        }
    }

    /// True if a segment may start at `now_ps`: as [`FlowSender::can_send`], and for a paced
    /// (DCQCN) sender when its rate allows.
    pub fn ready(&self, now_ps: TimePs) -> bool {
        match self {
            FlowSender::Dcqcn(s) => s.ready(now_ps),
            _ => self.can_send(),
        }
    }

    /// A paced sender's next start time, if it has data (`None` for the others).
    pub fn paced_ps(&self) -> Option<TimePs> {
        match self {
            FlowSender::Dcqcn(s) => s.next_send_ps(),
            _ => None,
        }
    }

    /// Takes the next segment to send at `now_ps`, if any.
    pub fn next_segment(&mut self, now_ps: TimePs) -> Option<u32> {
        match self {
            FlowSender::Window(s) => s.next_segment(now_ps),
            FlowSender::Ndp(s) => s.next_segment(now_ps),
            FlowSender::Dcqcn(s) => s.next_segment(now_ps),
        }
    }

    /// When the retransmission timer expires, or [`TIMER_OFF`].
    pub fn rto_deadline_ps(&self) -> TimePs {
        match self {
            FlowSender::Window(s) => s.rto_deadline_ps,
            FlowSender::Ndp(s) => s.rto_deadline_ps,
            FlowSender::Dcqcn(s) => s.rto_deadline_ps(),
        }
    }

    /// The retransmission timer expired at `now_ps`.
    pub fn on_timeout(&mut self, now_ps: TimePs) {
        match self {
            FlowSender::Window(s) => s.on_timeout(now_ps),
            FlowSender::Ndp(s) => s.on_timeout(now_ps),
            FlowSender::Dcqcn(_) => {} // never armed
        }
    }

    /// What it counted.
    pub fn counters(&self) -> &SenderCounters {
        match self {
            FlowSender::Window(s) => &s.counters,
            FlowSender::Ndp(s) => &s.counters,
            FlowSender::Dcqcn(s) => &s.counters,
        }
    }
    /// True once every segment is acknowledged.
    pub fn done(&self) -> bool {
        match self {
            FlowSender::Window(s) => s.done(),
            FlowSender::Ndp(s) => s.done(),
            FlowSender::Dcqcn(s) => s.done(),
        }
    }

    /// Makes this a fresh sender of `packets` segments, reusing its buffers.
    pub fn restart(&mut self, params: &SenderParams, packets: u32) {
        match self {
            FlowSender::Window(s) => *s = Sender::new(params, packets),
            FlowSender::Ndp(s) => s.restart(params, packets),
            FlowSender::Dcqcn(s) => s.restart(packets),
        }
    }

    /// The window sender (an MPTCP subflow's, to couple and feed it), if this is one.
    pub fn window(&self) -> Option<&Sender> {
        match self {
            FlowSender::Window(s) => Some(s),
            FlowSender::Ndp(_) | FlowSender::Dcqcn(_) => None,
        }
    }

    /// The window sender, mutably, if this is one.
    pub fn window_mut(&mut self) -> Option<&mut Sender> {
        match self {
            FlowSender::Window(s) => Some(s),
            FlowSender::Ndp(_) | FlowSender::Dcqcn(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every value of [`Transport`] reads and writes as its registry line's name, in order.
    #[test]
    fn every_transport_is_its_registry_line() {
        assert_eq!(TRANSPORTS.len(), <Transport as Named>::ALL.len());
        for (k, &t) in <Transport as Named>::ALL.iter().enumerate() {
            assert_eq!(t as usize, k);
            let json = serde_json::to_string(&t).unwrap();
            assert_eq!(json, format!("{:?}", TRANSPORTS[k].name));
            assert_eq!(serde_json::from_str::<Transport>(&json).unwrap(), t);
        }
        let error = serde_json::from_str::<Transport>("\"quic\"").unwrap_err();
        assert!(
            error.to_string().contains("unknown variant `quic`"),
            "{error}"
        );
    }
}
