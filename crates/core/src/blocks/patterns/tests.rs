//! The patterns' flow lists on small cases worked by hand, their checks and their unused keys.

// Tests: a case worked by hand reads best whole (the 80-line limit is for the model).
#![allow(clippy::too_many_lines)]

use super::*;

/// The Ethernet baseline's patterns, in its order.
const HOST_PATTERNS: &[&TrafficPattern] = PATTERNS.split_at(6).0;

/// Stardust's patterns, in its order.
const SOURCE_PATTERNS: &[&TrafficPattern] = &[
    &permutation::PATTERN,
    &listed::PATTERN,
    &incast::PATTERN,
    &all_to_all::PATTERN,
    &fct::PATTERN,
];

const TCP: TransportHosts = TransportHosts {
    transport: Transport::Tcp,
    packet_bytes: 9000,
};

fn keys(pattern: &'static TrafficPattern) -> PatternKeys<'static> {
    PatternKeys {
        pattern,
        flow_bytes: None,
        incast_host: 0,
        senders: None,
        fct: FctKeys {
            src: 0,
            dst: 1,
            load: 0.5,
            flow_sizes: Some("sizes.txt"),
            background_flows: 2,
        },
        load: 0.5,
        flows_per_host: 1,
        pairs: &[],
        flows: &[],
        classes: 4,
    }
}

fn ends(flows: &[PatternFlow]) -> Vec<(usize, usize)> {
    flows.iter().map(|f| (f.src, f.dst)).collect()
}

#[test]
fn two_hosts_have_one_derangement_and_every_permutation_is_one() {
    let two = keys(&permutation::PATTERN).flows(2, 7, false).unwrap();
    assert_eq!(ends(&two), vec![(0, 1), (1, 0)]);
    assert!(two.iter().all(|f| f.load == 0.5 && f.class == 0));
    for seed in 0..20 {
        let flows = keys(&permutation::PATTERN).flows(9, seed, false).unwrap();
        let mut received: Vec<usize> = flows.iter().map(|f| f.dst).collect();
        received.sort_unstable();
        assert_eq!(received, (0..9).collect::<Vec<_>>());
        assert!(flows
            .iter()
            .enumerate()
            .all(|(h, f)| f.src == h && f.dst != h));
    }
    let one = keys(&permutation::PATTERN).flows(1, 7, false).unwrap_err();
    assert_eq!(one.key, "topology");
}

#[test]
fn an_incast_sends_from_every_other_host_or_from_drawn_senders() {
    let into_2 = PatternKeys {
        incast_host: 2,
        ..keys(&incast::PATTERN)
    };
    assert_eq!(
        ends(&into_2.flows(4, 1, true).unwrap()),
        vec![(0, 2), (1, 2), (3, 2)]
    );
    let two_of_them = PatternKeys {
        senders: Some(2),
        ..into_2
    };
    let drawn = ends(&two_of_them.flows(4, 1, true).unwrap());
    assert_eq!(drawn.len(), 2);
    assert!(drawn.windows(2).all(|w| w[0].0 < w[1].0), "in host order");
    assert!(drawn.iter().all(|&(s, d)| d == 2 && s != 2));
    // The draw is the pattern stream's shuffle of the other hosts, cut to the senders.
    assert_eq!(
        drawn,
        ends(&two_of_them.flows(4, 1, true).unwrap()),
        "same seed, same senders"
    );
    let too_many = PatternKeys {
        senders: Some(4),
        ..into_2
    };
    assert_eq!(
        too_many.flows(4, 1, true).unwrap_err().key,
        "traffic.senders"
    );
    let outside = PatternKeys {
        incast_host: 4,
        ..into_2
    };
    assert_eq!(
        outside.flows(4, 1, true).unwrap_err().key,
        "traffic.incast_host"
    );
}

#[test]
fn pairs_are_the_listed_hosts_in_order() {
    let pairs = PatternKeys {
        pairs: &[[3, 0], [1, 2], [3, 2]],
        ..keys(&pairs::PATTERN)
    };
    assert_eq!(
        ends(&pairs.flows(4, 1, true).unwrap()),
        vec![(3, 0), (1, 2), (3, 2)]
    );
    let outside = pairs.flows(3, 1, true).unwrap_err();
    assert_eq!(outside.key, "traffic.pairs");
    assert!(
        outside.message.contains("got [3, 0]"),
        "{}",
        outside.message
    );
    let looped = PatternKeys {
        pairs: &[[1, 1]],
        ..pairs
    };
    assert!(looped.flows(4, 1, true).is_err());
    let none = keys(&pairs::PATTERN).validate(HOST_PATTERNS, Some(TCP));
    assert_eq!(none.unwrap_err().key, "traffic.pairs");
}

#[test]
fn all_to_all_splits_each_hosts_load_over_the_others() {
    let flows = PatternKeys {
        load: 0.6,
        ..keys(&all_to_all::PATTERN)
    }
    .flows(3, 1, false)
    .unwrap();
    assert_eq!(
        ends(&flows),
        vec![(0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1)]
    );
    assert!(flows.iter().all(|f| (f.load - 0.3).abs() < 1e-12));
}

#[test]
fn listed_flows_keep_their_loads_and_classes() {
    let list = [
        ListedFlow {
            src: 0,
            dst: 2,
            load: 0.25,
            class: 1,
        },
        ListedFlow {
            src: 0,
            dst: 1,
            load: 0.75,
            class: 0,
        },
    ];
    let listed = PatternKeys {
        flows: &list,
        ..keys(&listed::PATTERN)
    };
    let flows = listed.flows(3, 1, false).unwrap();
    assert_eq!(
        flows,
        vec![
            PatternFlow {
                src: 0,
                dst: 2,
                load: 0.25,
                class: 1
            },
            PatternFlow {
                src: 0,
                dst: 1,
                load: 0.75,
                class: 0
            },
        ]
    );
    let over = [
        ListedFlow {
            load: 0.5,
            ..list[0].clone()
        },
        list[1].clone(),
    ];
    let error = PatternKeys {
        flows: &over,
        ..listed
    }
    .flows(3, 1, false)
    .unwrap_err();
    assert_eq!(error.key, "traffic.flows[1].load");
    let high_class = [ListedFlow {
        class: 4,
        ..list[0].clone()
    }];
    let error = PatternKeys {
        flows: &high_class,
        ..listed
    }
    .validate(SOURCE_PATTERNS, None)
    .unwrap_err();
    assert_eq!(
        (error.key.as_str(), error.message.as_str()),
        ("traffic.flows[0].class", "expected 0 to 3")
    );
}

/// Hosts 2, 3 and 4 keep two background flows each, at half of 0.6 apiece, to hosts other
/// than themselves and the timed receiver 1; two to one destination are one flow.
#[test]
fn fct_background_splits_the_load_and_never_reaches_the_timed_receiver() {
    let fct = PatternKeys {
        load: 0.6,
        ..keys(&fct::PATTERN)
    };
    for seed in 0..20 {
        let flows = fct.flows(5, seed, false).unwrap();
        for h in 2..5 {
            let sent: Vec<&PatternFlow> = flows.iter().filter(|f| f.src == h).collect();
            let load: f64 = sent.iter().map(|f| f.load).sum();
            assert!((load - 0.6).abs() < 1e-12, "host {h} offers {load}");
            assert!(sent.iter().all(|f| f.dst != 1 && f.dst != h));
            assert!(sent
                .iter()
                .all(|f| (f.load - 0.3).abs() < 1e-12 || (f.load - 0.6).abs() < 1e-12));
        }
        assert!(flows.iter().all(|f| f.src >= 2));
    }
    assert!(
        fct.flows(5, 1, true).unwrap().is_empty(),
        "transport hosts open them"
    );
    assert!(matches!(fct.opening(), Some(Opening::Fct(_))));
    assert_eq!(fct.timed().map(|k| (k.src, k.dst)), Some((0, 1)));
    assert!(keys(&poisson::PATTERN).timed().is_none());
}

#[test]
fn each_check_names_its_key() {
    let error = |k: PatternKeys<'_>, hosts| k.validate(HOST_PATTERNS, hosts).unwrap_err().key;
    let no_sizes = |p| PatternKeys {
        fct: FctKeys {
            flow_sizes: None,
            ..keys(p).fct
        },
        ..keys(p)
    };
    for p in [&fct::PATTERN, &poisson::PATTERN, &closed_loop::PATTERN] {
        assert_eq!(error(no_sizes(p), Some(TCP)), "traffic.flow_sizes");
        assert!(keys(p).validate(HOST_PATTERNS, Some(TCP)).is_ok());
    }
    let poisson = keys(&poisson::PATTERN);
    assert_eq!(
        error(
            PatternKeys {
                load: 0.0,
                ..poisson
            },
            None
        ),
        "traffic.load"
    );
    let closed = keys(&closed_loop::PATTERN);
    assert_eq!(
        error(
            PatternKeys {
                flows_per_host: 0,
                ..closed
            },
            None
        ),
        "traffic.flows_per_host"
    );
    let fct = keys(&fct::PATTERN);
    let with_fct = |f: FctKeys<'static>| PatternKeys { fct: f, ..fct };
    assert_eq!(
        error(
            with_fct(FctKeys {
                load: 1.01,
                ..fct.fct
            }),
            None
        ),
        "traffic.fct_load"
    );
    assert_eq!(
        error(with_fct(FctKeys { dst: 0, ..fct.fct }), None),
        "traffic.fct_dst"
    );
    assert_eq!(
        error(
            with_fct(FctKeys {
                background_flows: 0,
                ..fct.fct
            }),
            None
        ),
        "traffic.background_flows"
    );
    let permutation = keys(&permutation::PATTERN);
    assert_eq!(
        error(
            PatternKeys {
                flow_bytes: Some(0),
                ..permutation
            },
            None
        ),
        "traffic.flow_bytes"
    );
    assert_eq!(
        error(
            PatternKeys {
                senders: Some(0),
                ..permutation
            },
            None
        ),
        "traffic.senders"
    );
    let huge = PatternKeys {
        flow_bytes: Some(9000 << 32),
        ..permutation
    };
    assert!(
        huge.validate(HOST_PATTERNS, None).is_ok(),
        "paced sources have no segment count"
    );
    assert_eq!(error(huge, Some(TCP)), "traffic.flow_bytes");
}

#[test]
fn transport_hosts_run_connections_they_can_open() {
    let all_to_all = keys(&all_to_all::PATTERN);
    assert!(all_to_all.validate(SOURCE_PATTERNS, None).is_ok());
    let error = all_to_all.validate(SOURCE_PATTERNS, Some(TCP)).unwrap_err();
    assert_eq!(error.key, "traffic.pattern");
    assert_eq!(
        error.message,
        r#"expected "permutation", "incast" or "fct" with host.transport, got "all_to_all""#
    );
    let mptcp = TransportHosts {
        transport: Transport::Mptcp,
        ..TCP
    };
    let fct = keys(&fct::PATTERN);
    assert_eq!(
        fct.validate(HOST_PATTERNS, Some(mptcp)).unwrap_err().key,
        "host.transport"
    );
    assert!(keys(&incast::PATTERN)
        .validate(HOST_PATTERNS, Some(mptcp))
        .is_ok());
    let sized = PatternKeys {
        flow_bytes: Some(1000),
        ..fct
    };
    assert_eq!(
        sized.validate(HOST_PATTERNS, Some(TCP)).unwrap_err().key,
        "traffic.flow_bytes"
    );
    assert!(
        sized.validate(SOURCE_PATTERNS, None).is_ok(),
        "paced sources send fixed-size flows"
    );
}

#[test]
fn a_pattern_is_named_among_the_designs_patterns() {
    assert_eq!(
        resolve(HOST_PATTERNS, "poisson").unwrap().name,
        poisson::PATTERN.name
    );
    let error = resolve(HOST_PATTERNS, "all_to_all").unwrap_err();
    assert_eq!(error.key, "traffic.pattern");
    assert_eq!(
        error.message,
        r#"expected "permutation", "incast", "pairs", "fct", "poisson" or "closed_loop", got "all_to_all""#
    );
    let mut names: Vec<&str> = PATTERNS.iter().map(|p| p.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), PATTERNS.len(), "names are unique");
    for p in PATTERNS {
        assert!(
            p.flows.is_some() || p.opening.is_some(),
            "{} makes no flows",
            p.name
        );
        assert!(
            p.keys.iter().all(|k| k.starts_with("traffic.")),
            "{}",
            p.name
        );
    }
}

