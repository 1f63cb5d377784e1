//! A switch's output queues over one shared buffer with Choudhury & Hahne's dynamic
//! threshold ("Dynamic queue length thresholds for shared-memory packet switches", IEEE/ACM
//! ToN 6(2), 1998, §III): an output queue may take a packet only while its length is below
//! α · (B − Q(t)), B the switch's buffer and Q(t) what all its queues hold. With S queues
//! continuously overloaded each settles at α·B/(1 + α·S) and B/(1 + α·S) stays free (§IV), so
//! a burst into an idle port finds room that a static per-port share would not give it.
//!
//! The queues are the drop-tail (ECN-marking) [`OutputQueue`]s of the per-port switch; only
//! admission differs. As there, a packet occupies the buffer while it waits, not while it is
//! on the wire, and the buffer counts packets (as `switch.queue_packets` does).

use super::drop_tail::{Enqueued, OutputQueue};
use super::{EthernetSwitchConfig, PortCheck, PortKind};
use crate::blocks::cell::{CellArena, CellId};
use crate::blocks::transport::Marks;
use crate::engine::time::TimePs;
use crate::keys::{invalid, ScenarioError};

/// Drop-tail output queues over one switch buffer under the dynamic threshold.
pub const KIND: PortKind = PortKind {
    name: "shared_buffer",
    description: "drop-tail output queues over one switch buffer (switch.shared_buffer_packets, default switch.queue_packets per port) under the dynamic threshold alpha x free buffer (switch.dt_alpha; Choudhury & Hahne 1998)",
    trims: false,
    lossless: false,
    classes: false,
    per_flow_routing: false,
    keys: &[&[
        "switch.cut_through",
        "switch.shared_buffer_packets",
        "switch.dt_alpha",
    ]],
    check,
};

/// α of the dynamic threshold when `switch.dt_alpha` is absent.
pub const DEFAULT_DT_ALPHA: f64 = 1.0;

/// A buffer of at least one packet and a positive α.
fn check(c: &PortCheck<'_>) -> Result<(), ScenarioError> {
    let s = c.switch;
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
    Ok(())
}

/// The dynamic threshold of a switch of `ports` ports, if its ports share a buffer; with
/// threshold marking (DCTCP), an error unless one queue can grow past its marking threshold K.
pub fn dynamic_threshold(
    s: &EthernetSwitchConfig,
    ports: usize,
    marks: Marks,
) -> Result<Option<DynamicThreshold>, ScenarioError> {
    if s.kind().name != KIND.name {
        return Ok(None);
    }
    let pooled = (s.queue_packets as u64 * ports as u64).min(u32::MAX as u64) as u32;
    let threshold = DynamicThreshold {
        buffer_packets: s.shared_buffer_packets.unwrap_or(pooled),
        alpha: s.dt_alpha.unwrap_or(DEFAULT_DT_ALPHA),
    };
    let longest = threshold.longest_queue_packets();
    if marks == Marks::Threshold && s.ecn_threshold_packets >= longest {
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

/// The dynamic threshold's constants (Choudhury & Hahne §III).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DynamicThreshold {
    /// B: the packets the whole switch buffer holds.
    pub buffer_packets: u32,
    /// α: a queue may hold up to α times the free buffer.
    pub alpha: f64,
}

impl DynamicThreshold {
    /// The queue length at which a queue stops taking packets when the buffer holds
    /// `occupied_packets` (all queues, its own included): ⌈α · (B − Q)⌉, at most B, so that
    /// a queue of integer length `len` takes a packet iff `len` < α · (B − Q) (§III, eq. 1).
    pub fn limit_packets(&self, occupied_packets: u32) -> u32 {
        let free = self.buffer_packets.saturating_sub(occupied_packets);
        let limit = (self.alpha * free as f64).ceil();
        limit.min(self.buffer_packets as f64) as u32
    }

    /// The deepest one queue gets while the others are empty (α·B/(1 + α), rounded up by the
    /// rule's integer packets): the most any queue can hold, and so its ring's size.
    pub fn longest_queue_packets(&self) -> u32 {
        // len − limit(len) grows with len, and is negative below α·B/(1 + α).
        let b = self.buffer_packets as f64;
        let below = (self.alpha * b / (1.0 + self.alpha)).floor() as u32;
        (below.saturating_sub(1)..=self.buffer_packets)
            .find(|&len| len >= self.limit_packets(len))
            .unwrap_or(self.buffer_packets)
    }
}

/// What the shared buffer counts: its drops by cause (each also one of the switch's
/// `packets_dropped`, which the run's ledger reads) and its deepest occupancy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SharedBufferCounters {
    /// Arrivals refused while the buffer had room: their queue was at its threshold.
    pub threshold_drops: u64,
    /// Arrivals refused because the buffer was full (a threshold of 0).
    pub full_drops: u64,
    /// The most packets the buffer held.
    pub peak_occupied_packets: u32,
}

