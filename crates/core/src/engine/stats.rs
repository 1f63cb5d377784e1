//! Streaming statistics: latency histograms with bounded relative error and occupancy counts.

use hdrhistogram::Histogram;
use serde::Serialize;

/// The tolerance a statistical check allows a fraction `p` estimated from `trials` independent
/// draws: four of its standard errors, 4·√(p(1 − p)/trials). Tests derive their bands from the
/// length of their runs with it instead of fixing a percentage.
pub fn binomial_band(p: f64, trials: f64) -> f64 {
    4.0 * (p * (1.0 - p) / trials).sqrt()
}

/// How evenly a quantity (each host's throughput, say) is spread: its smallest and largest
/// value and Jain's fairness index, (Σx)² / (n·Σx²): 1 when all are equal, 1/n when one host
/// has everything (Jain, Chiu & Hawe 1984); the index is `None` when every value is zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Fairness {
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Jain's index.
    pub jain_index: Option<f64>,
}

impl Fairness {
    /// The spread of `values`; `None` (nothing measured) over no values.
    pub fn of(values: &[f64]) -> Option<Fairness> {
        let (min, max) = smallest_and_largest(values)?;
        Some(Fairness {
            min,
            max,
            jain_index: jain_index(values),
        })
    }
}

/// The smallest and the largest of `values`; `None` for none.
fn smallest_and_largest(values: &[f64]) -> Option<(f64, f64)> {
    let smallest = values.iter().copied().reduce(f64::min)?;
    let largest = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some((smallest, largest))
}

/// Jain's fairness index of `values`, (Σx)² / (n·Σx²), at most 1 (the rounding of the sums
/// cannot lift it above); `None` when every value is zero (or there are none).
pub fn jain_index(values: &[f64]) -> Option<f64> {
    let sum: f64 = values.iter().sum();
    let squares: f64 = values.iter().map(|x| x * x).sum();
    (squares > 0.0).then(|| (sum * sum / (values.len() as f64 * squares)).min(1.0))
}

/// How a quantity spreads over flows or hosts (per-flow goodput in Gbit/s, say): mean,
/// smallest, low percentiles, median, largest.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Spread {
    /// Mean.
    pub mean: f64,
    /// Smallest.
    pub min: f64,
    /// 1st percentile.
    pub p1: f64,
    /// 10th percentile.
    pub p10: f64,
    /// Median.
    pub p50: f64,
    /// Largest.
    pub max: f64,
}

impl Spread {
    /// The spread of `values`; `None` (nothing measured) for none.
    pub fn of(mut values: Vec<f64>) -> Option<Spread> {
        if values.is_empty() {
            return None;
        }
        values.sort_by(f64::total_cmp);
        let at =
            |q: f64| values[((q * values.len() as f64).ceil() as usize).clamp(1, values.len()) - 1];
        Some(Spread {
            mean: values.iter().sum::<f64>() / values.len() as f64,
            min: values[0],
            p1: at(0.01),
            p10: at(0.10),
            p50: at(0.50),
            max: values[values.len() - 1],
        })
    }
}

/// Completion times of finite flows: the first, the mean and the last.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Completion {
    /// The first flow to finish.
    pub first: f64,
    /// Mean.
    pub mean: f64,
    /// The last flow to finish.
    pub last: f64,
}

impl Completion {
    /// The completion times `fcts`; `None` (nothing measured) when no flow completed.
    pub fn of(fcts: &[f64]) -> Option<Completion> {
        let (first, last) = smallest_and_largest(fcts)?;
        Some(Completion {
            first,
            mean: fcts.iter().sum::<f64>() / fcts.len() as f64,
            last,
        })
    }
}

/// Percentiles reported for every latency distribution (the RIFL paper's Table I set, plus mean).
/// A distribution of no sample reports `null`, not zeros: nothing was measured.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Percentiles {
    /// Samples behind the percentiles.
    pub samples: u64,
    /// Arithmetic mean (exact).
    pub mean: f64,
    /// 1st percentile.
    pub p1: f64,
    /// Median.
    pub p50: f64,
    /// 75th percentile.
    pub p75: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest value (exact).
    pub max: f64,
}

