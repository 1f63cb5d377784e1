//! Reachability tables kept by messages, and link liveness (Stardust §4.2, §5.8, §5.9,
//! §5.10, App. E; readings R10, R19 of `docs/validation/stardust.md`). Every device sends, on each
//! of its fabric links, one reachability message per interval carrying the next slice of its bitmap
//! of the adapters it can reach (an adapter reaches only itself). A receiver adopts a changed slice
//! only after `threshold` consecutive messages agree on it; a link is declared down after
//! `threshold` intervals without a message, or at once on loss of signal (a cut), and up again
//! after `threshold` messages. Routing uses a link toward an adapter only if the link is up and the
//! device at its far end advertised the adapter; a device reaches an adapter if any of its minimal
//! candidates toward it is usable (up/down minimal routing, reading R10: a failure removes links
//! from the healthy fabric's minimal candidates). With longer candidates set
//! ([`set_longer`](Reachability::set_longer)) an element whose minimal candidates toward an
//! adapter below it are all unusable reaches it over its up links instead (a longer up/down
//! path: up, then down through another element); it then advertises the adapter only down,
//! never up, so no element above it routes a descending cell back to it.
//!
//! A link with errors (§5.10: "if the error rate on a link crosses a threshold, the link marks
//! itself as faulty on reachability cells, and is excluded from cell forwarding. A link is
//! declared valid only after the number of good reachability cells received crosses a
//! threshold"): `faulty_errors` errored cells received within one interval take the link down
//! and mark it faulty; the device's messages on it then say so, and the far end takes the link
//! down too for as long as they do. The link comes up after `valid_after_cells` good messages in
//! a row (an errored cell starts the count again), and the marking ends with it.
//!
//! The state machine is pure: the design sends and receives the messages, and this block says
//! what the tables are.

/// The most adapters one message's slice carries: App. E's b = 128 (a 24-byte message, 16
/// bytes of bitmap), so that 800 adapters take its M = 7 messages.
pub const MAX_SLICE_ADAPTERS: u32 = 128;

/// One slice of a bitmap of adapters: bit `i` is adapter `k * slice_adapters + i`.
pub type Slice = u128;

/// A link's state as its device sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkState {
    /// Carrying traffic.
    Up,
    /// Heard from too seldom (or not yet often enough since it came back): no traffic is routed
    /// to it, but it still carries what was queued and its reachability messages.
    Down,
    /// No signal: nothing crosses it.
    Cut,
}

#[derive(Clone, Copy, Debug)]
struct Port {
    state: LinkState,
    /// A message arrived since the last interval.
    heard: bool,
    /// Intervals in a row without a message.
    missed: u32,
    /// Messages in a row while down.
    good: u32,
    /// Errored cells received in this interval.
    errors: u32,
    /// This end took the link down for its errors (and says so in its messages).
    faulty: bool,
}

/// A slice value a port's neighbour is advertising, not yet adopted.
#[derive(Clone, Copy, Debug, Default)]
struct Pending {
    bits: Slice,
    count: u32,
}

/// One device's reachability tables and the liveness of its links.
pub struct Reachability {
    slice_adapters: usize,
    slices: usize,
    threshold: u32,
    /// Errored cells within one interval that mark a link faulty.
    faulty_errors: u32,
    /// Good messages in a row that declare a faulty link valid again.
    valid_after_cells: u32,
    ports: Vec<Port>,
    /// `advertised[port * slices + k]`: slice `k` of the bitmap the neighbour on `port` last
    /// advertised (adopted).
    advertised: Vec<Slice>,
    pending: Vec<Pending>,
    /// This device's own bitmap, by slice: what it advertises on its down links.
    own: Vec<Slice>,
    /// What it reaches over its minimal candidates alone: what it advertises on its up links.
    own_up: Vec<Slice>,
    /// Per adapter: the longer candidate ports (up links), as a range of `candidate_ports`.
    longer: Vec<(u32, u32)>,
    /// Per port: it leads up (toward the spine); empty without longer candidates.
    up: Vec<bool>,
    /// The adapter this device is, if it is one (it advertises only itself).
    adapter: Option<u16>,
    /// Per adapter: the minimal candidate ports toward it, as a range of `candidate_ports`.
    candidates: Vec<(u32, u32)>,
    candidate_ports: Vec<u16>,
    next_slice: usize,
}

