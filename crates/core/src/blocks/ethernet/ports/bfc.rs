//! BFC, Backpressure Flow Control (Goyal et al., NSDI 2022), on the egress ports of a
//! [`super::pfc`] switch, as the Aquarius talk slides (Li, Zeng, Hu and Chen) summarize it; see
//! `docs/validation/transports.md`. Each egress port has a few physical data queues, served in
//! round robin, one packet per unpaused queue in turn (§3.1's "DRR among unpaused queues" with
//! equal quanta, per packet). A flow table keyed by the flow (its source, destination and
//! receiver-side index) holds, for each flow with packets buffered at the port, those packets and
//! its queue: a flow that becomes active takes an empty queue if one is free, else shares the queue
//! its key hashes to (a collision), and keeps its queue while it has packets here (§3.2's dynamic
//! assignment). The table may be finite (`switch.per_flow.flow_table_entries`): indexed by a hash
//! of the flow id, as a switch's register array is, so flows whose hashes meet share an entry, its
//! packets, its queue and its pause (each such flow counted, [`BfcCounters::table_collisions`]).
//! A flow holding `pause_packets` at the port (by default one hop's bandwidth-delay product,
//! §3.2's threshold) pauses the queue it came from at the
//! upstream port (every packet carries its upstream queue in `Cell::vc`, the channel of the link it
//! crossed); the upstream counts pauses per queue ([`ClassPauses`]) and holds a queue while its
//! count is above 0; the flow resumes it when it holds fewer (§3.2's per-hop pause). A flow paused
//! through one upstream queue that arrives through another (its upstream entry drained and it was
//! reassigned) moves its pause to the new queue. Queue-mates of a paused flow wait with it: with
//! fewer queues than active flows BFC blocks heads of line as PFC does.

use super::bloom::{BloomSpec, CountingBloom, MAX_HASHES};
use super::{check_lossless, EthernetSwitchConfig, PortCheck, PortKind, PFC_THRESHOLD_KEYS};
use crate::blocks::cell::Cell;
use crate::blocks::ethernet::pause::MAX_PAUSE_TARGETS;
use crate::blocks::ethernet::pause::{ClassPauses, PauseTarget};
use crate::engine::rng::mix;
use crate::engine::stats::{only_counts, Tally};
use crate::engine::time::TimePs;
use crate::keys::{invalid, one_to, ScenarioError};
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::num::NonZeroU32;

/// BFC's settings of every egress port (`[switch.per_flow]`: `queues`, `pause_packets`,
/// `flow_table_entries`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BfcSpec {
    /// Physical data queues per egress port (1 to 128; BFC's evaluation: 32 and 128).
    pub queues: u16,
    /// A flow holding this many packets at an egress port pauses its upstream queue
    /// (about a one-hop bandwidth-delay product, §3.2).
    pub pause_packets: u32,
    /// Entries of the flow table, indexed by a hash of the flow id; `None`: one per flow.
    pub table_entries: Option<NonZeroU32>,
    /// Counters of the counting Bloom filter of paused flows each port keeps for its far
    /// end's pauses; `None`: no filter (a flow that became active again takes a queue as any
    /// new flow does).
    pub bloom_bits: Option<NonZeroU32>,
    /// The counters each flow sets in the filter.
    pub bloom_hashes: u8,
}

/// BFC's per-flow queues on PFC's lossless ports.
pub const KIND: PortKind = PortKind {
    name: "bfc",
    description: "BFC (Goyal et al. 2022): PFC's lossless ports (one class) whose egress ports give each active flow a queue of switch.per_flow.queues and pause the upstream queue a flow holding switch.per_flow.pause_packets came from; PFC's XOFF the backstop; needs per-flow routing",
    trims: false,
    lossless: true,
    classes: false,
    per_flow_routing: true,
    keys: &[
        PFC_THRESHOLD_KEYS,
        &[
            "switch.per_flow.queues",
            "switch.per_flow.pause_packets",
            "switch.per_flow.flow_table_entries",
            "switch.per_flow.bloom_filter_bits",
            "switch.per_flow.bloom_filter_hashes",
        ],
    ],
    check,
};

