//! Event-queue benchmark: the classic "hold" model. A queue holding `pending` events repeatedly
//! pops the earliest and schedules a replacement a short random delay later (as a slotted fabric
//! does: most events land within a few cell times). Compares the calendar queue the simulator
//! uses with the binary-heap reference.

use cellfabric_core::engine::queue::{CalendarQueue, EventQueue, HeapQueue, Phase};
use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

const CELL_PS: u64 = 5_120;
const HOLDS: u64 = 100_000;

/// Pops and re-schedules `holds` times; `jitter_ps` spreads delays off the slot boundaries
/// (0: every event on a slot boundary, as in the slotted switch models).
fn hold<Q: EventQueue<u32>>(queue: &mut Q, pending: u32, holds: u64, jitter_ps: u64) -> u64 {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut delay = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        CELL_PS * (1 + state % 4) + state % (jitter_ps + 1)
    };
    for id in 0..pending {
        queue.push(delay(), Phase::Message, id % 64, id);
    }
    let mut checksum = 0u64;
    for _ in 0..holds {
        let (now, id) = queue.pop_until(u64::MAX).expect("queue never drains");
        checksum = checksum.wrapping_add(now ^ id as u64);
        queue.push(now + delay(), Phase::Message, id % 64, id);
    }
    checksum
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("hold");
    group.throughput(Throughput::Elements(HOLDS));
    for (timing, jitter_ps) in [("slotted", 0), ("jittered", CELL_PS)] {
        for pending in [64u32, 1_024, 16_384] {
            let id = |queue: &str| BenchmarkId::new(format!("{queue}/{timing}"), pending);
            group.bench_with_input(id("calendar"), &pending, |b, &n| {
                b.iter(|| {
                    hold(
                        &mut CalendarQueue::for_gap(CELL_PS),
                        black_box(n),
                        HOLDS,
                        jitter_ps,
                    )
                })
            });
            group.bench_with_input(id("heap"), &pending, |b, &n| {
                b.iter(|| hold(&mut HeapQueue::new(), black_box(n), HOLDS, jitter_ps))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
