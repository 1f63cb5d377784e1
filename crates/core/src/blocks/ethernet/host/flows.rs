//! A host's flows: the send side ([`OutFlow`]) and receive side ([`InFlow`]) of each, made at
//! build or when a flow opens; an MPTCP connection is consecutive send sides (its subflows,
//! each labelled with its path) sharing the data its first one holds, and consecutive receive
//! sides whose bytes its first one counts.

use super::{Host, NONE, NO_CONN};
use crate::blocks::traffic::NEVER_PS;
use crate::blocks::transport::dcqcn::DcqcnSender;
use crate::blocks::transport::ndp::{NdpPaths, NdpSender};
use crate::blocks::transport::receiver::Receiver;
use crate::blocks::transport::tcp::mptcp::SharedData;
use crate::blocks::transport::tcp::Sender;
use crate::blocks::transport::FlowSender;
use crate::engine::rng::mix;
use crate::engine::time::TimePs;

/// The send side of one flow.
pub struct OutFlow {
    /// Receiving host.
    pub dst: u16,
    /// The flow's index at the receiving host.
    pub(super) remote: u32,
    /// Bytes of the flow (`None`: unending).
    pub(super) size_bytes: Option<u64>,
    /// The transport.
    pub sender: FlowSender,
    /// When its pending retransmission timer event fires, or `NEVER_PS`.
    pub(super) timer_ps: TimePs,
    /// Its path label (an MPTCP subflow's number; 0 for a TCP flow).
    pub(super) path: u16,
    /// Its traffic class (802.1Q priority; PFC pauses it alone), carried in `Cell::vc`.
    pub(super) class: u8,
    /// BFC: its NIC queue (a BFC switch pauses it with its queue-mates), carried in
    /// `Cell::vc` instead of the class.
    pub(super) queue: u16,
    /// Aquarius: its switch paused this flow by its id (the NIC as the first upstream port
    /// stops it alone).
    pub(super) flow_paused: bool,
    /// An MPTCP subflow's connection: its first subflow's index, or [`NO_CONN`].
    pub(super) conn: u32,
    /// On an MPTCP connection's first subflow: the segments not yet given to a subflow.
    pub(super) data: SharedData,
    /// The key its segments carry and its ACKs must carry (a flow made at build: its index).
    pub(super) key: u32,
    /// A flow opened during the run: its number among the host's timed flows, or [`NONE`].
    pub(super) timed: u32,
    /// The latest time a receiver made an ACK that reached this sender (a flow opened during
    /// the run completes at the receiver when it makes the ACK that completes it here).
    pub(super) acked_made_ps: TimePs,
}

/// The receive side of one flow.
pub struct InFlow {
    /// Sending host.
    pub src: u16,
    /// The flow's index at the sending host.
    pub(super) remote: u32,
    /// Bytes of the flow (`None`: unending); of an MPTCP connection, on its first subflow.
    pub(super) size_bytes: Option<u64>,
    pub(super) receiver: Receiver,
    /// Bytes delivered in order (an MPTCP connection's, on its first subflow: each delivered
    /// data segment once, in order on its subflow).
    pub bytes: u64,
    /// Of them, delivered in the measurement window.
    pub bytes_measured: u64,
    /// When the last byte of a finite flow arrived.
    pub done_ps: Option<TimePs>,
    /// Send time of the last segment, echoed by a delayed ACK.
    pub(super) echo_ps: TimePs,
    /// When its pending delayed-ACK timer event fires, or `NEVER_PS`.
    pub(super) timer_ps: TimePs,
    /// Its path label, which its ACKs carry.
    pub(super) path: u16,
    /// The receive side counting its bytes: itself, or its MPTCP connection's first subflow.
    pub(super) record: u32,
    /// An MPTCP subflow: every segment is full size (the connection's last one included).
    pub(super) full_segments: bool,
}

impl Host {
    /// Adds a flow to `dst` of `size_bytes` (`None`: unending), known there as `remote`;
    /// returns its index here.
    pub fn add_out(&mut self, dst: u16, remote: u32, size_bytes: Option<u64>) -> u32 {
        let mss = self.params.sender.mss_bytes;
        let packets = size_bytes.map_or(u32::MAX, |b| b.div_ceil(mss) as u32);
        self.out.push(OutFlow {
            dst,
            remote,
            size_bytes,
            sender: match (self.params.ndp_pull_interval_ps, self.params.dcqcn) {
                (Some(_), _) => {
                    let sender = NdpSender::new(&self.params.sender, packets);
                    FlowSender::Ndp(match self.params.ndp_paths {
                        None => sender,
                        Some(spec) => sender.with_paths(NdpPaths::new(
                            spec.paths,
                            mix(spec.salt ^ ((self.index as u64) << 32) ^ self.out.len() as u64),
                        )),
                    })
                }
                (None, Some(dcqcn)) => {
                    FlowSender::Dcqcn(DcqcnSender::new(dcqcn, mss, packets, self.link.rate_bps))
                }
                (None, None) => FlowSender::Window(Sender::new(&self.params.sender, packets)),
            },
            timer_ps: NEVER_PS,
            path: 0,
            class: 0,
            queue: self.nic_queue(self.out.len()),
            flow_paused: false,
            conn: NO_CONN,
            data: SharedData::new(0),
            key: self.out.len() as u32,
            timed: NONE,
            acked_made_ps: 0,
        });
        self.out.len() as u32 - 1
    }

