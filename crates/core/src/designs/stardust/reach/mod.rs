//! Reachability messages and scripted failures on a Stardust fabric (Stardust §4.2, §5.8-5.10,
//! App. E; readings R19, R20 of `docs/validation/stardust.md`). With
//! `reachability.mode = "messages"` every adapter and element keeps a [`Reachability`] table, sends
//! one reachability cell (a control cell, strict priority) per interval on each of its fabric
//! links, and routes only over links its table allows. Failures are scripted: a cut cable loses its
//! signal at both ends at once (App. E: local detection takes nanoseconds) and the cells queued for
//! it or on its wire are lost; a failed element stops sending and drops what reaches it, so its
//! neighbours notice only when its messages stop. A cable with errors keeps its signal but
//! corrupts cells with a scripted probability: the receiver discards each errored cell, counts it,
//! and marks the link faulty when the errors cross the threshold (§5.10, see
//! [`crate::blocks::reachability`]). Cells that reach a device with no usable link to their
//! destination are dropped (R20). Every such loss is counted by cause: the "lossless" claim is
//! about congestion.

use std::sync::Arc;

use rand::Rng as _;

use serde::Serialize;

use super::wire::{reach_bits, set_reach_bits, LINK_FAULTY};
use super::{Addressing, Kind};
use crate::blocks::cell::{Cell, CellId};
use crate::blocks::fabric::Context;
use crate::blocks::priority_port::PriorityPort;
use crate::blocks::reachability::{LinkState, Reachability, Slice};
use crate::blocks::routing::{RouteTable, Router};
use crate::blocks::stream_kind;
use crate::blocks::topology::{Attachment, Topology};
use crate::engine::rng::{stream, ComponentId, Rng};
use crate::engine::stats::Tally;
use crate::engine::time::{ps_from_ns, TimePs};
use crate::scenario::{invalid, ScenarioError};

mod keys;
pub use keys::{FailureConfig, ReachMode, ReachabilityConfig, RouteChoice};

/// Timer tag of a device's reachability interval.
pub const INTERVAL: u32 = 0xF0 << 24;
/// Timer tags of a device's scripted actions: `SCRIPTED | index`.
pub const SCRIPTED: u32 = 0xF1 << 24;

/// True for the timer tags this module sets.
pub fn is_reach_tag(tag: u32) -> bool {
    tag >> 24 >= 0xF0
}

/// Something scripted to happen to a device.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Action {
    /// The cable on this port loses its signal.
    Cut(usize),
    /// The cable on this port has a signal again.
    Restore(usize),
    /// The device fails: it stops, losing what it holds.
    Fail,
    /// The failed device runs again, knowing nothing.
    Recover,
    /// The cable on this port corrupts cells with this probability.
    Errors(usize, f64),
    /// The cable on this port corrupts no more cells.
    Clean(usize),
}

/// Why a cell was lost to a failure.
#[derive(Clone, Copy, Debug)]
pub enum Loss {
    /// No usable link toward its destination.
    NoRoute,
    /// Queued for, or on the wire of, a cut cable.
    LinkCut,
    /// Held by, or sent to, a failed device.
    DeviceFailed,
    /// Corrupted on a cable with errors, discarded by the receiver.
    Errored,
}

/// What a device's reachability counted.
#[derive(Clone, Debug, Default)]
pub struct ReachCounters {
    /// Reachability cells sent.
    pub cells_sent: u64,
    /// Reachability cells received.
    pub cells_received: u64,
    /// Cells lost with no usable link toward their destination.
    pub lost_no_route: u64,
    /// Cells lost on a cut cable.
    pub lost_link_cut: u64,
    /// Cells lost at a failed device.
    pub lost_device_failed: u64,
    /// Cells corrupted on a cable with errors.
    pub lost_errored: u64,
    /// Times a link of this device was marked faulty for its errors.
    pub links_marked_faulty: u64,
    /// Reachability cells lost (sent over a cut cable or to a failed device), not counted
    /// by cause above.
    pub lost_reachability: u64,
    /// Packets whose last byte a lost cell carried.
    pub packets_lost: u64,
    /// When the device's tables changed (a link up or down, a neighbour's slice adopted).
    pub changes_ps: Vec<TimePs>,
}

