//! The solicitation endpoint: receiver-driven admission between the queues of an ingress device
//! and the ports of an egress device. A queue with data asks the destination port's scheduler
//! ([`Asker`]); the scheduler grants in turn among the queues that asked, paced at a rate and
//! stopped while its own buffer is full ([`GrantScheduler`]); a grant that arrives joins the
//! ingress device's grant FIFOs, served in arrival order within a priority ([`Grants`]).
//!
//! Stardust (Zilberman, Bracha and Schzukin, "Stardust: Divide and Conquer in the Data Center
//! Network", NSDI '19, §3.3 and §4.1) is the first user: a VOQ's request is either on/off (it
//! stays in the scheduler's round robin until it says it has nothing left, [`GrantScheduler::hear`])
//! or a count (the credits its backlog needs, [`GrantScheduler::hear_count`]: it leaves the round
//! robin once given them), a grant is a credit of a fixed number of bytes, credits are paced at
//! the port rate × (1 + speed-up) and stop while the egress queue is above a threshold. Aquila
//! (Gibson et al., "Aquila: A unified, low-latency fabric for datacenter networks", NSDI '22,
//! §3.3) solicits the same way with RTS ↔ CTS: its RTS queues are the scheduler's classes
//! (CoS × port), its CTS the grant, one grant per RTS a count request, and its
//! reassembly-space check the stop; what it adds (CTD when an RTS queue is too deep, ECN from
//! RTS-queue depth) is not built here.

use std::collections::VecDeque;

use crate::engine::time::TimePs;

/// The asking side of one ingress queue.
#[derive(Clone, Copy, Debug, Default)]
pub struct Asker {
    /// Requests sent so far: each carries its number, so the scheduler can ignore one that a
    /// later request overtook in the fabric.
    requests: u32,
    /// The scheduler was told the queue has data (and not yet that it has none).
    pub active: bool,
    /// When it last asked or received a grant.
    pub waited_from_ps: TimePs,
    /// A refresh timer is set.
    pub refresh_armed: bool,
}

impl Asker {
    /// Numbers the next request.
    pub fn next_request(&mut self) -> u32 {
        self.requests = self.requests.wrapping_add(1);
        self.requests
    }
}

/// Grants that reached an ingress device, waiting for it to send: first in, first out within
/// a priority, priorities strictly in order (Stardust §3.3: "by the order of credit arrival and
/// a priority"). Counts grants received and spent, so the grants waiting can be checked
/// against them.
#[derive(Clone, Debug)]
pub struct Grants {
    fifos: Vec<VecDeque<u32>>,
    received: u64,
    spent: u64,
}

impl Grants {
    /// No grants yet, in `priorities` FIFOs.
    pub fn new(priorities: usize) -> Self {
        Grants {
            fifos: vec![VecDeque::new(); priorities.max(1)],
            received: 0,
            spent: 0,
        }
    }

    /// A grant for queue `key` arrived, at priority `priority`.
    pub fn push(&mut self, key: u32, priority: usize) {
        self.fifos[priority].push_back(key);
        self.received += 1;
        self.debug_check();
    }

    /// The queue the next grant is for, taking the grant.
    pub fn pop(&mut self) -> Option<u32> {
        let key = self.fifos.iter_mut().find_map(VecDeque::pop_front)?;
        self.spent += 1;
        self.debug_check();
        Some(key)
    }

    /// Grants waiting.
    pub fn waiting(&self) -> usize {
        self.fifos.iter().map(VecDeque::len).sum()
    }

    /// Debug builds: no grant spent that was not received, and the grants waiting are exactly
    /// those received and not spent.
    pub fn debug_check(&self) {
        debug_assert!(
            self.spent <= self.received,
            "more grants spent than received"
        );
        debug_assert_eq!(
            self.waiting() as u64,
            self.received - self.spent,
            "grants waiting against grants received minus spent"
        );
    }

    /// Test only: forgets a grant without spending it.
    #[cfg(test)]
    pub(crate) fn lose_one(&mut self) {
        self.fifos.iter_mut().find_map(VecDeque::pop_front);
    }
}

