//! Workloads shared by the designs: the scenario's pattern stream (`pattern_rng`, from which
//! the traffic patterns of `blocks/patterns/` draw who sends to whom) and flow sizes drawn from a
//! published cumulative distribution (the tables in `workloads/`): `size cdf` points, one a
//! line, `#` lines skipped, a lone first number (a HomaSim file's mean) skipped, the cdf in
//! 0..1 or in percent. A size is drawn as HomaSim draws it: the first point whose cdf is at
//! least a uniform draw (a step CDF). The timed-flow workload (`traffic.pattern = "fct"`,
//! Stardust's Fig. 10b) is read here for every design ([`FctKeys`], checked by its pattern in
//! `blocks/patterns/fct.rs`), with its Poisson arrivals ([`mean_gap_ps`], [`exponential_ps`]) and the report's completion-time
//! figures ([`FctStats`], [`TimedCounts`]).

use rand::Rng as _;
use serde::Serialize;

use crate::blocks::stream_kind;
use crate::engine::rng::{stream, ComponentId, Rng};
use crate::engine::stats::{Completion, LatencyHistogram, Percentiles};
use crate::engine::time::TimePs;
use crate::keys::{invalid, ScenarioError};

/// The `traffic` keys of the timed-flow (`fct`) workload, as every design reads them:
/// `src` sends `dst` flows of sizes drawn from the `flow_sizes` file, arriving as a Poisson
/// process at `load` of its line rate; every other host keeps `background_flows` unending
/// flows to random other hosts (never to `dst`).
#[derive(Clone, Copy, Debug)]
pub struct FctKeys<'a> {
    /// `traffic.fct_src`.
    pub src: u32,
    /// `traffic.fct_dst`.
    pub dst: u32,
    /// `traffic.fct_load`, a fraction of the source's line rate.
    pub load: f64,
    /// `traffic.flow_sizes`: the distribution file's path (made absolute by the front end).
    pub flow_sizes: Option<&'a str>,
    /// `traffic.background_flows`.
    pub background_flows: u32,
}

impl FctKeys<'_> {
    /// Checks the hosts against a topology of `hosts` hosts.
    pub fn check_hosts(&self, hosts: usize) -> Result<(), ScenarioError> {
        if hosts < 3 {
            return Err(invalid(
                "topology",
                "the timed flows and their background need at least 3 hosts",
            ));
        }
        for (key, host) in [("traffic.fct_src", self.src), ("traffic.fct_dst", self.dst)] {
            if host as usize >= hosts {
                return Err(invalid(
                    key,
                    format!("expected a host below {hosts}, got {host}"),
                ));
            }
        }
        Ok(())
    }

    /// The distribution `traffic.flow_sizes` names, read and checked.
    pub fn sizes(&self) -> Result<FlowSizes, ScenarioError> {
        let key = "traffic.flow_sizes";
        let path = self
            .flow_sizes
            .ok_or_else(|| invalid(key, "expected a file"))?;
        FlowSizes::read(key, path)
    }

    /// The background flows, `(sending host, receiving host)` in drawing order: every host but
    /// the two timed ones sends `background_flows` flows, each to a host other than itself and
    /// the timed receiver, uniformly (reading R24 of `docs/validation/stardust.md`, but never to
    /// the timed receiver, whose share of unending flows would otherwise be what the timed flows
    /// measure, not the fabric).
    pub fn background(&self, hosts: usize, rng: &mut Rng) -> Vec<(usize, usize)> {
        let timed = [self.src as usize, self.dst as usize];
        let mut flows = Vec::new();
        for h in (0..hosts).filter(|h| !timed.contains(h)) {
            // Draw among the rest, then step over the two, lowest first.
            let skipped = [h.min(timed[1]), h.max(timed[1])];
            for _ in 0..self.background_flows {
                let mut dst = rng.gen_range(0..hosts - 2);
                for skip in skipped {
                    if dst >= skip {
                        dst += 1;
                    }
                }
                flows.push((h, dst));
            }
        }
        flows
    }
}

/// The mean time between flow arrivals that offers `load` of a `rate_bps` link with flows of
/// `sizes`.
pub fn mean_gap_ps(sizes: &FlowSizes, load: f64, rate_bps: u64) -> TimePs {
    (sizes.mean_bytes() * 8e12 / (load * rate_bps as f64)).round() as TimePs
}

