//! The kinds of port an Ethernet switch may have, one file each, named by one key
//! (`switch.port_kind`): drop-tail output queues that mark ECN ([`drop_tail`]), the same over a
//! shared buffer with a dynamic threshold ([`shared_buffer`]), NDP's trimming ports
//! ([`trimming`]), PFC's lossless ports ([`pfc`]), BFC's per-flow queues over them
//! ([`bfc`]), Aquarius' contribution-aware pausing with an isolation queue
//! ([`aquarius`]), and ideal per-flow queues, their upper bound ([`ideal`]). Each file describes its kind in a [`PortKind`] (what it offers the transports and
//! the routing, the keys it reads, its checks), listed once in [`PORT_KINDS`]; validators ask
//! the descriptor's flags, never the name. The `[switch]` section's keys are in
//! [`EthernetSwitchConfig`], the per-flow kinds' in its `[switch.per_flow]` table
//! ([`PerFlowKeys`]).

pub mod aquarius;
pub mod bfc;
pub mod bloom;
pub mod drop_tail;
pub mod ideal;
pub mod pfc;
pub mod shared_buffer;
pub mod trimming;

use serde::{Deserialize, Serialize};

use crate::blocks::transport::Marks;
use crate::keys::{fewer_bytes_than, invalid, ScenarioError};
use pfc::ClassService;

/// What one port kind is: its name, what it offers, the keys it reads. Each lives in its
/// kind's own file; [`PORT_KINDS`] lists them.
pub struct PortKind {
    /// Name in scenarios (`switch.port_kind`).
    pub name: &'static str,
    /// What it is, in one line.
    pub description: &'static str,
    /// A full queue trims a data packet to its header (what a transport that needs trimming
    /// runs over, and only it).
    pub trims: bool,
    /// Lossless: a full ingress pauses its upstream neighbour instead of dropping.
    pub lossless: bool,
    /// Keeps traffic classes (`switch.pfc_classes`, `traffic.flow_classes`) paused apart.
    pub classes: bool,
    /// Needs every packet of a flow on one path (a pause names one upstream queue).
    pub per_flow_routing: bool,
    /// The `[switch]` keys it reads that not every kind does, in groups: a group several
    /// kinds read (PFC's thresholds, [`PFC_THRESHOLD_KEYS`]) is one list they share.
    pub keys: &'static [&'static [&'static str]],
    /// Checks its keys' values, given what the transport and hosts need.
    pub check: fn(&PortCheck<'_>) -> Result<(), ScenarioError>,
}

/// What a port kind's check may read: the section, and what the hosts send into it.
pub struct PortCheck<'a> {
    /// The `[switch]` section.
    pub switch: &'a EthernetSwitchConfig,
    /// How the transport's data is marked.
    pub marks: Marks,
    /// Bytes of a data packet.
    pub packet_bytes: u32,
    /// One hop's bandwidth-delay product in data packets ([`hop_bdp_packets`]).
    pub hop_bdp_packets: u32,
}

/// One hop's bandwidth-delay product in packets of `packet_bytes` on a cable of `rate_bps`
/// and `propagation_ps` each way: the bytes the sender puts on the wire in the time a pause
/// takes to act (the cable's round trip), plus a packet each end (the one on the wire when
/// the pause is sent, the one the sender is sending when it arrives); Goyal et al., NSDI 2022,
/// §3.2 pause a flow at about one hop's BDP.
pub fn hop_bdp_packets(rate_bps: u64, propagation_ps: u64, packet_bytes: u32) -> u32 {
    let round_trip_bytes = rate_bps as u128 * 2 * propagation_ps as u128 / 8_000_000_000_000;
    let bytes = round_trip_bytes as u64 + 2 * packet_bytes as u64;
    bytes.div_ceil(packet_bytes.max(1) as u64) as u32
}

/// PFC's thresholds: PFC reads them, and the per-flow kinds (BFC, Aquarius, ideal per-flow
/// queues) read them as their last-resort backstop's.
pub const PFC_THRESHOLD_KEYS: &[&str] = &[
    "switch.pfc_xoff_packets",
    "switch.pfc_xon_packets",
    "switch.pfc_headroom_packets",
];

impl PortKind {
    /// A per-flow kind over PFC's lossless ports (one class, every packet of a flow on one
    /// path, PFC's thresholds read), its keys checked by `check`; a kind's descriptor names
    /// itself and its own keys over it.
    pub const fn per_flow_lossless(
        check: fn(&PortCheck<'_>) -> Result<(), ScenarioError>,
    ) -> PortKind {
        PortKind {
            name: "",
            description: "",
            trims: false,
            lossless: true,
            classes: false,
            per_flow_routing: true,
            keys: &[PFC_THRESHOLD_KEYS],
            check,
        }
    }

    /// Every `[switch]` key it reads that not every kind does.
    pub fn all_keys(&self) -> impl Iterator<Item = &'static str> {
        self.keys.iter().flat_map(|group| group.iter().copied())
    }

