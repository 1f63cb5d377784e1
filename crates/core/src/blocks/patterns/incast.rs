//! Incast: hosts send one flow each to `traffic.incast_host`, all starting together (the
//! Stardust paper's incast, §6.3); `traffic.senders` of them drawn from the pattern stream, or
//! every other host.

use rand::seq::SliceRandom;

use super::{Flows, PatternKeys, TrafficPattern};
use crate::engine::rng::Rng;
use crate::keys::invalid;

/// The pattern.
pub const PATTERN: TrafficPattern = TrafficPattern {
    name: "incast",
    description: "hosts send to traffic.incast_host, all together (traffic.senders of them, drawn; absent: every other host)",
    keys: &["traffic.incast_host", "traffic.senders"],
    ..TrafficPattern::made_at_build(flows)
};

fn flows(keys: &PatternKeys<'_>, hosts: usize, rng: &mut Rng) -> Flows {
    let dst = keys.incast_host as usize;
    if dst >= hosts {
        return Err(invalid(
            "traffic.incast_host",
            format!("expected a host below {hosts}, got {dst}"),
        ));
    }
    if let Some(n) = keys.senders {
        if n == 0 || n as usize > hosts - 1 {
            return Err(invalid(
                "traffic.senders",
                format!("expected 1 to {} (the other hosts)", hosts - 1),
            ));
        }
    }
    let n = keys.senders.map(|n| n as usize);
    let senders = senders(hosts, dst, n, rng);
    Ok(senders.into_iter().map(|s| keys.flow(s, dst)).collect())
}

/// The senders of an incast to host `dst` among `hosts`: every other host, or `n` of them
/// drawn at random (`n` from 1 to `hosts - 1`), in host order.
pub fn senders(hosts: usize, dst: usize, n: Option<usize>, rng: &mut Rng) -> Vec<usize> {
    let mut senders: Vec<usize> = (0..hosts).filter(|&h| h != dst).collect();
    if let Some(n) = n {
        senders.shuffle(rng);
        senders.truncate(n);
        senders.sort_unstable();
    }
    senders
}
