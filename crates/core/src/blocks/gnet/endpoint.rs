//! A host's GNet IP endpoint in a simulated Clique (Gibson et al., "Aquila: A unified,
//! low-latency fabric for datacenter networks", NSDI '22, §3.3, Fig. 3): the host's packets go
//! into the ingress buffer, which sends an RTS to the destination's CTS scheduler; a CTS pulls
//! the packet out as data cells, a CTD drops it at the source; the egress side reassembles the
//! data cells and releases packets in RTS order. The endpoint sits where the host's cable meets
//! its TiN: the TiN's IP engine for that host port, reached over the host's link.
//!
//! Our reading of where the state lives: Aquila's CTS scheduler serves 32 RTS queues (8
//! classes × 4 ports) of one TiN; here each host port has its own scheduler, reassembly space
//! and fetch window (one class, one port), so the two hosts of a TiN do not compete for them.

use std::collections::VecDeque;

use super::cts::{CtsLimits, CtsScheduler};
use super::ingress::IngressBuffer;
use super::reorder::{Reassembly, Released};
use super::wire::{flits_of, CellKind, Outgoing, CONTROL_CELL_BYTES, DATA_CELL_BYTES};
use super::{cells_of, Ctd, Cts, DropCause, Rts, CELL_PAYLOAD_BYTES};
use crate::blocks::cell::Cell;
use crate::engine::stats::LatencyHistogram;
use crate::engine::time::TimePs;

/// What every GNet endpoint of a fabric is made of.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GnetSpec {
    /// Bytes of one flit of the VC routers (the fabric's cell size).
    pub flit_bytes: u32,
    /// Every IP packet's length, bytes.
    pub packet_bytes: u32,
    /// The ingress buffer, bytes.
    pub ingress_buffer_bytes: u64,
    /// The CTS scheduler: RTS queue, CTD threshold, reassembly space, fetch window, ECN.
    pub limits: CtsLimits,
    /// The first VC of the data class (RTS, CTS and CTD take VC 0, the high-priority class).
    pub data_vc: u16,
    /// The TiN's endpoint ports the host's data cells enter its switch by, each its own input
    /// FIFO: the data class's first VCs on the host's port, cells spread over them in turn.
    pub endpoint_ports: u16,
}

impl GnetSpec {
    /// Flits of a data cell.
    pub fn data_flits(&self) -> u32 {
        flits_of(DATA_CELL_BYTES, self.flit_bytes)
    }

    /// Flits of an RTS, CTS or CTD.
    pub fn control_flits(&self) -> u32 {
        flits_of(CONTROL_CELL_BYTES, self.flit_bytes)
    }
}

/// Flits sent and received by kind, for the account kept apart for control and data.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlitCounts {
    /// Control (RTS, CTS, CTD) flits sent.
    pub control_injected: u64,
    /// Control flits received.
    pub control_delivered: u64,
    /// Data flits sent.
    pub data_injected: u64,
    /// Data flits received.
    pub data_delivered: u64,
}

/// What an endpoint counted of packets and their waits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PacketCounts {
    /// Packets the host generated.
    pub generated: u64,
    /// Packets released to the host at this egress.
    pub released: u64,
    /// Packets released that were ECN-marked.
    pub ecn_marked: u64,
    /// Packets released ahead of an earlier RTS of their flow (in-order release is 0).
    pub released_out_of_rts_order: u64,
    /// RTSs that left during measurement, and their total wait at the source.
    pub rts_sent_measured: u64,
    /// Their total wait from making to leaving the host.
    pub rts_wait_ps_sum: u64,
    /// Granted packets whose first data cell left during measurement.
    pub data_started_measured: u64,
    /// Their total wait from the CTS's arrival to the first data flit leaving.
    pub data_wait_ps_sum: u64,
}

/// A packet granted by a CTS, being sent as data cells.
#[derive(Clone, Copy, Debug)]
struct Grant {
    dst: u16,
    reassembly_slot: u32,
    cells_left: u32,
    bytes_left: u32,
    cts_arrived_ps: TimePs,
    started: bool,
}

/// A packet the ingress buffer holds: where it goes.
#[derive(Clone, Copy, Debug)]
pub struct Held {
    /// Its destination host.
    pub dst: u16,
}