/// One egress port's grant scheduler: per class, the requesters that asked, in round-robin
/// order; one grant per period (scaled by a rate fraction the caller keeps), stopped while the
/// port's buffer is full. Classes are served by strict priority (class 0 first) or, with
/// weights, by smooth weighted round robin.
#[derive(Clone, Debug)]
pub struct GrantScheduler {
    asking: Vec<VecDeque<u16>>,
    /// Per (class, requester): the number of the latest request heard (0: none yet).
    heard: Vec<u32>,
    /// Per (class, requester) that asks by count ([`Self::hear_count`]): the grants it was
    /// promised in all, counted from its first (`None`: it asks on/off).
    promised: Vec<Option<u32>>,
    /// Per (class, requester): grants given in all (wrapping).
    granted: Vec<u32>,
    requesters: usize,
    period_ps: TimePs,
    /// Earliest time of the next grant.
    next_ps: TimePs,
    armed: bool,
    stopped: bool,
    /// Weighted classes: each class's running score.
    scores: Vec<i64>,
    /// Deficit-aware grants, if on ([`Self::with_deficit`]).
    deficit: Option<Deficit>,
    /// Grants the last turn gave its requester.
    last_grants: u32,
}

/// What a deficit-aware scheduler knows of each requester's surplus accounting (Stardust §3.3:
/// a VOQ sends whole packets and owes its next credit what it overshot).
#[derive(Clone, Debug)]
struct Deficit {
    /// Bytes one grant lets a requester send.
    grant_bytes: i64,
    /// Per (class, requester): bytes delivered from it beyond the bytes granted it, its debt as
    /// far as the port can tell (data and grants on their way make it an underestimate).
    debt_bytes: Vec<i64>,
    /// Per (class, requester): bytes delivered since its last turn.
    since_turn_bytes: Vec<i64>,
    /// Per (class, requester): the bytes a turn of it releases, a moving average (a quarter of
    /// each new turn's), starting at one grant.
    turn_bytes: Vec<f64>,
}

impl GrantScheduler {
    /// A scheduler for `requesters` requesters in `classes` classes, one grant per `period_ps`.
    pub fn new(classes: usize, requesters: usize, period_ps: TimePs) -> Self {
        GrantScheduler {
            asking: vec![VecDeque::new(); classes],
            heard: vec![0; classes * requesters],
            promised: vec![None; classes * requesters],
            granted: vec![0; classes * requesters],
            requesters,
            period_ps,
            next_ps: 0,
            armed: false,
            stopped: false,
            scores: vec![0; classes],
            deficit: None,
            last_grants: 0,
        }
    }

    /// Grants of `grant_bytes` that know each requester's debt: a requester's turn gives it
    /// the grants that let it send again (one, plus one per whole grant it is known to owe,
    /// no more than it is owed), so a requester that overshot its last grant with a whole
    /// packet is not given a grant that only pays its debt and releases nothing; and after a
    /// turn of several grants the next comes after the time of the bytes the requester's turns
    /// release (a moving average of the bytes received between its turns), not of the bytes
    /// granted. Requesters that
    /// started together then do not release packets all in one round and none in the next.
    pub fn with_deficit(mut self, grant_bytes: u32) -> Self {
        let n = self.heard.len();
        self.deficit = Some(Deficit {
            grant_bytes: grant_bytes as i64,
            debt_bytes: vec![0; n],
            since_turn_bytes: vec![0; n],
            turn_bytes: vec![grant_bytes as f64; n],
        });
        self
    }

    /// `bytes` of data from requester `from` in class `class` arrived: a deficit-aware
    /// scheduler counts them against the bytes it granted and toward its turns' release.
    pub fn delivered(&mut self, from: u16, class: usize, bytes: u32) {
        if let Some(d) = &mut self.deficit {
            let at = class * self.requesters + from as usize;
            d.debt_bytes[at] += bytes as i64;
            d.since_turn_bytes[at] += bytes as i64;
        }
    }