    /// BFC: the NIC queue of send side `i` (0 without BFC).
    pub(super) fn nic_queue(&self, i: usize) -> u16 {
        (i % self.params.bfc_queues.unwrap_or(1) as usize) as u16
    }

    /// True while the switch pauses `flow`'s class, (BFC) its NIC queue, or (Aquarius) the
    /// flow itself.
    pub(super) fn is_paused(&self, flow: &OutFlow) -> bool {
        flow.flow_paused
            || self.pause.is_paused(flow.class as u16)
            || self.queue_pause.is_paused(flow.queue)
    }

    /// Aquarius: the switch paused (`pause`) or resumed the flow whose key
    /// ([`flow_key`](crate::blocks::ethernet::ports::bfc::flow_key)) is `key`: its send side
    /// here, to that destination, known there by that index.
    pub(super) fn pause_flow(&mut self, key: u64, pause: bool) {
        let (dst, remote) = ((key >> 32) as u16, key as u32);
        self.counters.flow_pauses_received += pause as u64;
        if let Some(flow) = self
            .out
            .iter_mut()
            .find(|f| f.dst == dst && f.remote == remote)
        {
            flow.flow_paused = pause;
        }
    }

    /// Puts send side `flow` (an MPTCP connection's first subflow: all its subflows) on
    /// traffic class `class` (below `HostParams::pfc_classes`).
    pub fn set_class(&mut self, flow: u32, class: u8) {
        debug_assert!(class < self.params.pfc_classes, "a class the fabric keeps");
        let conn = self.out[flow as usize].conn;
        for (i, f) in self.out.iter_mut().enumerate().skip(flow as usize) {
            if i != flow as usize && (conn == NO_CONN || f.conn != conn) {
                break;
            }
            f.class = class;
        }
    }

    /// Adds an MPTCP connection of `subflows` subflows to `dst` of `size_bytes` (`None`:
    /// unending), its receive sides there from `remote` on; returns its first subflow's index
    /// here (the others follow).
    pub fn add_out_connection(
        &mut self,
        dst: u16,
        remote: u32,
        subflows: u32,
        size_bytes: Option<u64>,
    ) -> u32 {
        let mss = self.params.sender.mss_bytes;
        let packets = size_bytes.map_or(u32::MAX, |b| b.div_ceil(mss) as u32);
        let first = self.out.len() as u32;
        // A finite connection's subflows are given its segments one at a time as they send.
        let given = if size_bytes.is_some() { 0 } else { u32::MAX };
        for path in 0..subflows {
            self.out.push(OutFlow {
                dst,
                remote: remote + path,
                size_bytes: None,
                sender: FlowSender::Window(Sender::new(&self.params.sender, given)),
                timer_ps: NEVER_PS,
                path: path as u16,
                class: 0,
                flow_paused: false,
                queue: self.nic_queue((first + path) as usize),
                conn: first,
                data: SharedData::new(if path == 0 { packets } else { 0 }),
                key: first + path,
                timed: NONE,
                acked_made_ps: 0,
            });
        }
        first
    }

    /// Adds the receive side of a flow from `src`, known there as `remote`; returns its index.
    pub fn add_in(&mut self, src: u16, remote: u32, size_bytes: Option<u64>) -> u32 {
        if let Some(ndp) = &mut self.ndp {
            ndp.add_flow();
        }
        if let Some(notification) = &mut self.notification {
            notification.add_flow();
        }
        self.inflows.push(InFlow {
            src,
            remote,
            size_bytes,
            receiver: Receiver::default(),
            bytes: 0,
            bytes_measured: 0,
            done_ps: None,
            echo_ps: 0,
            timer_ps: NEVER_PS,
            path: 0,
            record: self.inflows.len() as u32,
            full_segments: false,
        });
        self.inflows.len() as u32 - 1
    }

    /// Adds the receive side of an MPTCP connection of `subflows` subflows from `src`, its
    /// send sides there from `remote` on; returns its first subflow's index here, which
    /// counts the connection's bytes.
    pub fn add_in_connection(
        &mut self,
        src: u16,
        remote: u32,
        subflows: u32,
        size_bytes: Option<u64>,
    ) -> u32 {
        let first = self.inflows.len() as u32;
        for path in 0..subflows {
            self.add_in(src, remote + path, size_bytes.filter(|_| path == 0));
            let flow = self.inflows.last_mut().expect("just added");
            (flow.path, flow.record, flow.full_segments) = (path as u16, first, true);
        }
        first
    }
}
