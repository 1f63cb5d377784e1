//! 1RMA on GNet (Gibson et al., "Aquila: A unified, low-latency fabric for datacenter
//! networks", NSDI '22, §3.4): a read is two GNet half round trips. The client's TiN sends one
//! 48-byte Req cell, the read request and its solicitation at once, to the server's TiN; the
//! server's 1RMA engine reads host memory over PCIe and sends each PCIe read completion as a
//! Resp cell of its own ("a hardware simplification that avoids response coalescing logic,
//! buffering, and overheads in the NIC"). Req and Resp cells are unordered and routed
//! adaptively; the client lands each Resp in host memory as it arrives, and the read is done
//! with its last Resp.
//!
//! The read's latency runs from its command to its last Resp's arrival, plus the host's PCIe
//! and software time at the client (the command's submission and the completion's delivery),
//! a fixed term: the paper measures the "total execution latency" from the command's
//! submission to the hardware's completion, of which "Aquila traversal accounts for a mere
//! 2.5-3us; the remaining time is attributable to PCIe latency contributions" (§3.4, §5.1).
//! The server's PCIe read, from a Req's arrival to its completions, is a fixed delay in the
//! run: the Resps leave no earlier.
//!
//! Our reading of a Resp cell: the paper sizes Resp cells "to handle the most common PCIe
//! completion sizes we observe from the host root complexes" and gives no size; a root
//! complex splits a read's completions at its read completion boundary (64 or 128 bytes in
//! PCI Express), and a Resp carries 8 bytes naming its read and the segment's offset besides
//! the 8-byte GNet header, so that the client can land it out of order.

use std::collections::VecDeque;

use super::classes::Traffic;
use crate::engine::stats::LatencyHistogram;
use crate::engine::time::TimePs;

/// A Req cell: "a cell 3x larger than CTS at 48B" (§3.4).
pub const REQ_CELL_BYTES: u32 = 48;
/// Bytes of a Resp cell besides its completion: the 8-byte GNet header and 8 bytes naming the
/// read and the segment's offset (our reading).
pub const RESP_OVERHEAD_BYTES: u32 = 16;
/// The largest completion a Resp cell carries: a 160-byte cell less its overhead.
pub const MAX_COMPLETION_BYTES: u32 = 160 - RESP_OVERHEAD_BYTES;

/// What every 1RMA engine of a fabric is made of.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RmaSpec {
    /// Offered reads: the share of a client's link its reads' Resp cells take.
    pub load: f64,
    /// Bytes of every read.
    pub read_bytes: u32,
    /// Bytes of one PCIe read completion, one Resp cell's payload.
    pub completion_bytes: u32,
    /// A Resp cell's time on a host's link (the reads' arrival slot).
    pub resp_slot_ps: TimePs,
    /// The server's PCIe read, from a Req's arrival to its completions.
    pub remote_read_ps: TimePs,
    /// The client's PCIe and software time, added to each read's latency.
    pub host_latency_ps: TimePs,
    /// Reads are high priority (their Resps on the `resp_high` class) or low.
    pub high_priority: bool,
}

impl RmaSpec {
    /// Resp cells of one read.
    pub fn resps_per_read(&self) -> u32 {
        self.read_bytes.div_ceil(self.completion_bytes).max(1)
    }

    /// Bytes of a Resp cell.
    pub fn resp_cell_bytes(&self) -> u32 {
        self.completion_bytes + RESP_OVERHEAD_BYTES
    }

    /// The traffic kind of the reads' Resp cells.
    pub fn resp_traffic(&self) -> Traffic {
        match self.high_priority {
            true => Traffic::RespHigh,
            false => Traffic::RespLow,
        }
    }
}

/// What a client counted of its reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClientCounts {
    /// Reads commanded.
    pub issued: u64,
    /// Reads whose last Resp arrived.
    pub completed: u64,
    /// Resp cells received.
    pub resps_received: u64,
    /// Req cells that left during measurement, and their total wait at the client.
    pub reqs_sent_measured: u64,
    /// Their total wait from the command to leaving the host.
    pub req_wait_ps_sum: u64,
}