    /// Grants the last turn gave its requester (one unless deficit-aware).
    pub fn last_grants(&self) -> u32 {
        self.last_grants
    }

    /// Request number `number` from `from` in class `class`: it asks (`on`) or withdraws.
    /// False if it is stale (an older request than one already heard).
    pub fn hear(&mut self, from: u16, class: usize, number: u32, on: bool) -> bool {
        let heard = &mut self.heard[class * self.requesters + from as usize];
        if (number.wrapping_sub(*heard) as i32) <= 0 && *heard != 0 {
            return false;
        }
        *heard = number;
        let asking = &mut self.asking[class];
        let at = asking.iter().position(|&a| a == from);
        match (on, at) {
            (true, None) => asking.push_back(from),
            (false, Some(at)) => {
                asking.remove(at);
            }
            _ => {}
        }
        self.debug_check(class);
        true
    }

    /// A request by count from `from` in class `class`: grants up to `promised` in all,
    /// counted from the requester's first grant (wrapping). The requester is in the round
    /// robin while it is owed grants, and leaves it after the last one. It asks again with a
    /// higher count when it wants more (the count never falls, so a request overtaken in the
    /// fabric carries a lower count and is ignored: false). A requester that knows its
    /// backlog asks for exactly the grants it needs (Stardust §4.1: the egress scheduler "is
    /// aware of all VOQs toward its ports"), so none is issued to a queue that has nothing
    /// left while its withdrawal is on its way.
    pub fn hear_count(&mut self, from: u16, class: usize, promised: u32) -> bool {
        let at = class * self.requesters + from as usize;
        if self.promised[at].is_some_and(|p| (promised.wrapping_sub(p) as i32) <= 0) {
            return false;
        }
        self.promised[at] = Some(promised);
        self.heard[at] = self.heard[at].max(1);
        let owed = self.owed(at) > 0;
        let asking = &mut self.asking[class];
        if owed && !asking.contains(&from) {
            asking.push_back(from);
        }
        self.debug_check(class);
        true
    }

    /// Requester `from` is gone (Stardust §5.10: its adapter failed): it leaves every class's
    /// round robin and is owed nothing more; later requests of its numbering are ignored.
    /// Returns the grants it was still owed (asking by count) and the classes it asked in.
    pub fn forget(&mut self, from: u16) -> (u32, usize) {
        let mut owed = 0;
        let mut classes = 0;
        for class in 0..self.asking.len() {
            let at = class * self.requesters + from as usize;
            owed += self.owed(at);
            if let Some(promised) = self.promised[at] {
                // Counted as given, so a request still on its way repeats a count already met.
                self.granted[at] = promised;
            }
            let asking = &mut self.asking[class];
            if let Some(i) = asking.iter().position(|&a| a == from) {
                asking.remove(i);
                classes += 1;
            }
        }
        (owed, classes)
    }

    /// Grants still owed to the requester at `at` (0 for one that asks on/off).
    fn owed(&self, at: usize) -> u32 {
        self.promised[at].map_or(0, |p| p.wrapping_sub(self.granted[at]))
    }

    /// If the scheduler has someone to grant and may, and no timer is set: when its timer
    /// should fire (it is then armed).
    pub fn arm(&mut self, now_ps: TimePs) -> Option<TimePs> {
        if self.armed || self.stopped || self.asking.iter().all(VecDeque::is_empty) {
            return None;
        }
        self.armed = true;
        Some(self.next_ps.max(now_ps))
    }

    /// The timer fired but the port's buffer is full: no grant until [`Self::resume`].
    pub fn stop(&mut self) {
        self.armed = false;
        self.stopped = true;
    }

    /// True if the scheduler was stopped and now resumes.
    pub fn resume(&mut self) -> bool {
        std::mem::replace(&mut self.stopped, false)
    }