impl Reachability {
    /// The tables of a device with `ports` links in a fabric of `adapters` adapters, sending
    /// slices of `slice_adapters` and changing state after `threshold` agreeing intervals;
    /// `candidates[x]` lists its minimal candidate ports toward adapter `x` (empty for
    /// itself). Every link starts up and every neighbour's bitmap empty: see
    /// [`assume`](Self::assume).
    pub fn new(
        ports: usize,
        adapters: usize,
        slice_adapters: u32,
        threshold: u32,
        adapter: Option<u16>,
        candidates: &[Vec<u16>],
    ) -> Reachability {
        assert!((1..=MAX_SLICE_ADAPTERS).contains(&slice_adapters) && threshold >= 1);
        let slice_adapters = slice_adapters as usize;
        let slices = adapters.div_ceil(slice_adapters).max(1);
        let mut candidate_ports = Vec::new();
        let candidates = candidates
            .iter()
            .map(|c| {
                let start = candidate_ports.len() as u32;
                candidate_ports.extend_from_slice(c);
                (start, candidate_ports.len() as u32)
            })
            .collect();
        let port = Port {
            state: LinkState::Up,
            heard: true,
            missed: 0,
            good: 0,
            errors: 0,
            faulty: false,
        };
        let mut table = Reachability {
            slice_adapters,
            slices,
            threshold,
            faulty_errors: u32::MAX,
            valid_after_cells: threshold,
            ports: vec![port; ports],
            advertised: vec![0; ports * slices],
            pending: vec![Pending::default(); ports * slices],
            own: vec![0; slices],
            own_up: vec![0; slices],
            longer: Vec::new(),
            up: Vec::new(),
            adapter,
            candidates,
            candidate_ports,
            next_slice: 0,
        };
        table.recompute();
        table
    }

    /// Errored cells within one interval that mark a link faulty, and good messages in a row
    /// that declare it valid again (by default no link is ever marked).
    pub fn set_fault_thresholds(&mut self, faulty_errors: u32, valid_after_cells: u32) {
        assert!(faulty_errors >= 1 && valid_after_cells >= 1);
        self.faulty_errors = faulty_errors;
        self.valid_after_cells = valid_after_cells;
    }

    /// Gives the device longer candidates: `longer[x]` lists the up links it may take toward
    /// adapter `x` when no minimal candidate is usable, `up[p]` says port `p` leads up.
    pub fn set_longer(&mut self, longer: &[Vec<u16>], up: Vec<bool>) {
        self.longer = longer
            .iter()
            .map(|c| {
                let start = self.candidate_ports.len() as u32;
                self.candidate_ports.extend_from_slice(c);
                (start, self.candidate_ports.len() as u32)
            })
            .collect();
        self.up = up;
        self.recompute();
    }

    /// True if `port` leads up (only with longer candidates).
    #[inline]
    pub fn is_up(&self, port: usize) -> bool {
        self.up.get(port).is_some_and(|&u| u)
    }

    /// The longer candidate ports toward `adapter` (empty without them).
    pub fn longer_candidates(&self, adapter: u16) -> &[u16] {
        match self.longer.get(adapter as usize) {
            Some(&(start, end)) => &self.candidate_ports[start as usize..end as usize],
            None => &[],
        }
    }

    /// True if this end marked the link on `port` faulty: its messages there say so.
    pub fn faulty(&self, port: usize) -> bool {
        self.ports[port].faulty
    }

