"""Aquila's topology arithmetic against the numbers the paper prints (Gibson et al., "Aquila: A
unified, low-latency fabric for datacenter networks", NSDI '22, §2, §5.1, §6, App. A), and the
calculator's refusals of a Clique the ports cannot build."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from cellfabric.cli import main
from cellfabric.plan import PlanInputError
from cellfabric.plan_aquila import aquila, clique


def test_the_prototype_clique_has_the_papers_counts():
    c = clique()
    assert (c["tins"], c["hosts"]) == (576, 1152)  # §4.2, §5.1
    assert c["global_ports_per_pod"] == 96  # App. A
    assert c["global_links_per_pod_pair"] == 2  # §3.2, App. A
    assert c["pod_pairs"] == 47 * 48 // 2 == 1128  # App. A's "47 x 48 / 2 = 1128" cables
    assert c["pod_pair_gbps"] == 50  # §6: "2x25Gbps"
    assert c["pod_pair_share_of_injection"] == pytest.approx(1 / 4)  # §6: "1/4 the maximum injection"
    assert c["pod_shift_oversubscription"] == pytest.approx(2.0)  # §2: "2:1 oversubscribed"
    assert c["uniform_global_load"] < 1  # §2: "non-blocking for uniform random"
    assert (c["max_pods"], c["max_tins"]) == (97, 1164)  # §6: down to one link per pod pair


def test_half_scale_matches_the_ip_injection_rate():
    half = aquila()["half_scale"]
    assert (half["pods"], half["tins"], half["hosts"]) == (24, 288, 576)
    assert half["global_links_per_pod_pair"] == 4
    # §5.1: "matching inter-pod bandwidth to the IP injection rate from each TiN".
    assert half["pod_pair_share_of_ip_injection"] == pytest.approx(1.0)


def test_the_widest_clique_has_one_link_per_pod_pair():
    widest = aquila()["widest"]
    links, spare = widest["global_links_per_pod_pair"], widest["spare_global_ports_per_pod"]
    assert (widest["pods"], links, spare) == (97, 1, 0)


def test_counts_follow_the_keys_not_constants():
    c = clique(pods=6, tins_per_pod=4, local_ports=6, global_ports=2)
    links = (c["local_links_per_tin_pair"], c["global_links_per_pod_pair"])
    assert (c["tins"], c["hosts"], *links) == (24, 48, 2, 1)
    assert c["spare_global_ports_per_pod"] == 8 - 5


@pytest.mark.parametrize("kwargs, name", [
    (dict(pods=98), "pods"),
    (dict(pods=1), "pods"),
    (dict(tins_per_pod=26), "tins_per_pod"),
    (dict(hosts_per_tin=0), "hosts_per_tin"),
    (dict(global_ports=0), "global_ports"),
])
def test_ports_that_cannot_form_the_meshes_are_refused(kwargs, name):
    with pytest.raises(PlanInputError) as error:
        clique(**kwargs)
    assert error.value.name == name


def test_cli_prints_json_and_refuses_bad_input_with_status_2():
    runner = CliRunner()
    result = runner.invoke(main, ["plan", "aquila", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["clique"]["hosts"] == 1152
    text = runner.invoke(main, ["plan", "aquila"])
    assert "global_links_per_pod_pair: 2" in text.output
    for args, key in ((["--pods", "98"], "--pods 98"), (["--tins-per-pod", "30"], "--tins-per-pod 30"),
                      (["--link-gbps", "0"], "--link-gbps 0")):
        bad = runner.invoke(main, ["plan", "aquila", *args])
        assert bad.exit_code == 2, bad.output
        assert key in bad.output
        assert "Traceback" not in bad.output