/// PFC's buffer with one class, 1 to 128 queues, a flow's pause before the ingress's XOFF, a
/// flow table of at least one entry.
fn check(c: &PortCheck<'_>) -> Result<(), ScenarioError> {
    check_lossless(c, 1)?;
    let s = c.switch;
    check_queues(s.per_flow.queues, 1)?;
    check_table(s)?;
    check_bloom(s)?;
    check_pause_packets(c)
}

/// The error for a Bloom filter of no counter, or of no hash or more than [`MAX_HASHES`].
fn check_bloom(s: &EthernetSwitchConfig) -> Result<(), ScenarioError> {
    if s.per_flow.bloom_filter_bits == Some(0) {
        return Err(invalid(
            "switch.per_flow.bloom_filter_bits",
            "expected at least 1 counter (or no key: no Bloom filter)",
        ));
    }
    one_to(
        "switch.per_flow.bloom_filter_hashes",
        s.per_flow.bloom_filter_hashes,
        MAX_HASHES,
        "hashes",
    )
}

/// The error for a flow's pause threshold (`switch.per_flow.pause_packets`, absent: one hop's
/// bandwidth-delay product) of no packet or not below the backstop's XOFF (BFC's and ideal
/// per-flow queues').
pub fn check_pause_packets(c: &PortCheck<'_>) -> Result<(), ScenarioError> {
    let s = c.switch;
    let pause_packets = s.per_flow.pause_packets.unwrap_or(c.hop_bdp_packets);
    if pause_packets == 0 || pause_packets >= s.pfc_xoff_packets {
        let given = match s.per_flow.pause_packets {
            Some(_) => String::new(),
            None => " (one hop's bandwidth-delay product)".into(),
        };
        return Err(invalid(
            "switch.per_flow.pause_packets",
            format!(
                "expected at least 1 packet and fewer than switch.pfc_xoff_packets ({}): a flow pauses its upstream queue before the backstop pauses the port, got {pause_packets}{given}",
                s.pfc_xoff_packets
            ),
        ));
    }
    Ok(())
}

/// The error for `queues` per port outside `least` to 128 (`switch.per_flow.queues`).
pub fn check_queues(queues: u32, least: u32) -> Result<(), ScenarioError> {
    if !(least..=MAX_PAUSE_TARGETS as u32).contains(&queues) {
        return Err(invalid(
            "switch.per_flow.queues",
            format!("expected {least} to {MAX_PAUSE_TARGETS} queues per port, got {queues}"),
        ));
    }
    Ok(())
}

/// The error for a flow table of no entry (`switch.per_flow.flow_table_entries`).
pub fn check_table(s: &EthernetSwitchConfig) -> Result<(), ScenarioError> {
    if s.per_flow.flow_table_entries == Some(0) {
        return Err(invalid(
            "switch.per_flow.flow_table_entries",
            "expected at least 1 entry (or no key: an entry per flow)",
        ));
    }
    Ok(())
}

impl BfcSpec {
    /// BFC's settings of the ports `switch` gives, if its ports are BFC's; a flow pauses at
    /// `hop_bdp_packets` unless `switch.per_flow.pause_packets` says otherwise.
    pub fn of(switch: &EthernetSwitchConfig, hop_bdp_packets: u32) -> Option<BfcSpec> {
        let keys = &switch.per_flow;
        (switch.kind().name == KIND.name).then_some(BfcSpec {
            queues: keys.queues as u16,
            pause_packets: keys.pause_packets.unwrap_or(hop_bdp_packets),
            table_entries: keys.flow_table_entries.and_then(NonZeroU32::new),
            bloom_bits: keys.bloom_filter_bits.and_then(NonZeroU32::new),
            bloom_hashes: keys.bloom_filter_hashes as u8,
        })
    }