    /// An errored cell arrived on `port` (and was discarded): the run of good messages starts
    /// again, and at `faulty_errors` errors in this interval an up link goes down, marked
    /// faulty. Returns true if the link was just marked (a table changed).
    pub fn error(&mut self, port: usize) -> bool {
        let p = &mut self.ports[port];
        if p.state == LinkState::Cut {
            return false;
        }
        p.good = 0;
        p.errors += 1;
        if p.state != LinkState::Up || p.errors < self.faulty_errors {
            return false;
        }
        self.go_down(port, LinkState::Down);
        self.ports[port].faulty = true;
        self.ports[port].heard = true; // the link is alive: not a missed interval
        self.recompute();
        true
    }

    /// Messages a full bitmap takes (M of App. E).
    pub fn slices(&self) -> usize {
        self.slices
    }

    /// Takes `bitmap` (by slice) as what the neighbour on `port` advertises, as in a fabric
    /// whose tables have converged; returns true if this device's own bitmap changed.
    pub fn assume(&mut self, port: usize, bitmap: &[Slice]) -> bool {
        let at = port * self.slices;
        self.advertised[at..at + self.slices].copy_from_slice(bitmap);
        self.recompute()
    }

    /// This device's bitmap of reachable adapters, by slice.
    pub fn bitmap(&self) -> &[Slice] {
        &self.own
    }

    /// The state of the link on `port`.
    pub fn state(&self, port: usize) -> LinkState {
        self.ports[port].state
    }

    /// True if a cell for `adapter` may take `port`.
    #[inline]
    pub fn usable(&self, port: usize, adapter: u16) -> bool {
        let (slice, bit) = self.locate(adapter);
        self.ports[port].state == LinkState::Up
            && self.advertised[port * self.slices + slice] >> bit & 1 == 1
    }

    /// True if this device reaches `adapter`.
    pub fn reaches(&self, adapter: u16) -> bool {
        let (slice, bit) = self.locate(adapter);
        self.own[slice] >> bit & 1 == 1
    }

    /// The next message to send on every link, round robin over the slices: its index, its
    /// bits for the down links and its bits for the up links (the same without longer
    /// candidates).
    pub fn next_message(&mut self) -> (u32, Slice, Slice) {
        let k = self.next_slice;
        self.next_slice = (k + 1) % self.slices;
        (k as u32, self.own[k], self.own_up[k])
    }

    /// A message arrived on `port` advertising `bits` for slice `slice`, and the far end's
    /// marking of the link (`far_faulty`); returns true if a table changed (the link came up
    /// or went down, or a slice was adopted).
    pub fn receive(&mut self, port: usize, slice: u32, bits: Slice, far_faulty: bool) -> bool {
        let p = &mut self.ports[port];
        let threshold = if p.faulty {
            self.valid_after_cells
        } else {
            self.threshold
        };
        if p.state == LinkState::Cut {
            return false;
        }
        if far_faulty {
            // Excluded from forwarding while the far end marks it; its messages count again
            // once the marking ends.
            let was_up = p.state == LinkState::Up;
            p.heard = true;
            p.good = 0;
            if was_up {
                self.go_down(port, LinkState::Down);
                self.ports[port].heard = true;
                self.recompute();
            }
            return was_up;
        }
        p.heard = true;
        let mut changed = false;
        if p.state == LinkState::Down {
            p.good += 1;
            if p.good >= threshold {
                p.state = LinkState::Up;
                p.faulty = false;
                changed = true;
            }
        }
        let at = port * self.slices + slice as usize;
        let pending = &mut self.pending[at];
        if bits == self.advertised[at] {
            *pending = Pending::default();
        } else {
            if pending.count > 0 && pending.bits == bits {
                pending.count += 1;
            } else {
                *pending = Pending { bits, count: 1 };
            }
            if pending.count >= threshold {
                self.advertised[at] = bits;
                *pending = Pending::default();
                changed = true;
            }
        }
        if changed {
            self.recompute();
        }
        changed
    }

