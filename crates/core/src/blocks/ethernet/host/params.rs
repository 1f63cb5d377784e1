//! How every host of a run behaves ([`HostParams`]), as the `[host]` section and the fabric
//! around the hosts give it.

use crate::blocks::transport::dcqcn::DcqcnParams;
use crate::blocks::transport::host_config::HostConfig;
use crate::blocks::transport::line_rate::InflightCap;
use crate::blocks::transport::{Marks, SenderParams, Transport, WindowRule};
use crate::engine::time::{ps_from_ns, TimePs};

/// How every host of a run behaves.
#[derive(Clone, Copy, Debug)]
pub struct HostParams {
    /// The transport's sender settings.
    pub sender: SenderParams,
    /// Bytes of an ACK on the wire.
    pub ack_bytes: u16,
    /// Data segments carry ECT (DCTCP).
    pub ecn_capable: bool,
    /// Delayed ACKs: the longest an ACK waits for a second segment (`None`: an ACK per
    /// segment).
    pub delayed_ack_ps: Option<TimePs>,
    /// Bytes delivered from this time on count toward goodput.
    pub measure_from_ps: TimePs,
    /// NDP: the pull pacer's interval, one data packet's time on the host's link (`None`: a
    /// window transport).
    pub ndp_pull_interval_ps: Option<TimePs>,
    /// NDP: its senders label each packet's path themselves (§3.3); `None`: the switches
    /// spray.
    pub ndp_paths: Option<NdpPathSpec>,
    /// DCQCN: its reaction and notification points' settings (`None`: another transport).
    pub dcqcn: Option<DcqcnParams>,
    /// The host's switch cuts through: it has a frame at its header.
    pub into_cut_through: bool,
    /// PFC: the lossless classes its switch may pause apart (802.1Qbb; 1 without PFC).
    pub pfc_classes: u8,
    /// BFC: the NIC's data queues, which its switch pauses apart (Goyal et al. 2022 §3.2,
    /// the NIC as the first upstream port); flow `i` rides queue `i` modulo them. `None`:
    /// no BFC.
    pub bfc_queues: Option<u16>,
}

/// How NDP senders label their packets' paths (NDP §3.3).
#[derive(Clone, Copy, Debug)]
pub struct NdpPathSpec {
    /// Path labels per flow, `0..paths`.
    pub paths: u16,
    /// The run's salt for the labels' permutations (from its seed).
    pub salt: u64,
}

impl HostConfig {
    /// What limits its window senders: DCTCP's reaction for DCTCP, `host.inflight_cap_bytes`
    /// for the line-rate sender (when absent, the fabric fills it in), else NewReno's window.
    fn window_rule(&self) -> WindowRule {
        match (self.transport, self.inflight_cap_bytes) {
            (Transport::Dctcp, _) => WindowRule::Dctcp { g: self.dctcp.g },
            (Transport::LineRate, Some(bytes)) => WindowRule::Capped(InflightCap { bytes }),
            _ => WindowRule::NewReno,
        }
    }

    /// The hosts' settings this section gives, goodput counted from `measure_from_ps`: one
    /// reading for every fabric whose hosts run a transport (Ethernet's hosts, and hosts on
    /// Stardust's host ports); the fabric fills in what depends on it.
    pub fn params(&self, measure_from_ps: TimePs) -> HostParams {
        let kind = self.transport.kind();
        HostParams {
            sender: SenderParams {
                mss_bytes: self.packet_bytes as u64,
                initial_cwnd_packets: self.initial_cwnd_packets,
                initial_ssthresh_packets: self.initial_ssthresh_packets,
                min_rto_ps: ps_from_ns(self.min_rto_ns),
                max_rto_ps: ps_from_ns(self.max_rto_ns),
                window: self.window_rule(),
            },
            ack_bytes: self.ack_bytes as u16,
            ecn_capable: kind.marks != Marks::None,
            delayed_ack_ps: (self.delayed_ack && kind.delayed_acks)
                .then(|| ps_from_ns(self.delayed_ack_ns)),
            measure_from_ps,
            ndp_pull_interval_ps: None,
            ndp_paths: None,
            pfc_classes: 1,
            bfc_queues: None,
            dcqcn: (self.transport == Transport::Dcqcn).then(|| DcqcnParams::of(self)),
            into_cut_through: false,
        }
    }
}
