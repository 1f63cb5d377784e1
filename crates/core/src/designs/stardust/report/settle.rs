//! A Stardust run's accounts, settled before anything is reported: every cell (data,
//! control, and transport hosts' frames, which share the arena) and every packet created,
//! delivered, dropped or held, each term counted where the items are.

use super::super::adapter::ingress::IngressCounters;
use super::super::adapter::{Adapter, AdapterCounters};
use super::super::element::Element;
use super::super::reach::{self, ChangeTable, DeviceReport, EventTable, ReachSummary};
use super::super::Stardust;
use crate::blocks::ethernet::host::Host;
use crate::engine::kernel::Clock;
use crate::run::{Ledger, RunError};

/// PAUSE and resume frames adapters sent their hosts (`adapter.pause_hosts`).
fn pause_frames_sent(adapters: &[AdapterCounters]) -> u64 {
    let pfc = adapters.iter().map(|a| &a.egress.pfc);
    pfc.map(|c| c.pause_frames_sent + c.resume_frames_sent)
        .sum()
}

/// Transport hosts' frames not in a packet: waiting at a host's NIC, or on a host cable
/// (sent by a host and not yet at its adapter, or sent by an adapter, a PAUSE frame among
/// them, and not yet at its host).
fn frames_outside_packets(hosts: &[&Host], adapters: &[AdapterCounters]) -> Result<u64, RunError> {
    let created: u64 = hosts.iter().map(|h| h.counters.packets_created).sum();
    let received: u64 = hosts.iter().map(|h| h.counters.packets_received).sum();
    let at_adapters: u64 = adapters.iter().map(|a| a.frames_received).sum();
    let from_adapters: u64 =
        adapters.iter().map(|a| a.egress.frames_sent).sum::<u64>() + pause_frames_sent(adapters);
    let upward = created.checked_sub(at_adapters);
    let downward = from_adapters.checked_sub(received);
    match (upward, downward) {
        (Some(up), Some(down)) => Ok(up + down),
        _ => Err(RunError::Conservation {
            injected: created,
            delivered: received,
            dropped: 0,
            in_flight: at_adapters.max(from_adapters),
        }),
    }
}

/// The accounts a run settles, and what reachability reports with them.
pub struct Settled {
    pub cells: Ledger,
    pub packets: Ledger,
    /// Cells dropped at a full element queue.
    pub congestion: u64,
    /// Packets lost in the fabric: a cell of theirs was dropped.
    pub packets_dropped_fabric: u64,
    pub reachability: ReachSummary,
    pub table_changes: ChangeTable,
    pub failures: EventTable,
}

/// The adapters, elements and transport hosts of a run, and the adapters' counters gathered.
pub struct Parts<'a> {
    pub adapters: Vec<&'a Adapter>,
    pub counters: Vec<AdapterCounters>,
    pub elements: Vec<&'a Element>,
    pub hosts: Vec<&'a Host>,
}

impl Parts<'_> {
    /// The sum of one adapter counter over the adapters.
    pub fn sum(&self, pick: impl Fn(&AdapterCounters) -> u64) -> u64 {
        self.counters.iter().map(pick).sum()
    }
}