    /// One interval passed: links not heard from in `threshold` intervals in a row go down;
    /// `went_down` is told of each. Returns true if a table changed.
    pub fn interval(&mut self, mut went_down: impl FnMut(usize)) -> bool {
        let mut changed = false;
        for port in 0..self.ports.len() {
            let p = &mut self.ports[port];
            if p.state == LinkState::Cut {
                continue;
            }
            p.errors = 0;
            if std::mem::take(&mut p.heard) {
                p.missed = 0;
                continue;
            }
            p.missed += 1;
            p.good = 0;
            if p.missed >= self.threshold && p.state == LinkState::Up {
                self.go_down(port, LinkState::Down);
                went_down(port);
                changed = true;
            }
        }
        if changed {
            self.recompute();
        }
        changed
    }

    /// The link on `port` lost its signal; returns true if a table changed.
    pub fn cut(&mut self, port: usize) -> bool {
        let was_up = self.ports[port].state == LinkState::Up;
        self.go_down(port, LinkState::Cut);
        if was_up {
            self.recompute();
        }
        was_up
    }

    /// The link on `port` has a signal again: it is down until heard from `threshold` times.
    pub fn restore(&mut self, port: usize) {
        if self.ports[port].state == LinkState::Cut {
            self.ports[port] = Port {
                state: LinkState::Down,
                heard: false,
                missed: 0,
                good: 0,
                errors: 0,
                faulty: false,
            };
        }
    }

    /// The device restarts knowing nothing: every link down, every neighbour's bitmap empty.
    pub fn forget(&mut self) {
        for port in 0..self.ports.len() {
            if self.ports[port].state != LinkState::Cut {
                self.go_down(port, LinkState::Down);
            }
        }
        self.recompute();
    }

    fn go_down(&mut self, port: usize, state: LinkState) {
        self.ports[port] = Port {
            state,
            heard: false,
            missed: 0,
            good: 0,
            errors: 0,
            faulty: false,
        };
        let at = port * self.slices;
        self.advertised[at..at + self.slices].fill(0);
        self.pending[at..at + self.slices].fill(Pending::default());
    }

    /// Recomputes this device's own bitmaps; true if one changed.
    fn recompute(&mut self) -> bool {
        let over = |ranges: &[(u32, u32)], x: u16| {
            ranges.get(x as usize).is_some_and(|&(start, end)| {
                let ports = &self.candidate_ports[start as usize..end as usize];
                ports.iter().any(|&p| self.usable(p as usize, x))
            })
        };
        let own_up = self.bitmap_with(|x| match self.adapter {
            Some(me) => me == x,
            None => over(&self.candidates, x),
        });
        let own = if self.longer.is_empty() {
            own_up.clone()
        } else {
            self.bitmap_with(|x| self.adapter.is_none() && over(&self.longer, x))
                .iter()
                .zip(&own_up)
                .map(|(longer, minimal)| longer | minimal)
                .collect()
        };
        let changed = own != self.own || own_up != self.own_up;
        self.own = own;
        self.own_up = own_up;
        changed
    }

    /// The bitmap, by slice, of the adapters `reached` says yes to.
    pub fn bitmap_with(&self, reached: impl Fn(u16) -> bool) -> Vec<Slice> {
        let mut bitmap = vec![0 as Slice; self.slices];
        for x in 0..self.candidates.len() as u16 {
            if reached(x) {
                let (slice, bit) = self.locate(x);
                bitmap[slice] |= 1 << bit;
            }
        }
        bitmap
    }