    /// The timer fired: the class and requester of the next turn, which joins the back of its
    /// class's round robin (or leaves it, if it asks by count and was given all it asked
    /// for). The turn gives one grant ([`Self::last_grants`]: more if deficit-aware), and the
    /// next comes a period / `rate_fraction` later (deficit-aware: the time of the bytes the
    /// requester's turns release). `None` if nobody asks.
    /// `weights`: the classes' weights (`None`: strict priority).
    pub fn grant(
        &mut self,
        now_ps: TimePs,
        rate_fraction: impl FnOnce() -> f64,
        weights: Option<&[u32]>,
    ) -> Option<(usize, u16)> {
        self.armed = false;
        let class = self.next_class(weights)?;
        let requester = self.asking[class].pop_front().expect("a non-empty class");
        let at = class * self.requesters + requester as usize;
        let (grants, paced) = self.grants_for(at);
        self.granted[at] = self.granted[at].wrapping_add(grants);
        self.last_grants = grants;
        self.debug_check_owed(at);
        if self.promised[at].is_none() || self.owed(at) > 0 {
            self.asking[class].push_back(requester);
        }
        let fraction = rate_fraction();
        self.next_ps = now_ps + (self.period_ps as f64 * paced / fraction).round() as TimePs;
        Some((class, requester))
    }

    /// The grants the requester at `at` gets on its turn, and the periods the turn costs:
    /// one grant and one period, or deficit-aware, one grant plus one per whole grant of its
    /// known debt (no more than it is owed), a turn of several grants costing the time of the
    /// bytes its turns release; its debt is charged.
    fn grants_for(&mut self, at: usize) -> (u32, f64) {
        let Some(d) = &mut self.deficit else {
            return (1, 1.0);
        };
        let debt = d.debt_bytes[at].max(0);
        let mut grants = 1 + (debt / d.grant_bytes) as u32;
        if let Some(p) = self.promised[at] {
            grants = grants.min(p.wrapping_sub(self.granted[at]).max(1));
        }
        d.debt_bytes[at] -= grants as i64 * d.grant_bytes;
        if self.granted[at] != 0 {
            let released = std::mem::take(&mut d.since_turn_bytes[at]) as f64;
            d.turn_bytes[at] += (released - d.turn_bytes[at]) / 4.0;
        }
        if grants == 1 {
            return (1, 1.0);
        }
        (grants, d.turn_bytes[at] / d.grant_bytes as f64)
    }

    /// The class the next grant goes to, among those with requesters: the first (strict
    /// priority), or with `weights` the one a smooth weighted round robin picks (each asking
    /// class gains its weight, the highest score wins and pays the total), so classes share
    /// grants in proportion to their weights without bursts.
    fn next_class(&mut self, weights: Option<&[u32]>) -> Option<usize> {
        let Some(weights) = weights else {
            return self.asking.iter().position(|a| !a.is_empty());
        };
        let mut total = 0;
        let mut best: Option<usize> = None;
        for class in (0..self.asking.len()).filter(|&c| !self.asking[c].is_empty()) {
            self.scores[class] += weights[class] as i64;
            total += weights[class] as i64;
            if best.is_none_or(|b| self.scores[class] > self.scores[b]) {
                best = Some(class);
            }
        }
        let chosen = best?;
        self.scores[chosen] -= total;
        Some(chosen)
    }

    /// Debug builds, asking by count: the requester at `at` was granted no more than it was
    /// promised (what it is owed is never negative).
    fn debug_check_owed(&self, at: usize) {
        debug_assert!(
            self.promised[at].is_none_or(|p| p.wrapping_sub(self.granted[at]) as i32 >= 0),
            "a requester granted more than it was promised"
        );
    }

    /// Debug builds: class `class` lists each requester at most once, and only requesters
    /// it has heard from.
    fn debug_check(&self, class: usize) {
        if cfg!(debug_assertions) {
            let asking = &self.asking[class];
            for (i, &r) in asking.iter().enumerate() {
                debug_assert!(
                    !asking.iter().skip(i + 1).any(|&s| s == r),
                    "requester {r} twice in class {class}'s round robin"
                );
                debug_assert!(
                    self.heard[class * self.requesters + r as usize] != 0,
                    "requester {r} in class {class}'s round robin was never heard"
                );
            }
        }
    }

