//! The hosts of a Clint run (Eberle and Gura 2002, §3.1, §4.1): each node's traffic source (uniform
//! targets, uniformly distributed injection intervals, optional bursts) and what its NIC does when
//! a request reaches it, an acknowledgment returns or a loss timeout fires. The channels carry the
//! packets ([`super::bulk`], [`super::quick`]); this is what the nodes at their ends do.

use rand::Rng as _;
use rand_distr::{Distribution, Geometric};

use super::config::{Architecture, Intervals};
use super::errors::Channel;
use super::nic::{Ack, Nic, Packet, Receipt, State, Transmission};
use super::timing::{bytes, CYCLE_PS};
use super::{Clint, Event};
use crate::engine::arena::Id;
use crate::engine::rng::Rng;
use crate::engine::time::TimePs;

/// The law of the intervals between a node's injections, in whole 4 ns cycles, with the mean
/// that gives the offered load.
#[derive(Clone, Copy, Debug)]
pub(super) enum IntervalLaw {
    /// Uniform over [0, 2 × mean].
    Uniform { mean_ps: f64 },
    /// One cycle plus geometrically many more: each cycle injects with probability 1 / mean.
    Geometric(Geometric),
}

impl IntervalLaw {
    pub(super) fn new(intervals: Intervals, mean_ps: f64) -> IntervalLaw {
        match intervals {
            Intervals::Uniform => IntervalLaw::Uniform { mean_ps },
            Intervals::Geometric => {
                // Load ≤ 1 keeps the mean at least one request, so at least one cycle.
                let per_cycle = CYCLE_PS as f64 / mean_ps;
                IntervalLaw::Geometric(Geometric::new(per_cycle).expect("0 < p <= 1"))
            }
        }
    }

    pub(super) fn draw_ps(&self, rng: &mut Rng) -> TimePs {
        let cycles = match *self {
            IntervalLaw::Uniform { mean_ps } => {
                let draw_ps: f64 = rng.gen_range(0.0..2.0 * mean_ps);
                (draw_ps / CYCLE_PS as f64).round() as TimePs
            }
            IntervalLaw::Geometric(law) => 1 + law.sample(rng),
        };
        cycles * CYCLE_PS
    }
}

impl Clint {
    /// §4.1: a burst (one packet unless bursty) to one uniformly chosen other node.
    pub(super) fn generate(&mut self, node: u16) {
        let n = node as usize;
        let rng = &mut self.sources[n];
        let burst = rng.gen_range(1..=self.workload.burst_max_packets);
        let other = rng.gen_range(0..self.nics.len() as u16 - 1);
        let dst = if other >= node { other + 1 } else { other };
        for _ in 0..burst {
            let packet = Packet::new(node, dst, self.counters.injected, self.now_ps);
            self.nics[n].enqueue(&mut self.packets, packet);
            self.counters.injected += 1;
            self.node_table.injected[n] += 1;
            if self.measuring() {
                self.counters.generated_measured += 1;
            }
        }
        self.refill(node);
        let next_ps = self.now_ps + self.interval_ps(n);
        self.schedule(next_ps, Event::Generate(node));
    }

    /// Fills free send buffers and, if any filled, lets the node send; over a modelled PCI
    /// bus each message is ready once its fetch ends.
    pub(super) fn refill(&mut self, node: u16) {
        let n = node as usize;
        let fetching = self.buses.modelled();
        let moved = self.nics[n].prefetch(&mut self.packets, fetching);
        if moved == 0 {
            return;
        }
        if !fetching {
            self.wake_sender(node);
            return;
        }
        for k in 0..moved {
            let packet = self.nics[n].newest(moved)[k];
            let ready_ps = self.buses.transfer(node, self.now_ps);
            self.schedule(ready_ps, Event::Fetched { node, packet });
        }
    }

    /// A message's PCI fetch ended: it is ready in its send buffer.
    pub(super) fn fetched(&mut self, node: u16, packet: Id<Packet>) {
        let p = &mut self.packets[packet];
        debug_assert_eq!(p.state, State::Fetching);
        p.state = State::Ready;
        self.wake_sender(node);
    }

    /// Something became ready to send at `node`: its data channel may start it.
    pub(super) fn wake_sender(&mut self, node: u16) {
        match self.arch {
            Architecture::B1 | Architecture::B2 | Architecture::B3 => self.bulk_wake(node),
            // Waits for the next configuration packet, or speculates.
            Architecture::B4 => self.bulk_wake(node),
            Architecture::Q1 | Architecture::Q2 => self.quick_wake(node),
        }
    }

    /// Marks `id` sent at `start_ps` and arms its loss timeout.
    pub(super) fn transmit(&mut self, id: Id<Packet>, start_ps: TimePs) -> Transmission {
        let tx = Nic::send(&mut self.packets, id, start_ps);
        if self.measuring() {
            self.counters.transmissions += 1;
        }
        let timeout_ps = if self.arch.is_quick() {
            self.t.quick_timeout_ps
        } else {
            self.t.bulk_timeout_ps
        };
        self.schedule(start_ps + timeout_ps, Event::Timeout(tx));
        tx
    }

    /// The size of the run's request packets and the channel they cross.
    fn request_channel(&self) -> (Channel, u64) {
        if self.arch.is_quick() {
            (Channel::Quick, bytes::QREQ)
        } else {
            (Channel::Bulk, bytes::BREQ)
        }
    }

