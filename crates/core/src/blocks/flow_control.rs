//! Link-level flow control: credits per virtual channel, and ON/OFF with hysteresis thresholds.
//!
//! The receiver side watches its buffer and emits [`FlowSignal`]s; they travel upstream as
//! messages; the transmit side's [`TxGate`] decides whether the next cell of a channel may go.
//! A channel is a virtual channel of a link, or any finer class a design flow-controls (RIFL
//! flow-controls each VOQ).

/// A flow-control message from a receiver to its upstream transmitter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowSignal {
    /// `count` buffer slots of `channel` were freed (one per cell, or the flits of a
    /// multi-flit cell returned together).
    Credit {
        /// Channel the credits are for.
        channel: u16,
        /// Slots freed.
        count: u16,
    },
    /// `channel` may send again.
    On {
        /// Channel resumed.
        channel: u16,
    },
    /// `channel` must stop sending.
    Off {
        /// Channel paused.
        channel: u16,
    },
}

/// The flow-control protocols of a link, by name (a scenario's `link.flow_control`, a topology
/// file cable's `flow_control=`).
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    serde::Deserialize,
    serde::Serialize,
    PartialEq,
    Eq,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum FlowControlKind {
    /// None: a full buffer drops.
    #[default]
    None,
    /// Credits, one per buffer slot.
    Credit,
    /// ON/OFF with thresholds.
    Onoff,
}

/// The flow control of a fabric's links: a cable's own protocol or else the fabric's, with the
/// fabric's ON/OFF thresholds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowControlPlan {
    /// The protocol of a cable that names none.
    pub default: FlowControlKind,
    /// ON/OFF: occupancy that switches a channel off.
    pub off_at_cells: u32,
    /// ON/OFF: occupancy that switches it back on.
    pub on_at_cells: u32,
}

impl FlowControlPlan {
    /// The flow control of a cable that names `own` (or none).
    pub fn for_cable(&self, own: Option<FlowControlKind>) -> LinkFlowControl {
        match own.unwrap_or(self.default) {
            FlowControlKind::None => LinkFlowControl::None,
            FlowControlKind::Credit => LinkFlowControl::Credit,
            FlowControlKind::Onoff => LinkFlowControl::OnOff {
                off_at_cells: self.off_at_cells,
                on_at_cells: self.on_at_cells,
            },
        }
    }
}

/// The flow control of a kind of link, before it is instantiated at both ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkFlowControl {
    /// None: a full buffer drops.
    None,
    /// One credit per downstream buffer slot.
    Credit,
    /// OFF when the receiving buffer reaches `off_at_cells`, ON when it falls to `on_at_cells`.
    OnOff {
        /// Occupancy that switches a channel off.
        off_at_cells: u32,
        /// Occupancy that switches it back on.
        on_at_cells: u32,
    },
}

impl LinkFlowControl {
    /// The receiving end, over `channels` channels.
    pub fn receiver(self, channels: usize) -> RxFlowControl {
        match self {
            LinkFlowControl::None => RxFlowControl::None,
            LinkFlowControl::Credit => RxFlowControl::Credit,
            LinkFlowControl::OnOff {
                off_at_cells,
                on_at_cells,
            } => RxFlowControl::on_off(channels, off_at_cells, on_at_cells),
        }
    }

    /// The transmitting end, over `channels` channels, each with `buffer_cells` slots downstream.
    pub fn transmitter(self, channels: usize, buffer_cells: Option<u32>) -> TxGate {
        match self {
            LinkFlowControl::None => TxGate::Open,
            LinkFlowControl::Credit => TxGate::credit(
                channels,
                buffer_cells.expect("credit flow control needs finite buffers"),
            ),
            LinkFlowControl::OnOff { .. } => TxGate::on_off(channels),
        }
    }
}

/// Transmit side: whether a channel may send its next cell.
#[derive(Clone, Debug)]
pub enum TxGate {
    /// No flow control: always open.
    Open,
    /// Credit-based: one credit per downstream buffer slot, per channel.
    Credit(Vec<u32>),
    /// ON/OFF: a per-channel on flag set by the receiver's signals.
    OnOff(Vec<bool>),
}