    /// True if it reads `key`.
    pub fn reads(&self, key: &str) -> bool {
        self.all_keys().any(|k| k == key)
    }
}

/// Every port kind.
pub const PORT_KINDS: &[PortKind] = &[
    drop_tail::KIND,
    shared_buffer::KIND,
    trimming::KIND,
    pfc::KIND,
    bfc::KIND,
    aquarius::KIND,
    ideal::KIND,
];

/// The port kind called `name`.
pub fn port_kind(name: &str) -> Option<&'static PortKind> {
    PORT_KINDS.iter().find(|k| k.name == name)
}

/// The names of the port kinds that `keep` picks, quoted, for a message.
pub fn names_where(keep: impl Fn(&PortKind) -> bool) -> String {
    let names: Vec<String> = PORT_KINDS
        .iter()
        .filter(|k| keep(k))
        .map(|k| format!("{:?}", k.name))
        .collect();
    names.join(", ")
}

/// The booleans that once chose a switch's ports, refused with a message naming
/// `switch.port_kind`: each with the kind it chose when true.
pub const REPLACED_KEYS: &[(&str, &PortKind)] = &[
    ("trimming", &trimming::KIND),
    ("pfc", &pfc::KIND),
    ("bfc", &bfc::KIND),
    ("buffer", &shared_buffer::KIND),
];

/// The `[switch]` keys the per-flow kinds once read at the top of the section, refused with
/// a message naming their place in `[switch.per_flow]`.
pub const MOVED_KEYS: &[(&str, &str)] = &[
    ("bfc_queues", "switch.per_flow.queues"),
    ("bfc_pause_packets", "switch.per_flow.pause_packets"),
];

/// The error for a scenario (its JSON document) that sets a replaced or moved `[switch]` key,
/// if any.
pub fn replaced_key(scenario: &serde_json::Value) -> Option<ScenarioError> {
    let switch = scenario.get("switch")?;
    if let Some((key, new_key)) = MOVED_KEYS.iter().find(|(key, _)| switch.get(key).is_some()) {
        return Some(invalid(
            &format!("switch.{key}"),
            format!("moved to {new_key} (the [switch.per_flow] table of the per-flow port kinds)"),
        ));
    }
    let (key, kind) = REPLACED_KEYS
        .iter()
        .find(|(key, _)| switch.get(key).is_some())?;
    Some(invalid(
        &format!("switch.{key}"),
        format!(
            "replaced by switch.port_kind (for what it chose, set switch.port_kind = {:?}; the kinds: {})",
            kind.name,
            names_where(|_| true)
        ),
    ))
}