    /// Test only: puts `from` in class `class`'s round robin without a request.
    #[cfg(test)]
    pub(crate) fn push_unheard(&mut self, from: u16, class: usize) {
        self.asking[class].push_back(from);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forgotten_requester_is_owed_nothing_and_granted_no_more() {
        let mut s = GrantScheduler::new(2, 3, 1_000);
        assert!(s.hear_count(1, 0, 5));
        assert!(s.hear(2, 1, 1, true));
        assert_eq!(s.grant(0, || 1.0, None), Some((0, 1)));
        assert_eq!(s.forget(1), (4, 1), "four grants still owed, in one class");
        assert!(!s.hear_count(1, 0, 5), "its old count is stale");
        assert_eq!(s.grant(1_000, || 1.0, None), Some((1, 2)));
        assert_eq!(s.grant(2_000, || 1.0, None), Some((1, 2)), "only 2 is left");
    }

    #[test]
    fn grants_go_round_robin_at_the_paced_rate() {
        let mut s = GrantScheduler::new(1, 3, 1_000);
        assert!(s.hear(2, 0, 1, true));
        assert!(s.hear(0, 0, 1, true));
        assert_eq!(s.arm(50), Some(50));
        assert_eq!(s.arm(50), None, "armed once");
        assert_eq!(s.grant(50, || 1.0, None), Some((0, 2)));
        assert_eq!(s.arm(60), Some(1_050));
        assert_eq!(s.grant(1_050, || 0.5, None), Some((0, 0)));
        assert_eq!(s.arm(1_060), Some(3_050), "half the rate: twice the period");
        assert_eq!(s.grant(3_050, || 1.0, None), Some((0, 2)));
    }

    #[test]
    fn a_count_request_is_granted_exactly_what_it_asked_for() {
        let mut s = GrantScheduler::new(1, 2, 1_000);
        assert!(s.hear_count(0, 0, 2));
        assert!(s.hear(1, 0, 1, true));
        let mut order = Vec::new();
        for t in 0..5 {
            order.push(s.grant(t * 1_000, || 1.0, None).unwrap().1);
        }
        assert_eq!(
            order,
            [0, 1, 0, 1, 1],
            "requester 0 leaves after its two grants"
        );
        assert!(!s.hear_count(0, 0, 1), "an overtaken count is stale");
        assert!(!s.hear_count(0, 0, 2), "so is a repeated one");
        assert!(s.hear_count(0, 0, 3), "one more wanted");
        assert_eq!(s.grant(5_000, || 1.0, None), Some((0, 1)));
        assert_eq!(s.grant(6_000, || 1.0, None), Some((0, 0)));
        assert_eq!(s.grant(7_000, || 1.0, None), Some((0, 1)));
    }

    /// Two requesters asking by count for 9 000-byte packets on 4 096-byte grants (one period
    /// of 1 000 ps each): a requester that overshot by 4 904 bytes gets two grants on its next
    /// turn (one pays the debt, one releases its next packet), one owed less gets one; the
    /// turns are paced by the bytes they release (a moving average from one grant's).
    #[test]
    fn a_deficit_aware_turn_grants_what_releases_the_next_packet() {
        let mut s = GrantScheduler::new(1, 2, 1_000).with_deficit(4_096);
        assert!(s.hear_count(0, 0, 10));
        assert!(s.hear_count(1, 0, 1));
        assert_eq!(s.grant(0, || 1.0, None), Some((0, 0)));
        assert_eq!(s.last_grants(), 1);
        assert_eq!(s.arm(0), Some(1_000), "a first turn: one grant's time");
        s.delivered(0, 0, 9_000);
        assert_eq!(s.grant(1_000, || 1.0, None), Some((0, 1)));
        assert_eq!(s.last_grants(), 1, "owed only one");
        s.delivered(1, 0, 9_000);
        assert_eq!(s.grant(2_000, || 1.0, None), Some((0, 0)));
        assert_eq!(
            s.last_grants(),
            2,
            "4 904 bytes owed: a grant to pay, one to send"
        );
        assert_eq!(s.owed(0), 7);
        // 9 000 bytes since its last turn: the average moves a quarter of the way from 4 096.
        assert_eq!(s.arm(2_000), Some(3_299), "5 322 bytes' time");
        s.delivered(0, 0, 9_000);
        assert_eq!(s.grant(3_299, || 1.0, None), Some((0, 0)));
        assert_eq!(s.last_grants(), 2, "5 712 bytes owed");
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "granted more than it was promised")]
    fn a_grant_beyond_the_promise_fires() {
        let mut s = GrantScheduler::new(1, 1, 1_000);
        assert!(s.hear_count(0, 0, 1));
        s.promised[0] = Some(0);
        s.grant(0, || 1.0, None);
    }

