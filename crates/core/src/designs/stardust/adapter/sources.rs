//! An adapter's built-in hosts (Stardust §6.2, §6.3): flows of packets at a constant or Poisson
//! rate ([`Flow`]), and the timed host of Fig. 10b whose flows of drawn sizes arrive as a
//! Poisson process and are sent one after another at line rate ([`Foreground`]). They only
//! make packets; the adapter puts them in its VOQs.

use std::collections::VecDeque;
use std::sync::Arc;

use rand::Rng as _;

use super::{FLOW_ARRIVES, FLOW_SENDS, SOURCE};
use crate::blocks::fabric::Context;
use crate::blocks::packet::Packet;
use crate::blocks::routing::Router;
use crate::blocks::workload::{exponential_ps, FlowSizes};
use crate::engine::rng::Rng;
use crate::engine::time::{serialization_ps, TimePs};

/// A host's flow: packets of one size to one host at a constant rate.
#[derive(Clone, Copy, Debug)]
pub struct Flow {
    /// Sending host (one of the adapter's).
    pub src: u16,
    /// Receiving host.
    pub dst: u16,
    /// Traffic class (0 first).
    pub class: u8,
    /// Bytes per packet.
    pub packet_bytes: u32,
    /// Mean time between packets.
    pub gap_ps: TimePs,
    /// Gaps are exponential (Poisson arrivals) rather than all equal.
    pub poisson: bool,
    /// Bytes the flow sends in all (the last packet may be shorter); `None`: it never ends.
    pub size_bytes: Option<u64>,
}

impl Flow {
    /// The time to the flow's next packet.
    fn next_gap_ps(&self, rng: &mut Rng) -> TimePs {
        if self.poisson {
            exponential_ps(self.gap_ps, rng)
        } else {
            self.gap_ps
        }
    }
}

/// A host whose flows are timed (Fig. 10b): flows of drawn sizes arrive as a Poisson process
/// and are sent one after another at the host's line rate.
pub struct Foreground {
    /// The sending host (one of the adapter's).
    pub src: u16,
    /// The receiving host.
    pub dst: u16,
    /// Flow sizes.
    pub sizes: Arc<FlowSizes>,
    /// Mean time between flow arrivals.
    pub mean_gap_ps: TimePs,
    /// Bytes per packet.
    pub packet_bytes: u32,
    /// Bytes of gap each packet costs on the host link beyond its own.
    pub gap_bytes: u32,
    /// The host's line rate.
    pub rate_bps: u64,
}

/// A timed flow as its source saw it.
#[derive(Clone, Copy, Debug)]
pub struct TimedFlow {
    /// Its number.
    pub id: u32,
    /// Bytes.
    pub size_bytes: u64,
    /// When it arrived at its source.
    pub start_ps: TimePs,
}

/// The foreground source's state.
struct ForegroundState {
    spec: Foreground,
    /// Flows waiting their turn, and the one being sent with its bytes left.
    waiting: VecDeque<TimedFlow>,
    current: Option<(TimedFlow, u64)>,
    sending: bool,
}

/// An adapter's built-in hosts.
pub struct Sources {
    flows: Vec<Flow>,
    /// Per flow: bytes created so far.
    bytes_created: Vec<u64>,
    foreground: Option<ForegroundState>,
    /// The sources' random stream (start times, gaps, flow sizes).
    rng: Rng,
    /// Timed flows the foreground host started.
    pub timed_flows: Vec<TimedFlow>,
}

impl Sources {
    /// The adapter's `flows` and its timed host, drawing from `rng`.
    pub fn new(flows: Vec<Flow>, foreground: Option<Foreground>, rng: Rng) -> Self {
        Sources {
            bytes_created: vec![0; flows.len()],
            flows,
            foreground: foreground.map(|spec| ForegroundState {
                spec,
                waiting: VecDeque::new(),
                current: None,
                sending: false,
            }),
            rng,
            timed_flows: Vec::new(),
        }
    }

    /// Starts the flows, each at a random point of its first packet gap (so that saturated
    /// hosts do not start in lockstep); finite flows all start at time 0 (an incast's senders
    /// answer together).
    pub fn start<R: Router>(&mut self, ctx: &mut Context<'_, R>) {
        for (i, flow) in self.flows.iter().enumerate() {
            let offset_ps = match flow.size_bytes {
                Some(_) => 0,
                None => self.rng.gen_range(0..flow.gap_ps.max(1)),
            };
            ctx.set_timer(offset_ps, SOURCE | i as u32);
        }
        if let Some(fg) = &self.foreground {
            let first_ps = exponential_ps(fg.spec.mean_gap_ps, &mut self.rng);
            ctx.set_timer(first_ps, FLOW_ARRIVES);
        }
    }

    /// Flow `i`'s next packet and its traffic class; the timer for the one after is set.
    pub fn generate<R: Router>(&mut self, ctx: &mut Context<'_, R>, i: usize) -> (Packet, usize) {
        let flow = self.flows[i];
        let size_bytes = match flow.size_bytes {
            None => flow.packet_bytes,
            Some(total) => {
                let left = total - self.bytes_created[i];
                self.bytes_created[i] += left.min(flow.packet_bytes as u64);
                left.min(flow.packet_bytes as u64) as u32
            }
        };
        if flow
            .size_bytes
            .is_none_or(|total| self.bytes_created[i] < total)
        {
            ctx.set_timer(
                ctx.now_ps + flow.next_gap_ps(&mut self.rng),
                SOURCE | i as u32,
            );
        }
        let packet = Packet::new(flow.src, flow.dst, size_bytes, ctx.now_ps);
        (packet, flow.class as usize)
    }

    /// A timed flow arrives at the foreground host: it waits its turn.
    pub fn flow_arrives<R: Router>(&mut self, ctx: &mut Context<'_, R>) {
        let fg = self.foreground.as_mut().expect("a foreground host");
        let flow = TimedFlow {
            id: self.timed_flows.len() as u32,
            size_bytes: fg.spec.sizes.draw(&mut self.rng),
            start_ps: ctx.now_ps,
        };
        self.timed_flows.push(flow);
        fg.waiting.push_back(flow);
        ctx.set_timer(
            ctx.now_ps + exponential_ps(fg.spec.mean_gap_ps, &mut self.rng),
            FLOW_ARRIVES,
        );
        if !fg.sending {
            fg.sending = true;
            ctx.set_timer(ctx.now_ps, FLOW_SENDS);
        }
    }

    /// The foreground host's next packet of its current flow (class 0), if it has one; the
    /// timer for the one after is set.
    pub fn flow_sends<R: Router>(&mut self, ctx: &mut Context<'_, R>) -> Option<Packet> {
        let fg = self.foreground.as_mut().expect("a foreground host");
        let Some((flow, left)) = fg
            .current
            .take()
            .or_else(|| fg.waiting.pop_front().map(|f| (f, f.size_bytes)))
        else {
            fg.sending = false;
            return None;
        };
        let size = left.min(fg.spec.packet_bytes as u64);
        let mut packet = Packet::new(fg.spec.src, fg.spec.dst, size as u32, ctx.now_ps);
        packet.flow = flow.id;
        packet.last_of_flow = size == left;
        if size < left {
            fg.current = Some((flow, left - size));
        }
        ctx.set_timer(
            ctx.now_ps + serialization_ps(size + fg.spec.gap_bytes as u64, fg.spec.rate_bps),
            FLOW_SENDS,
        );
        Some(packet)
    }
}