/// An exponential draw of mean `mean_ps` (at least 1 ps): a Poisson process's next gap.
pub fn exponential_ps(mean_ps: TimePs, rng: &mut Rng) -> TimePs {
    let uniform: f64 = rng.gen_range(f64::MIN_POSITIVE..1.0);
    (-uniform.ln() * mean_ps as f64).round().max(1.0) as TimePs
}

/// One timed flow as a report lists it.
#[derive(Clone, Copy, Debug)]
pub struct TimedFlow {
    /// Bytes.
    pub size_bytes: u64,
    /// When it arrived at its source.
    pub start_ps: TimePs,
    /// From its arrival to its last byte at the receiving host; `None` while unfinished.
    pub fct_ps: Option<TimePs>,
    /// The least it could take: its bytes at the source's line rate plus the path's
    /// propagation and its largest packet's store-and-forward at every switch.
    pub ideal_ps: TimePs,
}

/// The timed flows' counts and completion times every design's `fct` report carries (Stardust's
/// built-in sources report these alone).
#[derive(Clone, Debug, Default, Serialize)]
pub struct TimedCounts {
    /// Timed flows started.
    pub timed_flows_started: u64,
    /// Of them, completed.
    pub timed_flows_completed: u64,
    /// Completion times of the completed timed flows, in µs.
    pub timed_fct_us: Percentiles,
    /// Of those of 500 KB or more (the Stardust paper: 1 MB flows finish in under 1 ms,
    /// Fig. 10b).
    pub timed_fct_us_500kb_up: Option<Completion>,
}

/// The completed timed flows' completion times by size, and their slowdowns.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FctBySize {
    /// Completion times of those below 10 KB, in µs.
    pub timed_fct_us_under_10kb: Percentiles,
    /// Of those from 10 KB to below 500 KB.
    pub timed_fct_us_10kb_to_500kb: Percentiles,
    /// Completion time over the ideal ([`TimedFlow::ideal_ps`]; 1: no wait anywhere).
    pub timed_slowdown: Percentiles,
    /// Completion times of every timed flow, the unfinished ones at their ages at the end of
    /// the run: a lower bound, which a scheme that starves flows cannot flatter by leaving
    /// them out, as the completed flows' percentiles alone would.
    pub timed_fct_with_unfinished_us: Percentiles,
    /// Slowdowns the same way (an unfinished flow's age over its ideal).
    pub timed_slowdown_with_unfinished: Percentiles,
}

/// Completion times of the timed flows that completed, by size.
#[derive(Clone, Debug, Default)]
pub struct FctStats {
    /// Counts and completion times.
    pub counts: TimedCounts,
    /// By size, and slowdowns.
    pub by_size: FctBySize,
}

impl FctStats {
    /// The figures of `flows` at `now_ps`, the end of the run.
    pub fn of(flows: &[TimedFlow], now_ps: TimePs) -> FctStats {
        let mut all = LatencyHistogram::new();
        let mut small = LatencyHistogram::new();
        let mut medium = LatencyHistogram::new();
        let mut large = Vec::new();
        let mut slowdown = LatencyHistogram::new();
        let mut with_unfinished = LatencyHistogram::new();
        let mut slowdown_with_unfinished = LatencyHistogram::new();
        // In thousandths, as the histogram keeps integers.
        let slowdown_of =
            |f: &TimedFlow, ps: TimePs| (ps as f64 * 1e3 / f.ideal_ps.max(1) as f64).round() as u64;
        for f in flows {
            let ps_or_age = f.fct_ps.unwrap_or(now_ps.saturating_sub(f.start_ps));
            with_unfinished.record(ps_or_age);
            slowdown_with_unfinished.record(slowdown_of(f, ps_or_age));
            let Some(ps) = f.fct_ps else { continue };
            all.record(ps);
            match f.size_bytes {
                0..10_000 => small.record(ps),
                10_000..500_000 => medium.record(ps),
                _ => large.push(ps as f64 / 1e6),
            }
            slowdown.record(slowdown_of(f, ps));
        }
        FctStats {
            counts: TimedCounts {
                timed_flows_started: flows.len() as u64,
                timed_flows_completed: all.count(),
                timed_fct_us: all.percentiles().scaled(1e6),
                timed_fct_us_500kb_up: Completion::of(&large),
            },
            by_size: FctBySize {
                timed_fct_us_under_10kb: small.percentiles().scaled(1e6),
                timed_fct_us_10kb_to_500kb: medium.percentiles().scaled(1e6),
                timed_slowdown: slowdown.percentiles().scaled(1e3),
                timed_fct_with_unfinished_us: with_unfinished.percentiles().scaled(1e6),
                timed_slowdown_with_unfinished: slowdown_with_unfinished.percentiles().scaled(1e3),
            },
        }
    }
}

