"""The Ethernet baseline through the command line: the permutation's --json summary carries
goodput and per-flow goodput for every transport (NDP with its trimming switches too), an NDP
incast delivers every byte, runs repeat exactly, the fct workload reports completion times under
the keys Stardust's fct report uses, and bad input (a flow-size file that is not a CDF among it) is
one line naming the key, exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import ROOT

PERMUTATION = "scenarios/baselines/permutation.toml"
INCAST_NDP = "scenarios/baselines/incast-ndp.toml"
PERMUTATION_DCQCN = "scenarios/baselines/permutation-dcqcn.toml"
INCAST_DCQCN = "scenarios/baselines/incast-dcqcn.toml"
PFC_VICTIM = "scenarios/baselines/pfc-victim.toml"
BFC_VICTIM = "scenarios/baselines/bfc-victim.toml"
SHORT = ["--set", "run.duration_ns=1000000", "--set", "run.warmup_ns=500000"]
# What permutation.toml's comment lists for NDP (htsim's -cwnd 23 -q 8).
NDP = ["--set", "host.transport=ndp", "--set", "switch.port_kind=trimming", "--set", "switch.queue_packets=8",
       "--set", "routing.mode=spray", "--set", "host.initial_cwnd_packets=23"]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cellfabric.cli", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


@pytest.mark.parametrize("transport", ["dctcp", "tcp", "mptcp", "ndp"])
def test_the_permutation_reports_goodput_per_flow(transport: str):
    more = {"tcp": ["--set", "run.strict=false"], "ndp": NDP,
            "mptcp": ["--set", "host.subflows=8"]}.get(transport, [])
    done = cli("run", PERMUTATION, *SHORT, *more, "--set", f"host.transport={transport}", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["design"] == "ethernet" and summary["transport"] == transport
    assert summary["hosts"] == 432 and summary["flows"] == 432
    assert 0.2 < summary["goodput"] < 1.0
    spread = summary["flow_goodput_gbps"]
    # At most line rate, give or take the one packet straddling the window's start; with NDP,
    # what a receiver held out of order when the window opened (at most the 23 packets a flow
    # has in flight) is counted when the hole before it fills.
    held_packets = 23 if transport == "ndp" else 1
    held_gbps = held_packets * 9000 * 8 / 0.5e-3 / 1e9
    assert spread["min"] <= spread["p1"] <= spread["p50"] <= spread["max"] <= 10.0 + held_gbps
    assert summary["goodput"] == pytest.approx(spread["mean"] / 10.0)
    assert summary["packets_created"] == (summary["packets_delivered"] + summary["packets_dropped"]
                                          + summary["packets_in_flight"])
    assert ("ndp" in summary) == (transport == "ndp")
    if transport == "ndp":
        # Pulled at line rate from the start: no slow start, nothing lost for good.
        assert summary["goodput"] > 0.8
        assert summary["ndp"]["pulls_sent"] > 0 and summary["timeouts"] == 0


def test_run_sample_ns_gives_each_flows_goodput_per_interval():
    import cellfabric

    overrides = {"topology.k": 4, "run.duration_ns": 2e6, "run.warmup_ns": 1e6, "run.sample_ns": 5e5}
    tables = cellfabric.run(PERMUTATION, overrides=overrides, progress=False).tables
    series, flows = tables["flow_series"], tables["flows"]
    assert list(series["flow"]) == list(range(16)) * 4, "16 flows in every one of 4 intervals"
    assert sorted(set(series["time_ns"])) == [5e5, 1e6, 1.5e6, 2e6]
    # The intervals after the warm-up average to the flows table's goodput (one 9000-byte
    # packet straddling the window's start aside).
    one_packet_gbps = 9000 * 8 / 1e-3 / 1e9
    rows = list(zip(series["flow"], series["time_ns"], series["goodput_gbps"], strict=True))
    for k in range(16):
        late = [g for f, t, g in rows if f == k and t > 1e6]
        assert sum(late) / len(late) == pytest.approx(flows["goodput_gbps"][k], abs=one_packet_gbps)
    unsampled = {**overrides, "run.sample_ns": None}
    assert "flow_series" not in cellfabric.run(PERMUTATION, overrides=unsampled, progress=False).tables


def test_an_ndp_incast_delivers_every_byte_and_repeats_exactly():
    args = ["run", INCAST_NDP, "--set", "traffic.senders=8", "--set", "run.duration_ns=10000000", "--json"]
    first, second = cli(*args), cli(*args)
    assert first.returncode == 0, first.stderr
    summary, again = json.loads(first.stdout), json.loads(second.stdout)
    for run in (summary, again):
        del run["perf"], run["provenance"]  # wall-clock figures and the command line's time
    assert summary == again, "same scenario and seed, same summary"
    assert summary["flows_completed"] == 8 and summary["packets_in_flight"] == 0
    assert summary["ndp"]["packets_trimmed"] > 0
    assert summary["retransmissions"] >= summary["ndp"]["nacks_sent"] > 0
    # 8 x 450 KB through the receiver's 10 Gbit/s link take 2.88 ms at best.
    ideal_us = 8 * 450_000 * 8 / 10e9 * 1e6
    assert ideal_us < summary["fct_us"]["last"] < 1.1 * ideal_us


def test_a_dcqcn_incast_over_pfc_drops_nothing_and_repeats_exactly():
    args = ["run", INCAST_DCQCN, "--set", "run.duration_ns=30000000", "--json"]
    first, second = cli(*args), cli(*args)
    assert first.returncode == 0, first.stderr
    summary, again = json.loads(first.stdout), json.loads(second.stdout)
    for run in (summary, again):
        del run["perf"], run["provenance"]
    assert summary == again, "same scenario and seed, same summary"
    assert summary["transport"] == "dcqcn" and summary["flows_completed"] == 64
    assert summary["packets_dropped"] == 0 and summary["pfc"]["lossless_drops"] == 0
    assert summary["pfc"]["pause_frames_sent"] > 0, "64 senders into one host pause their upstream"
    assert summary["dcqcn"]["cnps_sent"] > 0
    assert summary["packets_created"] == summary["packets_delivered"] + summary["packets_in_flight"]
    # 64 x 450 KB through the receiver's 10 Gbit/s link take 23.04 ms at best.
    assert 23.04e3 < summary["fct_us"]["last"] < 1.05 * 23.04e3


def test_pfc_per_priority_keeps_the_victim_flow_going_and_repeats_exactly():
    """pfc-victim.toml: an incast into host 5 on class 0 and an unrelated flow (the pattern's
    last, the fastest) on class 1 sharing its upstream links. Two classes: the incast's four
    flows share host 5's 10 Gbit/s (2.5 each) and the victim keeps the 7.5 host 0's flow leaves
    it; one class: the same pauses stop the victim, at about host 0's rate. Lossless both ways."""
    args = ["run", PFC_VICTIM, "--json"]
    first, second = cli(*args), cli(*args)
    assert first.returncode == 0, first.stderr
    two, again = json.loads(first.stdout), json.loads(second.stdout)
    for run in (two, again):
        del run["perf"], run["provenance"]
    assert two == again, "same scenario and seed, same summary"
    one_done = cli(*args, "--set", "switch.pfc_classes=1", "--set", "traffic.flow_classes=[0]")
    assert one_done.returncode == 0, one_done.stderr
    one = json.loads(one_done.stdout)
    for summary in (two, one):
        assert summary["packets_dropped"] == 0 and summary["pfc"]["lossless_drops"] == 0
        assert summary["packets_created"] == summary["packets_delivered"] + summary["packets_in_flight"]
        assert 2.2 < summary["flow_goodput_gbps"]["min"] < 2.6, summary["flow_goodput_gbps"]
    assert two["flow_goodput_gbps"]["max"] > 7.0, two["flow_goodput_gbps"]
    assert one["flow_goodput_gbps"]["max"] < 3.5, one["flow_goodput_gbps"]
    assert [c["class"] for c in two["pfc"]["classes"]] == [0, 1] and "classes" not in one["pfc"]


