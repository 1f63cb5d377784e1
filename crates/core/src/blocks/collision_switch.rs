//! A bufferless first-come-first-considered crossbar (Clint, Eberle and Gura 2002, §3.4): a packet
//! whose head reaches a free output takes it for its whole length; a packet reaching a busy output
//! loses. Packets reaching one output at the same instant are resolved by priority, then round
//! robin per output, so no input starves.
//!
//! What a loser suffers is the switch's policy: it is dropped (Clint's quick switch, the
//! unscheduled bulk switch B1), or held back until the output frees (back pressure, B2).
//! Between priority classes a high-priority packet either preempts a low one (it is dropped,
//! Clint's Q1) or is interleaved into it, both passing (Q2).
//!
//! The switch only decides; the caller moves packets. Heads are offered with
//! [`CollisionSwitch::offer`] as they arrive and decided together by
//! [`CollisionSwitch::resolve`], which the caller runs after every arrival of the same instant
//! (a clock-phase event at that time).

use std::collections::VecDeque;

use crate::engine::time::TimePs;

/// Priority class of a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Priority {
    /// Requests.
    Low,
    /// Acknowledgments and scheduling packets.
    High,
}

/// What happens to a packet that loses an output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnBusy {
    /// It is dropped (the sender retransmits).
    Drop,
    /// It waits at its input for the output (back pressure), first come first served.
    Wait,
}

/// How a high-priority packet meets a low-priority one on an output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mixing {
    /// The low-priority packet is dropped, even one already passing.
    Preempt,
    /// The high-priority packet is interleaved into the low-priority one; both pass and the
    /// output stays busy for both lengths.
    Interleave,
}

/// A packet head offered to an output.
#[derive(Clone, Copy, Debug)]
pub struct Contender<T> {
    /// Input port.
    pub input: u16,
    /// Output port.
    pub output: u16,
    /// Priority class.
    pub priority: Priority,
    /// Time the packet holds the output.
    pub duration_ps: TimePs,
    /// The caller's handle of the packet.
    pub payload: T,
}

/// The decision on one packet.
#[derive(Clone, Copy, Debug)]
pub enum Verdict<T> {
    /// Passes; its head leaves the output at `start_ps`.
    Forward {
        /// The packet.
        payload: T,
        /// When its head leaves the output.
        start_ps: TimePs,
    },
    /// Lost the output and is dropped; `by` is the class of the packet it lost to.
    Drop {
        /// The packet.
        payload: T,
        /// Priority class of the winner.
        by: Priority,
    },
    /// Was passing and is cut off by a high-priority packet ([`Mixing::Preempt`]).
    Preempted {
        /// The packet.
        payload: T,
    },
    /// Waits for its output ([`OnBusy::Wait`]); the caller calls [`CollisionSwitch::next_waiter`]
    /// when the output frees ([`CollisionSwitch::busy_until_ps`]).
    Wait {
        /// The packet.
        payload: T,
    },
}

#[derive(Clone, Copy, Debug)]
struct Holder<T> {
    busy_until_ps: TimePs,
    priority: Priority,
    payload: T,
}

/// A crossbar of `ports` outputs without buffers.
pub struct CollisionSwitch<T> {
    on_busy: OnBusy,
    mixing: Mixing,
    holders: Vec<Option<Holder<T>>>,
    /// Per output: the input served first among simultaneous arrivals.
    round_robin: Vec<u16>,
    /// Heads offered since the last resolve.
    pending: Vec<Contender<T>>,
    /// Per output: packets held back under [`OnBusy::Wait`], first come first.
    waiting: Vec<VecDeque<Contender<T>>>,
    /// The verdicts' buffer, lent out by [`Self::resolve`] and given back by [`Self::recycle`].
    verdicts: Vec<Verdict<T>>,
}

impl<T: Copy> CollisionSwitch<T> {
    /// A switch with `ports` ports.
    pub fn new(ports: usize, on_busy: OnBusy, mixing: Mixing) -> Self {
        CollisionSwitch {
            on_busy,
            mixing,
            holders: vec![None; ports],
            round_robin: vec![0; ports],
            pending: Vec::with_capacity(ports),
            waiting: (0..ports).map(|_| VecDeque::with_capacity(ports)).collect(),
            verdicts: Vec::with_capacity(ports),
        }
    }

