//! Property tests of the RIFL Layer 1 retransmitting link (seed 004 §II-A): under any pattern of
//! corrupted frames, in either or both directions, every data frame is delivered exactly once
//! and in order, and ON/OFF flow control never overflows a receive buffer of one round trip of
//! headroom.

use cellfabric_core::blocks::retransmission::{Layer1Link, SlotInput};
use proptest::prelude::*;

/// A receive buffer drained by the layer above, asking the peer to stop one round trip before
/// it is full.
struct RxBuffer {
    capacity: u64,
    occupancy: u64,
    max_occupancy: u64,
}

impl RxBuffer {
    fn xoff(&self, rtt: u64) -> bool {
        self.occupancy + rtt >= self.capacity
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn every_frame_arrives_once_and_in_order(
        latency in 0u32..12,
        // Slots (mod the run length) whose frame is corrupted, per direction: sparse errors,
        // bursts and errors in both directions at once all occur.
        errors in prop::collection::vec((0usize..2, 0u64..3_000, 1u64..6), 0..40),
        data_pattern in prop::collection::vec(any::<bool>(), 1..64),
        drain_pattern in prop::collection::vec(any::<bool>(), 1..64),
    ) {
        let mut link = Layer1Link::new(latency);
        let rtt = link.rtt_slots() as u64;
        let mut buffers: [RxBuffer; 2] = std::array::from_fn(|_| RxBuffer {
            capacity: rtt + 8,
            occupancy: 0,
            max_occupancy: 0,
        });
        let mut next_expected = [0u64; 2];
        let corrupted = |end: usize, slot: u64| {
            errors.iter().any(|&(e, start, len)| e == end && (start..start + len).contains(&slot))
        };
        let (busy_slots, drain_slots) = (3_000u64, 40 * rtt + 200);
        for slot in 0..busy_slots + drain_slots {
            let busy = slot < busy_slots;
            let input: [SlotInput; 2] = std::array::from_fn(|end| SlotInput {
                has_data: busy && data_pattern[(slot as usize + end) % data_pattern.len()],
                corrupt: busy && corrupted(end, slot),
                xoff: buffers[end].xoff(rtt),
            });
            let output = link.step(input);
            for end in 0..2 {
                let buffer = &mut buffers[end];
                if let Some(seq) = output[end].delivered {
                    prop_assert_eq!(seq, next_expected[end], "end {} got a frame out of order", end);
                    next_expected[end] += 1;
                    buffer.occupancy += 1;
                    buffer.max_occupancy = buffer.max_occupancy.max(buffer.occupancy);
                }
                let drains = !busy || drain_pattern[(slot as usize * 7 + end) % drain_pattern.len()];
                if drains && buffer.occupancy > 0 {
                    buffer.occupancy -= 1;
                }
            }
        }
        for end in 0..2 {
            let sent = link.counters(end).frames_new;
            let peer = link.counters(1 - end);
            prop_assert_eq!(peer.frames_lost, 0);
            prop_assert_eq!(link.frames_in_flight(end), 0, "frames from end {} never arrived", end);
            prop_assert_eq!(next_expected[1 - end], sent);
            prop_assert!(buffers[end].max_occupancy <= buffers[end].capacity,
                "end {} buffer reached {} of {}", end, buffers[end].max_occupancy, buffers[end].capacity);
        }
    }
}