impl Tally for ReachCounters {
    /// Every count but the log of table changes.
    fn counts_mut(&mut self) -> impl IntoIterator<Item = &mut u64> {
        [
            &mut self.cells_sent,
            &mut self.cells_received,
            &mut self.lost_no_route,
            &mut self.lost_link_cut,
            &mut self.lost_device_failed,
            &mut self.lost_errored,
            &mut self.links_marked_faulty,
            &mut self.lost_reachability,
            &mut self.packets_lost,
        ]
    }
}

impl ReachCounters {
    /// Cells lost to failures, every cause.
    pub fn cells_lost(&self) -> u64 {
        self.lost_no_route
            + self.lost_link_cut
            + self.lost_device_failed
            + self.lost_errored
            + self.lost_reachability
    }
}

/// A device's reachability: its tables, its script and what it counted.
pub struct DeviceReach {
    /// The tables.
    pub table: Reachability,
    addressing: Arc<Addressing>,
    interval_ps: TimePs,
    script: Vec<Action>,
    /// The device has failed and not recovered.
    pub failed: bool,
    /// Fabric links it sends messages on in a healthy fabric.
    pub links: u32,
    /// Per port: the probability that a cell arriving over it is corrupted (0: none).
    error_rates: Vec<f64>,
    /// Draws which cells the cables with errors corrupt.
    errors_rng: Rng,
    /// Where the round robin over longer candidates goes on.
    longer_next: usize,
    /// Longer routes are allowed (`reachability.routes = "non_minimal"`).
    pub non_minimal: bool,
    /// What it counted.
    pub counters: ReachCounters,
}

impl DeviceReach {
    /// True if a cell for host `dst` may take `port`.
    #[inline]
    pub fn usable(&self, port: usize, dst: u16) -> bool {
        self.table.usable(port, self.addressing.adapter_of(dst))
    }

    /// With longer candidates (`routes = "non_minimal"`): for a cell toward host `dst` that
    /// arrived on `input` and has no usable minimal candidate, the next usable up link, round
    /// robin; none for a cell that came down (going up again would break up/down routing).
    pub fn longer_route(&mut self, input: usize, dst: u16) -> Option<usize> {
        if self.table.is_up(input) {
            return None;
        }
        let adapter = self.addressing.adapter_of(dst);
        let ports = self.table.longer_candidates(adapter);
        let n = ports.len();
        let found = (0..n)
            .map(|i| ports[(self.longer_next + i) % n] as usize)
            .find(|&p| self.table.usable(p, adapter))?;
        self.longer_next = self.longer_next.wrapping_add(1);
        Some(found)
    }

    fn changed(&mut self, now_ps: TimePs) {
        self.counters.changes_ps.push(now_ps);
    }
}

