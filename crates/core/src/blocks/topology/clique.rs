//! The Aquila Clique (Gibson et al., "Aquila: A unified, low-latency fabric for datacenter
//! networks", NSDI '22, §2, §3.2 and App. A): pods of TiNs fully meshed over local links, pods
//! fully meshed over global links, hosts on every TiN. Aquila's prototype is 48 pods of 12 TiNs
//! with 24 local and 8 global ports each and two hosts per TiN: 576 TiNs, 1 152 hosts, two global
//! links per pod pair; the half-scale variant of §5.1 (Fig. 10) has 24 pods and four links per
//! pair.
//!
//! It is its own shape, not a [`Topology::dragonfly`]: that shape joins every router pair of a
//! group by one local link and needs a group's global links to divide evenly among the other
//! groups, so it refuses 48 × 12 (96 global ports per pod over 47 peers leave 2 spare ports per
//! pod) and cannot give a TiN pair its two parallel local links.
//!
//! TiN ports: `0..hosts_per_tin` hosts, then `local_ports` local ports, then `global_ports`
//! global ports. Local links: `m = ⌊local_ports / (tins_per_pod − 1)⌋` parallel links to every
//! other TiN of the pod, to the peers in increasing order; the spare local ports are unused or
//! (with [`SpareLocalPorts::Partner`]) extra links to the line-card partner (TiN `2i` with
//! `2i + 1`, App. A's two TiNs per line card). Global links: a pod's `tins_per_pod ·
//! global_ports` global ports `k` sit on TiN `k mod tins_per_pod`, slot `⌊k / tins_per_pod⌋`;
//! with `n = ⌊tins_per_pod · global_ports / (pods − 1)⌋` links per pod pair, port `k` of pod `p`
//! (for `k < n · (pods − 1)`) goes to pod `(p + 1 + ⌊k / n⌋) mod pods`, which sees it as its
//! port `n · (pods − 2 − ⌊k / n⌋) + k mod n`; the rest are spare. The `n` links of one pod pair
//! are consecutive ports, so they sit on `n` different TiNs (our reading of the arrangement,
//! which the paper does not give; `docs/validation/aquila.md`).

use super::{Attachment, Topology, TopologyError};

/// What a TiN's local ports beyond its full mesh do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpareLocalPorts {
    /// Left uncabled.
    Unused,
    /// Extra parallel links to the line-card partner (TiN `2i` with `2i + 1`).
    Partner,
}

/// The parameters of a Clique ([`Topology::clique`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clique {
    /// Pods, fully meshed by global links.
    pub pods: usize,
    /// TiNs per pod, fully meshed by local links.
    pub tins_per_pod: usize,
    /// Hosts on each TiN.
    pub hosts_per_tin: usize,
    /// Local (intra-pod) ports per TiN.
    pub local_ports: usize,
    /// Global (inter-pod) ports per TiN.
    pub global_ports: usize,
    /// What the local ports beyond the mesh do.
    pub spare_local: SpareLocalPorts,
}

impl Clique {
    /// Aquila's prototype: 48 pods of 12 TiNs, 24 local and 8 global ports, two hosts per TiN.
    pub const AQUILA: Clique = Clique {
        pods: 48,
        tins_per_pod: 12,
        hosts_per_tin: 2,
        local_ports: 24,
        global_ports: 8,
        spare_local: SpareLocalPorts::Unused,
    };

    /// Parallel local links between two TiNs of a pod.
    pub fn links_per_tin_pair(&self) -> usize {
        self.local_ports / self.tins_per_pod.saturating_sub(1).max(1)
    }

    /// Global links between two pods.
    pub fn links_per_pod_pair(&self) -> usize {
        self.tins_per_pod * self.global_ports / self.pods.saturating_sub(1).max(1)
    }

    /// Local ports per TiN left over by the mesh.
    pub fn spare_local_ports(&self) -> usize {
        self.local_ports - self.links_per_tin_pair() * (self.tins_per_pod - 1)
    }

    /// Ports of a TiN: hosts, local and global.
    pub fn ports_per_tin(&self) -> usize {
        self.hosts_per_tin + self.local_ports + self.global_ports
    }

