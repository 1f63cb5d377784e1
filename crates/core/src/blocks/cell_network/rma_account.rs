//! The account and summary of the 1RMA reads of a GNet fabric's hosts (Gibson et al.,
//! "Aquila: A unified, low-latency fabric for datacenter networks", NSDI '22, §3.4): Req and
//! Resp flits each settle injected = delivered + in flight (in the GNet account), and the Resp
//! cells the reads asked for settle asked = received + still to come, each term counted where
//! the read is: its Req waiting at the client, part-sent or on its way; its completions owed
//! by the server; its Resps part-sent or on their way.

use serde::Serialize;

use crate::blocks::gnet::endpoint::FlitLedger;
use crate::blocks::gnet::host::GnetHost;
use crate::blocks::gnet::wire::CellKind;
use crate::engine::stats::{LatencyHistogram, Percentiles};
use crate::engine::time::PS_PER_NS;
use crate::run::{Ledger, RunError};

/// The Req and Resp flits of the run.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct RmaFlits {
    /// Req flits sent.
    pub rma_req_flits_injected: u64,
    /// Req flits received.
    pub rma_req_flits_delivered: u64,
    /// Req flits in the fabric at the end.
    pub rma_req_flits_in_flight: u64,
    /// Resp flits sent.
    pub rma_resp_flits_injected: u64,
    /// Resp flits received.
    pub rma_resp_flits_delivered: u64,
    /// Resp flits in the fabric at the end.
    pub rma_resp_flits_in_flight: u64,
}

/// What the hosts' 1RMA reads measured and counted.
#[derive(Clone, Debug, Serialize)]
pub struct RmaSummary {
    /// Read latency, from the command to the last Resp's arrival plus the host's PCIe and
    /// software term (`rma.host_latency_ns`), in nanoseconds, of the reads commanded during
    /// measurement and complete by the end.
    pub rma_read_latency_ns: Percentiles,
    /// Mean wait of a Req at its client before it left, in nanoseconds (inside the latency).
    pub rma_req_wait_mean_ns: f64,
    /// Reads commanded over the whole run.
    pub rma_reads_issued: u64,
    /// Reads complete (their last Resp arrived).
    pub rma_reads_completed: u64,
    /// Reads outstanding at the end.
    pub rma_reads_outstanding: u64,
    /// Resp cells received.
    pub rma_resp_cells_received: u64,
    /// The flits.
    #[serde(flatten)]
    pub flits: RmaFlits,
}

/// Per ledger: flits sent, received and in flight.
type FlitTotals = ([u64; 4], [u64; 4], [u64; 4]);

/// Settles the reads of `hosts`: the Resp cells asked for against those received and those
/// still to come, counted where they are (`tails_in_flight`: the Req and the Resp tail flits
/// alive in the fabric; `flits`: the flit totals by ledger, already settled). Fails naming
/// the counts.
pub fn settle(
    hosts: &[&GnetHost],
    (injected, delivered, in_flight): FlitTotals,
    (req_tails_in_flight, resp_tails_in_flight): (u64, u64),
) -> Result<RmaFlits, RunError> {
    let (mut asked, mut received) = (0u64, 0u64);
    let mut reqs_on_the_way = req_tails_in_flight;
    let mut resps_to_come = resp_tails_in_flight;
    for host in hosts {
        let rma = host.endpoint.rma.as_ref().expect("every host makes reads");
        let per_read = host
            .endpoint
            .spec()
            .rma
            .expect("an RMA spec")
            .resps_per_read();
        asked += rma.client.counts.issued * per_read as u64;
        received += rma.client.counts.resps_received;
        reqs_on_the_way += host.endpoint.reqs_waiting() as u64 + host.part_sent(CellKind::Req);
        resps_to_come += rma.server.resps_owed() + host.part_sent(CellKind::Resp);
    }
    let per_read = hosts
        .first()
        .and_then(|h| h.endpoint.spec().rma)
        .map_or(0, |r| r.resps_per_read() as u64);
    let (req, resp) = (FlitLedger::Req as usize, FlitLedger::Resp as usize);
    let flits = RmaFlits {
        rma_req_flits_injected: injected[req],
        rma_req_flits_delivered: delivered[req],
        rma_req_flits_in_flight: in_flight[req],
        rma_resp_flits_injected: injected[resp],
        rma_resp_flits_delivered: delivered[resp],
        rma_resp_flits_in_flight: in_flight[resp],
    };
    Ledger {
        injected: asked,
        delivered: received,
        dropped: 0,
        in_flight: reqs_on_the_way * per_read + resps_to_come,
    }
    .check(true)?;
    Ok(flits)
}

/// The summary of the reads of `hosts`, their account settled.
pub fn summary(hosts: &[&GnetHost], flits: RmaFlits) -> RmaSummary {
    let mut latency = LatencyHistogram::new();
    let (mut issued, mut completed, mut outstanding, mut received) = (0, 0, 0, 0);
    let (mut reqs, mut wait_ps) = (0u64, 0u64);
    for host in hosts {
        let client = &host.endpoint.rma.as_ref().expect("reads").client;
        latency.add(&client.latency);
        issued += client.counts.issued;
        completed += client.counts.completed;
        outstanding += client.outstanding();
        received += client.counts.resps_received;
        reqs += client.counts.reqs_sent_measured;
        wait_ps += client.counts.req_wait_ps_sum;
    }
    RmaSummary {
        rma_read_latency_ns: latency.percentiles().scaled(PS_PER_NS as f64),
        rma_req_wait_mean_ns: wait_ps as f64 / PS_PER_NS as f64 / (reqs as f64).max(1.0),
        rma_reads_issued: issued,
        rma_reads_completed: completed,
        rma_reads_outstanding: outstanding,
        rma_resp_cells_received: received,
        flits,
    }
}