/// The protocol state of one endpoint: ingress (buffer, grants to send) and egress (CTS
/// scheduler, reassembly), and the control cells waiting to leave.
pub struct Endpoint {
    host: u16,
    spec: GnetSpec,
    /// Packets waiting for CTS or CTD.
    pub ingress: IngressBuffer<Held>,
    grants: VecDeque<Grant>,
    /// RTSs queued here and CTSs issued from here.
    pub cts: CtsScheduler,
    reassembly: Reassembly,
    /// Per source host: the RTS time of the latest packet released from it (order check).
    last_released_rts_ps: Vec<TimePs>,
    /// RTS, CTS and CTD cells waiting to leave, in order.
    control_out: VecDeque<Outgoing>,
    /// Packet latency, RTS to last data cell, of the packets released during measurement.
    pub latency: LatencyHistogram,
    /// Packet counts and waits.
    pub packets: PacketCounts,
    /// Statistics count what happens after this time.
    pub measure_from_ps: TimePs,
}

impl Endpoint {
    /// The endpoint of host `host` among `hosts`.
    pub fn new(host: u16, hosts: u32, spec: GnetSpec) -> Self {
        Endpoint {
            host,
            spec,
            ingress: IngressBuffer::new(host as u32, spec.ingress_buffer_bytes),
            grants: VecDeque::new(),
            cts: CtsScheduler::new(spec.limits),
            reassembly: Reassembly::new(hosts, spec.limits.classes, spec.limits.ports),
            last_released_rts_ps: vec![0; hosts as usize],
            control_out: VecDeque::new(),
            latency: LatencyHistogram::new(),
            packets: PacketCounts::default(),
            measure_from_ps: 0,
        }
    }

    /// Packets the egress holds for reassembly (granted and not yet released).
    pub fn reassembly_held(&self) -> usize {
        self.reassembly.held()
    }

    /// A packet of `size_bytes` for host `dst` is complete at `now_ps`: stored and its RTS
    /// queued, or dropped if the ingress buffer is full.
    pub fn admit(&mut self, dst: u16, size_bytes: u32, now_ps: TimePs) {
        self.packets.generated += 1;
        let Ok(rts) = self.ingress.admit(Held { dst }, (size_bytes, 0, 0), now_ps) else {
            return;
        };
        self.control_out.push_back(Outgoing {
            kind: CellKind::Rts,
            dst,
            slot: rts.ingress_slot,
            word: rts.size_bytes,
            made_ps: now_ps,
            payload_bytes: 0,
        });
    }

    /// The tail flit of a GNet cell arrived at `now_ps`: acts on it as its kind says.
    pub fn on_cell(&mut self, cell: &Cell, now_ps: TimePs) {
        match CellKind::of(cell) {
            CellKind::Rts => self.on_rts(cell, now_ps),
            CellKind::Cts => self.on_cts(cell, now_ps),
            CellKind::Ctd => self.on_ctd(cell),
            CellKind::Data => self.on_data(cell, now_ps),
        }
        self.issue_cts(now_ps);
    }

    /// Egress: an RTS joins its queue, or is answered CTD.
    fn on_rts(&mut self, cell: &Cell, now_ps: TimePs) {
        let rts = Rts {
            source: cell.src as u32,
            ingress_slot: cell.seq,
            size_bytes: cell.packet,
            class: 0,
            port: 0,
            sent_ps: cell.packet_inject_ps,
        };
        if let Some(ctd) = self.cts.hear(rts) {
            self.control_out.push_back(Outgoing {
                kind: CellKind::Ctd,
                dst: cell.src,
                slot: ctd.rts.ingress_slot,
                word: 0,
                made_ps: now_ps,
                payload_bytes: 0,
            });
        }
    }

    /// Egress: CTSs while the window and reassembly space allow.
    fn issue_cts(&mut self, now_ps: TimePs) {
        let reassembly = &mut self.reassembly;
        while let Some(cts) = self.cts.next_cts(|_| reassembly.allocate()) {
            reassembly.register(cts);
            self.control_out.push_back(Outgoing {
                kind: CellKind::Cts,
                dst: cts.rts.source as u16,
                slot: cts.rts.ingress_slot,
                word: cts.reassembly_slot,
                made_ps: now_ps,
                payload_bytes: 0,
            });
        }
    }

    /// Ingress: the RTS of the packet in `slot`, as the answer's sender heard it.
    fn rts_of(&self, slot: u32) -> Rts {
        self.ingress
            .rts_at(slot)
            .expect("an answer names a packet the ingress buffer holds")
    }