    /// The queues per port (and host NIC) of BFC's ports, if `switch` has them.
    pub fn queues_of(switch: &EthernetSwitchConfig) -> Option<u16> {
        (switch.kind().name == KIND.name).then_some(switch.per_flow.queues as u16)
    }

    /// The Bloom filter of paused flows its ports keep, if any.
    pub fn bloom(&self) -> Option<BloomSpec> {
        self.bloom_bits.map(|bits| BloomSpec {
            bits,
            hashes: self.bloom_hashes,
        })
    }

    /// The entry of the flow table that flow `key` takes: its own key without a bound, else
    /// its hash modulo the entries.
    pub fn entry_of(&self, key: u64) -> u64 {
        match self.table_entries {
            None => key,
            Some(entries) => mix(key ^ TABLE_SALT) % entries.get() as u64,
        }
    }
}

/// Salts the flow table's hash apart from the hash that picks a shared queue.
const TABLE_SALT: u64 = 0x5bd1_e995_27d4_eb2f;

/// A flow's key in a port's flow table: the packet's source and destination hosts and the
/// flow's index at the receiver (a data packet's `Cell::packet`).
pub fn flow_key(cell: &Cell) -> u64 {
    (cell.src as u64) << 48 | (cell.dst as u64) << 32 | cell.packet as u64
}

/// A flow table entry with packets buffered at a port: one flow's, or (a finite table) the
/// flows' whose hashes met.
#[derive(Clone, Debug)]
struct BfcFlow {
    packets: u32,
    queue: u16,
    /// The upstream queue it paused, if it holds it paused.
    pausing: Option<u16>,
    /// The flow that took the entry.
    owner: u64,
    /// The other flows that found it held while it was (empty: no allocation).
    guests: Vec<u64>,
}

/// What a packet's arrival did at a BFC port.
#[derive(Clone, Copy, Debug, Default)]
pub struct BfcEnqueued {
    /// The queue it joins.
    pub queue: u16,
    /// Frames for the port it came in on (a resume of the queue a pause moves off, then a
    /// pause).
    pub frames: [Option<(PauseTarget, bool)>; 2],
    /// The flow the frames name beside the queue (the entry's first flow), for the upstream's
    /// Bloom filter of paused flows.
    pub flow: u64,
}

/// What one BFC port counted.
#[derive(Clone, Copy, Debug, Default)]
pub struct BfcCounters {
    /// PAUSE frames naming an upstream queue sent on this port.
    pub queue_pause_frames_sent: u64,
    /// Resume frames naming an upstream queue sent on this port.
    pub queue_resume_frames_sent: u64,
    /// Flows that became active here and took a queue.
    pub flows_assigned: u64,
    /// ... a queue another active flow held (none was empty).
    pub flow_collisions: u64,
    /// Flows that found their flow table entry held by another flow (a finite table's hash
    /// collision: they share its packets, queue and pause).
    pub table_collisions: u64,
    /// Flows that became active here and tested present in the Bloom filter of paused flows,
    /// so joined a paused queue.
    pub filter_positives: u64,
    /// ... of them, flows the far end did not pause (the filter's false positives).
    pub filter_false_positives: u64,
}

impl BfcCounters {
    /// Counts a PAUSE (`pause`) or resume frame sent.
    pub fn count_frame(&mut self, pause: bool) {
        if pause {
            self.queue_pause_frames_sent += 1;
        } else {
            self.queue_resume_frames_sent += 1;
        }
    }
}

impl Tally for BfcCounters {
    fn counts_mut(&mut self) -> impl IntoIterator<Item = &mut u64> {
        [
            &mut self.queue_pause_frames_sent,
            &mut self.queue_resume_frames_sent,
            &mut self.flows_assigned,
            &mut self.flow_collisions,
            &mut self.table_collisions,
            &mut self.filter_positives,
            &mut self.filter_false_positives,
        ]
    }
}

const _: () = assert!(only_counts::<BfcCounters>(7));