impl Stardust {
    /// The cell account: every cell (data, control and transport hosts' frames, which share
    /// the arena) created, delivered, dropped or held where it is; a pull fabric must drop
    /// none to congestion, unless its low-latency VOQs send without credits (§5.6: "else
    /// packets may be dropped (as in a ToR)").
    pub(super) fn settle(&self, parts: &Parts<'_>, clock: &Clock) -> Result<Settled, RunError> {
        let devices: Vec<DeviceReport> = parts
            .adapters
            .iter()
            .map(|a| (a.switch(), true, a.reach.as_ref()))
            .chain(
                parts
                    .elements
                    .iter()
                    .map(|e| (e.switch(), false, e.reach.as_ref())),
            )
            .filter_map(|(switch, adapter, reach)| {
                reach.map(|reach| DeviceReport {
                    switch: switch as u32,
                    adapter,
                    reach,
                })
            })
            .collect();
        let (reachability, lost, table_changes, failures) = reach::report(
            &devices,
            &self.config.failures,
            self.config.cell.control_bytes,
            self.config.link.rate_bps(),
            clock.now_ps,
        );
        let congestion: u64 = parts
            .elements
            .iter()
            .map(|e| e.counters().cells_dropped)
            .sum();
        // Transport hosts' frames share the cell arena: those in a packet are held by it (one
        // per packet), the rest wait at a host's NIC or travel a host cable, which the fabric
        // counts with its own cells.
        let frames_in_packets = if parts.hosts.is_empty() {
            0
        } else {
            self.fabric.packets_live()
        };
        let frames_outside = frames_outside_packets(&parts.hosts, &parts.counters)?;
        let held = self.fabric.cells_held();
        if held + frames_in_packets != self.fabric.cells_live() {
            return Err(RunError::Unaccounted {
                held: held + frames_in_packets,
                allocated: self.fabric.cells_live(),
            });
        }
        let ingress = |pick: fn(&IngressCounters) -> u64| parts.sum(|c| pick(&c.ingress));
        let cells = Ledger {
            injected: ingress(|c| c.data_cells + c.requests_sent)
                + parts.sum(|c| c.egress.credits_sent)
                + lost.cells_sent,
            delivered: parts.sum(|c| c.cells_received) + lost.cells_received,
            dropped: congestion + lost.cells_lost(),
            in_flight: held
                .checked_sub(frames_outside)
                .ok_or(RunError::Unaccounted {
                    held,
                    allocated: frames_outside,
                })?,
        };
        cells.check(false)?;
        let lossless = self.config.adapter.low_latency_bytes.is_none();
        if self.config.stardust.credits && lossless && congestion > 0 {
            return Err(RunError::LossInLosslessRun(congestion));
        }
        let (packets, packets_dropped_fabric) =
            self.settle_packets(parts, lost.packets_lost, frames_outside)?;
        Ok(Settled {
            cells,
            packets,
            congestion,
            packets_dropped_fabric,
            reachability,
            table_changes,
            failures,
        })
    }

    /// The packet account (every packet created, delivered, dropped, or held in a VOQ, a cell
    /// or a host port) and, with transport hosts, the frames' account seen from the hosts;
    /// with the packets lost in the fabric.
    fn settle_packets(
        &self,
        parts: &Parts<'_>,
        lost_to_failures: u64,
        frames_outside: u64,
    ) -> Result<(Ledger, u64), RunError> {
        let packets_lost: u64 = parts
            .elements
            .iter()
            .map(|e| e.counters().packets_lost)
            .sum::<u64>()
            + lost_to_failures;
        let packets_in_cells = parts.sum(|c| c.ingress.packets_packed)
            - parts.sum(|c| c.egress.packets_reassembled)
            - packets_lost;
        let dropped_fabric = packets_lost + parts.sum(|c| c.egress.packets_discarded);
        let packets = Ledger {
            injected: parts.sum(|c| c.ingress.packets_created),
            delivered: parts.sum(|c| c.egress.packets_delivered),
            dropped: parts.sum(|c| c.ingress.packets_dropped)
                + parts
                    .sum(|c| c.ingress.packets_dropped_unreachable + c.ingress.packets_lost_failed)
                + parts.sum(|c| c.egress.packets_lost_failed)
                + dropped_fabric
                + parts.sum(|c| c.egress.packets_dropped_egress),
            in_flight: parts.adapters.iter().map(|a| a.packets_held()).sum::<u64>()
                + packets_in_cells,
        };
        if packets.in_flight != self.fabric.packets_live() {
            return Err(RunError::Unaccounted {
                held: packets.in_flight,
                allocated: self.fabric.packets_live(),
            });
        }
        packets.check(false)?;
        for adapter in &parts.adapters {
            if let Some(memory) = adapter.ingress().memory_ledger() {
                memory.check(false)?;
            }
        }
        if !parts.hosts.is_empty() {
            // Every packet carries a host frame: the frames' account is the packets' seen
            // from the hosts, plus the frames at NICs and on host cables; adapters' PAUSE
            // frames are created by them and delivered to their hosts.
            let hosts = &parts.hosts;
            Ledger {
                injected: hosts
                    .iter()
                    .map(|h| h.counters.packets_created)
                    .sum::<u64>()
                    + pause_frames_sent(&parts.counters),
                delivered: hosts.iter().map(|h| h.counters.packets_received).sum(),
                dropped: packets.dropped,
                in_flight: frames_outside + packets.in_flight,
            }
            .check(false)?;
        }
        Ok((packets, dropped_fabric))
    }
}
