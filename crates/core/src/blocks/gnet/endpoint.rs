//! A host's GNet IP endpoint in a simulated Clique (Gibson et al., "Aquila: A unified,
//! low-latency fabric for datacenter networks", NSDI '22, §3.3, Fig. 3): the host's packets go
//! into the ingress buffer, which sends an RTS to the destination's CTS scheduler; a CTS pulls
//! the packet out as data cells, a CTD drops it at the source; the egress side reassembles the
//! data cells and releases packets in RTS order. The endpoint sits where the host's cable meets
//! its TiN: the TiN's IP engine for that host port, reached over the host's link.
//!
//! The same endpoint is the host's 1RMA engine (§3.4): its client sends a Req per read and
//! counts the Resps back, its server answers a Req with Resp cells once the host's PCIe read
//! is done ([`super::rma`]).
//!
//! Our reading of where the state lives: Aquila's CTS scheduler serves 32 RTS queues (8
//! classes of service × 4 ports) of one TiN; here each host port has its own scheduler,
//! reassembly space and fetch window, with an RTS queue per class of service, so the two hosts
//! of a TiN do not compete for them (the ports' queues would share nothing else). A packet's
//! class of service orders its CTS at the egress (strict priority, class 0 first) and its data
//! cells at the ingress (the granted packets of a class leave before those of the next).
//!
//! Cells wait to leave by traffic class ([`super::classes`]): within a class, the cells made
//! whole (RTS, CTS, CTD, Req) leave first in the order they were made, then the data cells of
//! granted packets and Resp cells, in turn where a class carries both (our reading: the paper
//! says only that low-priority 1RMA shares the bulk IP's VCs, §5.1).

use std::collections::VecDeque;

use super::classes::{ClassLayout, Traffic};
use super::cts::{CtsLimits, CtsScheduler};
use super::ingress::IngressBuffer;
use super::reorder::{Reassembly, Released};
use super::rma::{RmaClient, RmaServer, RmaSpec, REQ_CELL_BYTES};
use super::wire::{
    flits_of, CellKind, Outgoing, CONTROL_CELL_BYTES, DATA_CELL_BYTES, MAX_CLASSES_OF_SERVICE,
};
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
    /// Which VC class each kind of cell rides.
    pub layout: ClassLayout,
    /// Routing VCs per class: class `c` runs on VCs `c · vcs_per_class ..`.
    pub vcs_per_class: u16,
    /// The TiN's endpoint ports the host's IP data cells enter its switch by, each its own
    /// input FIFO: their class's first VCs on the host's port, cells spread over them in turn.
    pub endpoint_ports: u16,
    /// The hosts' 1RMA reads, if they make any.
    pub rma: Option<RmaSpec>,
    /// The share of the packets in each IP class of service, the first `limits.classes`
    /// of them used.
    pub class_shares: [f64; MAX_CLASSES_OF_SERVICE],
    /// Cells cross the fabric whole, one unit of several flits (the VC routers switch
    /// cells, `vc.switching_unit = "cell"`), rather than flit by flit.
    pub whole_cells: bool,
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

    /// Flits of a cell of `kind`.
    pub fn flits(&self, kind: CellKind) -> u32 {
        match kind {
            CellKind::Data => self.data_flits(),
            CellKind::Req => flits_of(REQ_CELL_BYTES, self.flit_bytes),
            CellKind::Resp => {
                let rma = self.rma.expect("Resp cells only where reads are made");
                flits_of(rma.resp_cell_bytes(), self.flit_bytes)
            }
            _ => self.control_flits(),
        }
    }

    /// The kinds of cell the hosts send: IP's always, 1RMA's where reads are made.
    fn kinds(&self) -> impl Iterator<Item = CellKind> + '_ {
        let ip = [CellKind::Data, CellKind::Rts, CellKind::Cts, CellKind::Ctd];
        let rma = [CellKind::Req, CellKind::Resp];
        ip.into_iter()
            .chain(rma.into_iter().filter(|_| self.rma.is_some()))
    }

    /// The flits of the largest cell class `class` carries: the credits a host waits for
    /// before it takes a new cell of that class where cells cross whole (one flit otherwise).
    pub fn class_unit_flits(&self, class: u8) -> u32 {
        if !self.whole_cells {
            return 1;
        }
        let in_class = self.kinds().filter(|&kind| self.carries(class, kind));
        in_class.map(|kind| self.flits(kind)).max().unwrap_or(1)
    }

    /// True if VC class `class` carries cells of `kind` (IP data: of any class of service).
    fn carries(&self, class: u8, kind: CellKind) -> bool {
        match kind {
            CellKind::Data => {
                (0..self.limits.classes).any(|s| self.layout.data_class_of(s) == class)
            }
            _ => self.class_of(kind) == class,
        }
    }

    /// Flits per cell indexed by the kind a cell's flags carry ([`CellKind::of`]), as a
    /// router switching whole cells reads them (1 for a kind never sent).
    pub fn flits_by_kind(&self) -> [u32; 8] {
        let mut table = [1; 8];
        for kind in self.kinds() {
            table[kind as usize] = self.flits(kind);
        }
        table
    }

    /// The VC class a cell of `kind` rides (IP data: of classes of service not placed apart).
    pub fn class_of(&self, kind: CellKind) -> u8 {
        let traffic = match kind {
            CellKind::Rts => Traffic::Rts,
            CellKind::Cts | CellKind::Ctd => Traffic::Cts,
            CellKind::Req => Traffic::Req,
            CellKind::Resp => self.rma.map_or(Traffic::RespHigh, |r| r.resp_traffic()),
            CellKind::Data => Traffic::IpData,
        };
        self.layout.class_of(traffic)
    }
}