/// One egress port's BFC state: its queues' pauses by the far end, its flow table, and what
/// it counted.
#[derive(Clone, Debug)]
pub struct BfcPort {
    /// The far end's pause counters of this port's queues.
    pub pauses: ClassPauses,
    /// What it counted.
    pub counters: BfcCounters,
    /// The flows with packets here, by [`flow_key`] (a fixed hasher: runs repeat).
    flows: HashMap<u64, BfcFlow, BuildHasherDefault<DefaultHasher>>,
    /// The flows the far end paused, as the Bloom filter holds them (`None`: no filter).
    paused_filter: Option<CountingBloom>,
    /// The same flows exactly, with how many pauses each holds: only to count the filter's
    /// false positives, never to decide.
    paused_exact: HashMap<u64, u32, BuildHasherDefault<DefaultHasher>>,
}

impl BfcPort {
    /// A port of `queues` queues, none paused, no flow active, with the Bloom filter of
    /// paused flows `bloom` describes (if any).
    pub fn new(queues: u16, bloom: Option<BloomSpec>) -> Self {
        BfcPort {
            pauses: ClassPauses::new(queues as usize),
            counters: BfcCounters::default(),
            flows: HashMap::default(),
            paused_filter: bloom.map(CountingBloom::new),
            paused_exact: HashMap::default(),
        }
    }

    /// The far end paused (`pause`) or resumed queue `queue` at `now_ps` because of flow `flow`:
    /// the queue's pause counter, and the flow in the Bloom filter.
    pub fn far_end(&mut self, queue: u16, flow: u64, pause: bool, now_ps: TimePs) {
        self.pauses.apply(queue, pause, now_ps);
        let Some(filter) = &mut self.paused_filter else {
            return;
        };
        let held = self.paused_exact.entry(flow).or_default();
        if pause {
            filter.add(flow);
            *held += 1;
        } else if *held > 0 {
            filter.remove(flow);
            *held -= 1;
        }
        if *held == 0 {
            self.paused_exact.remove(&flow);
        }
    }

    /// The queue for flow `flow` that becomes active here: with a Bloom filter of paused
    /// flows in which it tests present, a paused queue (the lowest), so that a flow paused
    /// downstream stays held here after its packets drained; otherwise an empty queue, or
    /// (none empty) one by hash.
    fn queue_for_new_flow(&mut self, spec: &BfcSpec, flow: u64, free: Option<u16>) -> u16 {
        let flagged = self
            .paused_filter
            .as_ref()
            .is_some_and(|f| f.contains(flow));
        let paused = self.pauses.paused_mask();
        if flagged {
            self.counters.filter_positives += 1;
            self.counters.filter_false_positives += !self.paused_exact.contains_key(&flow) as u64;
            if paused != 0 {
                return paused.trailing_zeros() as u16;
            }
        }
        free.unwrap_or((mix(flow) % spec.queues as u64) as u16)
    }

    /// A packet of flow `flow` arrived through upstream queue `upstream_queue`; the port's
    /// queues hold `queue_packets(q)` packets each: its queue, and the frames to send back.
    pub fn enqueue(
        &mut self,
        spec: &BfcSpec,
        flow: u64,
        upstream_queue: u16,
        queue_packets: impl Fn(u16) -> u32,
    ) -> BfcEnqueued {
        let mut got = BfcEnqueued::default();
        let at = spec.entry_of(flow);
        if !self.flows.contains_key(&at) {
            let free = (0..spec.queues).find(|&q| queue_packets(q) == 0);
            self.counters.flows_assigned += 1;
            self.counters.flow_collisions += free.is_none() as u64;
            let queue = self.queue_for_new_flow(spec, flow, free);
            self.flows.insert(
                at,
                BfcFlow {
                    packets: 0,
                    queue,
                    pausing: None,
                    owner: flow,
                    guests: Vec::new(),
                },
            );
        }
        let entry = self.flows.get_mut(&at).expect("just made");
        if entry.owner != flow && !entry.guests.contains(&flow) {
            entry.guests.push(flow);
            self.counters.table_collisions += 1;
        }
        entry.packets += 1;
        got.queue = entry.queue;
        got.flow = entry.owner;
        if entry.packets >= spec.pause_packets && entry.pausing != Some(upstream_queue) {
            let pause = Some((PauseTarget::Queue(upstream_queue), true));
            got.frames = match entry.pausing {
                None => [pause, None],
                Some(old) => [Some((PauseTarget::Queue(old), false)), pause],
            };
            entry.pausing = Some(upstream_queue);
        }
        got
    }