/// A read waiting for its Resps.
#[derive(Clone, Copy, Debug)]
struct Pending {
    command_ps: TimePs,
    resps_left: u32,
}

/// The initiator of one host's reads: what it commanded and what came back.
pub struct RmaClient {
    spec: RmaSpec,
    reads: Vec<Option<Pending>>,
    free: Vec<u32>,
    /// What it counted.
    pub counts: ClientCounts,
    /// Read latency, command to last Resp plus the host term, of the reads commanded during
    /// measurement.
    pub latency: LatencyHistogram,
}

impl RmaClient {
    /// A client of reads as `spec` says.
    pub fn new(spec: RmaSpec) -> Self {
        RmaClient {
            spec,
            reads: Vec::new(),
            free: Vec::new(),
            counts: ClientCounts::default(),
            latency: LatencyHistogram::new(),
        }
    }

    /// A read commanded at `now_ps`: its slot, which its Req and Resps name.
    pub fn issue(&mut self, now_ps: TimePs) -> u32 {
        self.counts.issued += 1;
        let pending = Pending {
            command_ps: now_ps,
            resps_left: self.spec.resps_per_read(),
        };
        match self.free.pop() {
            Some(slot) => {
                self.reads[slot as usize] = Some(pending);
                slot
            }
            None => {
                self.reads.push(Some(pending));
                (self.reads.len() - 1) as u32
            }
        }
    }

    /// A Resp of the read in `slot` arrived at `now_ps`: lands it; the read's last records the
    /// read's latency if it was commanded after `measure_from_ps`.
    pub fn on_resp(&mut self, slot: u32, now_ps: TimePs, measure_from_ps: TimePs) {
        self.counts.resps_received += 1;
        let pending = self.reads[slot as usize]
            .as_mut()
            .expect("a Resp names a read the client commanded");
        pending.resps_left -= 1;
        if pending.resps_left > 0 {
            return;
        }
        let command_ps = pending.command_ps;
        self.reads[slot as usize] = None;
        self.free.push(slot);
        self.counts.completed += 1;
        if command_ps > measure_from_ps {
            let fabric_ps = now_ps - command_ps;
            self.latency.record(fabric_ps + self.spec.host_latency_ps);
        }
    }

    /// Reads commanded and not complete.
    pub fn outstanding(&self) -> u64 {
        (self.reads.len() - self.free.len()) as u64
    }

    /// Resp cells the outstanding reads still wait for.
    pub fn resps_awaited(&self) -> u64 {
        let pending = self.reads.iter().flatten();
        pending.map(|p| p.resps_left as u64).sum()
    }
}

/// A read being served: whose, and what is left to send.
#[derive(Clone, Copy, Debug)]
struct Serving {
    client: u16,
    read_slot: u32,
    resps_left: u32,
    bytes_left: u32,
    ready_ps: TimePs,
}

/// A Resp cell to send: to which client, for which read, with how many bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resp {
    /// The client.
    pub client: u16,
    /// The client's slot of the read.
    pub read_slot: u32,
    /// Completion bytes it carries.
    pub payload_bytes: u32,
}

/// What a server counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServerCounts {
    /// Req cells received.
    pub reqs_received: u64,
    /// Resp cells handed to the host's link.
    pub resps_made: u64,
}

/// The target of reads at one host: the reads whose Req arrived, served in arrival order as
/// their PCIe completions come back.
#[derive(Clone, Debug)]
pub struct RmaServer {
    spec: RmaSpec,
    serving: VecDeque<Serving>,
    /// What it counted.
    pub counts: ServerCounts,
    /// Test-only fault: the next Req received is forgotten.
    #[cfg(test)]
    pub forget_next_req: bool,
}

impl RmaServer {
    /// A server of reads as `spec` says.
    pub fn new(spec: RmaSpec) -> Self {
        RmaServer {
            spec,
            serving: VecDeque::new(),
            counts: ServerCounts::default(),
            #[cfg(test)]
            forget_next_req: false,
        }
    }

