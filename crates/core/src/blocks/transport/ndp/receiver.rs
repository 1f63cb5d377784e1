//! NDP's receiving end (Handley et al. 2017 §3.2): it ACKs every data packet and NACKs every
//! trimmed header at once, and for each of them owes its sender one PULL, which the host's
//! [`PullPacer`] releases across all its incoming flows at the rate that makes the pulled
//! packets arrive at its link rate ("the receiver ... paces PULLs"; htsim's `NdpPullPacer`).
//! Pull numbers are cumulative per flow, so a lost PULL is made up by the next one (htsim's
//! `pull_packets`). [`NdpReceiver`] is the pacer and its one pending wake-up; the host carries
//! the packets it decides.

use std::collections::VecDeque;

use crate::engine::time::TimePs;

/// What the receiver answers an arriving data packet or trimmed header with, at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// An ACK of that packet (it arrived whole).
    Ack,
    /// A NACK of that packet (it arrived trimmed: resend it).
    Nack,
}

/// A host's NDP receiving end: its pull pacer, and when the pacer's pending wake-up fires.
#[derive(Clone, Debug)]
pub struct NdpReceiver {
    pacer: PullPacer,
    /// When the pacer's pending wake-up fires, or `None`.
    wake_ps: Option<TimePs>,
}

impl NdpReceiver {
    /// A receiving end whose pacer releases one PULL per `pull_interval_ps`.
    pub fn new(pull_interval_ps: TimePs) -> Self {
        NdpReceiver {
            pacer: PullPacer::new(pull_interval_ps),
            wake_ps: None,
        }
    }

    /// Adds an incoming flow (its index follows the host's receive sides).
    pub fn add_flow(&mut self) {
        self.pacer.add_flow();
    }

    /// Incoming flow `flow`'s slot now holds a new flow.
    pub fn reset_flow(&mut self, flow: u32) {
        self.pacer.reset_flow(flow);
    }

    /// A data packet (`trimmed`: a header) of incoming flow `flow` arrived; `done` once the
    /// flow has every byte. Returns the answer, and owes the flow a pull (none once done).
    pub fn on_packet(&mut self, flow: u32, trimmed: bool, done: bool) -> Answer {
        if done {
            self.pacer.release(flow);
        } else {
            self.pacer.request(flow);
        }
        if trimmed {
            Answer::Nack
        } else {
            Answer::Ack
        }
    }

    /// The PULL the pacer releases at `now_ps`, if any: (flow, its pull number); and the time
    /// of a new wake-up to book, if the pacer needs one it does not have.
    pub fn pace(&mut self, now_ps: TimePs) -> (Option<(u32, u32)>, Option<TimePs>) {
        let pull = self.pacer.take(now_ps);
        let wake = self
            .pacer
            .next_due_ps()
            .filter(|&due_ps| due_ps > now_ps && self.wake_ps != Some(due_ps));
        if wake.is_some() {
            self.wake_ps = wake;
        }
        (pull, wake)
    }

    /// The pending wake-up fired.
    pub fn woken(&mut self) {
        self.wake_ps = None;
    }
}

/// A host's pull pacer: the PULLs its receivers owe, released one per `interval_ps` (the time
/// its link takes to receive one data packet, so pulled data arrives at the link's rate),
/// round robin over the flows that are owed pulls.
#[derive(Clone, Debug)]
pub struct PullPacer {
    interval_ps: TimePs,
    /// The next PULL may go from this time on.
    next_ps: TimePs,
    /// Per incoming flow: pulls owed.
    owed: Vec<u32>,
    /// Per incoming flow: pulls released so far (the last pull number).
    pulled: Vec<u32>,
    /// Flows owed pulls, in turn (a released flow may linger with none owed).
    turns: VecDeque<u32>,
}

impl PullPacer {
    /// A pacer releasing one PULL per `interval_ps`.
    pub fn new(interval_ps: TimePs) -> Self {
        PullPacer {
            interval_ps,
            next_ps: 0,
            owed: Vec::new(),
            pulled: Vec::new(),
            turns: VecDeque::new(),
        }
    }

    /// Adds an incoming flow; returns its index.
    pub fn add_flow(&mut self) -> u32 {
        self.owed.push(0);
        self.pulled.push(0);
        self.turns.reserve(1);
        self.owed.len() as u32 - 1
    }

    /// Flow `flow` is owed one more pull (a data packet or header arrived).
    pub fn request(&mut self, flow: u32) {
        let owed = &mut self.owed[flow as usize];
        *owed += 1;
        if *owed == 1 {
            self.turns.push_back(flow);
        }
    }

    /// Incoming flow `flow`'s slot now holds a new flow: no pulls owed, its pull numbers from 0.
    pub fn reset_flow(&mut self, flow: u32) {
        self.owed[flow as usize] = 0;
        self.pulled[flow as usize] = 0;
    }

    /// Flow `flow` has everything: the pulls it is owed are dropped (htsim's `release_pulls`).
    pub fn release(&mut self, flow: u32) {
        self.owed[flow as usize] = 0;
    }

    /// When the next PULL may go, if one is owed.
    pub fn next_due_ps(&self) -> Option<TimePs> {
        (!self.turns.is_empty()).then_some(self.next_ps)
    }

