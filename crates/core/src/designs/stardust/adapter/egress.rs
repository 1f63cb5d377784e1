//! An adapter's egress (Stardust §3.3, §4.1, §4.2): whole packets out of reassembly join their
//! host port's queue, which drains at the host's line rate. Each host port has a credit
//! scheduler ([`GrantScheduler`]): round robin over the requesters whose VOQs asked (and, asking
//! by count, are still owed credits; reading R1): the source adapters, or with per-flow VOQs the
//! source hosts (reading R43), one credit of `credit_bytes` every
//! `credit_bytes` / (port rate × (1 + speed-up)) (§4.1), and all ports together no faster than
//! the adapter's fabric payload capacity / (1 + speed-up) ("slightly below the fabric
//! speed-up", §4.1; reading R5), stopping while the port's queue is above a threshold and
//! resuming below another (reading R6). A data
//! cell marked FCI by an element cuts the credit rate of all the adapter's ports (§4.2; reading
//! R12), at most once a window; the rate recovers additively while no mark arrives. With
//! `adapter.pause_hosts` a port also sends its host PAUSE and resume frames ([`HostPause`]).
//!
//! Debug builds check each port after every change: its queued bytes against the packets it
//! holds.

use super::super::host_pause::HostPause;
use super::super::release_packet;
use super::{CREDIT, EGRESS};
use crate::blocks::cell::CellId;
use crate::blocks::ethernet::pause::{pause_frame, PauseTarget};
use crate::blocks::ethernet::ports::pfc::{PauseThresholds, PfcCounters, LOSSLESS_CLASS};
use crate::blocks::fabric::Context;
use crate::blocks::packet::{Packet, PacketId, PacketQueue, NO_FRAME};
use crate::blocks::routing::Router;
use crate::blocks::solicitation::GrantScheduler;
use crate::engine::stats::LatencyHistogram;
use crate::engine::time::{serialization_ps, TimePs};

/// How an adapter's credit rate reacts to FCI marks.
#[derive(Clone, Copy, Debug)]
pub struct FciReaction {
    /// Fraction cut on a mark.
    pub decrease: f64,
    /// Fraction of the nominal rate regained per quiet window.
    pub increase: f64,
    /// At most one cut, or one raise, per window.
    pub window_ps: TimePs,
}

/// The adapter's credit rate as a fraction of nominal, moved by FCI.
struct CreditRate {
    reaction: FciReaction,
    fraction: f64,
    last_cut_ps: Option<TimePs>,
    last_raise_ps: TimePs,
}

impl CreditRate {
    /// A marked cell arrived: true if the rate was cut.
    fn mark(&mut self, now_ps: TimePs) -> bool {
        let r = self.reaction;
        if r.decrease == 0.0 || self.last_cut_ps.is_some_and(|t| now_ps < t + r.window_ps) {
            return false;
        }
        self.fraction *= 1.0 - r.decrease;
        self.last_cut_ps = Some(now_ps);
        self.last_raise_ps = now_ps;
        true
    }

    /// The fraction to issue a credit at now, after any raise due.
    fn now(&mut self, now_ps: TimePs) -> f64 {
        let r = self.reaction;
        if self.fraction < 1.0 && now_ps >= self.last_raise_ps + r.window_ps {
            self.fraction = (self.fraction + r.increase).min(1.0);
            self.last_raise_ps = now_ps;
        }
        self.fraction
    }
}