/// The accounts kept apart by kind of cell: IP's control cells, its data cells, 1RMA's Req
/// and Resp cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlitLedger {
    /// RTS, CTS and CTD.
    Control = 0,
    /// IP data.
    Data = 1,
    /// 1RMA Req.
    Req = 2,
    /// 1RMA Resp.
    Resp = 3,
}

impl FlitLedger {
    /// The ledger a cell of `kind` is counted in.
    pub fn of(kind: CellKind) -> FlitLedger {
        match kind {
            CellKind::Data => FlitLedger::Data,
            CellKind::Req => FlitLedger::Req,
            CellKind::Resp => FlitLedger::Resp,
            _ => FlitLedger::Control,
        }
    }
}

/// Flits sent and received by kind, for the accounts kept apart by [`FlitLedger`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlitCounts {
    /// Flits sent, per ledger.
    pub injected: [u64; 4],
    /// Flits received, per ledger.
    pub delivered: [u64; 4],
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

/// What an endpoint measured of the packets of one class of service.
#[derive(Default)]
pub struct ClassMeasures {
    /// Packet latency, RTS to last data cell, of the class's packets released during
    /// measurement.
    pub latency: LatencyHistogram,
    /// CTSs issued here during measurement for packets whose RTS was made after its start.
    pub cts_measured: u64,
    /// Their total time from the RTS's making to the CTS's issue (the wait in the RTS queue,
    /// plus the RTS's trip, which no class changes).
    pub rts_to_cts_ps_sum: u64,
    /// RTSs made during measurement that were answered CTD here (their packets dropped at
    /// the source once the CTD arrives).
    pub ctd_measured: u64,
}

/// A packet the ingress buffer holds: where it goes.
#[derive(Clone, Copy, Debug)]
pub struct Held {
    /// Its destination host.
    pub dst: u16,
}

/// The host's 1RMA engine: the reads it makes and the reads it serves.
pub struct Rma {
    /// Its reads of other hosts.
    pub client: RmaClient,
    /// Other hosts' reads of it.
    pub server: RmaServer,
}

/// The protocol state of one endpoint: ingress (buffer, grants to send) and egress (CTS
/// scheduler, reassembly), its 1RMA engine, and the cells made whole waiting to leave.
pub struct Endpoint {
    host: u16,
    spec: GnetSpec,
    /// Packets waiting for CTS or CTD.
    pub ingress: IngressBuffer<Held>,
    /// Per class of service: the granted packets, in CTS order.
    grants: Vec<VecDeque<Grant>>,
    /// RTSs queued here and CTSs issued from here.
    pub cts: CtsScheduler,
    reassembly: Reassembly,
    /// Per flow ([`Rts::flow`]: source host, class of service, port): the RTS time of the
    /// latest packet released from it (order check).
    last_released_rts_ps: Vec<TimePs>,
    /// Per VC class: RTS, CTS, CTD and Req cells waiting to leave, in order.
    made_out: Vec<VecDeque<Outgoing>>,
    /// The 1RMA engine, where the hosts make reads.
    pub rma: Option<Rma>,
    /// A Resp goes next where IP data and Resps share a class and both wait.
    resp_turn: bool,
    /// Packet latency, RTS to last data cell, of the packets released during measurement.
    pub latency: LatencyHistogram,
    /// Per class of service, where there are several: what was measured of its packets.
    pub by_class: Vec<ClassMeasures>,
    /// Packet counts and waits.
    pub packets: PacketCounts,
    /// Statistics count what happens after this time.
    pub measure_from_ps: TimePs,
}