    /// Checks that the ports can form both meshes; the error names the parameter at fault.
    pub fn check(&self) -> Result<(), TopologyError> {
        let refuse =
            |name: &'static str, message: String| Err(TopologyError::Parameter { name, message });
        if self.pods < 2 {
            return refuse(
                "pods",
                format!("expected at least 2 pods, got {}", self.pods),
            );
        }
        if self.hosts_per_tin == 0 {
            return refuse("hosts_per_tin", "expected at least 1 host per TiN".into());
        }
        if self.tins_per_pod < 2 || self.tins_per_pod - 1 > self.local_ports {
            return refuse("tins_per_pod", format!(
                "a pod's TiNs are fully meshed by local links: with {} local ports per TiN, expected 2 to {} TiNs per pod, got {}",
                self.local_ports, self.local_ports + 1, self.tins_per_pod
            ));
        }
        let global_ports = self.tins_per_pod * self.global_ports;
        if self.pods - 1 > global_ports {
            return refuse("pods", format!(
                "pods are fully meshed by global links: a pod has {global_ports} global ports ({} TiNs × {}), so expected at most {} pods, got {}",
                self.tins_per_pod, self.global_ports, global_ports + 1, self.pods
            ));
        }
        let partner = self.spare_local == SpareLocalPorts::Partner;
        if partner && (self.tins_per_pod % 2 == 1 || self.spare_local_ports() == 0) {
            return refuse("spare_local_ports", format!(
                "\"partner\" joins TiNs 2i and 2i + 1 by the local ports the mesh leaves: expected an even tins_per_pod and spare ports, got {} TiNs with {} spare",
                self.tins_per_pod, self.spare_local_ports()
            ));
        }
        Ok(())
    }
}

impl Topology {
    /// A small Clique for tests: `pods` pods of 4 TiNs, two hosts each, two links per TiN
    /// pair, two global ports per TiN.
    #[cfg(test)]
    pub(crate) fn small_clique(pods: usize) -> Topology {
        Topology::clique(Clique {
            pods,
            tins_per_pod: 4,
            hosts_per_tin: 2,
            local_ports: 6,
            global_ports: 2,
            spare_local: SpareLocalPorts::Unused,
        })
        .expect("a valid small Clique")
    }

    /// The Clique `spec` describes (see the module's doc): TiN `i` of pod `p` is switch
    /// `p · tins_per_pod + i`, in group `p`, its hosts numbered in switch order.
    pub fn clique(spec: Clique) -> Result<Topology, TopologyError> {
        spec.check()?;
        let (pods, tins) = (spec.pods, spec.tins_per_pod);
        let mut t = Topology::new();
        for pod in 0..pods {
            for _ in 0..tins {
                let tin = t.add_switch(spec.ports_per_tin());
                t.set_group(tin, pod);
                for port in 0..spec.hosts_per_tin {
                    t.attach_host(tin, port);
                }
            }
        }
        for pod in 0..pods {
            cable_pod(&mut t, &spec, pod)?;
        }
        cable_pods(&mut t, &spec)?;
        Ok(t)
    }
}

/// The local links of pod `pod`: `m` parallel links per TiN pair, then the spare ports.
fn cable_pod(t: &mut Topology, spec: &Clique, pod: usize) -> Result<(), TopologyError> {
    let tins = spec.tins_per_pod;
    let m = spec.links_per_tin_pair();
    let tin = |i: usize| pod * tins + i;
    // TiN r's first local port toward peer q.
    let first = |r: usize, q: usize| spec.hosts_per_tin + m * if q < r { q } else { q - 1 };
    let port = |switch, port| Attachment::SwitchPort { switch, port };
    for r in 0..tins {
        for q in r + 1..tins {
            for lane in 0..m {
                t.connect(
                    port(tin(r), first(r, q) + lane),
                    port(tin(q), first(q, r) + lane),
                )?;
            }
        }
    }
    if spec.spare_local == SpareLocalPorts::Partner {
        let spare_base = spec.hosts_per_tin + m * (tins - 1);
        for r in (0..tins).step_by(2) {
            for lane in 0..spec.spare_local_ports() {
                t.connect(
                    port(tin(r), spare_base + lane),
                    port(tin(r + 1), spare_base + lane),
                )?;
            }
        }
    }
    Ok(())
}