def test_bfc_keeps_the_victim_flow_going_with_queues_enough_and_not_with_one():
    """bfc-victim.toml: pfc-victim's flows on one class under BFC. With 32 queues per port each
    flow has a queue of its own, the incast's pauses name the incast flows' queues and the victim
    keeps about 7.5 Gbit/s; with one queue every flow collides and the victim is held near the
    incast flow's 2.5, as one PFC class holds it. Lossless and repeatable both ways."""
    args = ["run", BFC_VICTIM, "--json"]
    first, second = cli(*args), cli(*args)
    assert first.returncode == 0, first.stderr
    many, again = json.loads(first.stdout), json.loads(second.stdout)
    for run in (many, again):
        del run["perf"], run["provenance"]
    assert many == again, "same scenario and seed, same summary"
    one_done = cli(*args, "--set", "switch.per_flow.queues=1")
    assert one_done.returncode == 0, one_done.stderr
    one = json.loads(one_done.stdout)
    for summary in (many, one):
        assert summary["packets_dropped"] == 0 and summary["pfc"]["lossless_drops"] == 0
        assert summary["packets_created"] == summary["packets_delivered"] + summary["packets_in_flight"]
        assert 2.2 < summary["flow_goodput_gbps"]["min"] < 2.6, summary["flow_goodput_gbps"]
        assert summary["pfc"]["bfc"]["queue_pause_frames_sent"] > 0
    assert many["flow_goodput_gbps"]["max"] > 7.0, many["flow_goodput_gbps"]
    assert many["pfc"]["bfc"]["flow_collisions"] == 0, many["pfc"]["bfc"]
    assert one["flow_goodput_gbps"]["max"] < 3.5, one["flow_goodput_gbps"]
    assert one["pfc"]["bfc"]["flow_collisions"] > 0, one["pfc"]["bfc"]