    #[inline]
    fn locate(&self, adapter: u16) -> (usize, u32) {
        let x = adapter as usize;
        (x / self.slice_adapters, (x % self.slice_adapters) as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An element with two links, both minimal toward adapters 0..4.
    fn element() -> Reachability {
        let candidates = vec![vec![0, 1]; 5];
        let mut r = Reachability::new(2, 5, 2, 3, None, &candidates);
        assert_eq!(r.slices(), 3);
        r.assume(0, &[0b11, 0b11, 0b1]);
        r.assume(1, &[0b11, 0b11, 0b1]);
        r
    }

    #[test]
    fn an_adapter_advertises_itself_and_an_element_what_its_links_reach() {
        let a = Reachability::new(2, 5, 2, 3, Some(3), &vec![vec![0, 1]; 5]);
        assert_eq!(a.bitmap(), &[0, 0b10, 0]);
        let mut e = element();
        assert_eq!(e.bitmap(), &[0b11, 0b11, 0b1]);
        assert!(e.usable(0, 4) && e.reaches(4));
        e.assume(0, &[0b11, 0b01, 0b1]);
        assert!(!e.usable(0, 3) && e.usable(1, 3) && e.reaches(3));
    }

    #[test]
    fn a_changed_slice_is_adopted_after_threshold_agreeing_messages() {
        let mut e = element();
        assert!(!e.receive(0, 1, 0b01, false));
        assert!(!e.receive(0, 1, 0b01, false));
        // A disagreeing message starts the count again.
        assert!(!e.receive(0, 1, 0b11, false));
        assert!(!e.receive(0, 1, 0b01, false));
        assert!(!e.receive(0, 1, 0b01, false));
        assert!(e.usable(0, 3));
        assert!(e.receive(0, 1, 0b01, false));
        assert!(
            !e.usable(0, 3) && e.reaches(3),
            "link 1 still reaches adapter 3"
        );
        assert!(!e.receive(1, 1, 0b01, false) && !e.receive(1, 1, 0b01, false));
        assert!(e.receive(1, 1, 0b01, false));
        assert!(!e.reaches(3));
    }

    #[test]
    fn a_silent_link_goes_down_after_threshold_intervals_and_up_after_threshold_messages() {
        let mut e = element();
        let mut down = vec![];
        // A link counts as heard at the start (the first messages are on their way).
        for _ in 0..3 {
            e.receive(1, 0, 0b11, false);
            assert!(!e.interval(|p| down.push(p)));
        }
        e.receive(1, 0, 0b11, false);
        assert!(e.interval(|p| down.push(p)));
        assert_eq!(down, vec![0]);
        assert_eq!(e.state(0), LinkState::Down);
        assert!(!e.usable(0, 0) && e.usable(1, 0));
        // Back: up after three messages, its slices adopted after three agreeing each.
        assert!(!e.receive(0, 0, 0b11, false) && !e.receive(0, 0, 0b11, false));
        assert!(e.receive(0, 0, 0b11, false));
        assert_eq!(e.state(0), LinkState::Up);
        assert!(e.usable(0, 1) && !e.usable(0, 2), "slice 1 not heard yet");
    }

    #[test]
    fn a_cut_link_is_down_at_once_and_stays_down_until_restored_and_heard() {
        let mut e = element();
        assert!(e.cut(1));
        assert_eq!(e.state(1), LinkState::Cut);
        assert!(!e.receive(1, 0, 0b11, false), "a cut link hears nothing");
        for _ in 0..10 {
            e.receive(0, 0, 0b11, false);
            e.interval(|_| panic!("link 0 is heard, link 1 cut"));
        }
        e.restore(1);
        assert_eq!(e.state(1), LinkState::Down);
        for _ in 0..3 {
            e.receive(1, 0, 0b11, false);
        }
        assert!(e.state(1) == LinkState::Up && e.usable(1, 0));
    }

    /// App. E's example: 800 adapters (32K hosts at 40 per adapter) at b = 128 take M = 7
    /// messages, and a slice reaches adapters beyond the 64th bit.
    #[test]
    fn app_e_takes_seven_messages_of_128_adapters_for_800() {
        let candidates = vec![vec![0, 1]; 800];
        let mut e = Reachability::new(2, 800, 128, 3, None, &candidates);
        assert_eq!(e.slices(), 7);
        let full = e.bitmap_with(|_| true);
        e.assume(0, &full);
        e.assume(1, &full);
        assert!(e.reaches(799) && e.usable(0, 200));
        let mut without_200 = full.clone();
        without_200[1] &= !(1 << (200 - 128));
        for _ in 0..3 {
            e.receive(0, 1, without_200[1], false);
        }
        assert!(!e.usable(0, 200) && e.usable(0, 199) && e.usable(1, 200));
        assert_eq!(full[6].count_ones(), 800 - 6 * 128);
    }

    #[test]
    fn messages_cycle_through_the_slices() {
        let mut e = element();
        let sent: Vec<(u32, Slice)> = (0..4)
            .map(|_| e.next_message())
            .map(|m| (m.0, m.1))
            .collect();
        assert_eq!(sent, vec![(0, 0b11), (1, 0b11), (2, 0b1), (0, 0b11)]);
    }

    #[test]
    fn forgetting_everything_leaves_nothing_reachable() {
        let mut e = element();
        e.forget();
        assert!((0..5).all(|x| !e.reaches(x)));
        assert_eq!(e.state(0), LinkState::Down);
    }

    /// A first-tier element with a down link (port 0) to adapters 0 and 1 and an up link
    /// (port 1): losing adapter 0's minimal candidate, it still reaches adapter 0 over its up
    /// link while the element above advertises it, and says so down but not up.
    #[test]
    fn a_longer_candidate_is_taken_only_when_no_minimal_one_is_left() {
        let candidates = vec![vec![0], vec![0], vec![1]];
        let mut e = Reachability::new(2, 3, 4, 1, None, &candidates);
        e.assume(0, &[0b011]);
        e.assume(1, &[0b111]);
        assert_eq!(e.bitmap(), &[0b111]);
        e.set_longer(&[vec![1], vec![1], vec![]], vec![false, true]);
        assert!(e.is_up(1) && !e.is_up(0));
        assert_eq!(e.longer_candidates(0), &[1]);
        assert!(e.receive(0, 0, 0b010, false), "adapter 0 lost below");
        assert!(e.reaches(0), "over the up link");
        let (_, down, up) = e.next_message();
        assert_eq!((down, up), (0b111, 0b110), "advertised down only");
        assert!(
            e.receive(1, 0, 0b110, false),
            "the element above lost it too"
        );
        assert!(!e.reaches(0));
        let mut minimal = Reachability::new(2, 3, 4, 1, None, &candidates);
        minimal.assume(0, &[0b010]);
        minimal.assume(1, &[0b111]);
        assert!(!minimal.reaches(0), "minimal only: no longer path");
    }

    #[test]
    fn errors_within_an_interval_mark_a_link_faulty_until_good_messages_revalidate_it() {
        let mut e = element();
        e.set_fault_thresholds(3, 4);
        assert!(!e.error(0) && !e.error(0));
        e.interval(|_| {});
        assert!(!e.error(0) && !e.error(0), "errors count per interval");
        assert!(e.error(0), "the third error in one interval marks the link");
        assert!(e.state(0) == LinkState::Down && e.faulty(0) && !e.usable(0, 0));
        assert!(e.reaches(0), "link 1 still reaches every adapter");
        e.receive(0, 0, 0b11, false);
        e.receive(0, 0, 0b11, false);
        e.error(0);
        for _ in 0..3 {
            e.receive(0, 0, 0b11, false);
        }
        assert!(
            e.faulty(0),
            "an error starts the run of good messages again"
        );
        assert!(
            e.receive(0, 0, 0b11, false),
            "the fourth good message in a row"
        );
        assert!(e.state(0) == LinkState::Up && !e.faulty(0) && e.usable(0, 0));
    }

    #[test]
    fn a_far_end_marking_the_link_faulty_keeps_it_down_here_until_the_marking_ends() {
        let mut e = element();
        assert!(
            e.receive(1, 0, 0b11, true),
            "the marking takes an up link down"
        );
        assert!(e.state(1) == LinkState::Down && !e.faulty(1) && !e.usable(1, 0));
        for _ in 0..5 {
            assert!(!e.receive(1, 0, 0b11, true));
            e.receive(0, 0, 0b11, false);
            e.interval(|_| panic!("both links are heard"));
        }
        assert_eq!(e.state(1), LinkState::Down);
        for _ in 0..2 {
            assert!(!e.receive(1, 0, 0b11, false));
        }
        assert!(e.receive(1, 0, 0b11, false));
        assert_eq!(e.state(1), LinkState::Up);
    }
}