    #[test]
    fn counts_wrap_around() {
        let mut s = GrantScheduler::new(1, 1, 1_000);
        s.granted[0] = u32::MAX;
        s.promised[0] = Some(u32::MAX);
        assert!(s.hear_count(0, 0, 1), "two more, across the wrap");
        assert_eq!(s.grant(0, || 1.0, None), Some((0, 0)));
        assert_eq!(s.grant(1, || 1.0, None), Some((0, 0)));
        assert_eq!(s.arm(2), None, "nothing more owed");
    }

    #[test]
    fn a_stale_request_is_ignored_and_off_withdraws() {
        let mut s = GrantScheduler::new(1, 2, 1_000);
        assert!(s.hear(1, 0, 2, true));
        assert!(
            !s.hear(1, 0, 1, false),
            "request 1 was overtaken by request 2"
        );
        assert!(s.hear(1, 0, 3, false));
        assert_eq!(s.arm(0), None, "nobody asks");
    }

    #[test]
    fn a_stopped_scheduler_waits_for_resume() {
        let mut s = GrantScheduler::new(1, 1, 1_000);
        s.hear(0, 0, 1, true);
        assert!(s.arm(0).is_some());
        s.stop();
        assert_eq!(s.arm(10), None);
        assert!(s.resume());
        assert!(!s.resume(), "resumes once");
        assert_eq!(s.arm(10), Some(10));
    }

    #[test]
    fn weighted_classes_share_grants_by_weight() {
        let mut s = GrantScheduler::new(2, 2, 1);
        s.hear(0, 0, 1, true);
        s.hear(1, 1, 1, true);
        let mut per_class = [0; 2];
        for t in 0..400 {
            let (class, _) = s.grant(t, || 1.0, Some(&[3, 1])).unwrap();
            per_class[class] += 1;
        }
        assert_eq!(per_class, [300, 100]);
        let (class, _) = s.grant(400, || 1.0, None).unwrap();
        assert_eq!(class, 0, "strict priority without weights");
    }

    #[test]
    fn grants_leave_in_arrival_order_within_a_priority() {
        let mut g = Grants::new(2);
        g.push(7, 1);
        g.push(5, 0);
        g.push(6, 0);
        assert_eq!(g.waiting(), 3);
        assert_eq!(
            [g.pop(), g.pop(), g.pop(), g.pop()],
            [Some(5), Some(6), Some(7), None]
        );
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "grants waiting against grants received minus spent")]
    fn a_grant_lost_from_its_fifo_fires_the_grant_balance() {
        let mut g = Grants::new(1);
        g.push(1, 0);
        g.push(2, 0);
        g.lose_one();
        g.pop();
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "more grants spent than received")]
    fn a_grant_spent_without_arriving_fires() {
        let mut g = Grants::new(1);
        g.spent = 1;
        g.debug_check();
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "twice in class 0's round robin")]
    fn a_requester_listed_twice_fires() {
        let mut s = GrantScheduler::new(1, 2, 1_000);
        s.hear(1, 0, 1, true);
        s.push_unheard(1, 0);
        s.hear(0, 0, 1, true);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "was never heard")]
    fn an_unheard_requester_fires() {
        let mut s = GrantScheduler::new(1, 2, 1_000);
        s.push_unheard(1, 0);
        s.hear(0, 0, 1, true);
    }
}