impl TxGate {
    /// A credit gate with `credits` slots on each of `channels` channels.
    pub fn credit(channels: usize, credits: u32) -> Self {
        TxGate::Credit(vec![credits; channels])
    }

    /// An ON/OFF gate with every one of `channels` channels on.
    pub fn on_off(channels: usize) -> Self {
        TxGate::OnOff(vec![true; channels])
    }

    /// True if `channel` may send a cell now; [`EVERY_CHANNEL`] (a broadcast, copied into
    /// every channel downstream) only when every channel may.
    pub fn may_send(&self, channel: u16) -> bool {
        match self {
            TxGate::Open => true,
            _ if channel == EVERY_CHANNEL => self.every_channel_open(),
            TxGate::Credit(credits) => credits[channel as usize] > 0,
            TxGate::OnOff(on) => on[channel as usize],
        }
    }

    /// True if every channel may send a cell now.
    fn every_channel_open(&self) -> bool {
        match self {
            TxGate::Open => true,
            TxGate::Credit(credits) => credits.iter().all(|&c| c > 0),
            TxGate::OnOff(on) => on.iter().all(|&on| on),
        }
    }

    /// The credits `channel` holds, under credit flow control (`None` otherwise).
    pub fn credits(&self, channel: u16) -> Option<u32> {
        match self {
            TxGate::Credit(credits) => Some(credits[channel as usize]),
            _ => None,
        }
    }

    /// True if no channel may send a cell now.
    pub fn is_shut(&self) -> bool {
        match self {
            TxGate::Open => false,
            TxGate::Credit(credits) => credits.iter().all(|&c| c == 0),
            TxGate::OnOff(on) => !on.iter().any(|&on| on),
        }
    }

    /// True if `channel` holds credits for `flits` buffer slots (a multi-flit cell crossing
    /// whole); the same as [`may_send`](Self::may_send) for one flit or without credits.
    #[inline]
    pub fn may_send_flits(&self, channel: u16, flits: u32) -> bool {
        match self {
            TxGate::Credit(credits) if channel != EVERY_CHANNEL => {
                credits[channel as usize] >= flits
            }
            _ => self.may_send(channel),
        }
    }

    /// Accounts for a cell of `flits` buffer slots sent on `channel` (which must hold the
    /// credits).
    pub fn on_send_flits(&mut self, channel: u16, flits: u32) {
        if let TxGate::Credit(credits) = self {
            let c = &mut credits[channel as usize];
            *c = c
                .checked_sub(flits)
                .expect("sent a cell without its credits");
        }
    }

    /// Accounts for one cell sent on `channel` (which must be allowed to send); a cell on
    /// [`EVERY_CHANNEL`] takes a credit of every channel.
    pub fn on_send(&mut self, channel: u16) {
        if let TxGate::Credit(credits) = self {
            let take = |c: &mut u32| *c = c.checked_sub(1).expect("sent a cell without a credit");
            match credits.get_mut(channel as usize) {
                Some(c) => take(c),
                None if channel == EVERY_CHANNEL => credits.iter_mut().for_each(take),
                None => panic!("no flow-control channel {channel}"),
            }
        }
    }

    /// Applies a signal from the receiver.
    pub fn on_signal(&mut self, signal: FlowSignal) {
        match (self, signal) {
            (TxGate::Credit(credits), FlowSignal::Credit { channel, count }) => {
                credits[channel as usize] += count as u32
            }
            (TxGate::OnOff(on), FlowSignal::On { channel }) => on[channel as usize] = true,
            (TxGate::OnOff(on), FlowSignal::Off { channel }) => on[channel as usize] = false,
            (gate, signal) => panic!("flow-control signal {signal:?} does not apply to {gate:?}"),
        }
    }
}

/// The channel of a cell that the next switch copies into every VOQ of its input (a RIFL
/// broadcast): it may cross only while every channel is open.
pub const EVERY_CHANNEL: u16 = u16::MAX;

