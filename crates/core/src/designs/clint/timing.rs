//! Clint's fixed timing (Eberle and Gura 2002, §2, §3.2–3.3, Table 1): packet times on both
//! channels, the bulk slot and where in it the scheduling and acknowledgment packets travel, and
//! the quick channel windows those packets occupy.
//!
//! Every serialization time is rounded up to whole cycles of 4 ns, the bulk byte time and the
//! paper's timing resolution (§4.1).

use super::config::{Architecture, ClintConfig};
use crate::engine::time::{ps_from_ns, serialization_ps, TimePs, PS_PER_NS};
use crate::scenario::ScenarioError;

/// The simulation cycle: one bulk byte time (§4.1).
pub const CYCLE_PS: TimePs = 4_000;

/// Packet sizes in bytes, header and checksum included (Table 1).
pub mod bytes {
    /// Bulk request (bulk channel).
    pub const BREQ: u64 = 2_086;
    /// Bulk acknowledgment (quick channel).
    pub const BACK: u64 = 4;
    /// Quick request (quick channel).
    pub const QREQ: u64 = 36;
    /// Quick acknowledgment (quick channel).
    pub const QACK: u64 = 4;
    /// Configuration packet to the arbiter (quick channel).
    pub const CFG: u64 = 19;
    /// Grant packet from the arbiter (quick channel).
    pub const GNT: u64 = 4;
}

/// All fixed delays of a run, in picoseconds.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// A bulk request on the bulk link.
    pub breq_ps: TimePs,
    /// A quick request on the quick link.
    pub qreq_ps: TimePs,
    /// An acknowledgment (back or qack) on the quick link.
    pub ack_ps: TimePs,
    /// A configuration packet on the quick link.
    pub cfg_ps: TimePs,
    /// A grant packet on the quick link.
    pub gnt_ps: TimePs,
    /// Cable propagation, node to switch.
    pub propagation_ps: TimePs,
    /// Bulk switch forwarding delay.
    pub bulk_switch_ps: TimePs,
    /// Quick switch forwarding delay.
    pub quick_switch_ps: TimePs,
    /// One bulk slot: a request packet plus the slot gap (§3.3, §3.5).
    pub slot_ps: TimePs,
    /// Gap at the start of a slot before a request is sent.
    pub slot_gap_ps: TimePs,
    /// Offset in its slot at which every node sends its configuration packet: as late as lets
    /// the grants arrive by the slot's end.
    pub cfg_offset_ps: TimePs,
    /// Arbitration time.
    pub arbiter_ps: TimePs,
    /// Offset in the acknowledgment slot at which targets send bulk acknowledgments: once the
    /// request's last byte has arrived.
    pub back_offset_ps: TimePs,
    /// Bulk loss timeout.
    pub bulk_timeout_ps: TimePs,
    /// Quick loss timeout.
    pub quick_timeout_ps: TimePs,
}

fn cycles(time_ps: TimePs) -> TimePs {
    time_ps.div_ceil(CYCLE_PS) * CYCLE_PS
}