/// What an egress counts.
#[derive(Clone, Copy, Debug, Default)]
pub struct EgressCounters {
    /// Packets discarded at reassembly: part of them was lost in the fabric.
    pub packets_discarded: u64,
    /// Reassembled packets dropped at a full host port queue.
    pub packets_dropped_egress: u64,
    /// Packets reassembled.
    pub packets_reassembled: u64,
    /// Packets delivered to its hosts.
    pub packets_delivered: u64,
    /// Credit cells sent.
    pub credits_sent: u64,
    /// Data cells received carrying the FCI bit.
    pub fci_cells_received: u64,
    /// Cuts of the credit rate on FCI.
    pub fci_cuts: u64,
    /// Deepest host port queue, in bytes.
    pub egress_peak_bytes: u64,
    /// Host frames it sent whole to its hosts after reassembly.
    pub frames_sent: u64,
    /// With `adapter.pause_hosts`: PAUSE and resume frames it sent its hosts (counted as they
    /// leave on the host link), data frames dropped past a host's headroom (among the
    /// ingress's dropped packets), and the most frames a host port held beyond XOFF.
    pub pfc: PfcCounters,
    /// Credits owed to adapters that became unreachable (§5.10), never issued.
    pub credits_cancelled: u64,
    /// Packets waiting at its host ports when this adapter failed, lost.
    pub packets_lost_failed: u64,
}

/// Bytes delivered to one host, in all and per sending host.
#[derive(Clone, Debug, Default)]
pub struct HostDelivery {
    /// The host.
    pub host: u16,
    /// Payload bytes delivered since the warm-up.
    pub bytes_measured: u64,
    /// Per sending host.
    pub from: Vec<FromHost>,
}

/// What one host received from one sender.
#[derive(Clone, Copy, Debug, Default)]
pub struct FromHost {
    /// The sender.
    pub src: u16,
    /// Payload bytes delivered since the warm-up.
    pub bytes_measured: u64,
    /// Payload bytes delivered since the start.
    pub bytes: u64,
    /// When the last of them reached the host.
    pub last_ps: TimePs,
}

/// One host port.
struct HostPort {
    host: u16,
    queue: PacketQueue,
    queued_bytes: u64,
    rate_bps: u64,
    propagation_ps: TimePs,
    /// The packet on the host link, if any.
    sending: Option<PacketId>,
    scheduler: GrantScheduler,
    /// With `adapter.pause_hosts`: its pause of its host.
    pause: Option<HostPause>,
}

/// How an egress is configured.
pub struct EgressSpec {
    /// Its hosts' links: (host, rate, propagation), one per host port.
    pub host_links: Vec<(u16, u64, TimePs)>,
    /// Bytes of gap each packet costs on a host link beyond its own.
    pub host_gap_bytes: u32,
    /// The schedulers' requesters: the fabric's adapters, or with per-flow VOQs its hosts.
    pub requesters: usize,
    /// Traffic classes.
    pub classes: usize,
    /// Weights of the classes at the credit schedulers; `None`: strict priority.
    pub class_weights: Option<Vec<u32>>,
    /// Bytes per credit.
    pub credit_bytes: u32,
    /// Credit rate above the port rate.
    pub credit_speedup: f64,
    /// Smallest time between two credits of all the ports together (the fabric's bound,
    /// reading R5), if any.
    pub fabric_credit_period_ps: Option<TimePs>,
    /// VOQs ask by count (the credits their backlog needs), not on/off.
    pub counts_requests: bool,
    /// A scheduler's turn gives a VOQ the credits that let it send again (its known debt
    /// paid), not one credit.
    pub deficit_turns: bool,
    /// Egress queue bytes that stop a port's credits.
    pub stop_bytes: u64,
    /// Bytes a host port queue holds.
    pub buffer_bytes: u64,
    /// The credit rate's reaction to FCI.
    pub fci: FciReaction,
    /// Statistics count from here.
    pub measure_from_ps: TimePs,
    /// Host ports pause their hosts at these thresholds (`None`: never).
    pub pause_hosts: Option<PauseThresholds>,
}

/// An adapter's egress.
pub struct Egress {
    ports: Vec<HostPort>,
    host_gap_bytes: u32,
    class_weights: Option<Vec<u32>>,
    credit_bytes: u32,
    counts_requests: bool,
    /// The fabric's bound on all ports' credits: the period, and the earliest next credit.
    fabric_credit_period_ps: Option<TimePs>,
    fabric_next_ps: TimePs,
    stop_bytes: u64,
    buffer_bytes: u64,
    credit_rate: CreditRate,
    measure_from_ps: TimePs,
    /// What it counted.
    pub counters: EgressCounters,
    /// Per host port: bytes delivered.
    pub delivered: Vec<HostDelivery>,
    /// Timed flows delivered to its hosts: (flow, when its last byte arrived).
    pub timed_done: Vec<(u32, TimePs)>,
    /// Packet latency, creation to the last bit reaching the host.
    pub packet_latency: LatencyHistogram,
    /// Data cell latency through the fabric, cut to arrival here.
    pub fabric_latency: LatencyHistogram,
}