impl Serialize for Percentiles {
    /// `null` without samples, else the eight values (mean, p1 ... max).
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        if self.samples == 0 {
            return serializer.serialize_none();
        }
        let mut out = serializer.serialize_struct("Percentiles", 8)?;
        for (name, value) in [
            ("mean", self.mean),
            ("p1", self.p1),
            ("p50", self.p50),
            ("p75", self.p75),
            ("p90", self.p90),
            ("p95", self.p95),
            ("p99", self.p99),
            ("max", self.max),
        ] {
            out.serialize_field(name, &value)?;
        }
        out.end()
    }
}

impl Percentiles {
    /// The same percentiles with every value divided by `unit` (e.g. picoseconds to cell times).
    pub fn scaled(&self, unit: f64) -> Percentiles {
        Percentiles {
            samples: self.samples,
            mean: self.mean / unit,
            p1: self.p1 / unit,
            p50: self.p50 / unit,
            p75: self.p75 / unit,
            p90: self.p90 / unit,
            p95: self.p95 / unit,
            p99: self.p99 / unit,
            max: self.max / unit,
        }
    }
}

/// Significant decimal digits the latency histogram keeps (every percentile within 0.1%).
const SIGNIFICANT_DIGITS: u8 = 3;
/// log2 of the sub-buckets per half bucket: 2^10 = 1024, the smallest power of two at least
/// half of 2·10^3 (HdrHistogram's layout for three significant digits and unit resolution).
const HALF_BUCKET_MAGNITUDE: u32 = 10;
/// Sub-buckets in a bucket's upper half, each the width of the bucket's resolution.
const HALF_BUCKET: usize = 1 << HALF_BUCKET_MAGNITUDE;
/// Values below this land in the first bucket (resolution 1).
const SUB_BUCKET_MASK: u64 = (2 << HALF_BUCKET_MAGNITUDE) - 1;
/// The largest value tracked; larger samples are counted here (their mean and maximum stay
/// exact).
const HIGHEST_TRACKABLE: u64 = 1 << 53;

/// The counts index of `value` in HdrHistogram's log-linear layout (lowest value 1, three
/// significant digits): the bucket is the value's magnitude above the first 2 048 values,
/// the sub-bucket its top eleven bits.
fn bucket_index(value: u64) -> usize {
    let bucket = (64 - (HALF_BUCKET_MAGNITUDE + 1)) - (value | SUB_BUCKET_MASK).leading_zeros();
    let sub_bucket = (value >> bucket) as usize;
    ((bucket as usize + 1) << HALF_BUCKET_MAGNITUDE) + sub_bucket - HALF_BUCKET
}

/// The lowest value that [`bucket_index`] maps to `index`.
fn bucket_lowest(index: usize) -> u64 {
    let bucket = (index >> HALF_BUCKET_MAGNITUDE) as i32 - 1;
    let sub_bucket = (index & (HALF_BUCKET - 1)) + HALF_BUCKET;
    if bucket < 0 {
        (sub_bucket - HALF_BUCKET) as u64
    } else {
        (sub_bucket as u64) << bucket
    }
}

/// A streaming histogram of non-negative integer samples (latencies in picoseconds).
///
/// Log-linear buckets keep every percentile within 0.1% of the exact value in constant memory;
/// mean and maximum are exact. Samples are counted in HdrHistogram's bucket layout (three
/// significant digits) by one index computation per sample, and handed to HdrHistogram, bucket
/// by bucket, only when percentiles are read: a delivery costs an add, not the library's
/// general recording path (a tenth of the reference run's time).
pub struct LatencyHistogram {
    counts: Box<[u64]>,
    samples: u64,
    sum: u128,
    max: u64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    /// An empty histogram.
    pub fn new() -> Self {
        LatencyHistogram {
            counts: vec![0; bucket_index(HIGHEST_TRACKABLE) + 1].into_boxed_slice(),
            samples: 0,
            sum: 0,
            max: 0,
        }
    }

    /// Adds one sample.
    #[inline]
    pub fn record(&mut self, value: u64) {
        self.counts[bucket_index(value.min(HIGHEST_TRACKABLE))] += 1;
        self.samples += 1;
        self.sum += value as u128;
        self.max = self.max.max(value);
    }

    /// Adds every sample of `other`.
    pub fn add(&mut self, other: &LatencyHistogram) {
        for (mine, theirs) in self.counts.iter_mut().zip(other.counts.iter()) {
            *mine += theirs;
        }
        self.samples += other.samples;
        self.sum += other.sum;
        self.max = self.max.max(other.max);
    }

    /// Number of samples.
    pub fn count(&self) -> u64 {
        self.samples
    }

