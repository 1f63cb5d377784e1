"""Every number the README and the scenario headers quote from our own runs is a claim of
``docs/claims.toml``: the run that makes it (shortened where the text says so), the summary metric
and the value within a stated tolerance. Each claim's run is made here and compared; the quote must
stand in every file that the claim names, and a run whose summary says it did not settle
(``"stable": false``) must be marked ``saturated`` and every quoting file must say so.

A claim that fails means the text and the model disagree: the run's number wins, so correct the text
(and the claim's value), never the model, unless the model is what is wrong."""

from __future__ import annotations

import functools
import json
import math
import tomllib
from pathlib import Path

import pytest

import cellfabric
from conftest import ROOT

CLAIMS_FILE = ROOT / "docs" / "claims.toml"
CLAIMS = tomllib.loads(CLAIMS_FILE.read_text())["claim"]
REQUIRED = {"quote", "in", "scenario", "set", "metric", "value", "tolerance"}
OPTIONAL = {"seed", "seeds", "saturated", "note"}
AGGREGATES = {"first", "last", "min", "max", "mean"}


def _id(index: int, claim: dict) -> str:
    return f"{index:02d}-{Path(claim['scenario']).stem}-{claim['metric']}-{claim['quote']}"


@functools.cache
def _run(scenario: str, overrides: str, seed: int | None):
    """One run, made once however many claims read it (``overrides`` as sorted JSON)."""
    return cellfabric.run(ROOT / scenario, overrides=json.loads(overrides), seed=seed, progress=False)


def _metric(result, metric: str) -> float:
    """The number a claim's metric names in one run's result."""
    if " / " in metric:
        numerator, denominator = metric.split(" / ")
        return _metric(result, numerator) / _metric(result, denominator)
    if " + " in metric:
        return sum(_metric(result, part) for part in metric.split(" + "))
    if metric.startswith("tables."):
        _, table, column, aggregate = metric.split(".")
        series = result.tables[table][column].dropna().astype(float)
        assert len(series), f"{metric}: the {table} table has no {column} value"
        return {"first": series.iloc[0], "last": series.iloc[-1], "min": series.min(), "max": series.max(),
                "mean": series.mean()}[aggregate]
    node = result.summary
    for part in metric.split("."):
        assert isinstance(node, dict) and part in node, f"{metric}: the summary has no {part!r} here"
        node = node[part]
    assert node is not None, f"{metric}: null in the summary (not measured in this run)"
    return float(node)


def _seeds(claim: dict) -> list[int | None]:
    return claim.get("seeds") or [claim.get("seed")]


def test_claims_file_is_well_formed():
    assert CLAIMS, "docs/claims.toml holds no [[claim]]"
    for index, claim in enumerate(CLAIMS):
        name = _id(index, claim)
        missing, unknown = REQUIRED - claim.keys(), claim.keys() - REQUIRED - OPTIONAL
        assert not missing, f"{name}: missing {sorted(missing)}"
        assert not unknown, f"{name}: unknown {sorted(unknown)}"
        assert isinstance(claim["quote"], str) and claim["quote"].strip(), f"{name}: empty quote"
        assert isinstance(claim["in"], list) and claim["in"], f"{name}: `in` names no file"
        for path in [claim["scenario"], *claim["in"]]:
            assert (ROOT / path).is_file(), f"{name}: no file {path}"
        assert isinstance(claim["set"], dict), f"{name}: `set` is not a table"
        assert not ("seed" in claim and "seeds" in claim), f"{name}: both seed and seeds"
        assert all(isinstance(s, int) for s in claim.get("seeds", [claim.get("seed", 0)])), name
        assert isinstance(claim["value"], int | float) and math.isfinite(claim["value"]), name
        tolerance = claim["tolerance"]
        assert isinstance(tolerance, int | float) and tolerance > 0, f"{name}: tolerance must be positive"
        assert tolerance < abs(claim["value"]), f"{name}: a tolerance as wide as the value cannot fail"
        assert claim.get("saturated", False) in (True, False), f"{name}: saturated is true or absent"
        if claim["metric"].startswith("tables."):
            parts = claim["metric"].split(".")
            assert len(parts) == 4 and parts[3] in AGGREGATES, f"{name}: tables.<table>.<column>.<agg>"


def _same_run(claim: dict) -> pytest.MarkDecorator:
    """Claims read from the same runs go to the same test worker (``pytest -n --dist loadgroup``),
    which then makes those runs once."""
    return pytest.mark.xdist_group(f"{claim['scenario']} {json.dumps(claim['set'], sort_keys=True)} "
                                   f"{_seeds(claim)}")


@pytest.mark.parametrize("claim", [pytest.param(c, id=_id(i, c), marks=_same_run(c))
                                   for i, c in enumerate(CLAIMS)])
def test_claim_holds(claim: dict):
    for path in claim["in"]:
        assert claim["quote"] in (ROOT / path).read_text(), f"{path} does not quote {claim['quote']!r}"
    overrides = json.dumps(claim["set"], sort_keys=True)
    results = [_run(claim["scenario"], overrides, seed) for seed in _seeds(claim)]
    got = sum(_metric(r, claim["metric"]) for r in results) / len(results)
    where = f"{claim['scenario']} {claim['set']} seed(s) {_seeds(claim)}"
    assert abs(got - claim["value"]) <= claim["tolerance"], (
        f"{claim['quote']!r}: {claim['metric']} = {got:.6g} in {where}, but the claim says "
        f"{claim['value']} +- {claim['tolerance']}")
    saturated = any(r.summary.get("stable") is False for r in results)
    assert saturated == claim.get("saturated", False), (
        f"{where}: the summary says stable = {not saturated}, the claim says saturated = "
        f"{claim.get('saturated', False)}")
    if saturated:
        for path in claim["in"]:
            assert "saturat" in (ROOT / path).read_text().lower(), \
                f"{path} quotes a saturated run ({claim['quote']!r}) without saying it is saturated"