/// One switch's shared buffer: the threshold and what it counted.
#[derive(Clone, Debug)]
pub struct SharedBuffer {
    /// The threshold's constants.
    pub threshold: DynamicThreshold,
    /// What it counted.
    pub counters: SharedBufferCounters,
}

impl SharedBuffer {
    /// An empty buffer under `threshold`.
    pub fn new(threshold: DynamicThreshold) -> Self {
        SharedBuffer {
            threshold,
            counters: SharedBufferCounters::default(),
        }
    }

    /// Packets waiting in all of `queues` at `now_ps`.
    pub fn occupied_packets(queues: &mut [OutputQueue], now_ps: TimePs) -> u32 {
        queues.iter_mut().map(|q| q.packets(now_ps)).sum()
    }

    /// Offers `cell` to `queues[output]` at `now_ps` (ready to leave at `ready_ps`, as
    /// [`OutputQueue::enqueue`]), admitted only below the dynamic threshold.
    pub fn offer(
        &mut self,
        queues: &mut [OutputQueue],
        output: usize,
        cells: &mut CellArena,
        cell: CellId,
        now_ps: TimePs,
        ready_ps: TimePs,
    ) -> Enqueued {
        self.offer_with(
            queues,
            output,
            (cells, cell),
            (now_ps, ready_ps),
            DynamicThreshold::limit_packets,
        )
    }