    /// Offers a head arriving now; returns true when it is the first since the last resolve (the
    /// caller then schedules the resolve for this instant).
    pub fn offer(&mut self, contender: Contender<T>) -> bool {
        self.pending.push(contender);
        self.pending.len() == 1
    }

    /// Until when `output` is taken (0 if never).
    pub fn busy_until_ps(&self, output: u16) -> TimePs {
        self.holders[output as usize].map_or(0, |h| h.busy_until_ps)
    }

    /// Decides every head offered since the last resolve, at `now_ps`; give the verdicts back
    /// with [`Self::recycle`] once drained, to reuse their memory.
    pub fn resolve(&mut self, now_ps: TimePs) -> Vec<Verdict<T>> {
        let mut verdicts = std::mem::take(&mut self.verdicts);
        // Per output: higher priority first, then round robin from the output's pointer.
        let ports = self.holders.len() as u16;
        let round_robin = &self.round_robin;
        self.pending.sort_by_key(|c| {
            let rr = (c.input + ports - round_robin[c.output as usize]) % ports;
            (c.output, std::cmp::Reverse(c.priority), rr)
        });
        for k in 0..self.pending.len() {
            let contender = self.pending[k];
            let first = k == 0 || self.pending[k - 1].output != contender.output;
            if first {
                self.round_robin[contender.output as usize] = (contender.input + 1) % ports;
            }
            self.decide(now_ps, contender, &mut verdicts);
        }
        self.pending.clear();
        verdicts
    }

    /// Takes back the (drained) verdicts of [`Self::resolve`].
    pub fn recycle(&mut self, verdicts: Vec<Verdict<T>>) {
        debug_assert!(verdicts.is_empty());
        self.verdicts = verdicts;
    }

    fn decide(&mut self, now_ps: TimePs, c: Contender<T>, verdicts: &mut Vec<Verdict<T>>) {
        let out = c.output as usize;
        let take = Holder {
            busy_until_ps: now_ps + c.duration_ps,
            priority: c.priority,
            payload: c.payload,
        };
        let Some(holder) = self.holders[out].filter(|h| h.busy_until_ps > now_ps) else {
            self.holders[out] = Some(take);
            verdicts.push(Verdict::Forward {
                payload: c.payload,
                start_ps: now_ps,
            });
            return;
        };
        if self.on_busy == OnBusy::Wait {
            self.waiting[out].push_back(c);
            verdicts.push(Verdict::Wait { payload: c.payload });
            return;
        }
        match (self.mixing, holder.priority, c.priority) {
            (Mixing::Interleave, a, b) if a != b => {
                // The request carries on, stretched; later heads meet the request.
                let holder = self.holders[out].as_mut().expect("output is held");
                holder.busy_until_ps += c.duration_ps;
                if c.priority == Priority::Low {
                    *holder = Holder {
                        priority: Priority::Low,
                        payload: c.payload,
                        ..*holder
                    };
                }
                verdicts.push(Verdict::Forward {
                    payload: c.payload,
                    start_ps: now_ps,
                });
            }
            (Mixing::Preempt, Priority::Low, Priority::High) => {
                verdicts.push(Verdict::Preempted {
                    payload: holder.payload,
                });
                self.holders[out] = Some(take);
                verdicts.push(Verdict::Forward {
                    payload: c.payload,
                    start_ps: now_ps,
                });
            }
            (_, by, _) => verdicts.push(Verdict::Drop {
                payload: c.payload,
                by,
            }),
        }
    }

    /// Under back pressure: hands the freed `output` to its longest-waiting packet, holding the
    /// output from now for that packet's length plus `restart_ps` (the time for the go signal
    /// to reach its sender and the packet's head to come back).
    pub fn next_waiter(&mut self, now_ps: TimePs, output: u16, restart_ps: TimePs) -> Option<T> {
        let out = output as usize;
        debug_assert!(self.busy_until_ps(output) <= now_ps);
        let c = self.waiting[out].pop_front()?;
        self.holders[out] = Some(Holder {
            busy_until_ps: now_ps + restart_ps + c.duration_ps,
            priority: c.priority,
            payload: c.payload,
        });
        Some(c.payload)
    }