/// The random stream that draws a scenario's destination pattern.
pub(crate) fn pattern_rng(seed: u64) -> Rng {
    let id = ComponentId {
        kind: stream_kind::PATTERN,
        index: 0,
    };
    stream(seed, id)
}

/// A flow-size distribution.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSizes {
    /// (size in bytes, cumulative probability), increasing in both.
    points: Vec<(u64, f64)>,
}

impl FlowSizes {
    /// Reads a distribution from a file's text; the error says which line is wrong and why.
    pub fn parse(text: &str) -> Result<FlowSizes, String> {
        let mut points: Vec<(u64, f64)> = Vec::new();
        let mut first_data = true;
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = line
                .split([' ', '\t', ','])
                .filter(|f| !f.is_empty())
                .collect();
            if first_data && fields.len() == 1 {
                first_data = false; // a HomaSim file's mean
                continue;
            }
            first_data = false;
            let parsed = match fields.as_slice() {
                [size, cdf] => size.parse::<f64>().ok().zip(cdf.parse::<f64>().ok()),
                _ => None,
            };
            let Some((size, cdf)) =
                parsed.filter(|(s, c)| s.is_finite() && *s >= 0.0 && c.is_finite())
            else {
                return Err(format!("line {}: expected `size cdf`, got {line:?}", n + 1));
            };
            if points
                .last()
                .is_some_and(|&(s, c)| (size as u64) < s || cdf < c)
            {
                return Err(format!("line {}: sizes and cdf must not decrease", n + 1));
            }
            points.push((size.round() as u64, cdf));
        }
        let Some(&(_, last)) = points.last() else {
            return Err("no `size cdf` points".into());
        };
        let scale = if last > 1.0 + 1e-9 { last } else { 1.0 };
        if (last / scale - 1.0).abs() > 1e-6 {
            return Err(format!("the cdf must end at 1 (or 100), ends at {last}"));
        }
        points.iter_mut().for_each(|p| p.1 /= scale);
        points.retain(|&(size, _)| size > 0);
        if points.is_empty() {
            return Err("every size is 0".into());
        }
        Ok(FlowSizes { points })
    }

    /// Reads the distribution file at `path` for scenario key `key`; the error names the key,
    /// the file and what is wrong.
    pub fn read(key: &str, path: &str) -> Result<FlowSizes, ScenarioError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| invalid(key, format!("cannot read {path}: {e}")))?;
        FlowSizes::parse(&text).map_err(|e| invalid(key, format!("{path}: {e}")))
    }

    /// A size drawn from the distribution.
    pub fn draw(&self, rng: &mut Rng) -> u64 {
        let u: f64 = rng.gen();
        let at = self.points.partition_point(|&(_, cdf)| cdf < u);
        self.points[at.min(self.points.len() - 1)].0
    }

    /// The mean size of the step CDF.
    pub fn mean_bytes(&self) -> f64 {
        let mut previous = 0.0;
        self.points
            .iter()
            .map(|&(size, cdf)| {
                let p = cdf - previous;
                previous = cdf;
                size as f64 * p
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{stream, ComponentId};

    const FB_WEBSERVER: &str = include_str!("../../../../workloads/homasim_fb_webserver.txt");

    /// The file's own first line states its mean (62 874.27 bytes): the step CDF we read has
    /// it, and draws average to it.
    #[test]
    fn the_facebook_web_server_distribution_has_its_stated_mean() {
        let sizes = FlowSizes::parse(FB_WEBSERVER).unwrap();
        assert!(
            (sizes.mean_bytes() / 62_874.27 - 1.0).abs() < 0.01,
            "{}",
            sizes.mean_bytes()
        );
        let mut rng = stream(1, ComponentId { kind: 0, index: 0 });
        let n = 400_000;
        let mean = (0..n).map(|_| sizes.draw(&mut rng) as f64).sum::<f64>() / n as f64;
        assert!(
            (mean / sizes.mean_bytes() - 1.0).abs() < 0.03,
            "sampled mean {mean}"
        );
    }

    #[test]
    fn percent_cdfs_and_bad_lines() {
        let sizes = FlowSizes::parse("0 0\n100 50\n300 100\n").unwrap();
        assert_eq!(sizes.mean_bytes(), 200.0);
        assert!(FlowSizes::parse("100 0.5\n50 1\n")
            .unwrap_err()
            .contains("line 2"));
        assert!(FlowSizes::parse("100 abc\n")
            .unwrap_err()
            .contains("line 1"));
        assert!(FlowSizes::parse("100 0.5\n")
            .unwrap_err()
            .contains("end at 1"));
        assert!(FlowSizes::parse("# nothing\n").is_err());
    }

    fn keys(path: &str) -> FctKeys<'_> {
        FctKeys {
            src: 0,
            dst: 5,
            load: 0.5,
            flow_sizes: Some(path),
            background_flows: 3,
        }
    }

    /// Background flows: each host but the two timed ones sends `background_flows`, never to
    /// itself or the timed receiver, and every other destination is drawn.
    #[test]
    fn background_flows_avoid_the_sender_and_the_timed_receiver() {
        let mut rng = stream(3, ComponentId { kind: 0, index: 0 });
        let flows = keys("x").background(8, &mut rng);
        assert_eq!(flows.len(), 6 * 3);
        assert!(flows
            .iter()
            .all(|&(h, d)| h != d && d != 5 && h != 0 && h != 5));
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..200 {
            seen.extend(
                keys("x")
                    .background(8, &mut rng)
                    .into_iter()
                    .map(|(_, d)| d),
            );
        }
        assert_eq!(
            seen.into_iter().collect::<Vec<_>>(),
            vec![0, 1, 2, 3, 4, 6, 7]
        );
    }

    #[test]
    fn fct_hosts_and_sizes_name_the_bad_key() {
        assert_eq!(keys("x").check_hosts(5).unwrap_err().key, "traffic.fct_dst");
        assert_eq!(keys("x").check_hosts(2).unwrap_err().key, "topology");
        let e = keys("/no/such/file").sizes().unwrap_err();
        assert!(e.key == "traffic.flow_sizes" && e.message.contains("cannot read"));
    }

    /// Completion times land in their size's bucket, slowdowns are against each flow's ideal,
    /// and unfinished flows count as started only, except in the lower bounds that take them at
    /// their ages (here 1 400 µs at the end of a 1 400 µs run, twice its ideal).
    #[test]
    fn fct_stats_bucket_by_size() {
        let flow = |size_bytes, fct_us: Option<u64>, ideal_us: u64| TimedFlow {
            size_bytes,
            start_ps: 0,
            fct_ps: fct_us.map(|us| us * 1_000_000),
            ideal_ps: ideal_us * 1_000_000,
        };
        let stats = FctStats::of(
            &[
                flow(1_000, Some(10), 5),
                flow(50_000, Some(100), 50),
                flow(600_000, Some(1_000), 500),
                flow(900_000, None, 700),
            ],
            1_400 * 1_000_000,
        );
        let (counts, by_size) = (&stats.counts, &stats.by_size);
        assert_eq!(
            (counts.timed_flows_started, counts.timed_flows_completed),
            (4, 3)
        );
        assert_eq!(by_size.timed_fct_us_under_10kb.samples, 1);
        assert!((by_size.timed_fct_us_under_10kb.mean - 10.0).abs() < 1e-9);
        assert!((by_size.timed_fct_us_10kb_to_500kb.mean - 100.0).abs() < 1e-9);
        assert!(
            (counts
                .timed_fct_us_500kb_up
                .as_ref()
                .expect("a large flow completed")
                .last
                - 1_000.0)
                .abs()
                < 1e-9
        );
        assert!((by_size.timed_slowdown.mean - 2.0).abs() < 1e-9);
        assert_eq!(counts.timed_fct_us.samples, 3);
        let with_unfinished = &by_size.timed_fct_with_unfinished_us;
        assert_eq!(with_unfinished.samples, 4);
        assert!(
            (with_unfinished.max - 1_400.0).abs() < 1.5,
            "{with_unfinished:?}"
        );
        assert!((by_size.timed_slowdown_with_unfinished.mean - 2.0).abs() < 1e-9);
    }
}