def test_the_dcqcn_permutation_reports_goodput_and_pfc():
    done = cli("run", PERMUTATION_DCQCN, *SHORT, "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["flows"] == 432 and 0.05 < summary["goodput"] < 1.0
    assert summary["packets_dropped"] == 0 and "pfc" in summary and "dcqcn" in summary


@pytest.mark.parametrize("scenario, settings, message", [
    (PERMUTATION_DCQCN, ["switch.port_kind=drop_tail", "run.strict=false"],
     ' host.transport: "dcqcn" needs a lossless fabric (it never retransmits):'
     ' set switch.port_kind to "pfc", "bfc"'),
    (PERMUTATION, ["host.transport=dcqcn", "run.strict=false"], " host.transport: "),
    (PERMUTATION_DCQCN, ["switch.pfc_xoff_packets=100"], " switch.pfc_xoff_packets: "),
    (PERMUTATION_DCQCN, ["switch.pfc_xon_packets=96"], " switch.pfc_xon_packets: "),
    (PERMUTATION_DCQCN, ["switch.pfc_xoff_packets=0"], " switch.pfc_xoff_packets: "),
    (PERMUTATION_DCQCN, ["switch.red_kmin_bytes=300000"], " switch.red_kmin_bytes: "),
    (PERMUTATION_DCQCN, ["switch.red_pmax=0"], " switch.red_pmax: "),
    (PERMUTATION_DCQCN, ["switch.queue_bytes=900000"],
     ' switch.queue_bytes: not used with switch.port_kind = "pfc"'),
    (PERMUTATION_DCQCN, ["host.dcqcn.g=0"], " host.dcqcn.g: "),
    (PERMUTATION_DCQCN, ["host.dcqcn.timer_ns=0"], " host.dcqcn.timer_ns: "),
    (PERMUTATION_DCQCN, ["host.min_rto_ns=5000"], ' host.min_rto_ns: not used with host.transport = "dcqcn"'),
    (PERMUTATION, ["switch.pfc_xoff_packets=50"],
     ' switch.pfc_xoff_packets: not used with switch.port_kind = "drop_tail"'),
    (INCAST_NDP, ["switch.port_kind=pfc"],
     ' host.transport: "ndp" needs ports that trim: set switch.port_kind to "trimming"'),
    (PERMUTATION, ["switch.pfc=true"],
     ' switch.pfc: replaced by switch.port_kind (for what it chose, set switch.port_kind = "pfc"'),
    (PERMUTATION, ["switch.port_kind=lossless"],
     ' switch.port_kind: expected one of "drop_tail", "shared_buffer", "trimming", "pfc", "bfc",'
     ' "aquarius", "per_flow_ideal", got "lossless"'),
    (PFC_VICTIM, ["switch.pfc_classes=0"], " switch.pfc_classes: expected 1 to 8"),
    (PFC_VICTIM, ["switch.pfc_classes=9"], " switch.pfc_classes: expected 1 to 8"),
    (PERMUTATION, ["switch.pfc_classes=2"],
     ' switch.pfc_classes: not used with switch.port_kind = "drop_tail"'),
    (PERMUTATION, ["switch.pfc_class_service=round_robin"],
     ' switch.pfc_class_service: not used with switch.port_kind = "drop_tail"'),
    (PFC_VICTIM, ["switch.pfc_class_service=fair"], " switch.pfc_class_service: "),
    (PERMUTATION, ["traffic.flow_classes=[0]"],
     ' traffic.flow_classes: expected only with switch.port_kind = "pfc" (classes are PFC\'s priorities)'),
    (PFC_VICTIM, ["traffic.flow_classes=[0,2]"],
     " traffic.flow_classes: expected classes below switch.pfc_classes (2), got 2"),
    (PFC_VICTIM, ["switch.pfc_classes=1"],
     " traffic.flow_classes: expected classes below switch.pfc_classes (1)"),
    (PFC_VICTIM, ["switch.pfc_xoff_packets=47"],
     " switch.pfc_xoff_packets: expected switch.pfc_classes x (switch.pfc_xoff_packets + "),
    (PFC_VICTIM, ["traffic.pairs=[[0,0]]"], " traffic.pairs: expected two distinct hosts below 10"),
    (PFC_VICTIM, ["traffic.pairs=[[0,10]]"], " traffic.pairs: expected two distinct hosts below 10"),
    (PFC_VICTIM, ["traffic.pairs=[]"], " traffic.pairs: expected at least one"),
    (BFC_VICTIM, ["switch.per_flow.queues=0"],
     " switch.per_flow.queues: expected 1 to 128 queues per port, got 0"),
    (BFC_VICTIM, ["switch.per_flow.queues=129"],
     " switch.per_flow.queues: expected 1 to 128 queues per port, got 129"),
    (BFC_VICTIM, ["switch.per_flow.queues=-1"], " switch.per_flow.queues: "),
    (BFC_VICTIM, ["switch.per_flow.queues=many"], " switch.per_flow.queues: "),
    (BFC_VICTIM, ["switch.per_flow.pause_packets=0"],
     " switch.per_flow.pause_packets: expected at least 1 packet"),
    (BFC_VICTIM, ["switch.per_flow.pause_packets=40"],
     " switch.per_flow.pause_packets: expected at least 1 packet and fewer than"
     " switch.pfc_xoff_packets (40)"),
    (BFC_VICTIM, ["switch.bfc=true"], " switch.bfc: replaced by switch.port_kind"),
    (BFC_VICTIM, ["switch.port_kind=7"], " switch.port_kind: "),
    (BFC_VICTIM, ["switch.pfc_classes=2"], ' switch.pfc_classes: not used with switch.port_kind = "bfc"'),
    (BFC_VICTIM, ["traffic.flow_classes=[0]"],
     ' traffic.flow_classes: expected only with switch.port_kind = "pfc"'),
    (BFC_VICTIM, ["routing.mode=spray"],
     ' routing.mode: expected a per-flow mode (deterministic, ecmp, aquila_minimal_deterministic)'
     ' with switch.port_kind = "bfc"'),
    (PFC_VICTIM, ["switch.per_flow.queues=8"],
     ' switch.per_flow.queues: not used with switch.port_kind = "pfc"'),
    (PFC_VICTIM, ["switch.per_flow.pause_packets=8"],
     ' switch.per_flow.pause_packets: not used with switch.port_kind = "pfc"'),
])
def test_dcqcn_and_pfc_bad_input_is_one_line_naming_the_key(scenario, settings: list[str], message: str):
    test_bad_input_is_one_line_naming_the_key(scenario, settings, message)


@pytest.mark.parametrize("scenario, settings, message", [
    (PERMUTATION, ["switch.ecn_threshold_packets=100"], " switch.ecn_threshold_packets: "),
    (PERMUTATION, ["switch.queue_packets=0"], " switch.queue_packets: "),
    (PERMUTATION, ["host.transport=ndp"], " host.transport: "),
    (PERMUTATION, ["traffic.senders=3"], " traffic.senders: "),
    (PERMUTATION, ["host.subflows=0"], " host.subflows: "),
    (PERMUTATION, ["switch.trimming=true"], " switch.trimming: replaced by switch.port_kind"),
    (PERMUTATION, ["switch.port_kind=trimming"],
     ' switch.port_kind: "trimming" trims packets, which only "ndp" recovers'),
    (PERMUTATION, ["host.subflows=8"], ' host.subflows: not used with host.transport = "dctcp"'),
    (PERMUTATION, ["host.transport=mptcp", "traffic.single_path_flows=433"],
     " traffic.single_path_flows: expected at most the pattern's 432 flows"),
    (INCAST_NDP, ["routing.mode=ecmp"], " routing.mode: "),
    (INCAST_NDP, ["switch.port_kind=drop_tail", "run.strict=false"], " host.transport: "),
    (INCAST_NDP, ["switch.queue_bytes=90000"],
     ' switch.queue_bytes: not used with switch.port_kind = "trimming"'),
    (INCAST_NDP, ["switch.loss_probability=0.01"], " switch.loss_probability: "),
    (INCAST_NDP, ["host.ndp.pull_rate=0"], " host.ndp.pull_rate: "),
    (PERMUTATION, ["switch.return_to_sender=true"], " switch.return_to_sender: "),
    (INCAST_NDP, ["switch.return_to_sender=2"], " switch.return_to_sender: "),
    (INCAST_NDP, ["host.ndp.paths=8"], " host.ndp.paths: "),
    (INCAST_NDP, ["routing.mode=ecmp", "host.ndp.paths=2000"], " host.ndp.paths: "),
    (PERMUTATION, ["host.ndp.paths=8"], ' host.ndp.paths: not used with host.transport = "dctcp"'),
    (PERMUTATION, ["switch.random_drop_packets=101"], " switch.random_drop_packets: "),
    (PERMUTATION, ["switch.random_drop_packets=3", "switch.random_drop_probability=0"],
     " switch.random_drop_probability: "),
    (INCAST_NDP, ["switch.random_drop_packets=3"],
     ' switch.random_drop_packets: not used with switch.port_kind = "trimming"'),
    (INCAST_NDP, ["switch.cut_through=true"],
     ' switch.cut_through: not used with switch.port_kind = "trimming"'),
    (PERMUTATION, ["switch.random_drop_probability=0.5"],
     " switch.random_drop_probability: not used with switch.random_drop_packets = 0"),
])
def test_bad_input_is_one_line_naming_the_key(scenario, settings: list[str], message: str):
    sets = [arg for setting in settings for arg in ("--set", setting)]
    done = cli("run", scenario, *SHORT, *sets)
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert message in done.stderr, done.stderr


SHARED = "switch.port_kind=shared_buffer"


@pytest.mark.parametrize("scenario, settings, message", [
    (PERMUTATION, [SHARED, "switch.dt_alpha=0"], " switch.dt_alpha: expected a finite number above 0"),
    (PERMUTATION, [SHARED, "switch.dt_alpha=-1.5"], " switch.dt_alpha: expected a finite number above 0"),
    (PERMUTATION, [SHARED, "switch.dt_alpha=nan"], " switch.dt_alpha: "),
    (PERMUTATION, [SHARED, "switch.dt_alpha=inf"], " switch.dt_alpha: "),
    (PERMUTATION, [SHARED, "switch.dt_alpha=lots"], " switch.dt_alpha: "),
    (PERMUTATION, [SHARED, "switch.shared_buffer_packets=0"],
     " switch.shared_buffer_packets: expected at least 1 packet"),
    (PERMUTATION, [SHARED, "switch.shared_buffer_packets=-5"], " switch.shared_buffer_packets: "),
    (PERMUTATION, ["switch.shared_buffer_packets=1200"],
     ' switch.shared_buffer_packets: not used with switch.port_kind = "drop_tail"'),
    (PERMUTATION, ["switch.dt_alpha=2"], ' switch.dt_alpha: not used with switch.port_kind = "drop_tail"'),
    (PERMUTATION, ["switch.buffer=shared"],
     ' switch.buffer: replaced by switch.port_kind'
     ' (for what it chose, set switch.port_kind = "shared_buffer"'),
    (PERMUTATION_DCQCN, [SHARED], ' host.transport: "dcqcn" needs a lossless fabric'),
    (INCAST_NDP, [SHARED], ' host.transport: "ndp" needs ports that trim'),
    (PERMUTATION, [SHARED, "switch.queue_bytes=900000"],
     ' switch.queue_bytes: not used with switch.port_kind = "shared_buffer"'),
    (PERMUTATION, [SHARED, "switch.random_drop_packets=3"],
     ' switch.random_drop_packets: not used with switch.port_kind = "shared_buffer"'),
    (PERMUTATION, [SHARED, "switch.shared_buffer_packets=20"],
     " switch.ecn_threshold_packets: expected fewer packets than the longest queue"),
    (PERMUTATION, ["switch.queue_packets=100", SHARED, "switch.shared_buffer_packets=1200"],
     " switch.queue_packets: not used with switch.shared_buffer_packets set"),
])
def test_shared_buffer_bad_input_is_one_line_naming_the_key(scenario, settings: list[str], message: str):
    test_bad_input_is_one_line_naming_the_key(scenario, settings, message)


def test_a_shared_buffer_permutation_balances_its_ledger_and_counts_drops_by_cause():
    done = cli("run", PERMUTATION, *SHORT, "--set", "host.transport=tcp", "--set", "run.strict=false",
               "--set", SHARED, "--set", "switch.dt_alpha=0.5", "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    buffer = summary["shared_buffer"]
    assert buffer["threshold_drops"] + buffer["full_drops"] <= summary["packets_dropped"]
    assert summary["packets_dropped"] == (buffer["threshold_drops"] + buffer["full_drops"]
                                          + summary["packets_lost"])
    assert summary["packets_created"] == (summary["packets_delivered"] + summary["packets_dropped"]
                                          + summary["packets_in_flight"])
    # α = 0.5 over 12 ports × 100: a lone queue holds at most 0.5·1200/1.5 = 400 packets.
    assert 0 < buffer["occupied_peak_packets"] <= 1200 and summary["queue_peak_packets"] <= 400


FCT = "scenarios/baselines/fct.toml"
STARDUST_FCT = "scenarios/stardust/fct.toml"
# The keys both designs' fct summaries carry, so one command compares pull and push.
FCT_KEYS = ("timed_flows_started", "timed_flows_completed", "timed_fct_us", "timed_fct_us_500kb_up")


@pytest.mark.parametrize("transport", [[], ["--set", "host.transport=tcp"], NDP])
def test_the_fct_workload_reports_completion_times_with_stardusts_keys(transport: list[str]):
    sets = ["--set", "run.duration_ns=3000000", "--set", "run.warmup_ns=500000"]
    done = cli("run", FCT, *sets, *transport, "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["timed_flows_started"] > 10
    assert 0 < summary["timed_flows_completed"] <= summary["timed_flows_started"]
    assert summary["timed_slowdown"]["p1"] >= 1.0, "no flow beats its ideal"
    assert summary["flows_opened"] == summary["timed_flows_started"] + 430 * 4
    stardust = cli("run", STARDUST_FCT, *sets, "--json")
    assert stardust.returncode == 0, stardust.stderr
    pull = json.loads(stardust.stdout)
    for key in FCT_KEYS:
        assert key in summary and key in pull, key


@pytest.mark.parametrize("cdf, message", [
    ("100 0.5\n50 1\n", "line 2: sizes and cdf must not decrease"),
    ("100 0.2\n300 0.1\n400 1\n", "line 2: sizes and cdf must not decrease"),
    ("100 0.5\n200 0.9\n", "the cdf must end at 1 (or 100), ends at 0.9"),
    ("", "no `size cdf` points"),
    ("100 half\n", "line 1: expected `size cdf`"),
    (None, "cannot read"),
])
def test_a_flow_size_file_that_is_not_a_cdf_is_one_line_naming_the_key(tmp_path, cdf, message: str):
    path = tmp_path / "sizes.txt"
    if cdf is not None:
        path.write_text(cdf)
    done = cli("run", FCT, *SHORT, "--set", f'traffic.flow_sizes="{path}"')
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert " traffic.flow_sizes: " in done.stderr and message in done.stderr, done.stderr


@pytest.mark.parametrize("settings, message", [
    (["traffic.fct_dst=0"], " traffic.fct_dst: expected a host other than traffic.fct_src"),
    (["traffic.fct_dst=432"], " traffic.fct_dst: expected a host below 432, got 432"),
    (["traffic.fct_load=0"], " traffic.fct_load: "),
    (["traffic.fct_load=1.5"], " traffic.fct_load: "),
    (["traffic.background_flows=0"], " traffic.background_flows: "),
    (["traffic.flow_bytes=1000"], " traffic.flow_bytes: "),
    (["host.transport=mptcp"], " host.transport: \"mptcp\" cannot open flows during a run"),
    (["traffic.pattern=poisson", "traffic.load=0"], " traffic.load: "),
    (["traffic.pattern=closed_loop", "traffic.flows_per_host=0"], " traffic.flows_per_host: "),
    (["traffic.flows_per_host=2"], ' traffic.flows_per_host: not used with traffic.pattern = "fct"'),
    (["traffic.pattern=all_to_all"], ' traffic.pattern: expected "permutation", "incast", "pairs", "fct", '
                                     '"poisson" or "closed_loop", got "all_to_all"'),
    (["traffic.pattern=pairs"], " traffic.pairs: expected at least one [src, dst] pair"),
])
def test_bad_fct_settings_are_one_line_naming_the_key(settings: list[str], message: str):
    sets = [arg for setting in settings for arg in ("--set", setting)]
    done = cli("run", FCT, *SHORT, *sets)
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert message in done.stderr, done.stderr