    /// Exact mean, or 0 with no samples.
    pub fn mean(&self) -> f64 {
        if self.samples == 0 {
            0.0
        } else {
            self.sum as f64 / self.samples as f64
        }
    }

    /// The samples as an HdrHistogram, each bucket's count at its lowest value.
    fn to_hdr(&self) -> Histogram<u64> {
        let mut hdr = Histogram::new_with_bounds(1, HIGHEST_TRACKABLE, SIGNIFICANT_DIGITS)
            .expect("valid histogram bounds");
        for (index, &count) in self.counts.iter().enumerate().filter(|(_, &c)| c > 0) {
            hdr.saturating_record_n(bucket_lowest(index), count);
        }
        hdr
    }

    /// The standard percentile set (no samples: all zero, reported as `null`).
    pub fn percentiles(&self) -> Percentiles {
        if self.samples == 0 {
            return Percentiles::default();
        }
        let hdr = self.to_hdr();
        // The bucket's lowest value: exact for the slot-aligned latencies slotted models produce.
        let q = |quantile: f64| hdr.lowest_equivalent(hdr.value_at_quantile(quantile)) as f64;
        Percentiles {
            samples: self.samples,
            mean: self.mean(),
            p1: q(0.01),
            p50: q(0.50),
            p75: q(0.75),
            p90: q(0.90),
            p95: q(0.95),
            p99: q(0.99),
            max: self.max as f64,
        }
    }

    /// Non-empty buckets as (highest value in bucket, sample count), in increasing value order.
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &count)| count > 0)
            .map(|(index, &count)| (bucket_lowest(index + 1) - 1, count))
    }
}

/// Counts of how often each small integer value (a queue occupancy in cells) was observed.
#[derive(Default)]
pub struct OccupancyHistogram {
    counts: Vec<u64>,
}

impl OccupancyHistogram {
    /// Records `times` observations of `value`.
    pub fn record_n(&mut self, value: usize, times: u64) {
        if value >= self.counts.len() {
            self.counts.resize(value + 1, 0);
        }
        self.counts[value] += times;
    }

    /// Observation count per value, indexed by value.
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// Mean observed value, or 0 with no observations.
    pub fn mean(&self) -> f64 {
        let n: u64 = self.counts.iter().sum();
        if n == 0 {
            return 0.0;
        }
        let total: f64 = self
            .counts
            .iter()
            .enumerate()
            .map(|(v, &c)| v as f64 * c as f64)
            .sum();
        total / n as f64
    }
}

/// A record of counts (a sender's, a port's, a device's) that sums count by count: each record
/// lists its counts once, in [`Tally::counts_mut`], and every sum of two records is this one.
pub trait Tally: Clone {
    /// Every count of the record that sums, each once.
    fn counts_mut(&mut self) -> impl IntoIterator<Item = &mut u64>;

    /// Adds `other`'s counts to these.
    fn add(&mut self, other: &Self) {
        let mut other = other.clone();
        for (mine, theirs) in self.counts_mut().into_iter().zip(other.counts_mut()) {
            *mine += *theirs;
        }
    }

    /// These counts and `other`'s, summed.
    fn plus(mut self, other: &Self) -> Self {
        self.add(other);
        self
    }
}

