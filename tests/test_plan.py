"""Stardust's planning arithmetic against the numbers the paper prints (Zilberman, Bracha and
Schzukin, NSDI '19) and our checks of them (the readings R8, R30 and R31 of
docs/validation/stardust.md)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from cellfabric.cli import main
from cellfabric.plan import (
    PlanInputError,
    buses_needed,
    clos_counts,
    cost_and_power,
    device_area,
    fat_tree_size,
    md1_tail,
    min_credit_bytes,
    pipeline_parallelism,
    recovery,
    scale,
)


def test_table_2_rows_as_printed():
    k, t, bundle = 12, 3, 2
    one, two, three = (clos_counts(n, k, t, bundle) for n in (1, 2, 3))
    assert (one.max_tors, one.switches, one.switches_per_tor, one.link_bundles, one.links_per_tor) == (
        k, t, t / k, t * k, t * bundle)
    assert (two.max_tors, two.switches, two.switches_per_tor, two.link_bundles, two.links_per_tor) == (
        k**2 // 2, 1.5 * t * k, 3 * t / k, t * k**2, 2 * t * bundle)
    row = (three.max_tors, three.switches, three.switches_per_tor, three.link_bundles, three.links_per_tor)
    assert row == (k**3 // 4, 1.25 * t * k**2, 5 * t / k, 0.75 * t * k**3, 3 * t * bundle)


def test_two_tiers_of_radix_12_are_the_k12_fat_tree_stardust_ran():
    counts = clos_counts(2, 12, 6)
    assert (counts.max_tors, counts.switches) == (72, 108)  # 72 adapters, 72 + 36 elements


def test_fig_2_scale():
    assert scale(1, 1) == 10_240  # "over ten thousand" servers at one tier
    assert scale(1, 8) == 1_280  # one eighth of that
    assert scale(2, 8) == 20_480  # "about 20K"
    assert scale(2, 1) == 64 * 20_480


def test_appendix_b_parallelism():
    assert pipeline_parallelism(12.8e12, 64) == pytest.approx(19.047, abs=1e-3)
    assert pipeline_parallelism(12.8e12, 256) == pytest.approx(5.797, abs=1e-3)  # paper: 6.06
    assert pipeline_parallelism(12.8e12, 256, gap_bytes=8) == pytest.approx(6.06, abs=1e-2)


def test_appendix_e_recovery_matches_table_4():
    r = recovery()
    assert r.messages_per_table == 7
    assert r.one_pass_us == pytest.approx(210)
    assert r.with_threshold_us == pytest.approx(630)
    assert r.with_propagation_us == pytest.approx(652.05)
    assert r.overhead == pytest.approx(0.000384)
    with pytest.raises(ValueError, match="2n - 1 hops"):
        recovery(propagation_ns=(50.0,))


def test_md1_tail_table():
    expected = {
        0.5: (3.513, 11),
        0.8: (1.539, 32),
        0.9: (1.230, 67),
        0.95: (1.107, 136),
        1 / 1.05: (1.102, 143),
    }
    for rho, (z, cells) in expected.items():
        tail = md1_tail(rho)
        assert tail["z"] == pytest.approx(z, abs=1e-3)
        assert tail["cells"] == pytest.approx(cells, abs=1.0)


def test_min_credit_is_2500_bytes_not_the_printed_2000():
    assert min_credit_bytes() == pytest.approx(2500)


def test_cli_prints_every_section_and_json():
    result = CliRunner().invoke(main, ["plan", "stardust", "--json"])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.output)
    assert plan["appendix_e_recovery"]["with_threshold_us"] == pytest.approx(630)
    assert [row["max_tors"] for row in plan["table2"]] == [256, 256**2 // 2, 256**3 // 4]
    text = CliRunner().invoke(main, ["plan", "stardust", "--radix", "12", "--uplinks", "6"])
    assert text.exit_code == 0 and "table2:" in text.output and "max_tors 72" in text.output
    bad = CliRunner().invoke(main, ["plan", "stardust", "--radix", "1"])
    assert bad.exit_code == 2 and "radix" in bad.output


@pytest.mark.parametrize(("args", "starts"), [
    (["--radix", "8", "--uplinks", "64"], "--uplinks 64: expected at most the radix, 8"),
    (["--radix", "12", "--uplinks", "13"], "--uplinks 13: expected at most the radix, 12"),
    (["--radix", "7", "--uplinks", "4"], "--radix 7: expected an even number"),
    (["--radix", "1"], "--radix 1: expected at least 2"),
    (["--radix", "0"], "--radix 0: expected at least 2"),
    (["--radix", "-8"], "--radix -8: expected at least 2"),
    (["--uplinks", "0"], "--uplinks 0: expected at least 1"),
    (["--bundle", "0"], "--bundle 0: expected at least 1"),
    (["--hosts-per-tor", "-3"], "--hosts-per-tor -3: expected at least 1"),
])
def test_cli_refuses_a_fabric_that_cannot_be_built_in_one_line(args: list[str], starts: str):
    done = CliRunner().invoke(main, ["plan", "stardust", *args, "--json"])
    assert done.exit_code == 2, done.output
    assert done.output.startswith(f"cellfabric: error: {starts}"), done.output
    assert done.output.count("\n") == 1 and "Traceback" not in done.output


def test_the_largest_uplink_count_is_the_radix():
    done = CliRunner().invoke(main, ["plan", "stardust", "--radix", "8", "--uplinks", "8", "--json"])
    assert done.exit_code == 0, done.output
    assert [row["switches_per_tor"] for row in json.loads(done.output)["table2"]] == [1, 3, 5]
    with pytest.raises(ValueError, match="uplinks 9: expected at most the radix, 8"):
        clos_counts(2, 8, 9)
    with pytest.raises(ValueError, match="radix 9: expected an even number"):
        clos_counts(2, 9, 3)
    assert clos_counts(1, 9, 3).max_tors == 9, "one tier uses every port downward: any radix"


def test_fig_2_devices_and_links_follow_table_2():
    one = fat_tree_size(1, 1)  # 256 edge switches of 40 hosts, 80 uplinks each to 80 fabric switches
    assert (one.hosts, one.devices, one.serial_links) == (10_240, 256 + 80, 80 * 256)
    for tiers in (1, 2, 3):
        for bundle in (1, 2, 4, 8):
            size = fat_tree_size(tiers, bundle)
            assert size.hosts == scale(tiers, bundle)
            counts = clos_counts(tiers, 256 // bundle, 80 // bundle, bundle)
            assert size.devices == counts.max_tors + counts.switches
            assert size.serial_links == counts.link_bundles * bundle
    # Wider ports make a smaller fabric: fewer devices and links at every tier count.
    assert fat_tree_size(2, 8).devices < fat_tree_size(2, 1).devices
    with pytest.raises(PlanInputError, match="hosts_per_tor"):
        fat_tree_size(1, 1, hosts_per_tor=100)  # 200 host lanes and 200 uplinks exceed 256


def test_fig_3_bus_model_gives_two_of_the_papers_three_numbers():
    small = buses_needed(64)
    assert small["cell_switch_buses"] == 6.25 and small["packet_switch_buses"] / 6.25 == 4.0  # "x4"
    assert buses_needed(1025, gap_bytes=20)["saving"] == pytest.approx(0.18, abs=0.005)  # "18%"
    at_513 = [buses_needed(513, gap_bytes=g)["saving"] for g in (0, 20)]
    assert all(0.30 < s < 0.34 for s in at_513), at_513  # the paper's 41% is not reached


def test_fig_10d_area_split_gives_the_papers_two_thirds_and_smaller_tables():
    for io_share in (0.2, 0.3, 0.5):
        area = device_area(io_share)
        assert area["element_area_per_tbps"] == pytest.approx(0.666)  # §7: "only 66.6%"
        shares = (area["tor_io_share"], area["tor_interface_share"], area["tor_rest_share"])
        assert sum(shares) == pytest.approx(1) and min(shares) >= 0
    # App. C at 32K hosts, radix 256: 40 bits an address against 8 bits an adapter, 40 hosts each.
    assert device_area()["table_ratio"] == pytest.approx(200)  # §4.2: "two orders of magnitude"
    for bad in (0.1, 0.6, -1):
        with pytest.raises(PlanInputError, match="io_share"):
            device_area(bad)


def test_fig_11_cost_halves_and_fabric_power_falls_78_percent_where_stardust_saves_a_tier():
    # 10 000 hosts: a fat-tree of 50G bundles (radix 128) needs 2 tiers, Stardust's radix 256 one.
    at_10k = cost_and_power(10_000, 2)
    assert (at_10k["fat_tree_tiers"], at_10k["stardust_tiers"]) == (2, 1)
    assert at_10k["cost"] == pytest.approx(0.5, abs=0.05)  # "can be cut in half"
    assert 1 - at_10k["fabric_power"] == pytest.approx(0.778, abs=1e-9)  # "78% of fabric power"
    assert 1 - at_10k["network_power"] > 0.25  # the paper: "up to 25%" (its per-link power is cut)
    # "Stardust is always the most cost effective solution" (§7), over every bundle and size.
    for bundle in (1, 2, 4):
        for hosts in (1_000, 10_000, 100_000, 1_000_000):
            row = cost_and_power(hosts, bundle)
            assert row["cost"] < 1 and row["fabric_power"] < 1, row
    with pytest.raises(PlanInputError, match="bundle"):
        cost_and_power(1_000, 8)


def test_cli_prints_fig_10d_and_fig_11():
    plan = json.loads(CliRunner().invoke(main, ["plan", "stardust", "--json"]).output)
    assert plan["fig10d_area"]["element_area_per_tbps"] == pytest.approx(0.666)
    assert len(plan["fig11_cost_power"]) == 12
    text = CliRunner().invoke(main, ["plan", "stardust"]).output
    assert "fig11_cost_power:" in text and "fig10d_area:" in text