/// Credits to send: from host `from` (the port's) to requester `requester`, for traffic class
/// `class`, `count` of them.
pub struct Credit {
    /// The granting host.
    pub from: u16,
    /// The credited requester (an adapter, or with per-flow VOQs a host).
    pub requester: u16,
    /// The class.
    pub class: usize,
    /// Credits (one, or with deficit-aware turns, more).
    pub count: u32,
}

impl Egress {
    /// An idle egress as `spec` says.
    pub fn new(spec: EgressSpec) -> Self {
        let rate_factor = 1.0 + spec.credit_speedup;
        let ports: Vec<HostPort> = spec
            .host_links
            .iter()
            .map(|&(host, rate_bps, propagation_ps)| HostPort {
                host,
                queue: PacketQueue::default(),
                queued_bytes: 0,
                rate_bps,
                propagation_ps,
                sending: None,
                scheduler: {
                    let period_ps = (spec.credit_bytes as f64 * 8e12
                        / (rate_bps as f64 * rate_factor))
                        .round() as TimePs;
                    let s = GrantScheduler::new(spec.classes, spec.requesters, period_ps);
                    if spec.deficit_turns {
                        s.with_deficit(spec.credit_bytes)
                    } else {
                        s
                    }
                },
                pause: spec.pause_hosts.map(HostPause::new),
            })
            .collect();
        Egress {
            delivered: ports
                .iter()
                .map(|p| HostDelivery {
                    host: p.host,
                    ..HostDelivery::default()
                })
                .collect(),
            ports,
            host_gap_bytes: spec.host_gap_bytes,
            class_weights: spec.class_weights,
            credit_bytes: spec.credit_bytes,
            counts_requests: spec.counts_requests,
            fabric_credit_period_ps: spec.fabric_credit_period_ps,
            fabric_next_ps: 0,
            stop_bytes: spec.stop_bytes,
            buffer_bytes: spec.buffer_bytes,
            credit_rate: CreditRate {
                reaction: spec.fci,
                fraction: 1.0,
                last_cut_ps: None,
                last_raise_ps: 0,
            },
            measure_from_ps: spec.measure_from_ps,
            counters: EgressCounters::default(),
            timed_done: Vec::new(),
            packet_latency: LatencyHistogram::new(),
            fabric_latency: LatencyHistogram::new(),
        }
    }

    /// A data cell that crossed the fabric arrived: its latency, and its FCI mark if it has one.
    pub fn data_arrived(&mut self, now_ps: TimePs, inject_ps: TimePs, marked: bool) {
        if marked {
            self.counters.fci_cells_received += 1;
            self.counters.fci_cuts += u64::from(self.credit_rate.mark(now_ps));
        }
        if inject_ps >= self.measure_from_ps {
            self.fabric_latency.record(now_ps - inject_ps);
        }
    }

    /// `payload_bytes` of data from requester `from`, class `class`, reached host port `port`
    /// (a data cell from an adapter, or with per-flow VOQs a packet from a host): its scheduler
    /// counts them against the credits it gave.
    pub fn count_delivered(&mut self, port: usize, from: u16, class: usize, payload_bytes: u32) {
        let scheduler = &mut self.ports[port].scheduler;
        scheduler.delivered(from, class, payload_bytes);
    }

    /// Requester `requester` became unreachable (§5.10: its adapter failed): no port owes it
    /// credits any more.
    pub fn forget(&mut self, requester: u16) {
        for port in &mut self.ports {
            self.counters.credits_cancelled += port.scheduler.forget(requester).0 as u64;
        }
    }