    /// A Req of `read_bytes` from `client`'s read `read_slot` arrived at `now_ps`: its
    /// completions are ready after the PCIe read.
    pub fn on_req(&mut self, client: u16, read_slot: u32, read_bytes: u32, now_ps: TimePs) {
        self.counts.reqs_received += 1;
        #[cfg(test)]
        if std::mem::take(&mut self.forget_next_req) {
            return;
        }
        self.serving.push_back(Serving {
            client,
            read_slot,
            resps_left: read_bytes.div_ceil(self.spec.completion_bytes).max(1),
            bytes_left: read_bytes,
            ready_ps: now_ps + self.spec.remote_read_ps,
        });
    }

    /// True if a Resp is ready to send at `now_ps`.
    pub fn has_resp(&self, now_ps: TimePs) -> bool {
        self.serving.front().is_some_and(|s| s.ready_ps <= now_ps)
    }

    /// When the next Resp is ready, if a read is being served.
    pub fn next_ready_ps(&self) -> Option<TimePs> {
        self.serving.front().map(|s| s.ready_ps)
    }

    /// The next Resp, if one is ready at `now_ps`.
    pub fn next_resp(&mut self, now_ps: TimePs) -> Option<Resp> {
        let front = self.serving.front_mut().filter(|s| s.ready_ps <= now_ps)?;
        let payload_bytes = front.bytes_left.min(self.spec.completion_bytes);
        let resp = Resp {
            client: front.client,
            read_slot: front.read_slot,
            payload_bytes,
        };
        front.bytes_left -= payload_bytes;
        front.resps_left -= 1;
        if front.resps_left == 0 {
            self.serving.pop_front();
        }
        self.counts.resps_made += 1;
        Some(resp)
    }

    /// Resp cells still to make for the reads it serves.
    pub fn resps_owed(&self) -> u64 {
        self.serving.iter().map(|s| s.resps_left as u64).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> RmaSpec {
        RmaSpec {
            load: 0.5,
            read_bytes: 4_096,
            completion_bytes: 64,
            resp_slot_ps: 12_800,
            remote_read_ps: 500_000,
            host_latency_ps: 1_000_000,
            high_priority: true,
        }
    }

    /// A 4 KB read is 64 Resp cells of 64 bytes, 80 bytes each on the wire.
    #[test]
    fn a_read_is_one_resp_per_completion() {
        let s = spec();
        assert_eq!((s.resps_per_read(), s.resp_cell_bytes()), (64, 80));
        let odd = RmaSpec {
            read_bytes: 100,
            ..s
        };
        assert_eq!(odd.resps_per_read(), 2);
    }

    /// The server's Resps wait for the PCIe read, then carry the read's bytes in completions;
    /// the client records the read at its last Resp, with the host term added.
    #[test]
    fn a_read_completes_with_its_last_resp() {
        let s = RmaSpec {
            read_bytes: 100,
            ..spec()
        };
        let (mut client, mut server) = (RmaClient::new(s), RmaServer::new(s));
        let slot = client.issue(1_000);
        server.on_req(3, slot, 100, 2_000);
        assert!(!server.has_resp(2_000));
        assert_eq!(server.next_ready_ps(), Some(502_000));
        let first = server.next_resp(502_000).unwrap();
        let last = server.next_resp(502_000).unwrap();
        assert_eq!((first.payload_bytes, last.payload_bytes), (64, 36));
        assert_eq!(server.next_resp(502_000), None);
        assert_eq!((client.outstanding(), client.resps_awaited()), (1, 2));
        client.on_resp(slot, 600_000, 0);
        assert_eq!(client.latency.count(), 0);
        client.on_resp(slot, 700_000, 0);
        assert_eq!((client.outstanding(), client.counts.completed), (0, 1));
        assert_eq!(
            client.latency.percentiles().max,
            (699_000 + 1_000_000) as f64
        );
    }
}