/// Receive side: which signal, if any, a buffer change produces.
#[derive(Clone, Debug)]
pub enum RxFlowControl {
    /// No flow control: buffers overflow by dropping.
    None,
    /// Return one credit per cell leaving the buffer.
    Credit,
    /// Send OFF when occupancy reaches `off_at_cells`, ON when it falls back to `on_at_cells`.
    OnOff {
        /// Occupancy at which the channel is switched off.
        off_at_cells: u32,
        /// Occupancy at which a switched-off channel is switched back on.
        on_at_cells: u32,
        /// Per channel: an OFF has been sent and no ON since.
        off: Vec<bool>,
    },
}

impl RxFlowControl {
    /// ON/OFF with the given thresholds over `channels` channels (`on_at_cells < off_at_cells`).
    pub fn on_off(channels: usize, off_at_cells: u32, on_at_cells: u32) -> Self {
        assert!(
            on_at_cells < off_at_cells,
            "ON threshold must be below the OFF threshold"
        );
        RxFlowControl::OnOff {
            off_at_cells,
            on_at_cells,
            off: vec![false; channels],
        }
    }

    /// Called after a cell of `channel` entered the buffer, now holding `occupancy_cells`.
    pub fn after_enqueue(&mut self, channel: u16, occupancy_cells: u32) -> Option<FlowSignal> {
        match self {
            RxFlowControl::OnOff {
                off_at_cells, off, ..
            } => {
                let off = &mut off[channel as usize];
                (!*off && occupancy_cells >= *off_at_cells).then(|| {
                    *off = true;
                    FlowSignal::Off { channel }
                })
            }
            _ => None,
        }
    }

    /// True when the signals depend on the buffer's occupancy (ON/OFF thresholds); without it
    /// the occupancy passed in is not read.
    #[inline]
    pub fn reads_occupancy(&self) -> bool {
        matches!(self, RxFlowControl::OnOff { .. })
    }

    /// Called after a cell of `channel` left the buffer, now holding `occupancy_cells`.
    pub fn after_dequeue(&mut self, channel: u16, occupancy_cells: u32) -> Option<FlowSignal> {
        match self {
            RxFlowControl::None => None,
            RxFlowControl::Credit => Some(FlowSignal::Credit { channel, count: 1 }),
            RxFlowControl::OnOff {
                on_at_cells, off, ..
            } => {
                let off = &mut off[channel as usize];
                (*off && occupancy_cells <= *on_at_cells).then(|| {
                    *off = false;
                    FlowSignal::On { channel }
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credits_are_per_channel_and_returned() {
        let mut tx = TxGate::credit(2, 1);
        let mut rx = RxFlowControl::Credit;
        assert!(tx.may_send(0) && tx.may_send(1));
        tx.on_send(0);
        assert!(!tx.may_send(0) && tx.may_send(1));
        let signal = rx.after_dequeue(0, 0).unwrap();
        tx.on_signal(signal);
        assert!(tx.may_send(0));
        assert_eq!((tx.credits(0), tx.credits(1)), (Some(1), Some(1)));
        assert_eq!(TxGate::on_off(1).credits(0), None);
    }

    #[test]
    fn on_off_has_hysteresis() {
        let mut rx = RxFlowControl::on_off(1, 4, 2);
        let mut tx = TxGate::on_off(1);
        assert_eq!(rx.after_enqueue(0, 3), None);
        let off = rx.after_enqueue(0, 4).unwrap();
        assert_eq!(off, FlowSignal::Off { channel: 0 });
        assert_eq!(rx.after_enqueue(0, 5), None, "OFF is sent once");
        tx.on_signal(off);
        assert!(!tx.may_send(0));
        assert_eq!(rx.after_dequeue(0, 3), None, "still above the ON threshold");
        let on = rx.after_dequeue(0, 2).unwrap();
        tx.on_signal(on);
        assert!(tx.may_send(0));
        assert_eq!(rx.after_dequeue(0, 1), None, "ON is sent once");
    }

    #[test]
    fn open_gate_and_no_flow_control_never_block_or_signal() {
        let mut tx = TxGate::Open;
        tx.on_send(3);
        assert!(tx.may_send(3));
        let mut rx = RxFlowControl::None;
        assert_eq!(rx.after_enqueue(0, 1_000), None);
        assert_eq!(rx.after_dequeue(0, 0), None);
    }
}