    /// Packets waiting for `output`.
    pub fn waiters(&self, output: u16) -> usize {
        self.waiting[output as usize].len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(input: u16, output: u16, priority: Priority) -> Contender<u16> {
        Contender {
            input,
            output,
            priority,
            duration_ps: 100,
            payload: input,
        }
    }

    fn decide(
        sw: &mut CollisionSwitch<u16>,
        now: TimePs,
        heads: &[Contender<u16>],
    ) -> Vec<Verdict<u16>> {
        for &h in heads {
            sw.offer(h);
        }
        sw.resolve(now)
    }

    fn forwarded(verdicts: &[Verdict<u16>]) -> Vec<u16> {
        verdicts
            .iter()
            .filter_map(|v| match v {
                Verdict::Forward { payload, .. } => Some(*payload),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn first_come_wins_and_later_heads_are_dropped() {
        let mut sw = CollisionSwitch::new(4, OnBusy::Drop, Mixing::Preempt);
        assert_eq!(
            forwarded(&decide(&mut sw, 0, &[head(1, 0, Priority::Low)])),
            [1]
        );
        let v = decide(&mut sw, 50, &[head(2, 0, Priority::Low)]);
        assert!(matches!(
            v[0],
            Verdict::Drop {
                payload: 2,
                by: Priority::Low
            }
        ));
        assert_eq!(
            forwarded(&decide(&mut sw, 100, &[head(2, 0, Priority::Low)])),
            [2]
        );
    }

    #[test]
    fn simultaneous_heads_are_served_round_robin() {
        let mut sw = CollisionSwitch::new(4, OnBusy::Drop, Mixing::Preempt);
        let heads = [
            head(0, 3, Priority::Low),
            head(1, 3, Priority::Low),
            head(2, 3, Priority::Low),
        ];
        let winners: Vec<u16> = (0..4)
            .flat_map(|k| forwarded(&decide(&mut sw, 1_000 * k, &heads)))
            .collect();
        assert_eq!(winners, [0, 1, 2, 0]);
    }

    #[test]
    fn high_priority_preempts_or_interleaves() {
        let mut q1 = CollisionSwitch::new(2, OnBusy::Drop, Mixing::Preempt);
        decide(&mut q1, 0, &[head(0, 1, Priority::Low)]);
        let v = decide(&mut q1, 10, &[head(1, 1, Priority::High)]);
        assert!(matches!(v[0], Verdict::Preempted { payload: 0 }));
        assert_eq!(forwarded(&v), [1]);
        let v = decide(&mut q1, 20, &[head(0, 1, Priority::Low)]);
        assert!(matches!(
            v[0],
            Verdict::Drop {
                by: Priority::High,
                ..
            }
        ));

        let mut q2 = CollisionSwitch::new(2, OnBusy::Drop, Mixing::Interleave);
        decide(&mut q2, 0, &[head(0, 1, Priority::Low)]);
        assert_eq!(
            forwarded(&decide(&mut q2, 10, &[head(1, 1, Priority::High)])),
            [1]
        );
        assert_eq!(
            q2.busy_until_ps(1),
            200,
            "the request is stretched by the interleaved ack"
        );
    }

    #[test]
    fn back_pressure_holds_losers_first_come_first_served() {
        let mut sw = CollisionSwitch::new(4, OnBusy::Wait, Mixing::Preempt);
        decide(&mut sw, 0, &[head(0, 2, Priority::Low)]);
        assert!(matches!(
            decide(&mut sw, 10, &[head(3, 2, Priority::Low)])[0],
            Verdict::Wait { .. }
        ));
        assert!(matches!(
            decide(&mut sw, 20, &[head(1, 2, Priority::Low)])[0],
            Verdict::Wait { .. }
        ));
        assert_eq!(sw.waiters(2), 2);
        assert_eq!(sw.next_waiter(100, 2, 5), Some(3));
        assert_eq!(sw.busy_until_ps(2), 205);
        assert_eq!(sw.next_waiter(205, 2, 5), Some(1));
        assert_eq!(sw.next_waiter(310, 2, 5), None);
    }
}
