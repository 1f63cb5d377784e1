"""Where a sweep's runs execute: a local process pool, or a Ray cluster (the ``ray`` extra).

Both take a list of jobs and yield ``(index, outcome)`` as runs finish, a job being what
``run_point`` (the worker's entry, here) takes and the outcome what it returns; the sweep writes
every result itself, so workers need no shared file system.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Any

from cellfabric._core import Error, ScenarioError
from cellfabric.runner import Interrupted
from cellfabric.runner import run as run_scenario

# What a worker returns for one run: see run_point.
Outcome = tuple[str, Any]
RAY_MISSING = "--backend ray: Ray is not installed (install it with: pip install 'cellfabric[ray]')"


def run_point(job: tuple[dict[str, Any], dict[str, Any], int]) -> tuple[str, Any]:
    """Runs one (scenario, overrides, seed): ``("ok", Result)``, or ``("failed", "Kind: message")``
    for a run that broke an invariant or hit a bug, or ``("interrupted", None)``. Runs in a worker."""
    base, overrides, seed = job
    try:
        return "ok", run_scenario(base, overrides=overrides, seed=seed, progress=False)
    except Interrupted:
        return "interrupted", None
    except Error as error:
        return "failed", f"{type(error).__name__}: {error}"


def run_locally(work: list[Any], workers: int) -> Iterator[tuple[int, Outcome]]:
    """Runs the jobs in ``workers`` processes (in this process when ``workers`` is 1)."""
    if workers == 1 or len(work) <= 1:
        for index, job in enumerate(work):
            yield index, run_point(job)
        return
    # Fresh interpreters rather than forks: the parent may hold threads (a progress bar, Ray).
    # Forked workers (where the system has fork) need no `if __name__ == "__main__"` guard in a
    # user's script. They ignore Ctrl-C: the sweep stops them itself, whatever they were doing.
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    pool = ProcessPoolExecutor(max_workers=min(workers, len(work)), initializer=_ignore_interrupts,
                               mp_context=multiprocessing.get_context(method))
    pending = {pool.submit(run_point, job): index for index, job in enumerate(work)}
    try:
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                yield pending.pop(future), future.result()
    finally:
        if pending:  # stopped early: the runs in progress are lost, by design
            for process in list(getattr(pool, "_processes", {}).values()):
                process.terminate()
        pool.shutdown(wait=True, cancel_futures=True)


def _ignore_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def require_ray():
    """The ``ray`` module, or ``ScenarioError`` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ScenarioError(RAY_MISSING) from None
    return ray


def run_on_ray(
    work: list[Any], workers: int, address: str | None, cpus: list[int] | None = None
) -> Iterator[tuple[int, Outcome]]:
    """Runs the jobs as Ray tasks of ``cpus[i]`` CPUs each (the threads each run takes; one
    by default): on the cluster at ``address`` (``"auto"``: the one this machine belongs to),
    or on a local Ray instance of ``workers`` CPUs started for this sweep and stopped after it."""
    ray = require_ray()
    started = not ray.is_initialized()
    if started:
        local = {"num_cpus": workers, "include_dashboard": False} if address is None else {}
        ray.init(address=address, log_to_driver=False, configure_logging=False, **local)
    task = ray.remote(run_point)
    cpus = cpus or [1] * len(work)
    pending = {task.options(num_cpus=cpus[index]).remote(job): index for index, job in enumerate(work)}
    try:
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                yield pending.pop(ref), ray.get(ref)
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)
        if started:
            ray.shutdown()
