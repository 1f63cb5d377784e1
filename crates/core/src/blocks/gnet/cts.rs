//! The egress TiN's CTS scheduler (Gibson et al., NSDI '22, §3.3): RTS queues per (class of
//! service × egress port), 8 × 4 in Aquila (the ports: the external Ethernet MAC, the two hosts
//! of the dual-host NIC and the control processor), with no per-source fairness within a
//! queue. An RTS that finds its queue at the CTD threshold is answered CTD at once. A CTS goes
//! to the queue heads by strict priority across classes (class 0 first) and round robin across
//! ports within a class (our reading: the paper says only that the scheduler allocates
//! bandwidth among the queues), and only once reassembly space for the whole packet has been
//! allocated and fewer than the window of fetches are outstanding. A packet leaving the
//! reassembly buffer is ECN-marked if its RTS queue is deeper than a marking threshold.

use std::collections::VecDeque;

use super::{Ctd, Cts, DropCause, Rts};

/// What a CTS scheduler is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CtsLimits {
    /// Classes of service.
    pub classes: u8,
    /// Egress ports.
    pub ports: u8,
    /// RTSs each RTS queue holds.
    pub queue_rts: u32,
    /// An RTS that finds this many in its queue is answered CTD (at most `queue_rts`).
    pub ctd_threshold_rts: u32,
    /// Reassembly buffer, bytes.
    pub reassembly_bytes: u64,
    /// Most packets granted (CTS sent) whose last cell has not yet arrived.
    pub fetch_window: u32,
    /// A packet is ECN-marked if its RTS queue holds more RTSs than this when the packet is
    /// reassembled and ready to leave (§3.3).
    pub ecn_threshold_rts: u32,
}

impl CtsLimits {
    /// Refuses limits a scheduler cannot work with, naming the key (within the caller's
    /// section) and what was expected: above all a CTD threshold above its RTS queue.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if self.classes == 0 || self.ports == 0 {
            return Err(("classes", "expected at least one class and one port".into()));
        }
        if self.ctd_threshold_rts == 0 || self.ctd_threshold_rts > self.queue_rts {
            let message = format!(
                "expected a CTD threshold of 1 to the RTS queue's {} RTSs, got {}",
                self.queue_rts, self.ctd_threshold_rts
            );
            return Err(("ctd_threshold_rts", message));
        }
        if self.fetch_window == 0 {
            return Err(("fetch_window", "expected at least one fetch".into()));
        }
        Ok(())
    }
}

/// What a CTS scheduler counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CtsCounters {
    /// RTSs heard.
    pub rts_heard: u64,
    /// CTSs sent.
    pub cts_sent: u64,
    /// CTDs sent.
    pub ctd_sent: u64,
    /// Packets whose last cell arrived.
    pub fetched: u64,
    /// Packets ECN-marked as they left.
    pub ecn_marked: u64,
}

/// One egress TiN's RTS queues and CTS scheduler.
#[derive(Clone, Debug)]
pub struct CtsScheduler {
    limits: CtsLimits,
    /// Per (class · ports + port): RTSs in arrival order.
    queues: Vec<VecDeque<Rts>>,
    /// Per class: the port the round robin tries first.
    next_port: Vec<u8>,
    free_bytes: u64,
    outstanding: u32,
    /// What it counted.
    pub counters: CtsCounters,
}

impl CtsScheduler {
    /// An empty scheduler within `limits` (checked by [`CtsLimits::check`]).
    pub fn new(limits: CtsLimits) -> Self {
        let queues = limits.classes as usize * limits.ports as usize;
        CtsScheduler {
            limits,
            queues: vec![VecDeque::new(); queues],
            next_port: vec![0; limits.classes as usize],
            free_bytes: limits.reassembly_bytes,
            outstanding: 0,
            counters: CtsCounters::default(),
        }
    }

    /// RTSs waiting in the queue of (`class`, `port`).
    pub fn depth(&self, class: u8, port: u8) -> usize {
        self.queues[self.index(class, port)].len()
    }

    /// RTSs waiting in every queue.
    pub fn waiting(&self) -> usize {
        self.queues.iter().map(VecDeque::len).sum()
    }

    /// Reassembly bytes not allocated.
    pub fn free_bytes(&self) -> u64 {
        self.free_bytes
    }

    fn index(&self, class: u8, port: u8) -> usize {
        class as usize * self.limits.ports as usize + port as usize
    }

    /// An RTS arrived: queued, or answered CTD if its queue is at the threshold.
    pub fn hear(&mut self, rts: Rts) -> Option<Ctd> {
        self.counters.rts_heard += 1;
        let index = self.index(rts.class, rts.port);
        let queue = &mut self.queues[index];
        if queue.len() >= self.limits.ctd_threshold_rts as usize {
            self.counters.ctd_sent += 1;
            return Some(Ctd {
                rts,
                cause: DropCause::RtsQueueOverThreshold,
            });
        }
        queue.push_back(rts);
        None
    }

    /// The next CTS, if the window allows: the head RTS of the first class with one, round
    /// robin over its ports, once its packet's reassembly space is allocated (a head whose
    /// packet does not fit waits, and holds back the queues after it: reassembly space is
    /// allocated in scheduling order). `allocate` gives the reassembly slot.
    pub fn next_cts(&mut self, allocate: impl FnOnce(&Rts) -> u32) -> Option<Cts> {
        if self.outstanding >= self.limits.fetch_window {
            return None;
        }
        let ports = self.limits.ports;
        let (class, port) = (0..self.limits.classes).find_map(|class| {
            let first = self.next_port[class as usize];
            (0..ports)
                .map(|k| (first + k) % ports)
                .find(|&port| self.depth(class, port) > 0)
                .map(|port| (class, port))
        })?;
        let index = self.index(class, port);
        let size = self.queues[index]
            .front()
            .expect("a non-empty queue")
            .size_bytes as u64;
        if size > self.free_bytes {
            return None;
        }
        let rts = self.queues[index].pop_front().expect("a non-empty queue");
        self.next_port[class as usize] = (port + 1) % ports;
        self.free_bytes -= size;
        self.outstanding += 1;
        self.counters.cts_sent += 1;
        Some(Cts {
            reassembly_slot: allocate(&rts),
            rts,
        })
    }

    /// The last cell of a granted packet arrived: its fetch is no longer outstanding.
    pub fn fetched(&mut self) {
        debug_assert!(
            self.outstanding > 0,
            "a fetch completed that was never granted"
        );
        self.outstanding -= 1;
        self.counters.fetched += 1;
    }

    /// The reassembled packet `rts` asked for is ready to leave: true if it is ECN-marked, its
    /// RTS queue being deeper than the marking threshold now (§3.3), counted.
    pub fn marks_ecn(&mut self, rts: &Rts) -> bool {
        let marked = self.depth(rts.class, rts.port) > self.limits.ecn_threshold_rts as usize;
        self.counters.ecn_marked += marked as u64;
        marked
    }

    /// A reassembled packet of `size_bytes` left for the NIC: its space is free again.
    pub fn released(&mut self, size_bytes: u32) {
        self.free_bytes += size_bytes as u64;
        debug_assert!(
            self.free_bytes <= self.limits.reassembly_bytes,
            "more reassembly space released than allocated"
        );
    }
}