/// The `[switch]` section of an Ethernet fabric: its port kind and the keys every kind reads
/// or only some do (each kind's [`PortKind::keys`]).
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct EthernetSwitchConfig {
    /// The ports' kind, by its name in [`PORT_KINDS`].
    pub port_kind: String,
    /// Packets an output queue holds (100 in the paper's DCTCP and MPTCP runs); a PFC
    /// switch's buffer per port, shared.
    pub queue_packets: u32,
    /// Drop-tail: bytes an output queue holds, if bounded in bytes too; absent: packets only.
    pub queue_bytes: Option<u64>,
    /// DCTCP: an arriving ECN-capable packet is marked CE when more than this many packets
    /// are queued (K = 15 in the htsim runs the paper used).
    pub ecn_threshold_packets: u32,
    /// Every packet a switch takes is lost with this probability, independently (a lossy
    /// link, for checking NewReno against the Mathis et al. formula); 0: none.
    pub loss_probability: f64,
    /// Drop-tail: htsim's `RandomQueue` (the queues of the MPTCP runs the Stardust paper
    /// used): an arrival finding the output queue within this many packets of full is dropped
    /// with `random_drop_probability` even if it fits (htsim: 3 of 100); 0: drop-tail only.
    pub random_drop_packets: u32,
    /// Drop-tail: the probability of a random drop near the top of the queue (htsim: 0.1).
    pub random_drop_probability: f64,
    /// Drop-tail and shared buffer: a switch takes a frame once its first 64 bytes are in and
    /// may send it on at once, instead of storing it whole first (store-and-forward, the
    /// default and htsim's). Hosts still take a frame at its last bit.
    pub cut_through: bool,
    /// Trimming: NDP's return-to-sender (Handley et al. 2017 §3.1, htsim's `CompositeQueue`):
    /// a trimmed header that finds its header queue full goes back toward its sender (source
    /// and destination swapped, queued as a header), which resends the packet without waiting
    /// for its RTO; false: it is dropped. Off by default, which keeps earlier NDP results.
    pub return_to_sender: bool,
    /// PFC: lossless classes (802.1Qbb priorities) paused apart, 1 to 8; absent: 1. Each
    /// ingress port keeps an account per class with the thresholds below, so
    /// `pfc_classes × (pfc_xoff_packets + pfc_headroom_packets)` must fit `queue_packets`.
    pub pfc_classes: Option<u32>,
    /// PFC: how a port serves its data classes: `strict_priority` (class 0 first, the
    /// default) or `round_robin` (ETS with equal weights, IEEE 802.1Qaz).
    pub pfc_class_service: Option<ClassService>,
    /// PFC and the per-flow kinds' backstop: packets an ingress class holds when it sends XOFF.
    pub pfc_xoff_packets: u32,
    /// PFC and the backstop: packets a paused ingress class drains to before it sends XON.
    pub pfc_xon_packets: u32,
    /// PFC and the backstop: packets an ingress class may take beyond XOFF, for what is already
    /// on its way (one cable round trip plus a frame each end: 4 packets of 9000 B at 10 Gbit/s,
    /// 1 µs).
    pub pfc_headroom_packets: u32,
    /// BFC, Aquarius and ideal per-flow queues: their `[switch.per_flow]` table.
    pub per_flow: PerFlowKeys,
    /// Shared buffer: packets the whole switch buffer holds (B); absent: `queue_packets` ×
    /// the switch's ports (the per-port buffers pooled).
    pub shared_buffer_packets: Option<u32>,
    /// Shared buffer: the dynamic threshold's α (a queue may hold α × the free buffer);
    /// absent: 1.
    pub dt_alpha: Option<f64>,
    /// DCQCN: no ECN mark while an output queue holds at most this many bytes (Kmin).
    pub red_kmin_bytes: u64,
    /// DCQCN: every ECN-capable arrival marked above this many bytes queued (Kmax).
    pub red_kmax_bytes: u64,
    /// DCQCN: the marking probability at Kmax, rising linearly from Kmin (Pmax).
    pub red_pmax: f64,
}

impl Default for EthernetSwitchConfig {
    fn default() -> Self {
        EthernetSwitchConfig {
            port_kind: drop_tail::KIND.name.into(),
            queue_packets: 100,
            queue_bytes: None,
            ecn_threshold_packets: 15,
            loss_probability: 0.0,
            random_drop_packets: 0,
            random_drop_probability: 0.1,
            cut_through: false,
            return_to_sender: false,
            pfc_classes: None,
            pfc_class_service: None,
            pfc_xoff_packets: 96,
            pfc_xon_packets: 94,
            pfc_headroom_packets: 4,
            per_flow: PerFlowKeys::default(),
            shared_buffer_packets: None,
            dt_alpha: None,
            red_kmin_bytes: 5_000,
            red_kmax_bytes: 200_000,
            red_pmax: 0.01,
        }
    }
}