    /// Ingress: a CTS pulls the packet out, to be sent as data cells.
    fn on_cts(&mut self, cell: &Cell, now_ps: TimePs) {
        let cts = Cts {
            rts: self.rts_of(cell.seq),
            reassembly_slot: cell.packet,
        };
        let held = self.ingress.on_cts(&cts);
        self.grants.push_back(Grant {
            dst: held.dst,
            reassembly_slot: cts.reassembly_slot,
            cells_left: cells_of(cts.rts.size_bytes),
            bytes_left: cts.rts.size_bytes,
            cts_arrived_ps: now_ps,
            started: false,
        });
    }

    /// Ingress: a CTD drops the packet at the source.
    fn on_ctd(&mut self, cell: &Cell) {
        let ctd = Ctd {
            rts: self.rts_of(cell.seq),
            cause: DropCause::RtsQueueOverThreshold,
        };
        self.ingress.on_ctd(&ctd);
    }

    /// Egress: a data cell for its reassembly slot; a packet's last cell releases what its
    /// flow may release, in RTS order.
    fn on_data(&mut self, cell: &Cell, now_ps: TimePs) {
        if !self.reassembly.on_cell(cell.seq, now_ps) {
            return;
        }
        self.cts.fetched();
        let (cts, packets, latency) = (&mut self.cts, &mut self.packets, &mut self.latency);
        let last_released = &mut self.last_released_rts_ps;
        let measure_from_ps = self.measure_from_ps;
        self.reassembly
            .release_from(cell.seq, |released: Released| {
                let rts = released.cts.rts;
                packets.released += 1;
                let last = &mut last_released[rts.source as usize];
                packets.released_out_of_rts_order += (rts.sent_ps < *last) as u64;
                *last = rts.sent_ps;
                packets.ecn_marked += cts.marks_ecn(&rts) as u64;
                cts.released(rts.size_bytes);
                if rts.sent_ps > measure_from_ps {
                    latency.record(released.complete_ps - rts.sent_ps);
                }
            });
    }

    /// The next GNet cell to send, if any, at `now_ps`: a control cell first (strict
    /// priority) if `control_open`, else the next data cell of the oldest grant if
    /// `data_open`.
    pub fn next_cell(
        &mut self,
        now_ps: TimePs,
        control_open: bool,
        data_open: bool,
    ) -> Option<Outgoing> {
        if control_open {
            if let Some(out) = self.control_out.pop_front() {
                if out.kind == CellKind::Rts && out.made_ps > self.measure_from_ps {
                    self.packets.rts_sent_measured += 1;
                    self.packets.rts_wait_ps_sum += now_ps - out.made_ps;
                }
                return Some(out);
            }
        }
        if !data_open {
            return None;
        }
        let grant = self.grants.front_mut()?;
        if !grant.started && grant.cts_arrived_ps > self.measure_from_ps {
            // The packet's first data cell.
            self.packets.data_started_measured += 1;
            self.packets.data_wait_ps_sum += now_ps - grant.cts_arrived_ps;
        }
        grant.started = true;
        let payload = grant.bytes_left.min(CELL_PAYLOAD_BYTES);
        let out = Outgoing {
            kind: CellKind::Data,
            dst: grant.dst,
            slot: grant.reassembly_slot,
            word: 0,
            made_ps: now_ps,
            payload_bytes: payload as u16,
        };
        grant.cells_left -= 1;
        grant.bytes_left -= payload;
        if grant.cells_left == 0 {
            self.grants.pop_front();
        }
        Some(out)
    }

    /// CTSs issued here and not yet sent (their packets are held by both the source's
    /// ingress buffer and this reassembly).
    pub fn cts_waiting(&self) -> usize {
        let waiting = self.control_out.iter();
        waiting.filter(|out| out.kind == CellKind::Cts).count()
    }

    /// True if a control cell waits to leave.
    pub fn has_control(&self) -> bool {
        !self.control_out.is_empty()
    }

    /// True if a data cell waits to leave.
    pub fn has_data(&self) -> bool {
        !self.grants.is_empty()
    }

    /// The host this endpoint serves.
    pub fn host(&self) -> u16 {
        self.host
    }

    /// What it is made of.
    pub fn spec(&self) -> &GnetSpec {
        &self.spec
    }
}