/// A Stardust device that keeps reachability tables: what the shared steps below need of it.
pub trait ReachDevice {
    /// Its reachability, if the fabric runs messages.
    fn reach(&mut self) -> Option<&mut DeviceReach>;
    /// Its fabric links.
    fn fabric_ports(&self) -> usize;
    /// Queues control cell `cell` on fabric port `port` and sends if the link is free.
    fn queue_control<R: Router>(&mut self, ctx: &mut Context<'_, R>, port: usize, cell: CellId);
    /// Empties `port`'s queues (its cable is cut, or the device failed), through
    /// [`flush_port`].
    fn flush<R: Router>(&mut self, ctx: &mut Context<'_, R>, port: usize, loss: Loss);
    /// The far end of `port` no longer holds its data paused (it is gone or forgot).
    fn release<R: Router>(&mut self, ctx: &mut Context<'_, R>, port: usize);
    /// The device failed: forget what it was doing beyond its queues, losing what it held.
    fn reset<R: Router>(&mut self, ctx: &mut Context<'_, R>);
    /// Its tables changed (a link up or down, a neighbour's slice adopted).
    fn tables_changed<R: Router>(&mut self, _ctx: &mut Context<'_, R>) {}
}

/// Sets a device's first interval (at `phase_ps`, so devices do not send in step) and the
/// timers of its script, `script_ps[i]` for action `i`.
pub fn start<R: Router>(ctx: &mut Context<'_, R>, phase_ps: TimePs, script_ps: &[TimePs]) {
    ctx.set_timer(ctx.now_ps + phase_ps, INTERVAL);
    for (i, &at_ps) in script_ps.iter().enumerate() {
        ctx.set_timer(at_ps, SCRIPTED | i as u32);
    }
}

/// Empties `port` (its cable is cut, or its device failed), each cell lost to `loss`; returns
/// the data cells it held.
pub fn flush_port<R: Router>(
    ctx: &mut Context<'_, R>,
    counters: &mut ReachCounters,
    port: &mut PriorityPort,
    loss: Loss,
) -> u32 {
    let mut cells = Vec::new();
    port.drain(ctx.cells, |_, cell, data| cells.push((cell, data)));
    let mut data_cells = 0;
    for (cell, data) in cells {
        data_cells += u32::from(data);
        lose(ctx, counters, cell, loss);
    }
    data_cells
}

/// Drops `cell`, lost to a failure, with the packets whose last byte it carries.
pub fn lose<R: Router>(
    ctx: &mut Context<'_, R>,
    counters: &mut ReachCounters,
    cell: CellId,
    loss: Loss,
) {
    *match loss {
        Loss::Errored => &mut counters.lost_errored,
        _ if Kind::of(ctx.cells[cell].flags) == Kind::Reach => &mut counters.lost_reachability,
        Loss::NoRoute => &mut counters.lost_no_route,
        Loss::LinkCut => &mut counters.lost_link_cut,
        Loss::DeviceFailed => &mut counters.lost_device_failed,
    } += 1;
    counters.packets_lost += super::drop_with_packets(ctx, cell);
}

/// Handles a cell arriving on `port` if reachability has a say: a reachability cell updates
/// the tables, and a cell reaching a failed device or arriving over a cut cable is lost.
/// Returns true if the cell was taken.
pub fn arrival<D: ReachDevice, R: Router>(
    device: &mut D,
    ctx: &mut Context<'_, R>,
    port: usize,
    cell: CellId,
) -> bool {
    let Some(reach) = device.reach() else {
        return false;
    };
    let loss = if reach.failed {
        Some(Loss::DeviceFailed)
    } else if reach.table.state(port) == LinkState::Cut {
        Some(Loss::LinkCut)
    } else {
        None
    };
    if let Some(loss) = loss {
        lose(ctx, &mut reach.counters, cell, loss);
        return true;
    }
    let rate = reach.error_rates[port];
    if rate > 0.0 && reach.errors_rng.gen::<f64>() < rate {
        lose(ctx, &mut reach.counters, cell, Loss::Errored);
        if reach.table.error(port) {
            reach.counters.links_marked_faulty += 1;
            reach.changed(ctx.now_ps);
            device.tables_changed(ctx);
        }
        return true;
    }
    let c = ctx.cells[cell];
    if Kind::of(c.flags) != Kind::Reach {
        return false;
    }
    ctx.consume(cell);
    reach.counters.cells_received += 1;
    let far_faulty = c.flags & LINK_FAULTY != 0;
    if reach.table.receive(port, c.seq, reach_bits(&c), far_faulty) {
        reach.changed(ctx.now_ps);
        device.tables_changed(ctx);
    }
    true
}

/// A device's timer `tag` (one [`is_reach_tag`] says is ours) fired.
pub fn timer<D: ReachDevice, R: Router>(device: &mut D, ctx: &mut Context<'_, R>, tag: u32) {
    if tag == INTERVAL {
        interval(device, ctx);
    } else {
        act(device, ctx, (tag & !SCRIPTED) as usize);
    }
}

/// Every interval: links unheard for too long go down, and the next slice goes out on every
/// link that has a signal.
fn interval<D: ReachDevice, R: Router>(device: &mut D, ctx: &mut Context<'_, R>) {
    let Some(reach) = device.reach() else {
        return;
    };
    ctx.set_timer(ctx.now_ps + reach.interval_ps, INTERVAL);
    if reach.failed {
        return;
    }
    let mut down = Vec::new();
    let changed = reach.table.interval(|port| down.push(port));
    if changed {
        reach.changed(ctx.now_ps);
    }
    let (slice, down_bits, up_bits) = reach.table.next_message();
    for port in down {
        device.release(ctx, port);
    }
    if changed {
        device.tables_changed(ctx);
    }
    for port in 0..device.fabric_ports() {
        let reach = device.reach().expect("checked above");
        if reach.table.state(port) == LinkState::Cut {
            continue;
        }
        reach.counters.cells_sent += 1;
        let mut cell = Cell::new(0, 0, 0, true, ctx.now_ps, ctx.now_ps);
        cell.flags = Kind::Reach as u8;
        if reach.table.faulty(port) {
            cell.flags |= LINK_FAULTY;
        }
        cell.seq = slice;
        let bits = if reach.table.is_up(port) {
            up_bits
        } else {
            down_bits
        };
        set_reach_bits(&mut cell, bits);
        let id = ctx.cells.alloc(cell);
        device.queue_control(ctx, port, id);
    }
}

/// Carries out scripted action `index`.
fn act<D: ReachDevice, R: Router>(device: &mut D, ctx: &mut Context<'_, R>, index: usize) {
    let Some(reach) = device.reach() else {
        return;
    };
    match reach.script[index] {
        Action::Cut(port) => {
            let changed = reach.table.cut(port);
            if changed {
                reach.changed(ctx.now_ps);
            }
            device.flush(ctx, port, Loss::LinkCut);
            device.release(ctx, port);
            if changed {
                device.tables_changed(ctx);
            }
        }
        Action::Restore(port) => reach.table.restore(port),
        Action::Fail => {
            reach.failed = true;
            reach.table.forget();
            reach.changed(ctx.now_ps);
            for port in 0..device.fabric_ports() {
                device.flush(ctx, port, Loss::DeviceFailed);
                device.release(ctx, port);
            }
            device.reset(ctx);
        }
        Action::Recover => reach.failed = false,
        Action::Errors(port, rate) => reach.error_rates[port] = rate,
        Action::Clean(port) => reach.error_rates[port] = 0.0,
    }
}

/// A device's reachability as built: its state, when it first sends, and when each of its
/// scripted actions happens.
pub struct Planned {
    /// Its reachability.
    pub reach: DeviceReach,
    /// When it sends its first messages (devices are out of step).
    pub phase_ps: TimePs,
    /// When each action of its script happens.
    pub script_ps: Vec<TimePs>,
}

/// How a fabric's switches became devices: the edge switch of each adapter, and for each
/// switch port of an adapter the uplink it is (`u16::MAX` for host ports); an element's ports
/// are its switch's.
pub struct Devices<'a> {
    /// The topology.
    pub topology: &'a Topology,
    /// Its minimal routes.
    pub table: &'a RouteTable,
    /// Adapter `i` is switch `edges[i]`.
    pub edges: &'a [usize],
    /// Per switch and port: the adapter uplink it is.
    pub uplink_of_port: &'a [Vec<u16>],
}

impl Devices<'_> {
    fn adapter_of(&self, switch: usize) -> Option<u16> {
        self.edges
            .iter()
            .position(|&e| e == switch)
            .map(|a| a as u16)
    }

    /// The device port of switch port `(switch, port)`, if it is a fabric link.
    fn device_port(&self, switch: usize, port: usize) -> Option<usize> {
        match self.topology.peer(switch, port) {
            Some(Attachment::SwitchPort { .. }) if self.adapter_of(switch).is_some() => {
                Some(self.uplink_of_port[switch][port] as usize)
            }
            Some(Attachment::SwitchPort { .. }) => Some(port),
            _ => None,
        }
    }
}

/// Every switch's reachability (`None` for all with static tables), converged at the start,
/// with the scenario's failures scripted on the devices they touch.
pub fn plan(
    r: &ReachabilityConfig,
    failures: &[FailureConfig],
    seed: u64,
    devices: &Devices<'_>,
    addressing: &Arc<Addressing>,
) -> Result<Vec<Option<Planned>>, ScenarioError> {
    let switches = devices.topology.switches();
    if r.mode == ReachMode::Static {
        return Ok((0..switches).map(|_| None).collect());
    }
    let levels = (r.routes == RouteChoice::NonMinimal).then(|| levels(devices));
    let mut planned: Vec<Planned> = (0..switches)
        .map(|s| device_plan(r, seed, devices, addressing, s, levels.as_deref()))
        .collect();
    script_failures(failures, devices, &mut planned)?;
    Ok(planned.into_iter().map(Some).collect())
}

/// Every switch's level: 0 for an adapter, else one more than its lowest neighbour's (a
/// first-tier element 1, the spine 2).
fn levels(devices: &Devices<'_>) -> Vec<u32> {
    let topology = devices.topology;
    let mut level = vec![u32::MAX; topology.switches()];
    let mut frontier: Vec<usize> = devices.edges.to_vec();
    for &e in &frontier {
        level[e] = 0;
    }
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for s in frontier {
            for p in 0..topology.switch_ports(s) {
                if let Some(Attachment::SwitchPort { switch, .. }) = topology.peer(s, p) {
                    if level[switch] == u32::MAX {
                        level[switch] = level[s] + 1;
                        next.push(switch);
                    }
                }
            }
        }
        frontier = next;
    }
    level
}

/// An element's longer candidates (`routes = "non_minimal"`): toward each adapter whose
/// minimal candidates all lead down, its up links; and which of its ports lead up.
fn longer_candidates(
    devices: &Devices<'_>,
    levels: &[u32],
    s: usize,
    minimal: &[Vec<u16>],
) -> (Vec<Vec<u16>>, Vec<bool>) {
    let topology = devices.topology;
    let up: Vec<bool> = (0..topology.switch_ports(s))
        .map(|p| match topology.peer(s, p) {
            Some(Attachment::SwitchPort { switch, .. }) => levels[switch] > levels[s],
            _ => false,
        })
        .collect();
    let up_ports: Vec<u16> = (0..up.len() as u16).filter(|&p| up[p as usize]).collect();
    let longer = minimal
        .iter()
        .map(|ports| {
            let all_down = !ports.is_empty() && ports.iter().all(|&p| !up[p as usize]);
            if all_down {
                up_ports.clone()
            } else {
                Vec::new()
            }
        })
        .collect();
    (longer, up)
}

/// Switch `s`'s reachability, converged: every fabric link assumed to carry its peer's
/// healthy advertisement; with `levels`, an element's longer candidates too.
fn device_plan(
    r: &ReachabilityConfig,
    seed: u64,
    devices: &Devices<'_>,
    addressing: &Arc<Addressing>,
    s: usize,
    levels: Option<&[u32]>,
) -> Planned {
    let interval_ps = ps_from_ns(r.interval_ns);
    let (table, ports) = converged_table(r, devices, s, levels);
    let id = ComponentId {
        kind: stream_kind::STARDUST_REACH,
        index: s as u32,
    };
    let links = (0..ports)
        .filter(|&q| table.state(q) != LinkState::Cut)
        .count() as u32;
    Planned {
        reach: DeviceReach {
            table,
            addressing: addressing.clone(),
            interval_ps,
            script: Vec::new(),
            failed: false,
            links,
            error_rates: vec![0.0; ports],
            errors_rng: stream(
                seed,
                ComponentId {
                    kind: stream_kind::STARDUST_LINK_ERRORS,
                    index: s as u32,
                },
            ),
            longer_next: 0,
            non_minimal: r.routes == RouteChoice::NonMinimal,
            counters: ReachCounters::default(),
        },
        phase_ps: stream(seed, id).gen_range(0..interval_ps.max(1)),
        script_ps: Vec::new(),
    }
}

/// Switch `s`'s table as the reachability messages leave it once they have converged, and its
/// number of ports: an adapter's uplinks, or all of an element's ports.
fn converged_table(
    r: &ReachabilityConfig,
    devices: &Devices<'_>,
    s: usize,
    levels: Option<&[u32]>,
) -> (Reachability, usize) {
    let topology = devices.topology;
    let me = devices.adapter_of(s);
    let candidates: Vec<Vec<u16>> = (0..devices.edges.len())
        .map(|x| match me {
            Some(_) => Vec::new(),
            None => {
                let set = devices.table.toward_switch(s, devices.edges[x]);
                devices.table.ports(set).to_vec()
            }
        })
        .collect();
    let ports = match me {
        Some(_) => devices.uplink_of_port[s]
            .iter()
            .filter(|&&u| u != u16::MAX)
            .count(),
        None => topology.switch_ports(s),
    };
    let mut table = Reachability::new(
        ports,
        devices.edges.len(),
        r.slice_adapters,
        r.threshold,
        me,
        &candidates,
    );
    table.set_fault_thresholds(r.faulty_errors, r.valid_after_cells);
    if let (Some(levels), None) = (levels, me) {
        let (longer, up) = longer_candidates(devices, levels, s, &candidates);
        table.set_longer(&longer, up);
    }
    for p in 0..topology.switch_ports(s) {
        match (devices.device_port(s, p), topology.peer(s, p)) {
            (Some(q), Some(Attachment::SwitchPort { switch, .. })) => {
                let peer = converged_bitmap(devices.adapter_of(switch), &table);
                table.assume(q, &peer);
            }
            // An element port with nothing on it hears nothing and is never routed to.
            (None, _) if me.is_none() => {
                table.cut(p);
            }
            _ => {}
        }
    }
    (table, ports)
}

/// Scripts each failure (and its repair) on the devices it touches: a failed element, or both
/// ends of a cut cable.
fn script_failures(
    failures: &[FailureConfig],
    devices: &Devices<'_>,
    planned: &mut [Planned],
) -> Result<(), ScenarioError> {
    let switches = devices.topology.switches();
    let topology = devices.topology;
    let mut script = |s: usize, at_ps: TimePs, action: Action| {
        planned[s].reach.script.push(action);
        planned[s].script_ps.push(at_ps);
    };
    for (i, f) in failures.iter().enumerate() {
        let s = f.switch as usize;
        if s >= switches {
            return Err(invalid(
                &format!("failures[{i}].switch"),
                format!("expected a switch below {switches}, got {s}"),
            ));
        }
        let (at_ps, restore_ps) = (ps_from_ns(f.at_ns), f.restore_ns.map(ps_from_ns));
        let Some(port) = f.port else {
            if devices.adapter_of(s).is_some() && restore_ps.is_some() {
                return Err(invalid(
                    &format!("failures[{i}].restore_ns"),
                    format!("switch {s} is a fabric adapter, and a failed adapter does not recover in this model (its peers' reassembly would wait on its old streams); drop restore_ns"),
                ));
            }
            script(s, at_ps, Action::Fail);
            if let Some(restore_ps) = restore_ps {
                script(s, restore_ps, Action::Recover);
            }
            continue;
        };
        let p = port as usize;
        let ports = topology.switch_ports(s);
        let far = match (p < ports).then(|| topology.peer(s, p)).flatten() {
            Some(Attachment::SwitchPort { switch, port }) => Ok((switch, port)),
            _ if p >= ports => Err(format!(
                "expected a port below {ports} (switch {s}'s ports), got {p}"
            )),
            _ => Err(format!(
                "port {p} of switch {s} is not a link to another switch; only fabric links can be cut"
            )),
        }
        .map_err(|message| invalid(&format!("failures[{i}].port"), message))?;
        for (switch, port) in [(s, p), far] {
            let q = devices.device_port(switch, port).expect("a fabric link");
            let (fail, repair) = match f.cell_error_rate {
                Some(rate) => (Action::Errors(q, rate), Action::Clean(q)),
                None => (Action::Cut(q), Action::Restore(q)),
            };
            script(switch, at_ps, fail);
            if let Some(restore_ps) = restore_ps {
                script(switch, restore_ps, repair);
            }
        }
    }
    Ok(())
}

/// What a device advertises in a healthy fabric: an adapter itself, an element every adapter
/// (every adapter is reachable, or the routing tables would not have built).
fn converged_bitmap(adapter: Option<u16>, like: &Reachability) -> Vec<Slice> {
    like.bitmap_with(|x| adapter.is_none_or(|a| a == x))
}

/// What reachability adds to a run's summary.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ReachSummary {
    /// Cells lost to failures: at a device with no usable link toward their destination.
    pub cells_lost_no_route: u64,
    /// Cells lost to failures: queued for, or on the wire of, a cut cable.
    pub cells_lost_link_cut: u64,
    /// Cells lost to failures: held by, or sent to, a failed element.
    pub cells_lost_device_failed: u64,
    /// Cells lost to failures: corrupted on a cable with errors (reachability cells
    /// included, unlike the causes above).
    pub cells_lost_errored: u64,
    /// Times a device marked one of its links faulty for its errors (§5.10).
    pub links_marked_faulty: u64,
    /// Reachability cells (reachability kept by messages).
    pub reachability_cells: u64,
    /// Reachability cells lost over cut cables and to failed elements (devices keep sending
    /// on a link that is down, to notice it coming back).
    pub reachability_cells_lost: u64,
    /// Reachability bytes as a fraction of what the fabric links carrying them could carry
    /// at `link.rate_gbps` over the run (App. E: 0.04% at 50 Gbit/s).
    pub reachability_overhead: f64,
    /// Changes of devices' reachability tables (links up or down, slices adopted).
    pub table_changes: u64,
    /// From the first scripted failure to the last change of an adapter's table before the
    /// next scripted event: the time until every source stopped using the failed part
    /// (App. E: at most 630-652 µs); absent without failures.
    pub reroute_us: Option<f64>,
}

/// Every change of a device's reachability table.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ChangeTable {
    /// When.
    pub time_us: Vec<f64>,
    /// The device's switch in the topology.
    pub switch: Vec<u32>,
    /// `adapter` or `element`.
    pub kind: Vec<&'static str>,
}