impl Timing {
    /// The timing of a validated scenario; fails if the arbitration does not fit in a slot.
    pub fn new(c: &ClintConfig) -> Result<Timing, ScenarioError> {
        let bulk_bps = (c.bulk.rate_gbps * 1e9).round() as u64;
        let quick_bps = (c.quick.rate_gbps * 1e9).round() as u64;
        let quick = |size_bytes| cycles(serialization_ps(size_bytes, quick_bps));
        let breq_ps = cycles(serialization_ps(bytes::BREQ, bulk_bps));
        let propagation_ps = c.link.propagation_ns * PS_PER_NS;
        let slot_gap_ps = c.bulk.slot_gap_ns * PS_PER_NS;
        let slot_ps = breq_ps + slot_gap_ps;
        let arbiter_ps = c.bulk.arbiter_ns * PS_PER_NS;
        let (cfg_ps, gnt_ps, ack_ps) = (quick(bytes::CFG), quick(bytes::GNT), quick(bytes::BACK));
        let arbitration_ps = cfg_ps + propagation_ps + arbiter_ps + gnt_ps + propagation_ps;
        let bulk_switch_ps = ps_from_ns(c.bulk.switch_delay_ns);
        let back_offset_ps = cycles(2 * propagation_ps + bulk_switch_ps);
        if arbitration_ps + back_offset_ps + ack_ps > slot_ps {
            return Err(ScenarioError {
                key: "bulk.arbiter_ns".into(),
                message: format!(
                    "configuration, arbitration and grant ({} ns) must fit in a slot ({} ns) after the acknowledgment",
                    arbitration_ps / PS_PER_NS,
                    slot_ps / PS_PER_NS
                ),
            });
        }
        let output_drain_ps = if c.channel.architecture == Architecture::B3 {
            c.bulk.output_buffers as u64 * breq_ps
        } else {
            0
        };
        let timing = Timing {
            breq_ps,
            qreq_ps: quick(bytes::QREQ),
            ack_ps,
            cfg_ps,
            gnt_ps,
            propagation_ps,
            bulk_switch_ps,
            quick_switch_ps: c.quick.switch_delay_ns * PS_PER_NS,
            slot_ps,
            slot_gap_ps,
            cfg_offset_ps: slot_ps - arbitration_ps,
            arbiter_ps,
            back_offset_ps,
            bulk_timeout_ps: c
                .nic
                .bulk_timeout_ns
                .map_or(20_000 * PS_PER_NS + output_drain_ps, |ns| ns * PS_PER_NS),
            quick_timeout_ps: c.nic.quick_timeout_ns * PS_PER_NS,
        };
        // A quick request (stretched by an acknowledgment in Q2) must fit between the windows
        // reserved every slot, or no node could ever start one.
        let longest_ps = timing.qreq_ps + timing.ack_ps;
        let gap_ps = timing.reserved_windows(true).largest_gap_ps();
        if longest_ps > gap_ps {
            return Err(ScenarioError {
                key: "quick.rate_gbps".into(),
                message: format!(
                    "a quick request ({} ns at this rate) must fit between the windows reserved every slot for scheduling and acknowledgments (the largest gap is {} ns)",
                    longest_ps / PS_PER_NS,
                    gap_ps / PS_PER_NS
                ),
            });
        }
        Ok(timing)
    }

    /// From a node starting a quick packet to its head leaving the quick switch output.
    pub fn quick_to_output_ps(&self) -> TimePs {
        self.propagation_ps + self.quick_switch_ps
    }

    /// From a node starting a bulk packet to its head leaving the bulk switch output.
    pub fn bulk_to_output_ps(&self) -> TimePs {
        self.propagation_ps + self.bulk_switch_ps
    }

    /// The quick channel windows taken every slot by scheduling packets and (`with_bulk_acks`)
    /// bulk acknowledgment packets, as spans of forbidden start times for a node's own quick
    /// packets (§3.3: initiators stay silent when grant packets are sent).
    pub fn reserved_windows(&self, with_bulk_acks: bool) -> ReservedWindows {
        let to_output = self.quick_to_output_ps();
        // The grant leaves the switch output so that it arrives at the node at the slot's end.
        let gnt_at_output = self.slot_ps - self.propagation_ps - self.gnt_ps;
        ReservedWindows {
            period_ps: self.slot_ps,
            spans: [
                // Configuration packet on the node's own uplink.
                (self.cfg_offset_ps, self.cfg_ps),
                // Bulk acknowledgment: on the uplink, and (sent by every target at the same
                // instant) on every switch output `to_output` later: the same start times.
                (
                    self.back_offset_ps,
                    if with_bulk_acks { self.ack_ps } else { 0 },
                ),
                // Grant on every switch output, seen from the sender.
                (gnt_at_output - to_output, self.gnt_ps),
            ],
        }
    }
}

/// Periodic spans of time in which a node may not have a quick packet on its uplink (or, shifted
/// by the fixed forwarding delay, on a switch output).
#[derive(Clone, Copy, Debug)]
pub struct ReservedWindows {
    period_ps: TimePs,
    /// (offset in the period, length) of each span; a span of length 0 reserves nothing.
    spans: [(TimePs, TimePs); 3],
}