impl Endpoint {
    /// The endpoint of host `host` among `hosts`.
    pub fn new(host: u16, hosts: u32, spec: GnetSpec) -> Self {
        let classes = spec.limits.classes as usize;
        let measured_classes = if classes > 1 { classes } else { 0 };
        Endpoint {
            host,
            spec,
            ingress: IngressBuffer::new(host as u32, spec.ingress_buffer_bytes),
            grants: vec![VecDeque::new(); classes],
            cts: CtsScheduler::new(spec.limits),
            reassembly: Reassembly::new(hosts, spec.limits.classes, spec.limits.ports),
            last_released_rts_ps: vec![0; hosts as usize * classes * spec.limits.ports as usize],
            made_out: vec![VecDeque::new(); spec.layout.classes() as usize],
            rma: spec.rma.map(|r| Rma {
                client: RmaClient::new(r),
                server: RmaServer::new(r),
            }),
            resp_turn: false,
            latency: LatencyHistogram::new(),
            by_class: (0..measured_classes)
                .map(|_| ClassMeasures::default())
                .collect(),
            packets: PacketCounts::default(),
            measure_from_ps: 0,
        }
    }

    /// Packets the egress holds for reassembly (granted and not yet released).
    pub fn reassembly_held(&self) -> usize {
        self.reassembly.held()
    }

    /// A packet of `size_bytes` and class of service `class` for host `dst` is complete at
    /// `now_ps`: stored and its RTS queued, or dropped if the ingress buffer is full.
    pub fn admit(&mut self, dst: u16, size_bytes: u32, class: u8, now_ps: TimePs) {
        self.packets.generated += 1;
        let admitted = self
            .ingress
            .admit(Held { dst }, (size_bytes, class, 0), now_ps);
        let Ok(rts) = admitted else {
            return;
        };
        self.push_made(Outgoing {
            kind: CellKind::Rts,
            dst,
            slot: rts.ingress_slot,
            word: rts.size_bytes,
            made_ps: now_ps,
            payload_bytes: 0,
            class_of_service: class,
        });
    }

    /// A cell made whole waits to leave in its class.
    fn push_made(&mut self, out: Outgoing) {
        let class = self.spec.class_of(out.kind) as usize;
        self.made_out[class].push_back(out);
    }

    /// A 1RMA read of host `server` is commanded at `now_ps`: its Req waits to leave.
    pub fn command_read(&mut self, server: u16, now_ps: TimePs) {
        let rma = self
            .rma
            .as_mut()
            .expect("reads only where the hosts make them");
        let slot = rma.client.issue(now_ps);
        let read_bytes = self.spec.rma.expect("an RMA spec").read_bytes;
        self.push_made(Outgoing {
            kind: CellKind::Req,
            dst: server,
            slot,
            word: read_bytes,
            made_ps: now_ps,
            payload_bytes: 0,
            class_of_service: 0,
        });
    }

    /// The tail flit of a GNet cell arrived at `now_ps`: acts on it as its kind says.
    pub fn on_cell(&mut self, cell: &Cell, now_ps: TimePs) {
        match CellKind::of(cell) {
            CellKind::Rts => self.on_rts(cell, now_ps),
            CellKind::Cts => self.on_cts(cell, now_ps),
            CellKind::Ctd => self.on_ctd(cell),
            CellKind::Data => self.on_data(cell, now_ps),
            CellKind::Req => self
                .rma_mut()
                .server
                .on_req(cell.src, cell.seq, cell.packet, now_ps),
            CellKind::Resp => {
                let measure_from_ps = self.measure_from_ps;
                let client = &mut self.rma_mut().client;
                client.on_resp(cell.seq, now_ps, measure_from_ps);
            }
        }
        self.issue_cts(now_ps);
    }

