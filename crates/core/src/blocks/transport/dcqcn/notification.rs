//! DCQCN's notification point (Zhu et al., "Congestion Control for Large-Scale RDMA
//! Deployments", SIGCOMM 2015, §3.2): the receiver of a flow answers a data packet marked CE
//! with a congestion notification packet (CNP) to its sender, at most one per flow per
//! interval N (50 µs); marked packets within the interval send none.

use crate::engine::time::TimePs;

/// A host's notification point: per incoming flow, the earliest its next CNP may go.
#[derive(Clone, Debug)]
pub struct NotificationPoint {
    /// N: one CNP per flow per this interval at most.
    interval_ps: TimePs,
    /// Per incoming flow (indexed as the host's receive sides): the earliest next CNP.
    next_cnp_ps: Vec<TimePs>,
}

impl NotificationPoint {
    /// A notification point sending each flow at most one CNP per `interval_ps`.
    pub fn new(interval_ps: TimePs) -> Self {
        NotificationPoint {
            interval_ps,
            next_cnp_ps: Vec::new(),
        }
    }

    /// Adds an incoming flow (its index follows the host's receive sides).
    pub fn add_flow(&mut self) {
        self.next_cnp_ps.push(0);
    }

    /// Incoming flow `flow`'s slot now holds a new flow (a new queue pair): no CNP sent yet.
    pub fn reset_flow(&mut self, flow: usize) {
        self.next_cnp_ps[flow] = 0;
    }

    /// A data packet of incoming flow `flow` arrived at `now_ps`, marked CE if `marked`: true
    /// if a CNP goes back to its sender now.
    pub fn on_data(&mut self, flow: usize, marked: bool, now_ps: TimePs) -> bool {
        let next_ps = &mut self.next_cnp_ps[flow];
        if !marked || now_ps < *next_ps {
            return false;
        }
        *next_ps = now_ps + self.interval_ps;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// DCQCN §3.2: a marked packet sends a CNP unless one went to that flow less than N ago;
    /// unmarked packets never do; flows are timed apart.
    #[test]
    fn at_most_one_cnp_per_flow_per_interval() {
        let mut np = NotificationPoint::new(50_000);
        np.add_flow();
        np.add_flow();
        assert!(!np.on_data(0, false, 0), "unmarked");
        assert!(np.on_data(0, true, 10));
        assert!(!np.on_data(0, true, 50_009), "within N of the last CNP");
        assert!(np.on_data(1, true, 20), "another flow's own interval");
        assert!(np.on_data(0, true, 50_010), "N after the last CNP");
    }
}