    /// The PULL to send at `now_ps`, if one is owed and the pacer's interval has passed since
    /// the last: (flow, its pull number).
    pub fn take(&mut self, now_ps: TimePs) -> Option<(u32, u32)> {
        if now_ps < self.next_ps {
            return None;
        }
        while let Some(flow) = self.turns.pop_front() {
            let f = flow as usize;
            if self.owed[f] == 0 {
                continue; // released
            }
            self.owed[f] -= 1;
            self.pulled[f] += 1;
            if self.owed[f] > 0 {
                self.turns.push_back(flow);
            }
            self.next_ps = now_ps + self.interval_ps;
            return Some((flow, self.pulled[f]));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drives `p` as a host drives its pacer: each arrival owes its flow a pull and offers the
    /// pacer that moment, and the pacer's wake-up at [`PullPacer::next_due_ps`] offers it the
    /// next. Returns the PULLs released, with their times.
    fn pulls_for(p: &mut PullPacer, arrivals: &[(TimePs, u32)]) -> Vec<(TimePs, (u32, u32))> {
        let mut pulls = Vec::new();
        let mut arrivals = arrivals.iter().copied().peekable();
        let mut wake_ps = None;
        loop {
            let now_ps = match (arrivals.peek().copied(), wake_ps) {
                (Some((at_ps, _)), Some(w_ps)) if w_ps < at_ps => w_ps,
                (Some((at_ps, flow)), _) => {
                    arrivals.next();
                    p.request(flow);
                    at_ps
                }
                (None, Some(w_ps)) => w_ps,
                (None, None) => return pulls,
            };
            if let Some(pull) = p.take(now_ps) {
                pulls.push((now_ps, pull));
            }
            wake_ps = p.next_due_ps().filter(|&due_ps| due_ps > now_ps);
        }
    }

    /// NDP §3.2: the receiver paces PULLs, one per data packet time of its link (9000 B at
    /// 10 Gbit/s: 7.2 µs) over all its incoming flows, however fast the packets that owe them
    /// arrive. A data packet then five trimmed headers back to back (51.2 ns apart) get six
    /// PULLs 7.2 µs apart, from the first arrival on, the flows in turn; after an idle spell a
    /// burst's first PULL goes at its first arrival (no credit saved up while idle), and an
    /// arrival half a packet time after a PULL waits for the rest of the interval.
    #[test]
    fn a_burst_of_arrivals_is_pulled_one_packet_time_apart() {
        const PACKET_PS: TimePs = 7_200_000;
        const HEADER_PS: TimePs = 51_200;
        let mut p = PullPacer::new(PACKET_PS);
        let (a, b, c) = (p.add_flow(), p.add_flow(), p.add_flow());
        let t0 = 100_000_000;
        let t1 = t0 + 20 * PACKET_PS;
        let burst = |t: TimePs, flows: &[u32]| -> Vec<(TimePs, u32)> {
            (t..)
                .step_by(HEADER_PS as usize)
                .zip(flows.iter().copied())
                .collect()
        };
        let mut arrivals = burst(t0, &[a, b, c, a, b, a]);
        arrivals.extend(burst(t1, &[c, a, b]));
        arrivals.push((t1 + 2 * PACKET_PS + PACKET_PS / 2, c));
        let at = |t: TimePs, k: TimePs| t + k * PACKET_PS;
        assert_eq!(
            pulls_for(&mut p, &arrivals),
            vec![
                (at(t0, 0), (a, 1)),
                (at(t0, 1), (b, 1)),
                (at(t0, 2), (c, 1)),
                (at(t0, 3), (a, 2)),
                (at(t0, 4), (b, 2)),
                (at(t0, 5), (a, 3)),
                (at(t1, 0), (c, 2)),
                (at(t1, 1), (a, 4)),
                (at(t1, 2), (b, 3)),
                (at(t1, 3), (c, 3)),
            ],
            "(time, (flow, pull number)) of each PULL, one per {PACKET_PS} ps"
        );
    }

    #[test]
    fn the_pacer_releases_one_pull_per_packet_time_round_robin() {
        let interval_ps = 7_200_000; // 9000 B at 10 Gbit/s
        let mut p = PullPacer::new(interval_ps);
        let (a, b) = (p.add_flow(), p.add_flow());
        for _ in 0..3 {
            p.request(a);
        }
        p.request(b);
        let mut now_ps = 0;
        let mut got = Vec::new();
        while let Some(due_ps) = p.next_due_ps() {
            now_ps = now_ps.max(due_ps);
            if now_ps > 0 {
                assert_eq!(p.take(now_ps - 1), None, "not before its time");
            }
            got.push((now_ps, p.take(now_ps).unwrap()));
        }
        assert_eq!(
            got,
            vec![
                (0, (a, 1)),
                (interval_ps, (b, 1)),
                (2 * interval_ps, (a, 2)),
                (3 * interval_ps, (a, 3)),
            ]
        );
        // Idle for a while: the next request goes at once.
        p.request(b);
        assert_eq!(p.take(10 * interval_ps), Some((b, 2)));
        p.request(a);
        p.release(a);
        assert_eq!(
            p.take(20 * interval_ps),
            None,
            "a finished flow's pulls are dropped"
        );
    }

    /// The receiving end answers a whole packet with an ACK and a header with a NACK, owes a
    /// pull for each until the flow is done, and books one wake-up per due time.
    #[test]
    fn the_receiver_answers_at_once_and_books_one_wake_up_per_due_pull() {
        let mut r = NdpReceiver::new(1_000);
        r.add_flow();
        assert_eq!(r.on_packet(0, false, false), Answer::Ack);
        assert_eq!(r.on_packet(0, true, false), Answer::Nack);
        assert_eq!(r.pace(0), (Some((0, 1)), Some(1_000)));
        assert_eq!(r.pace(500), (None, None), "the wake-up at 1 000 is booked");
        r.woken();
        assert_eq!(r.pace(1_000), (Some((0, 2)), None), "nothing more owed");
        assert_eq!(r.on_packet(0, false, true), Answer::Ack);
        assert_eq!(r.pace(5_000), (None, None), "a done flow is owed nothing");
    }
}