impl ReservedWindows {
    /// The longest stretch of a period that no span covers.
    pub fn largest_gap_ps(&self) -> TimePs {
        let mut spans: Vec<(TimePs, TimePs)> = self
            .spans
            .iter()
            .filter(|&&(_, len)| len > 0)
            .map(|&(offset, len)| (offset % self.period_ps, len))
            .collect();
        spans.sort_unstable();
        // Walk the spans in order, once round the period and into the next, tracking where the
        // covered time ends.
        let (first_start, _) = spans[0];
        let mut covered_to = first_start;
        let mut largest = 0;
        for &(start, len) in spans.iter().chain(&[(first_start + self.period_ps, 0)]) {
            largest = largest.max(start.saturating_sub(covered_to));
            covered_to = covered_to.max(start + len);
        }
        largest
    }

    /// The earliest time at or after `start_ps` at which a packet of `duration_ps` overlaps no
    /// reserved span.
    pub fn clear_start(&self, mut start_ps: TimePs, duration_ps: TimePs) -> TimePs {
        loop {
            let blocked = self.spans.iter().find_map(|&(offset, len)| {
                let end_ps = start_ps + duration_ps;
                if len == 0 || end_ps <= offset {
                    return None;
                }
                // The latest occurrence beginning before the packet ends.
                let occurrence = offset + (end_ps - 1 - offset) / self.period_ps * self.period_ps;
                (occurrence + len > start_ps).then_some(occurrence + len)
            });
            match blocked {
                Some(after_ps) => start_ps = after_ps,
                None => return start_ps,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timing() -> Timing {
        let json = r#"{"design": "clint"}"#;
        Timing::new(&ClintConfig::from_json(json).unwrap()).unwrap()
    }

    #[test]
    fn seed_timing() {
        let t = timing();
        assert_eq!(t.breq_ps, 2_086 * CYCLE_PS, "one bulk byte per 4 ns cycle");
        assert_eq!(t.qreq_ps, 544_000, "36 bytes at 0.53 Gbit/s, whole cycles");
        assert_eq!(t.slot_ps, 8_784_000);
        let reserved = t.cfg_ps + 2 * t.ack_ps;
        let share = reserved as f64 / t.slot_ps as f64;
        assert!(
            (0.04..0.06).contains(&share),
            "§3.3: about 5% of the quick channel, {share}"
        );
    }

    #[test]
    fn the_largest_gap_goes_round_the_period() {
        let windows = ReservedWindows {
            period_ps: 100,
            spans: [(10, 5), (40, 10), (95, 10)],
        };
        assert_eq!(windows.largest_gap_ps(), 45);
        let t = timing();
        let gap = t.reserved_windows(true).largest_gap_ps();
        assert!(
            gap > t.qreq_ps && gap <= t.slot_ps - t.cfg_ps - t.ack_ps,
            "{gap}"
        );
    }

    #[test]
    fn windows_push_packets_past_reserved_spans() {
        let t = timing();
        let w = t.reserved_windows(true);
        assert_eq!(w.clear_start(1_000_000, t.qreq_ps), 1_000_000);
        // A request that would overlap the configuration packet waits for its end.
        let cfg_end = t.cfg_offset_ps + t.cfg_ps;
        assert_eq!(w.clear_start(t.cfg_offset_ps - 1_000, t.qreq_ps), cfg_end);
        assert_eq!(
            w.clear_start(t.slot_ps + t.cfg_offset_ps, t.ack_ps),
            t.slot_ps + cfg_end
        );
        let back_end = t.back_offset_ps + t.ack_ps;
        assert_eq!(w.clear_start(t.slot_ps, t.qreq_ps), t.slot_ps + back_end);
        // With bulk acknowledgments as packets, only the scheduling packets are reserved.
        let scheduling_only = t.reserved_windows(false);
        assert_eq!(scheduling_only.clear_start(t.slot_ps, t.qreq_ps), t.slot_ps);
        assert_eq!(
            scheduling_only.clear_start(t.cfg_offset_ps - 1_000, t.qreq_ps),
            cfg_end
        );
    }
}
