//! Fabric adapters that pause their hosts: 802.1Qbb PFC on the host-facing link, which is
//! plain Ethernet (`adapter.pause_hosts`). Not a Stardust mechanism: the paper's adapter drops
//! a packet that finds its VOQ full (§3.1) and leaves the hosts' loss to their transport
//! (§6.3); this is the PFC a RoCE deployment would run on the adapter's host ports so that a
//! transport that needs a lossless path (DCQCN, Zhu et al. 2015 §2) or that learns of loss only
//! by trimming (NDP, Handley et al. 2017 §3.1) can run over the fabric.
//!
//! Each host port keeps an [`IngressAccount`] (the piece PFC switches use) of the host's data
//! frames waiting in the adapter's VOQs: a frame is charged when it joins a VOQ and released
//! when it is packed into cells. At XOFF the port owes its host a PAUSE frame, at XON a
//! resume; frames the host sends beyond XOFF plus the headroom are dropped and counted (the
//! headroom covers the frame the PAUSE waits behind on the host link, the host's frame on the
//! wire and two propagation delays). Control frames (ACKs, NACKs, PULLs, CNPs) are neither
//! paused nor charged, as PFC's control queue is not. PAUSE frames take the host link
//! ([`PAUSE_FRAME_BYTES`]) ahead of the packets queued there, after the one on the wire.

use std::collections::VecDeque;

use crate::blocks::ethernet::pause::PAUSE_FRAME_BYTES;
use crate::blocks::ethernet::ports::pfc::{IngressAccount, PauseThresholds};

/// One host port's pause of its host.
#[derive(Clone, Debug)]
pub struct HostPause {
    thresholds: PauseThresholds,
    account: IngressAccount,
    /// PAUSE (true) and resume (false) frames owed to the host, oldest first.
    due: VecDeque<bool>,
    /// The PAUSE frame on the host link, if one is.
    on_wire: Option<bool>,
}

impl HostPause {
    /// Bytes of a PAUSE frame on the host link.
    pub const FRAME_BYTES: u64 = PAUSE_FRAME_BYTES as u64;

    /// A host port pausing its host at `thresholds`.
    pub fn new(thresholds: PauseThresholds) -> Self {
        HostPause {
            thresholds,
            account: IngressAccount::default(),
            due: VecDeque::with_capacity(2),
            on_wire: None,
        }
    }

    /// True if one more data frame fits (below XOFF plus the headroom).
    pub fn has_room(&self) -> bool {
        self.account.has_room(&self.thresholds)
    }

    /// Charges a data frame that joined a VOQ; true if a PAUSE frame is now owed.
    pub fn charge(&mut self) -> bool {
        let pause = self.account.charge(&self.thresholds);
        if pause {
            self.due.push_back(true);
        }
        pause
    }

    /// Releases a data frame packed into cells; true if a resume frame is now owed.
    pub fn release(&mut self) -> bool {
        let resume = self.account.release(&self.thresholds);
        if resume {
            self.due.push_back(false);
        }
        resume
    }

    /// Data frames held beyond XOFF.
    pub fn beyond_xoff(&self) -> u32 {
        self.account.beyond_xoff(&self.thresholds)
    }

    /// True while a PAUSE frame is on the host link.
    pub fn is_sending(&self) -> bool {
        self.on_wire.is_some()
    }

    /// Puts the oldest owed frame on the (free) host link; false if none is owed.
    pub fn start_next(&mut self) -> bool {
        debug_assert!(self.on_wire.is_none());
        self.on_wire = self.due.pop_front();
        self.on_wire.is_some()
    }

    /// The frame on the host link has left it: whether it pauses (else it resumes), or
    /// `None` if a packet was on the link.
    pub fn finish(&mut self) -> Option<bool> {
        self.on_wire.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// XOFF at 3 with 1 of headroom, XON at 1: the fourth frame takes the headroom, a fifth
    /// finds none; frames owed go out one at a time, in order.
    #[test]
    fn pause_at_xoff_resume_at_xon_frames_in_order() {
        let mut p = HostPause::new(PauseThresholds {
            xoff_packets: 3,
            xon_packets: 1,
            headroom_packets: 1,
        });
        let owed: Vec<bool> = (0..4).map(|_| p.charge()).collect();
        assert_eq!(owed, vec![false, false, true, false]);
        assert!(!p.has_room());
        assert_eq!(p.beyond_xoff(), 1);
        assert!(p.start_next());
        assert!(p.is_sending());
        let released: Vec<bool> = (0..3).map(|_| p.release()).collect();
        assert_eq!(
            released,
            vec![false, false, true],
            "held 3, 2, then 1 = XON"
        );
        assert_eq!(p.finish(), Some(true));
        assert!(p.start_next());
        assert_eq!(p.finish(), Some(false));
        assert!(!p.start_next() && p.finish().is_none());
        assert!(p.has_room() && p.beyond_xoff() == 0);
    }
}