/// The global links: `n` per pod pair in the arrangement the module's doc gives.
fn cable_pods(t: &mut Topology, spec: &Clique) -> Result<(), TopologyError> {
    let (pods, tins) = (spec.pods, spec.tins_per_pod);
    let n = spec.links_per_pod_pair();
    let global_base = spec.hosts_per_tin + spec.local_ports;
    let end = |pod: usize, k: usize| Attachment::SwitchPort {
        switch: pod * tins + k % tins,
        port: global_base + k / tins,
    };
    for pod in 0..pods {
        for k in 0..n * (pods - 1) {
            let offset = k / n;
            let far_pod = (pod + 1 + offset) % pods;
            let far_k = n * (pods - 2 - offset) + k % n;
            if (far_pod, far_k) > (pod, k) {
                t.connect(end(pod, k), end(far_pod, far_k))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocks::topology::PortClass;

    /// Links between every pair of pods, and the TiNs each pod pair's links sit on.
    fn pod_pair_links(t: &Topology, pods: usize) -> (Vec<usize>, Vec<Vec<usize>>) {
        let mut links = vec![0; pods * pods];
        let mut tins = vec![Vec::new(); pods * pods];
        for s in 0..t.switches() {
            for far in t.switch_neighbours(s) {
                let (a, b) = (t.group(s), t.group(far));
                if a != b {
                    links[a * pods + b] += 1;
                    tins[a * pods + b].push(s);
                }
            }
        }
        (links, tins)
    }

    #[test]
    fn aquila_has_the_papers_counts_and_two_links_per_pair() {
        let t = Topology::clique(Clique::AQUILA).unwrap();
        assert_eq!((t.switches(), t.endpoints(), t.groups()), (576, 1152, 48));
        let (links, tins) = pod_pair_links(&t, 48);
        for a in 0..48 {
            for b in (0..48).filter(|&b| b != a) {
                assert_eq!(links[a * 48 + b], 2, "pods {a} and {b}");
                let mut on = tins[a * 48 + b].clone();
                on.dedup();
                assert_eq!(on.len(), 2, "pods {a}, {b}: links on two TiNs");
            }
        }
        // 1 128 pod pairs of two cables each; two global ports spare per pod.
        assert_eq!(links.iter().sum::<usize>() / 2, 2256);
        let spare_global = (0..576)
            .flat_map(|s| (2 + 24..34).map(move |p| (s, p)))
            .filter(|&(s, p)| t.peer(s, p).is_none())
            .count();
        assert_eq!(spare_global, 2 * 48);
        // Two links to each of the 11 peers, two local ports left.
        for s in 0..576 {
            let local: Vec<usize> = t
                .switch_neighbours(s)
                .into_iter()
                .filter(|&n| t.group(n) == t.group(s))
                .collect();
            assert_eq!(local.len(), 22, "TiN {s}");
            assert!(local
                .iter()
                .all(|&n| local.iter().filter(|&&m| m == n).count() == 2));
            assert_eq!(t.port_class(s, 0), PortClass::Terminal);
            assert_eq!(t.port_class(s, 2), PortClass::Local);
            assert_eq!(t.port_class(s, 24), PortClass::Unused);
            assert_eq!(t.port_class(s, 26), PortClass::Global);
        }
    }

    #[test]
    fn half_scale_has_four_links_per_pod_pair_on_four_tins() {
        let spec = Clique {
            pods: 24,
            ..Clique::AQUILA
        };
        let t = Topology::clique(spec).unwrap();
        assert_eq!((t.switches(), t.endpoints()), (288, 576));
        let (links, tins) = pod_pair_links(&t, 24);
        for a in 0..24 {
            for b in (0..24).filter(|&b| b != a) {
                assert_eq!(links[a * 24 + b], 4);
                let mut on = tins[a * 24 + b].clone();
                on.sort();
                on.dedup();
                assert_eq!(on.len(), 4, "pods {a}, {b}");
            }
        }
    }

    #[test]
    fn partner_spares_join_line_card_partners() {
        let spec = Clique {
            pods: 3,
            spare_local: SpareLocalPorts::Partner,
            ..Clique::AQUILA
        };
        let t = Topology::clique(spec).unwrap();
        let to_partner = t.switch_neighbours(0).iter().filter(|&&n| n == 1).count();
        let to_other = t.switch_neighbours(0).iter().filter(|&&n| n == 2).count();
        assert_eq!((to_partner, to_other), (4, 2));
        assert!((2..26).all(|p| t.port_class(0, p) == PortClass::Local));
    }

    #[test]
    fn ports_that_cannot_form_the_meshes_are_refused_by_name() {
        let refused = |spec: Clique| match Topology::clique(spec) {
            Err(TopologyError::Parameter { name, .. }) => name,
            other => panic!("{spec:?}: {other:?}"),
        };
        let a = Clique::AQUILA;
        assert_eq!(
            refused(Clique {
                tins_per_pod: 26,
                ..a
            }),
            "tins_per_pod"
        );
        assert_eq!(refused(Clique { pods: 98, ..a }), "pods");
        assert_eq!(refused(Clique { pods: 1, ..a }), "pods");
        assert_eq!(
            refused(Clique {
                hosts_per_tin: 0,
                ..a
            }),
            "hosts_per_tin"
        );
        let odd = Clique {
            tins_per_pod: 11,
            pods: 3,
            spare_local: SpareLocalPorts::Partner,
            ..a
        };
        assert_eq!(refused(odd), "spare_local_ports");
        // 97 pods is the largest at one link per pair (§6).
        let widest = Clique { pods: 97, ..a };
        assert!(widest.check().is_ok());
        assert_eq!(widest.links_per_pod_pair(), 1);
    }
}