#[test]
fn the_other_patterns_keys_are_unused_once_each() {
    let unused = |p, offered| -> Vec<&str> {
        keys(p)
            .unused(offered)
            .into_iter()
            .map(|(k, _)| k)
            .collect()
    };
    assert_eq!(
        unused(&fct::PATTERN, HOST_PATTERNS),
        [
            "traffic.incast_host",
            "traffic.senders",
            "traffic.pairs",
            "traffic.load",
            "traffic.flows_per_host"
        ]
    );
    assert_eq!(
        unused(&poisson::PATTERN, HOST_PATTERNS),
        [
            "traffic.incast_host",
            "traffic.senders",
            "traffic.pairs",
            "traffic.fct_src",
            "traffic.fct_dst",
            "traffic.fct_load",
            "traffic.background_flows",
            "traffic.flows_per_host"
        ]
    );
    let listed = keys(&listed::PATTERN).unused(SOURCE_PATTERNS);
    let (last, because) = listed.last().unwrap();
    assert_eq!(*last, "traffic.load");
    assert_eq!(
        because,
        r#"traffic.pattern = "flows" (each flow has its own load)"#
    );
    assert_eq!(
        listed[0],
        (
            "traffic.incast_host",
            r#"traffic.pattern = "flows""#.to_string()
        )
    );
    assert!(!unused(&permutation::PATTERN, SOURCE_PATTERNS).contains(&"traffic.load"));
}

#[test]
fn a_key_a_design_will_not_leave_unused_is_refused_with_another_pattern() {
    let permutation = keys(&permutation::PATTERN);
    let error = permutation
        .refuse_unless_own("traffic.senders", true)
        .unwrap_err();
    assert_eq!(error.key, "traffic.senders");
    assert_eq!(
        error.message,
        r#"applies only to traffic.pattern = "incast""#
    );
    assert!(permutation
        .refuse_unless_own("traffic.senders", false)
        .is_ok());
    assert!(keys(&incast::PATTERN)
        .refuse_unless_own("traffic.senders", true)
        .is_ok());
}

/// The stream the patterns draw from is the scenario's pattern stream: a permutation of the
/// same seed is the same whichever design asks.
#[test]
fn flows_draw_from_the_pattern_stream() {
    let mut rng = pattern_rng(11);
    let direct = permutation::derangement(6, &mut rng);
    let flows = keys(&permutation::PATTERN).flows(6, 11, true).unwrap();
    assert_eq!(flows.iter().map(|f| f.dst).collect::<Vec<_>>(), direct);
}