    /// The adapter failed: its ports issue no more credits, and the packets waiting at them
    /// are lost (the one on a host link finishes).
    pub fn fail<R: Router>(&mut self, ctx: &mut Context<'_, R>) {
        for port in 0..self.ports.len() {
            self.ports[port].scheduler.stop();
            while let Some(id) = ctx.packets.pop_front(&mut self.ports[port].queue) {
                self.ports[port].queued_bytes -= ctx.packets[id].size_bytes as u64;
                self.counters.packets_lost_failed += 1;
                release_packet(ctx, id);
            }
        }
    }

    /// Packets held at the host ports (queued or on the host link).
    pub fn packets_held(&self) -> u64 {
        let queued: u64 = self.ports.iter().map(|p| p.queue.len() as u64).sum();
        let sending = self.ports.iter().filter(|p| p.sending.is_some()).count() as u64;
        queued + sending
    }

    /// A packet of host port `port` left reassembly: queued for the host, or released if it
    /// lost cells (`complete` false) or the port's queue is full.
    pub fn offer<R: Router>(
        &mut self,
        ctx: &mut Context<'_, R>,
        port: usize,
        pid: PacketId,
        complete: bool,
    ) {
        self.counters.packets_reassembled += 1;
        let p = &mut self.ports[port];
        let size = ctx.packets[pid].size_bytes as u64;
        if !complete {
            self.counters.packets_discarded += 1;
            release_packet(ctx, pid);
        } else if p.queued_bytes + size > self.buffer_bytes {
            self.counters.packets_dropped_egress += 1;
            release_packet(ctx, pid);
        } else {
            p.queued_bytes += size;
            ctx.packets.push_back(&mut p.queue, pid);
        }
    }

    /// After packets joined host port `port`: its peak, and its link started if free.
    pub fn offered<R: Router>(&mut self, ctx: &mut Context<'_, R>, port: usize) {
        let queued = self.ports[port].queued_bytes;
        self.counters.egress_peak_bytes = self.counters.egress_peak_bytes.max(queued);
        self.debug_check(port);
        self.kick(ctx, port);
    }

    /// Starts the next frame on host port `port` if its link is free: a PAUSE or resume
    /// frame owed to the host first, else the next packet.
    pub fn kick<R: Router>(&mut self, ctx: &mut Context<'_, R>, port: usize) {
        let p = &mut self.ports[port];
        if p.sending.is_some() || p.pause.as_ref().is_some_and(HostPause::is_sending) {
            return;
        }
        if p.pause.as_mut().is_some_and(HostPause::start_next) {
            let done_ps = ctx.now_ps + serialization_ps(HostPause::FRAME_BYTES, p.rate_bps);
            ctx.set_timer(done_ps, EGRESS | port as u32);
            return;
        }
        let Some(id) = ctx.packets.pop_front(&mut p.queue) else {
            return;
        };
        p.sending = Some(id);
        let size = ctx.packets[id].size_bytes as u64 + self.host_gap_bytes as u64;
        let done_ps = ctx.now_ps + serialization_ps(size, p.rate_bps);
        ctx.set_timer(done_ps, EGRESS | port as u32);
    }

    /// Host port `port` finished sending: a PAUSE or resume frame goes to the host (its
    /// cable is fabric port `cable`), or a packet is delivered.
    pub fn done<R: Router>(&mut self, ctx: &mut Context<'_, R>, port: usize, cable: usize) {
        if let Some(pause) = self.ports[port].pause.as_mut().and_then(HostPause::finish) {
            return self.pause_frame_done(ctx, port, cable, pause);
        }
        let p = &mut self.ports[port];
        let id = p.sending.take().expect("a packet was on the host link");
        let packet = ctx.packets[id];
        p.queued_bytes -= packet.size_bytes as u64;
        let arrive_ps = ctx.now_ps + p.propagation_ps;
        self.account(port, &packet, ctx.now_ps, arrive_ps);
        ctx.packets.free(id);
        self.counters.packets_delivered += 1;
        if packet.frame != NO_FRAME {
            // The host is a node: its frame goes to it over the host port's cable.
            self.counters.frames_sent += 1;
            ctx.send_cell(cable, CellId::from_index(packet.frame), arrive_ps);
        }
        let resume_bytes = self.stop_bytes.saturating_sub(self.credit_bytes as u64);
        let p = &mut self.ports[port];
        if p.queued_bytes <= resume_bytes && p.scheduler.resume() {
            self.arm(ctx, port);
        }
        self.debug_check(port);
        self.kick(ctx, port);
    }