    fn rma_mut(&mut self) -> &mut Rma {
        self.rma
            .as_mut()
            .expect("1RMA cells only where the hosts make reads")
    }

    /// Egress: an RTS joins its queue, or is answered CTD.
    fn on_rts(&mut self, cell: &Cell, now_ps: TimePs) {
        let rts = Rts {
            source: cell.src as u32,
            ingress_slot: cell.seq,
            size_bytes: cell.packet,
            class: CellKind::class_of_service(cell),
            port: 0,
            sent_ps: cell.packet_inject_ps,
        };
        if let Some(ctd) = self.cts.hear(rts) {
            if let Some(measures) = self.by_class.get_mut(rts.class as usize) {
                measures.ctd_measured += (rts.sent_ps > self.measure_from_ps) as u64;
            }
            self.push_made(Outgoing {
                kind: CellKind::Ctd,
                dst: cell.src,
                slot: ctd.rts.ingress_slot,
                word: 0,
                made_ps: now_ps,
                payload_bytes: 0,
                class_of_service: 0,
            });
        }
    }

    /// Egress: CTSs while the window and reassembly space allow.
    fn issue_cts(&mut self, now_ps: TimePs) {
        let reassembly = &mut self.reassembly;
        while let Some(cts) = self.cts.next_cts(|_| reassembly.allocate()) {
            reassembly.register(cts);
            let rts = cts.rts;
            if let Some(measures) = self.by_class.get_mut(rts.class as usize) {
                if rts.sent_ps > self.measure_from_ps {
                    measures.cts_measured += 1;
                    measures.rts_to_cts_ps_sum += now_ps - rts.sent_ps;
                }
            }
            let class = self.spec.class_of(CellKind::Cts) as usize;
            self.made_out[class].push_back(Outgoing {
                kind: CellKind::Cts,
                dst: cts.rts.source as u16,
                slot: cts.rts.ingress_slot,
                word: cts.reassembly_slot,
                made_ps: now_ps,
                payload_bytes: 0,
                class_of_service: 0,
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
        self.grants[cts.rts.class as usize].push_back(Grant {
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
        let (last_released, by_class) = (&mut self.last_released_rts_ps, &mut self.by_class);
        let (measure_from_ps, limits) = (self.measure_from_ps, self.spec.limits);
        self.reassembly
            .release_from(cell.seq, |released: Released| {
                let rts = released.cts.rts;
                packets.released += 1;
                let last = &mut last_released[rts.flow(limits.classes, limits.ports) as usize];
                packets.released_out_of_rts_order += (rts.sent_ps < *last) as u64;
                *last = rts.sent_ps;
                packets.ecn_marked += cts.marks_ecn(&rts) as u64;
                cts.released(rts.size_bytes);
                if rts.sent_ps > measure_from_ps {
                    let latency_ps = released.complete_ps - rts.sent_ps;
                    latency.record(latency_ps);
                    if let Some(measures) = by_class.get_mut(rts.class as usize) {
                        measures.latency.record(latency_ps);
                    }
                }
            });
    }

    /// The next GNet cell of VC class `class` to send at `now_ps`, if any: a cell made whole
    /// first, then a data cell of the oldest grant of the first class of service with one
    /// (so a class-0 grant may come between two cells of a class-1 packet) or a ready Resp,
    /// in turn where the class carries both.
    pub fn next_cell(&mut self, now_ps: TimePs, class: u8) -> Option<Outgoing> {
        if let Some(out) = self.made_out[class as usize].pop_front() {
            self.count_wait(&out, now_ps);
            return Some(out);
        }
        let data = self.has_grant(class);
        let resp = self.resp_ready(now_ps, class);
        if data && !(resp && self.resp_turn) {
            // The turn belongs to the class Resps share with data, not to another data class.
            if self.spec.class_of(CellKind::Resp) == class {
                self.resp_turn = resp;
            }
            return Some(self.next_data_cell(now_ps, class));
        }
        if !resp {
            return None;
        }
        self.resp_turn = false;
        let resp = self.rma_mut().server.next_resp(now_ps)?;
        Some(Outgoing {
            kind: CellKind::Resp,
            dst: resp.client,
            slot: resp.read_slot,
            word: 0,
            made_ps: now_ps,
            payload_bytes: resp.payload_bytes as u16,
            class_of_service: 0,
        })
    }

    /// True if a Resp of VC class `class` is ready to leave at `now_ps`.
    fn resp_ready(&self, now_ps: TimePs, class: u8) -> bool {
        let resp_class = self.spec.class_of(CellKind::Resp);
        let rma = self.rma.as_ref().filter(|_| resp_class == class);
        rma.is_some_and(|r| r.server.has_resp(now_ps))
    }

    /// Counts an RTS's or Req's wait at its source as it leaves.
    fn count_wait(&mut self, out: &Outgoing, now_ps: TimePs) {
        if out.made_ps <= self.measure_from_ps {
            return;
        }
        match out.kind {
            CellKind::Rts => {
                self.packets.rts_sent_measured += 1;
                self.packets.rts_wait_ps_sum += now_ps - out.made_ps;
            }
            CellKind::Req => {
                let counts = &mut self.rma_mut().client.counts;
                counts.reqs_sent_measured += 1;
                counts.req_wait_ps_sum += now_ps - out.made_ps;
            }
            _ => {}
        }
    }

    /// The grants of the classes of service whose data cells ride VC class `class`, the first
    /// class of service first.
    fn grants_of(&self, class: u8) -> impl Iterator<Item = usize> + '_ {
        let layout = self.spec.layout;
        (0..self.grants.len()).filter(move |&s| layout.data_class_of(s as u8) == class)
    }

    /// True if a granted packet has data cells to send on VC class `class`.
    fn has_grant(&self, class: u8) -> bool {
        self.grants_of(class).any(|s| !self.grants[s].is_empty())
    }

    /// The next data cell on VC class `class`: of the oldest grant of the first class of
    /// service with one there.
    fn next_data_cell(&mut self, now_ps: TimePs, class: u8) -> Outgoing {
        let service = self
            .grants_of(class)
            .find(|&s| !self.grants[s].is_empty())
            .expect("a grant");
        let grants = &mut self.grants[service];
        let grant = grants.front_mut().expect("a grant");
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
            class_of_service: 0,
        };
        grant.cells_left -= 1;
        grant.bytes_left -= payload;
        if grant.cells_left == 0 {
            grants.pop_front();
        }
        out
    }

    /// True if a cell of VC class `class` waits to leave at `now_ps`.
    pub fn has_cell(&self, now_ps: TimePs, class: u8) -> bool {
        if !self.made_out[class as usize].is_empty() {
            return true;
        }
        if self.has_grant(class) {
            return true;
        }
        self.resp_ready(now_ps, class)
    }

    /// When a Resp not yet ready becomes ready, if one waits for its PCIe read.
    pub fn next_resp_ready_ps(&self) -> Option<TimePs> {
        self.rma.as_ref()?.server.next_ready_ps()
    }

    /// CTSs issued here and not yet sent (their packets are held by both the source's
    /// ingress buffer and this reassembly).
    pub fn cts_waiting(&self) -> usize {
        let waiting = self.made_out.iter().flatten();
        waiting.filter(|out| out.kind == CellKind::Cts).count()
    }

    /// Req cells made and not yet sent.
    pub fn reqs_waiting(&self) -> usize {
        let waiting = self.made_out.iter().flatten();
        waiting.filter(|out| out.kind == CellKind::Req).count()
    }

    /// Work held here that is not yet in the fabric, in the fabric's units (cells where they
    /// cross whole, else flits): the data cells of the packets in the ingress buffer, the Reqs
    /// waiting, the Resp cells the server still owes. Open-loop hosts past saturation pile them
    /// up, so the run's backlog counts them.
    pub fn units_not_yet_sent(&self) -> u64 {
        // Resp and Req sizes exist only where reads are made: asked only for what is held.
        let units = |count: u64, kind| match (count, self.spec.whole_cells) {
            (0, _) | (_, true) => count,
            (_, false) => count * self.spec.flits(kind) as u64,
        };
        let packets = self.ingress.held() as u64 * cells_of(self.spec.packet_bytes) as u64;
        let owed = self.rma.as_ref().map_or(0, |rma| rma.server.resps_owed());
        units(packets, CellKind::Data)
            + units(self.reqs_waiting() as u64, CellKind::Req)
            + units(owed, CellKind::Resp)
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