/// True when a `T` holds `counts` counts and nothing else: asserted at compile time beside a
/// [`Tally`] whose record is only counts, so a count added to it and not to its list fails
/// to build.
pub const fn only_counts<T>(counts: usize) -> bool {
    std::mem::size_of::<T>() == counts * std::mem::size_of::<u64>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_within_a_tenth_of_a_percent_of_exact() {
        let mut h = LatencyHistogram::new();
        let mut exact: Vec<u64> = (0..100_000u64)
            .map(|i| (i * 7_919 % 1_000_003) * 1_000 + 20_480)
            .collect();
        for &v in &exact {
            h.record(v);
        }
        exact.sort_unstable();
        let p = h.percentiles();
        let exact_at = |q: f64| exact[((q * exact.len() as f64).ceil() as usize).max(1) - 1] as f64;
        for (ours, q) in [(p.p1, 0.01), (p.p50, 0.5), (p.p90, 0.9), (p.p99, 0.99)] {
            let truth = exact_at(q);
            assert!(
                (ours - truth).abs() / truth <= 0.001,
                "q={q}: {ours} vs {truth}"
            );
        }
        assert_eq!(p.max, *exact.last().unwrap() as f64);
        let mean = exact.iter().map(|&v| v as f64).sum::<f64>() / exact.len() as f64;
        assert!((p.mean - mean).abs() < 1e-6 * mean);
        assert_eq!(h.buckets().map(|(_, c)| c).sum::<u64>(), 100_000);
    }

    #[test]
    fn buckets_are_hdrhistograms_own() {
        let hdr = Histogram::<u64>::new_with_bounds(1, HIGHEST_TRACKABLE, SIGNIFICANT_DIGITS)
            .expect("valid bounds");
        let mut values: Vec<u64> = (0..4_096).collect();
        for shift in 11..54 {
            let p = 1u64 << shift;
            values.extend([p - 1, p, p + 1, p + p / 3, p + p / 2 + 7]);
        }
        values.extend((0..10_000u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 11));
        for v in values {
            let index = bucket_index(v);
            assert_eq!(
                bucket_lowest(index),
                hdr.lowest_equivalent(v),
                "lowest of {v}"
            );
            assert_eq!(
                bucket_lowest(index + 1) - 1,
                hdr.highest_equivalent(v),
                "highest of {v}"
            );
        }
    }

    #[test]
    fn percentiles_match_hdrhistogram_fed_the_same_samples() {
        let mut ours = LatencyHistogram::new();
        let mut hdr = Histogram::<u64>::new_with_bounds(1, HIGHEST_TRACKABLE, SIGNIFICANT_DIGITS)
            .expect("valid bounds");
        for i in 0..50_000u64 {
            let v = (i * 2_654_435_761) % 9_000_000_007 + (i % 7) * 20_480;
            ours.record(v);
            hdr.record(v).expect("in range");
        }
        let p = ours.percentiles();
        let q = |quantile: f64| hdr.lowest_equivalent(hdr.value_at_quantile(quantile)) as f64;
        assert_eq!(
            [p.p1, p.p50, p.p75, p.p90, p.p95, p.p99],
            [q(0.01), q(0.5), q(0.75), q(0.9), q(0.95), q(0.99)]
        );
        assert_eq!(
            hdr.lowest_equivalent(p.max as u64),
            hdr.lowest_equivalent(hdr.max())
        );
        let buckets: Vec<(u64, u64)> = hdr
            .iter_recorded()
            .map(|v| {
                (
                    hdr.highest_equivalent(v.value_iterated_to()),
                    v.count_at_value(),
                )
            })
            .collect();
        assert_eq!(ours.buckets().collect::<Vec<_>>(), buckets);
    }

    #[test]
    fn occupancy_mean() {
        let mut h = OccupancyHistogram::default();
        h.record_n(0, 2);
        h.record_n(3, 2);
        assert_eq!(h.mean(), 1.5);
        assert_eq!(h.counts(), &[2, 0, 0, 2]);
    }

    #[test]
    fn spreads_of_nothing_are_not_measured_and_jain_never_exceeds_one() {
        assert!(Fairness::of(&[]).is_none());
        assert!(Spread::of(Vec::new()).is_none());
        assert!(Completion::of(&[]).is_none());
        assert_eq!(jain_index(&[0.0, 0.0]), None);
        // Equal values whose sums round: the exact index is 1, the float one a hair above.
        let equal = vec![0.1; 432];
        assert_eq!(jain_index(&equal), Some(1.0));
        assert_eq!(jain_index(&[1.0, 0.0]), Some(0.5));
        let spread = Fairness::of(&[0.5, 0.25]).unwrap();
        assert_eq!((spread.min, spread.max), (0.25, 0.5));
    }

    /// Two counts, summed count by count; a record with more than its listed counts (or other
    /// fields) is not "only counts", so its compile-time assertion would fail.
    #[derive(Clone, Debug, Default, PartialEq)]
    struct TwoCounts {
        sent: u64,
        lost: u64,
    }

    impl Tally for TwoCounts {
        fn counts_mut(&mut self) -> impl IntoIterator<Item = &mut u64> {
            [&mut self.sent, &mut self.lost]
        }
    }

    #[test]
    fn a_tally_sums_count_by_count_and_lists_every_count() {
        let sum = TwoCounts { sent: 3, lost: 1 }.plus(&TwoCounts { sent: 4, lost: 2 });
        assert_eq!(sum, TwoCounts { sent: 7, lost: 3 });
        assert!(only_counts::<TwoCounts>(2));
        assert!(!only_counts::<TwoCounts>(1), "a count left out of the list");
        assert!(
            !only_counts::<(TwoCounts, u32)>(2),
            "a field that is not a count"
        );
    }
}