    /// Counts `packet`, reaching host port `port`'s host at `arrive_ps`, in the delivery
    /// tables and latencies.
    fn account(&mut self, port: usize, packet: &Packet, now_ps: TimePs, arrive_ps: TimePs) {
        let host = &mut self.delivered[port];
        let at = match host.from.iter().position(|f| f.src == packet.src) {
            Some(at) => at,
            None => {
                host.from.push(FromHost {
                    src: packet.src,
                    ..FromHost::default()
                });
                host.from.len() - 1
            }
        };
        let from = &mut host.from[at];
        let size = packet.size_bytes as u64;
        from.bytes += size;
        from.last_ps = arrive_ps;
        if now_ps >= self.measure_from_ps {
            from.bytes_measured += size;
            host.bytes_measured += size;
        }
        if packet.created_ps >= self.measure_from_ps {
            self.packet_latency.record(arrive_ps - packet.created_ps);
        }
        if packet.last_of_flow {
            self.timed_done.push((packet.flow, arrive_ps));
        }
    }

    /// Host port `port` finished sending a PAUSE (`pause`) or resume frame: it goes to the
    /// host over fabric port `cable`.
    fn pause_frame_done<R: Router>(
        &mut self,
        ctx: &mut Context<'_, R>,
        port: usize,
        cable: usize,
        pause: bool,
    ) {
        let frame = pause_frame(PauseTarget::Class(LOSSLESS_CLASS), pause, ctx.now_ps);
        let id = ctx.cells.alloc(frame);
        let arrive_ps = ctx.now_ps + self.ports[port].propagation_ps;
        ctx.send_cell(cable, id, arrive_ps);
        if pause {
            self.counters.pfc.pause_frames_sent += 1;
        } else {
            self.counters.pfc.resume_frames_sent += 1;
        }
        self.kick(ctx, port);
    }

    /// Host port `port`'s pause of its host, if it pauses it.
    pub fn pause_of(&mut self, port: usize) -> Option<&mut HostPause> {
        self.ports[port].pause.as_mut()
    }

    /// Request number `number` from requester `from` for class `class` reached host port
    /// `port`'s scheduler (`on`: its VOQ asks; else it withdraws; by count, `number` is the
    /// credits the VOQ was promised in all); a stale one is ignored.
    pub fn request<R: Router>(
        &mut self,
        ctx: &mut Context<'_, R>,
        port: usize,
        from: u16,
        class: usize,
        number: u32,
        on: bool,
    ) {
        let scheduler = &mut self.ports[port].scheduler;
        let heard = if self.counts_requests {
            scheduler.hear_count(from, class, number)
        } else {
            scheduler.hear(from, class, number, on)
        };
        if heard {
            self.arm(ctx, port);
        }
    }

    /// Sets port `port`'s credit timer if it has someone to credit and may.
    pub fn arm<R: Router>(&mut self, ctx: &mut Context<'_, R>, port: usize) {
        if let Some(at_ps) = self.ports[port].scheduler.arm(ctx.now_ps) {
            ctx.set_timer(at_ps, CREDIT | port as u32);
        }
    }