/// The `[switch.per_flow]` table: the keys of the kinds that queue and pause per flow (BFC,
/// Aquarius, ideal per-flow queues); each kind reads the ones its [`PortKind::keys`] name.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PerFlowKeys {
    /// BFC and Aquarius: physical data queues per egress port (and, for BFC, host NIC), 1 to
    /// 64 (BFC's evaluation: 32; Aquarius: 8, its isolation queue among them, at least 2).
    pub queues: u32,
    /// BFC and ideal per-flow queues: packets a flow holds at an egress port when it pauses
    /// its upstream queue (BFC) or itself upstream (ideal); it resumes when it holds fewer. Absent: one hop's bandwidth-delay product (the cable's
    /// round trip at its rate, plus a packet each end, Goyal et al. 2022 §3.2) in packets.
    pub pause_packets: Option<u32>,
    /// BFC and Aquarius: entries of each egress port's flow table, indexed by a hash of the
    /// flow id, so flows whose hashes meet share an entry (and a queue: a collision, counted);
    /// absent: every flow an entry of its own.
    pub flow_table_entries: Option<u32>,
    /// BFC: counters of the counting Bloom filter of paused flows each switch port keeps
    /// for the pauses its far end sends; a flow that becomes active at the port and tests
    /// present joins a paused queue (a flow the far end did not pause and that tests present
    /// is a false positive, counted). Absent: no filter.
    pub bloom_filter_bits: Option<u32>,
    /// BFC: the counters each flow sets in the Bloom filter, 1 to 16.
    pub bloom_filter_hashes: u32,
    /// Aquarius: the low threshold Q_l of a port's buffered bytes, above which flows holding
    /// more than the fair size are paused.
    pub low_threshold_bytes: u64,
    /// Aquarius: the high threshold Q_h, above which every arriving flow is paused.
    pub high_threshold_bytes: u64,
    /// Aquarius and ideal per-flow queues: PFC's XOFF as the last-resort backstop (pauses the
    /// whole upstream port when an ingress crosses `switch.pfc_xoff_packets`); false: none,
    /// and an overrun ingress drops (counted by cause).
    pub backstop: bool,
}

impl Default for PerFlowKeys {
    fn default() -> Self {
        PerFlowKeys {
            queues: 32,
            pause_packets: None,
            flow_table_entries: None,
            bloom_filter_bits: None,
            bloom_filter_hashes: 3,
            low_threshold_bytes: 25_000,
            high_threshold_bytes: 200_000,
            backstop: true,
        }
    }
}

impl EthernetSwitchConfig {
    /// The ports' kind (`switch.port_kind`, checked by [`EthernetSwitchConfig::validate`]).
    pub fn kind(&self) -> &'static PortKind {
        port_kind(&self.port_kind).expect("switch.port_kind validated")
    }

    /// True if the ports read `key` (a `[switch]` key of some kinds only); false for a port
    /// kind that is not one.
    pub fn reads(&self, key: &str) -> bool {
        port_kind(&self.port_kind).is_some_and(|k| k.reads(key))
    }

    /// Cut-through switching, if the ports' kind takes it.
    pub fn cut_through(&self) -> bool {
        self.cut_through && self.reads("switch.cut_through")
    }

    /// NDP's return-to-sender, if the ports' kind takes it.
    pub fn return_to_sender(&self) -> bool {
        self.return_to_sender && self.reads("switch.return_to_sender")
    }

    /// PFC's lossless classes: `switch.pfc_classes` (default 1) if the ports keep classes.
    pub fn pfc_classes(&self) -> u32 {
        match self.kind().classes {
            true => self.pfc_classes.unwrap_or(1),
            false => 1,
        }
    }

    /// The port kind `switch.port_kind` names, or the error naming the key.
    pub fn validate_kind(&self) -> Result<&'static PortKind, ScenarioError> {
        port_kind(&self.port_kind).ok_or_else(|| {
            invalid(
                "switch.port_kind",
                format!(
                    "expected one of {}, got {:?}",
                    names_where(|_| true),
                    self.port_kind
                ),
            )
        })
    }

    /// Checks the keys every kind reads and, through the port kind, its own; `marks` and
    /// `packet_bytes` say what the hosts send, `hop_bdp_packets` what one hop holds.
    pub fn validate(
        &self,
        marks: Marks,
        packet_bytes: u32,
        hop_bdp_packets: u32,
    ) -> Result<(), ScenarioError> {
        let kind = self.validate_kind()?;
        if self.queue_packets == 0 {
            return Err(invalid(
                "switch.queue_packets",
                "expected at least 1 packet",
            ));
        }
        if !(self.loss_probability.is_finite() && (0.0..1.0).contains(&self.loss_probability)) {
            return Err(invalid(
                "switch.loss_probability",
                "expected at least 0, below 1",
            ));
        }
        let check = PortCheck {
            switch: self,
            marks,
            packet_bytes,
            hop_bdp_packets,
        };
        (kind.check)(&check)
    }

    /// The keys of other port kinds that this one does not read (none for a port kind that
    /// is not one).
    pub fn unused_keys(&self) -> Vec<&'static str> {
        let Some(kind) = port_kind(&self.port_kind) else {
            return Vec::new();
        };
        let mut unused: Vec<&'static str> = Vec::new();
        for key in PORT_KINDS.iter().flat_map(PortKind::all_keys) {
            if !kind.reads(key) && !unused.contains(&key) {
                unused.push(key);
            }
        }
        unused
    }
}