    /// A packet of flow `flow` left: the upstream queue to resume (and the flow the frame
    /// names beside it), if the flow now holds fewer than `pause_packets` and held it paused.
    pub fn dequeue(&mut self, spec: &BfcSpec, flow: u64) -> Option<(PauseTarget, u64)> {
        let at = spec.entry_of(flow);
        let entry = self.flows.get_mut(&at).expect("a flow with packets here");
        entry.packets -= 1;
        let resume = match entry.pausing {
            Some(queue) if entry.packets < spec.pause_packets => {
                entry.pausing = None;
                Some((PauseTarget::Queue(queue), entry.owner))
            }
            _ => None,
        };
        if entry.packets == 0 {
            self.flows.remove(&at);
        }
        resume
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: BfcSpec = BfcSpec {
        queues: 2,
        pause_packets: 2,
        table_entries: None,
        bloom_bits: None,
        bloom_hashes: 2,
    };

    /// Two flows take the two empty queues, a third collides; the second packet of a flow
    /// pauses its upstream queue, a packet through another upstream queue moves the pause,
    /// and draining below the threshold resumes it.
    #[test]
    fn flows_take_empty_queues_then_collide_and_pause_their_upstream_queue() {
        let mut port = BfcPort::new(2, None);
        let mut held = [0u32; 2];
        let mut offer = |port: &mut BfcPort, flow: u64, upstream: u16| {
            let got = port.enqueue(&SPEC, flow, upstream, |q| held[q as usize]);
            held[got.queue as usize] += 1;
            got
        };
        let a = offer(&mut port, 10, 5);
        let b = offer(&mut port, 11, 5);
        assert_eq!((a.queue, b.queue, port.counters.flow_collisions), (0, 1, 0));
        offer(&mut port, 12, 5);
        assert_eq!(port.counters.flow_collisions, 1, "no queue was empty");
        let again = offer(&mut port, 10, 5);
        assert_eq!(again.queue, 0, "sticky");
        assert_eq!(port.counters.flows_assigned, 3);
        assert_eq!(again.frames, [Some((PauseTarget::Queue(5), true)), None]);
        let moved = offer(&mut port, 10, 7);
        assert_eq!(
            moved.frames,
            [
                Some((PauseTarget::Queue(5), false)),
                Some((PauseTarget::Queue(7), true))
            ]
        );
        assert_eq!(port.dequeue(&SPEC, 10), None, "holds 2 of flow 10");
        assert_eq!(port.dequeue(&SPEC, 10), Some((PauseTarget::Queue(7), 10)));
        assert_eq!(port.dequeue(&SPEC, 10), None);
        assert!(!port.flows.contains_key(&10), "drained: forgotten");
    }

    /// A table of one entry: a second flow shares the first's entry, queue and pause, counted
    /// once however many packets it sends; the entry is freed when both drained.
    #[test]
    fn a_finite_table_shares_an_entry_between_flows_whose_hashes_meet() {
        let spec = BfcSpec {
            table_entries: NonZeroU32::new(1),
            pause_packets: 3,
            ..SPEC
        };
        let mut port = BfcPort::new(2, None);
        let a = port.enqueue(&spec, 10, 0, |_| 0);
        let b = port.enqueue(&spec, 11, 0, |_| 0);
        let b2 = port.enqueue(&spec, 11, 0, |_| 0);
        assert_eq!((a.queue, b.queue), (0, 0), "one entry, one queue");
        assert_eq!(port.counters.table_collisions, 1, "flow 11 counted once");
        assert_eq!(port.counters.flows_assigned, 1);
        assert_eq!(
            b2.frames[0],
            Some((PauseTarget::Queue(0), true)),
            "3 packets held"
        );
        assert_eq!(port.dequeue(&spec, 10), Some((PauseTarget::Queue(0), 10)));
        port.dequeue(&spec, 11);
        port.dequeue(&spec, 11);
        assert!(port.flows.is_empty());
    }

    /// With a Bloom filter of paused flows: a flow the far end paused that becomes active again
    /// joins the paused queue (a true positive); with a filter of one counter, a flow never
    /// paused tests present too and joins it (a false positive, counted); without a filter
    /// it takes an empty queue.
    #[test]
    fn a_flow_in_the_bloom_filter_of_paused_flows_joins_a_paused_queue() {
        let with = |bits| BfcSpec {
            queues: 4,
            bloom_bits: NonZeroU32::new(bits),
            ..SPEC
        };
        let mut port = BfcPort::new(4, with(4096).bloom());
        port.far_end(2, 10, true, 0);
        let back = port.enqueue(&with(4096), 10, 0, |_| 0);
        let other = port.enqueue(&with(4096), 11, 0, |q| (q == 0) as u32);
        assert_eq!((back.queue, other.queue), (2, 1), "10 is paused, 11 is not");
        assert_eq!(
            (
                port.counters.filter_positives,
                port.counters.filter_false_positives
            ),
            (1, 0)
        );
        let mut tiny = BfcPort::new(4, with(1).bloom());
        tiny.far_end(3, 10, true, 0);
        assert_eq!(tiny.enqueue(&with(1), 12, 0, |_| 0).queue, 3);
        assert_eq!(tiny.counters.filter_false_positives, 1);
        tiny.far_end(3, 10, false, 1);
        assert_eq!(
            tiny.enqueue(&with(1), 13, 0, |_| 0).queue,
            0,
            "filter empty again"
        );
        let mut none = BfcPort::new(4, None);
        none.far_end(2, 10, true, 0);
        assert_eq!(
            none.enqueue(&SPEC, 10, 0, |_| 0).queue,
            0,
            "no filter: no memory"
        );
    }

    /// 128 queues (the most BFC's evaluation uses, Goyal et al. 2022): a flow finding queues
    /// 0 to 126 busy takes queue 127, and the far end's pause of it stops that queue alone; a flow the
    /// Bloom filter holds joins the lowest paused queue above 63 too.
    #[test]
    fn a_port_of_128_queues_assigns_and_pauses_its_last_queue() {
        let spec = BfcSpec {
            queues: 128,
            bloom_bits: NonZeroU32::new(4096),
            ..SPEC
        };
        let mut port = BfcPort::new(128, spec.bloom());
        let got = port.enqueue(&spec, 10, 0, |q| (q < 127) as u32);
        assert_eq!(got.queue, 127);
        port.far_end(127, 10, true, 0);
        port.far_end(100, 11, true, 0);
        assert!(port.pauses.is_paused(127) && port.pauses.is_paused(100));
        assert!(!port.pauses.is_paused(63) && !port.pauses.is_paused(126));
        assert_eq!(port.pauses.paused_mask(), 1 << 100 | 1 << 127);
        assert_eq!(port.enqueue(&spec, 11, 0, |_| 0).queue, 100);
    }

    #[test]
    fn a_queue_stays_paused_until_every_pause_is_resumed() {
        let mut pauses = ClassPauses::new(4);
        pauses.apply(3, true, 100);
        pauses.apply(3, true, 200);
        pauses.apply(3, false, 300);
        assert!(pauses.is_paused(3));
        assert_eq!(pauses.paused_mask(), 1 << 3);
        pauses.apply(3, false, 400);
        assert!(!pauses.any_paused());
        assert_eq!(pauses.totals_ps(1_000), (300, 300));
    }
}
