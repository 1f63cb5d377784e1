//! Workloads shared by the designs: who sends to whom (a random derangement, the senders of an
//! incast) and flow sizes drawn from a published cumulative distribution (the tables in
//! `workloads/`): `size cdf` points, one a line, `#` lines skipped, a lone first number (a
//! HomaSim file's mean) skipped, the cdf in 0..1 or in percent. A size is drawn as HomaSim
//! draws it: the first point whose cdf is at least a uniform draw (a step CDF).

use rand::seq::SliceRandom;
use rand::Rng as _;

use crate::engine::rng::Rng;

/// A random derangement of `hosts` hosts (at least 2): host `h` sends to `to[h] != h`, and
/// every host receives from exactly one. Shuffle, then swap away every fixed point.
pub fn derangement(hosts: usize, rng: &mut Rng) -> Vec<usize> {
    debug_assert!(hosts >= 2);
    let mut to: Vec<usize> = (0..hosts).collect();
    to.shuffle(rng);
    for i in 0..hosts {
        if to[i] == i {
            let j = (i + 1) % hosts;
            to.swap(i, j);
        }
    }
    to
}

/// The senders of an incast to host `dst` among `hosts`: every other host, or `n` of them
/// drawn at random (`n` from 1 to `hosts - 1`), in host order.
pub fn incast_senders(hosts: usize, dst: usize, n: Option<usize>, rng: &mut Rng) -> Vec<usize> {
    let mut senders: Vec<usize> = (0..hosts).filter(|&h| h != dst).collect();
    if let Some(n) = n {
        senders.shuffle(rng);
        senders.truncate(n);
        senders.sort_unstable();
    }
    senders
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
}