/// The error for a port kind that needs no random loss (`loss_probability` above 0).
fn no_random_loss(check: &PortCheck<'_>, why: &str) -> Result<(), ScenarioError> {
    if check.switch.loss_probability > 0.0 {
        return Err(invalid(
            "switch.loss_probability",
            format!(
                "expected 0 with switch.port_kind = {:?} ({why})",
                check.switch.port_kind
            ),
        ));
    }
    Ok(())
}

/// The lossless buffer's checks for `classes` classes (PFC's, and BFC's over it): no random
/// loss, XOFF above XON, every class's XOFF plus headroom within its part of a port's share;
/// RED's thresholds for a transport marked RED-like.
fn check_lossless(c: &PortCheck<'_>, classes: u32) -> Result<(), ScenarioError> {
    no_random_loss(c, "a lossless fabric")?;
    let s = c.switch;
    pfc::PauseThresholds {
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
    if c.marks == Marks::Red {
        let (kmin_bytes, kmax_bytes) = (s.red_kmin_bytes, s.red_kmax_bytes);
        fewer_bytes_than(
            "switch.red_kmin_bytes",
            kmin_bytes,
            "switch.red_kmax_bytes",
            kmax_bytes,
        )?;
        if !(s.red_pmax.is_finite() && s.red_pmax > 0.0 && s.red_pmax <= 1.0) {
            return Err(invalid("switch.red_pmax", "expected above 0, at most 1"));
        }
    }
    Ok(())
}

/// Tests: a 1000-byte data packet from host 0 to host 1, as `set` changes it, in `cells`.
#[cfg(test)]
pub(crate) fn test_packet(
    cells: &mut crate::blocks::cell::CellArena,
    set: impl FnOnce(&mut crate::blocks::cell::Cell),
) -> crate::blocks::cell::CellId {
    let mut c = crate::blocks::cell::Cell::new(0, 1, 1000, true, 0, 0);
    set(&mut c);
    cells.alloc(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind's keys are `[switch]` keys the section has, and every old boolean is
    /// refused naming the new key.
    #[test]
    fn every_kind_reads_keys_of_the_section_and_old_keys_name_the_new_one() {
        let fields = serde_json::to_value(EthernetSwitchConfig::default()).unwrap();
        for kind in PORT_KINDS {
            for key in kind.all_keys() {
                let path = key.strip_prefix("switch.").expect("a [switch] key");
                let field = path.split('.').try_fold(&fields, |t, part| t.get(part));
                assert!(field.is_some(), "{}: {key}", kind.name);
            }
        }
        for (key, new_key) in MOVED_KEYS {
            let scenario = serde_json::json!({"switch": {*key: 1}});
            let error = replaced_key(&scenario).expect("refused");
            assert!(error.message.contains(new_key), "{error}");
        }
        for (key, kind) in REPLACED_KEYS {
            let scenario = serde_json::json!({"switch": {*key: true}});
            let error = replaced_key(&scenario).expect("refused");
            assert_eq!(error.key, format!("switch.{key}"));
            assert!(error.message.contains("switch.port_kind"), "{error}");
            assert!(error.message.contains(kind.name), "{error}");
        }
        assert!(replaced_key(&serde_json::json!({"switch": {"port_kind": "pfc"}})).is_none());
    }
}