    /// A request's last byte reaches target `at`: accept, NAK or acknowledge a duplicate; one
    /// that fails its CRC gets no answer (§3.3).
    pub(super) fn request_arrive(&mut self, at: u16, tx: Transmission) {
        let measuring = self.measuring();
        if Nic::current(&self.packets, tx).is_some() {
            let (channel, size_bytes) = self.request_channel();
            if self.errors.corrupted(channel, size_bytes, 2) {
                self.counters.faults.crc_requests += u64::from(measuring);
                return;
            }
        }
        let receipt = self.nics[at as usize].receive(&mut self.packets, tx);
        let c = &mut self.counters;
        match receipt {
            Receipt::Ignored => return,
            Receipt::Accepted { handed, in_order } => {
                let p = self.packets[tx.packet];
                c.delivered += 1;
                self.node_table.delivered[p.src as usize] += 1;
                c.out_of_order += u64::from(!in_order);
                if measuring {
                    c.delivered_measured += 1;
                    c.held_for_order += u64::from(handed == 0);
                }
                if p.generated_ps >= self.warmup_ps {
                    self.latency.first.record(p.first_sent_ps - p.generated_ps);
                    self.latency.accepted.record(p.sent_ps - p.generated_ps);
                }
                self.hand_to_host(at);
            }
            Receipt::Duplicate => c.duplicates += u64::from(measuring),
            Receipt::OutOfSequence => c.naks_out_of_sequence += u64::from(measuring),
            Receipt::NoBuffer => c.naks_no_buffer += u64::from(measuring),
        }
        let ok = matches!(receipt, Receipt::Accepted { .. } | Receipt::Duplicate);
        let p = self.packets[tx.packet];
        let ack = Ack {
            of: tx,
            to: p.src,
            ok,
        };
        if self.arch == Architecture::B4 {
            let due_ps = self.ack_stage_ps(p.sent_ps, p.speculative);
            debug_assert!(due_ps >= self.now_ps);
            self.schedule(due_ps, Event::AckDue { at, ack });
        } else {
            self.send_ack(at, ack);
        }
    }

    /// B4: when the acknowledgment of a request sent at `sent_ps` goes out. §3.3: the
    /// acknowledgment stage is the slot after the transfer's. A speculative transfer ends in
    /// the slot after its start, which the arbiter kept its input and output out of; it is
    /// acknowledged in the stage after that, where no scheduled acknowledgment shares its paths.
    fn ack_stage_ps(&self, sent_ps: TimePs, speculative: bool) -> TimePs {
        let slots_later = if speculative { 2 } else { 1 };
        let transfer_slot_ps = sent_ps - sent_ps % self.t.slot_ps;
        transfer_slot_ps + slots_later * self.t.slot_ps + self.t.back_offset_ps
    }

    /// The requests target `at` just handed to its host cross its PCI bus into host memory,
    /// where the end-to-end latency stops; the host returns each buffer after consuming it.
    fn hand_to_host(&mut self, at: u16) {
        let n = at as usize;
        for k in 0..self.nics[n].handed_generated_ps().len() {
            let generated_ps = self.nics[n].handed_generated_ps()[k];
            let in_host_ps = self.buses.transfer(at, self.now_ps);
            if generated_ps >= self.warmup_ps {
                self.latency.end_to_end.record(in_host_ps - generated_ps);
            }
            let returned_ps = in_host_ps + self.buses.host_receive_ps;
            self.schedule(returned_ps, Event::HostConsume(at));
        }
    }

    /// An acknowledgment reaches its initiator; one that fails its CRC is discarded, and the
    /// request's timeout will find it missing.
    pub(super) fn ack_arrive(&mut self, ack: Ack) {
        if self.errors.corrupted(Channel::Quick, bytes::QACK, 2) {
            self.counters.faults.crc_acks += u64::from(self.measuring());
            return;
        }
        let node = ack.to;
        let released = self.nics[node as usize].acknowledge(&mut self.packets, ack);
        if released {
            self.refill(node);
        } else if !ack.ok {
            self.counters.naks_received += u64::from(self.measuring());
            self.wake_sender(node);
        }
    }

    pub(super) fn timeout(&mut self, tx: Transmission) {
        if Nic::time_out(&mut self.packets, tx) {
            self.counters.timeouts += u64::from(self.measuring());
            let node = self.packets[tx.packet].src;
            self.wake_sender(node);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{stream, ComponentId};

    /// Mean and variance of many intervals, in cycles.
    fn moments(law: IntervalLaw) -> (f64, f64) {
        let mut rng = stream(3, ComponentId { kind: 0, index: 0 });
        let draws: Vec<f64> = (0..200_000)
            .map(|_| (law.draw_ps(&mut rng) / CYCLE_PS) as f64)
            .collect();
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        let variance = draws.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / draws.len() as f64;
        (mean, variance)
    }

    #[test]
    fn both_interval_laws_keep_the_mean_and_differ_in_spread() {
        let mean_cycles = 136.0; // one quick request at load 1
        let mean_ps = mean_cycles * CYCLE_PS as f64;
        let (mean, variance) = moments(IntervalLaw::new(Intervals::Uniform, mean_ps));
        assert!(
            (mean / mean_cycles - 1.0).abs() < 0.01,
            "uniform mean {mean}"
        );
        let uniform_variance = mean_cycles * mean_cycles / 3.0; // (2m)² / 12
        assert!(
            (variance / uniform_variance - 1.0).abs() < 0.03,
            "{variance}"
        );
        let (mean, variance) = moments(IntervalLaw::new(Intervals::Geometric, mean_ps));
        assert!(
            (mean / mean_cycles - 1.0).abs() < 0.01,
            "geometric mean {mean}"
        );
        let geometric_variance = mean_cycles * (mean_cycles - 1.0); // (1 - p) / p²
        assert!(
            (variance / geometric_variance - 1.0).abs() < 0.03,
            "{variance}"
        );
    }
}