/// Every scripted event and how the tables followed it.
#[derive(Clone, Debug, Default, Serialize)]
pub struct EventTable {
    /// When.
    pub at_us: Vec<f64>,
    /// What happened.
    pub event: Vec<String>,
    /// From the event to the last change of an adapter's table before the next event.
    pub adapters_settled_us: Vec<Option<f64>>,
    /// From the event to the last change of any device's table before the next event.
    pub all_settled_us: Vec<Option<f64>>,
    /// From the event until every source adapter whose tables changed before the next event
    /// had a data cell sent after its last such change (on its new routes) delivered (left
    /// out of a run without failures, whose table is empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rerouted_delivery_us: Vec<Option<f64>>,
}

/// One device's reachability, for the report.
pub struct DeviceReport<'a> {
    /// Its switch in the topology.
    pub switch: u32,
    /// True for an adapter.
    pub adapter: bool,
    /// Its reachability.
    pub reach: &'a DeviceReach,
}

/// Sums what the devices counted: the summary's fields, the change log and the events.
pub fn report(
    devices: &[DeviceReport<'_>],
    failures: &[FailureConfig],
    control_bytes: u32,
    link_bps: u64,
    sim_ps: TimePs,
) -> (ReachSummary, ReachCounters, ChangeTable, EventTable) {
    let mut all = ReachCounters::default();
    let mut changes: Vec<(TimePs, u32, bool)> = Vec::new();
    let mut links = 0u64;
    for d in devices {
        let c = &d.reach.counters;
        all.add(c);
        links += d.reach.links as u64;
        changes.extend(c.changes_ps.iter().map(|&at| (at, d.switch, d.adapter)));
    }
    changes.sort_unstable();
    let events = scripted_events(failures);
    let mut table = EventTable::default();
    for (i, (at_ps, what)) in events.iter().enumerate() {
        let until_ps = events.get(i + 1).map_or(TimePs::MAX, |e| e.0);
        let window = changes.iter().filter(|c| (*at_ps..until_ps).contains(&c.0));
        let settled = |adapters_only: bool| {
            window
                .clone()
                .filter(|c| c.2 || !adapters_only)
                .map(|c| (c.0 - at_ps) as f64 / 1e6)
                .next_back()
        };
        table.at_us.push(*at_ps as f64 / 1e6);
        table.event.push(what.clone());
        table.adapters_settled_us.push(settled(true));
        table.all_settled_us.push(settled(false));
    }
    let capacity_bytes = links as f64 * link_bps as f64 / 8.0 * sim_ps as f64 * 1e-12;
    let summary = ReachSummary {
        cells_lost_no_route: all.lost_no_route,
        cells_lost_link_cut: all.lost_link_cut,
        cells_lost_device_failed: all.lost_device_failed,
        cells_lost_errored: all.lost_errored,
        links_marked_faulty: all.links_marked_faulty,
        reachability_cells: all.cells_sent,
        reachability_cells_lost: all.lost_reachability,
        reachability_overhead: all.cells_sent as f64 * control_bytes as f64
            / capacity_bytes.max(1.0),
        table_changes: changes.len() as u64,
        reroute_us: table.adapters_settled_us.first().copied().flatten(),
    };
    let log = ChangeTable {
        time_us: changes.iter().map(|c| c.0 as f64 / 1e6).collect(),
        switch: changes.iter().map(|c| c.1).collect(),
        kind: changes
            .iter()
            .map(|c| if c.2 { "adapter" } else { "element" })
            .collect(),
    };
    (summary, all, log, table)
}

/// Every scripted failure and repair, in time order, named for the report.
fn scripted_events(failures: &[FailureConfig]) -> Vec<(TimePs, String)> {
    let mut events: Vec<(TimePs, String)> = Vec::new();
    for f in failures {
        let (what, back) = match (f.port, f.cell_error_rate) {
            (Some(port), Some(rate)) => (
                format!(
                    "errors on switch {} port {port} (cell error rate {rate})",
                    f.switch
                ),
                format!("no errors on switch {} port {port}", f.switch),
            ),
            (Some(port), None) => (
                format!("cut switch {} port {port}", f.switch),
                format!("restore switch {} port {port}", f.switch),
            ),
            (None, _) => (
                format!("fail switch {}", f.switch),
                format!("recover switch {}", f.switch),
            ),
        };
        events.push((ps_from_ns(f.at_ns), what));
        if let Some(restore_ns) = f.restore_ns {
            events.push((ps_from_ns(restore_ns), back));
        }
    }
    events.sort();
    events
}