    /// Port `port`'s credit timer: the credit to send round robin, unless the port is full
    /// (the caller sends it, then sets the next credit's timer with [`Self::arm`]), or the
    /// fabric's bound on all ports' credits defers it (the timer is set again for then).
    pub fn issue_credit<R: Router>(
        &mut self,
        ctx: &mut Context<'_, R>,
        port: usize,
    ) -> Option<Credit> {
        let p = &mut self.ports[port];
        if p.queued_bytes >= self.stop_bytes {
            p.scheduler.stop();
            return None;
        }
        if self.fabric_credit_period_ps.is_some() && ctx.now_ps < self.fabric_next_ps {
            ctx.set_timer(self.fabric_next_ps, CREDIT | port as u32);
            return None;
        }
        let rate = &mut self.credit_rate;
        let now_ps = ctx.now_ps;
        let weights = self.class_weights.as_deref();
        let (class, requester) = p.scheduler.grant(now_ps, || rate.now(now_ps), weights)?;
        if let Some(period_ps) = self.fabric_credit_period_ps {
            self.fabric_next_ps = now_ps + period_ps;
        }
        let count = p.scheduler.last_grants();
        self.counters.credits_sent += count as u64;
        Some(Credit {
            from: p.host,
            requester,
            class,
            count,
        })
    }

    /// Debug builds: host port `port` holds bytes exactly when it holds packets (queued or on
    /// its link), and no more than its buffer.
    fn debug_check(&self, port: usize) {
        let p = &self.ports[port];
        let packets = p.queue.len() as u64 + u64::from(p.sending.is_some());
        debug_assert!(
            (packets == 0) == (p.queued_bytes == 0) && p.queued_bytes >= packets,
            "host port {port}: {packets} packets against {} bytes",
            p.queued_bytes
        );
        debug_assert!(
            p.queued_bytes <= self.buffer_bytes,
            "host port {port} over its buffer"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate(decrease: f64) -> CreditRate {
        CreditRate {
            reaction: FciReaction {
                decrease,
                increase: 0.25,
                window_ps: 100,
            },
            fraction: 1.0,
            last_cut_ps: None,
            last_raise_ps: 0,
        }
    }

    #[test]
    fn fci_cuts_once_a_window_and_recovers_additively() {
        let mut r = rate(0.5);
        assert!(r.mark(10));
        assert!(!r.mark(50), "within the window");
        assert_eq!(r.now(50), 0.5);
        assert_eq!(r.now(110), 0.75, "a quiet window raises");
        assert_eq!(r.now(150), 0.75);
        assert_eq!(r.now(210), 1.0);
        assert_eq!(r.now(400), 1.0, "never above nominal");
    }

    #[test]
    fn no_decrease_means_no_reaction() {
        let mut r = rate(0.0);
        assert!(!r.mark(10));
        assert_eq!(r.now(10), 1.0);
    }

    fn egress() -> Egress {
        Egress::new(EgressSpec {
            host_links: vec![(4, 10_000_000_000, 1_000)],
            host_gap_bytes: 0,
            requesters: 2,
            classes: 1,
            class_weights: None,
            credit_bytes: 2048,
            credit_speedup: 0.03,
            fabric_credit_period_ps: None,
            counts_requests: false,
            deficit_turns: true,
            stop_bytes: 10_000,
            buffer_bytes: 20_000,
            fci: rate(0.0).reaction,
            measure_from_ps: 0,
            pause_hosts: None,
        })
    }

    #[test]
    fn a_delivery_is_counted_per_sender_and_measured() {
        let mut e = egress();
        let mut packet = Packet::new(1, 4, 1_500, 0);
        packet.last_of_flow = true;
        packet.flow = 3;
        e.account(0, &packet, 10, 20);
        e.account(0, &packet, 30, 40);
        let d = &e.delivered[0];
        assert_eq!((d.host, d.bytes_measured, d.from.len()), (4, 3_000, 1));
        assert_eq!((d.from[0].bytes, d.from[0].last_ps), (3_000, 40));
        assert_eq!(e.timed_done, [(3, 20), (3, 40)]);
        assert_eq!(e.packet_latency.count(), 2);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "packets against")]
    fn a_port_whose_bytes_disagree_with_its_packets_fires() {
        let mut e = egress();
        e.ports[0].queued_bytes = 1_500;
        e.debug_check(0);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "over its buffer")]
    fn a_port_over_its_buffer_fires() {
        let mut e = egress();
        e.ports[0].sending = Some(PacketId::from_index(0));
        e.ports[0].queued_bytes = 30_000;
        e.debug_check(0);
    }
}