    /// [`SharedBuffer::offer`] under the admission rule `limit` (tests break the rule here).
    fn offer_with(
        &mut self,
        queues: &mut [OutputQueue],
        output: usize,
        (cells, cell): (&mut CellArena, CellId),
        (now_ps, ready_ps): (TimePs, TimePs),
        limit: fn(&DynamicThreshold, u32) -> u32,
    ) -> Enqueued {
        let occupied = Self::occupied_packets(queues, now_ps);
        let limit_packets = limit(&self.threshold, occupied);
        let queue = &mut queues[output];
        let before = queue.packets(now_ps);
        let got = queue.enqueue_below(cells, cell, now_ps, ready_ps, limit_packets);
        match got {
            Enqueued::Full if occupied >= self.threshold.buffer_packets => {
                self.counters.full_drops += 1
            }
            Enqueued::Full => self.counters.threshold_drops += 1,
            Enqueued::Queued { .. } => {
                // It waits, unless it went on the wire at once.
                let occupied = occupied - before + queue.packets(now_ps);
                let c = &mut self.counters;
                c.peak_occupied_packets = c.peak_occupied_packets.max(occupied);
            }
        }
        got
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::cell::Cell;
    use crate::blocks::ethernet::ports::drop_tail::QueueSpec;
    use crate::blocks::link::Link;

    /// B = 180 divides the steady states of S = 1, 2, 4 at α = 1 and 2 into whole packets.
    const BUFFER_PACKETS: u32 = 180;
    /// Ports of the star's switch.
    const PORTS: usize = 8;
    /// 8 Gbit/s: one 1000-byte packet per µs.
    const PACKET_PS: TimePs = 1_000_000;

    /// A star's switch of [`PORTS`] ports over a shared buffer of [`BUFFER_PACKETS`].
    fn star(alpha: f64) -> (Vec<OutputQueue>, SharedBuffer) {
        let threshold = DynamicThreshold {
            buffer_packets: BUFFER_PACKETS,
            alpha,
        };
        let spec = QueueSpec {
            capacity_packets: threshold.longest_queue_packets(),
            capacity_bytes: None,
            ecn_threshold_packets: None,
        };
        let queues = (0..PORTS)
            .map(|_| OutputQueue::new(Link::new(8_000_000_000, 0), spec, 0))
            .collect();
        (queues, SharedBuffer::new(threshold))
    }

    /// What the queues held in the steady state of an overload.
    #[derive(Debug)]
    struct Settled {
        /// Each overloaded queue's mean length, sampled every half packet time.
        queue_packets: Vec<f64>,
        /// The buffer's mean free packets.
        free_packets: f64,
    }

    /// Sources faster than the outputs: each of the first `overloaded` outputs is offered a
    /// packet every half packet time (twice its line rate) for 2 000 packet times under the
    /// admission rule `limit`; the queues are sampled over the second half.
    fn overload(
        overloaded: usize,
        alpha: f64,
        limit: fn(&DynamicThreshold, u32) -> u32,
    ) -> Settled {
        let (mut queues, mut buffer) = star(alpha);
        let mut cells = CellArena::new();
        let steps = 4_000;
        let mut sums = vec![0u64; overloaded];
        let mut free_sum = 0i64;
        let mut samples = 0u64;
        for step in 0..steps {
            let now_ps = step * PACKET_PS / 2;
            for output in 0..overloaded {
                let cell = cells.alloc(Cell::new(0, 1, 1000, true, now_ps, now_ps));
                buffer.offer_with(
                    &mut queues,
                    output,
                    (&mut cells, cell),
                    (now_ps, now_ps),
                    limit,
                );
                cells.free(cell); // the switch would drop it or send it on
            }
            if step >= steps / 2 {
                samples += 1;
                for (output, sum) in sums.iter_mut().enumerate() {
                    *sum += queues[output].packets(now_ps) as u64;
                }
                let occupied = SharedBuffer::occupied_packets(&mut queues, now_ps);
                free_sum += BUFFER_PACKETS as i64 - occupied as i64; // below 0 if a rule overfills
            }
        }
        Settled {
            queue_packets: sums.iter().map(|&s| s as f64 / samples as f64).collect(),
            free_packets: free_sum as f64 / samples as f64,
        }
    }

    /// Choudhury & Hahne §IV: S overloaded queues each hold α·B/(1 + α·S) and B/(1 + α·S)
    /// stays free; within one packet (the rule's integer lengths and the sampling between a
    /// departure and the next admission).
    fn check_steady_state(settled: &Settled, overloaded: usize, alpha: f64) -> Result<(), String> {
        let b = BUFFER_PACKETS as f64;
        let s = overloaded as f64;
        let queue_theory = alpha * b / (1.0 + alpha * s);
        let free_theory = b / (1.0 + alpha * s);
        for (output, &q) in settled.queue_packets.iter().enumerate() {
            if (q - queue_theory).abs() > 1.0 {
                return Err(format!(
                    "S = {overloaded}, α = {alpha}: queue {output} held {q:.2} packets, theory {queue_theory:.2}"
                ));
            }
        }
        if (settled.free_packets - free_theory).abs() > 1.0 * s {
            return Err(format!(
                "S = {overloaded}, α = {alpha}: {:.2} packets free, theory {free_theory:.2}",
                settled.free_packets
            ));
        }
        Ok(())
    }

    /// The table in `docs/validation/transports.md` (`-- --nocapture` prints it).
    #[test]
    fn overloaded_queues_settle_at_choudhury_and_hahnes_steady_state() {
        println!("| α | S | queue, theory | queues (mean) | free, theory | free (mean) |");
        for alpha in [1.0, 2.0] {
            for overloaded in [1, 2, 4] {
                let settled = overload(overloaded, alpha, DynamicThreshold::limit_packets);
                let b = BUFFER_PACKETS as f64;
                let share = 1.0 + alpha * overloaded as f64;
                let queues: Vec<String> = settled
                    .queue_packets
                    .iter()
                    .map(|q| format!("{q:.2}"))
                    .collect();
                println!(
                    "| {alpha} | {overloaded} | {:.2} | {} | {:.2} | {:.2} |",
                    alpha * b / share,
                    queues.join(", "),
                    b / share,
                    settled.free_packets
                );
                check_steady_state(&settled, overloaded, alpha).unwrap();
            }
        }
    }

    /// A threshold that ignores the buffer's occupancy (α·B whatever the other queues hold)
    /// lets S overloaded queues share out the whole buffer: the check catches it.
    #[test]
    fn a_threshold_ignoring_total_occupancy_fails_the_check() {
        let static_rule: fn(&DynamicThreshold, u32) -> u32 = |t, _occupied| t.limit_packets(0);
        for alpha in [1.0, 2.0] {
            for overloaded in [2, 4] {
                let settled = overload(overloaded, alpha, static_rule);
                assert!(
                    check_steady_state(&settled, overloaded, alpha).is_err(),
                    "{settled:?}"
                );
            }
        }
    }

    /// A burst of `packets` into port 7 at `now_ps`, all at once: how many it took.
    fn burst(
        queues: &mut [OutputQueue],
        buffer: &mut SharedBuffer,
        packets: u32,
        now_ps: TimePs,
    ) -> u32 {
        let mut cells = CellArena::new();
        let mut taken = 0;
        for _ in 0..packets {
            let cell = cells.alloc(Cell::new(0, 1, 1000, true, now_ps, now_ps));
            taken += (buffer.offer(queues, 7, &mut cells, cell, now_ps, now_ps) != Enqueued::Full)
                as u32;
            cells.free(cell);
        }
        taken
    }

    /// α = 1, B = 180 over 8 ports, whose static share would be B/8 = 22 packets each: a
    /// burst of 80 packets into an idle port of an idle switch is taken whole (79 stored,
    /// one on the wire at once); with another port overloaded (90 held, 90 free) the burst
    /// port stores α·90/(1 + α) = 45 before its threshold meets its length (§IV's transient:
    /// the newly active queue takes its share of the free buffer at once).
    #[test]
    fn a_burst_into_an_idle_port_gets_more_than_a_static_share() {
        let static_share = BUFFER_PACKETS / PORTS as u32;
        let (mut queues, mut buffer) = star(1.0);
        assert_eq!(burst(&mut queues, &mut buffer, 80, 0), 80);
        assert_eq!(queues[7].packets(0), 79, "one on the wire");
        assert!(79 > static_share);

        let (mut queues, mut buffer) = star(1.0);
        let mut cells = CellArena::new();
        for step in 0..2_000u64 {
            let now_ps = step * PACKET_PS / 2;
            let cell = cells.alloc(Cell::new(0, 1, 1000, true, now_ps, now_ps));
            buffer.offer(&mut queues, 0, &mut cells, cell, now_ps, now_ps);
            cells.free(cell);
        }
        let now_ps = 2_000 * PACKET_PS / 2;
        let before = queues[0].packets(now_ps);
        assert!(
            before.abs_diff(90) <= 1,
            "the overloaded port held {before}"
        );
        burst(&mut queues, &mut buffer, 80, now_ps);
        let held = queues[7].packets(now_ps);
        let theory = (BUFFER_PACKETS - before) / 2;
        assert!(held.abs_diff(theory) <= 1, "held {held}, theory {theory}");
        assert!(held > static_share);
        assert!(buffer.counters.threshold_drops > 0 && buffer.counters.full_drops == 0);
    }

    #[test]
    fn the_limit_is_alpha_times_the_free_buffer_rounded_up() {
        let t = DynamicThreshold {
            buffer_packets: 100,
            alpha: 0.5,
        };
        assert_eq!(t.limit_packets(0), 50);
        assert_eq!(
            t.limit_packets(99),
            1,
            "α·1 = 0.5: a queue of 0 may still take one"
        );
        assert_eq!(t.limit_packets(100), 0, "full");
        assert_eq!(
            t.longest_queue_packets(),
            34,
            "len < 0.5·(100 − len) up to 33"
        );
        let big = DynamicThreshold {
            buffer_packets: 10,
            alpha: 1e9,
        };
        assert_eq!(big.limit_packets(3), 10, "never above B");
        assert_eq!(big.longest_queue_packets(), 10);
    }
}
