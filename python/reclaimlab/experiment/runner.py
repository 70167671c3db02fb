"""Executing an experiment: a local process pool (default) or a Dask cluster.

Every run executes in a worker and returns a plain dict; only the coordinating process
writes the store, one transaction per finished run. A run that already is in the store
(same configuration hash and seed) is skipped, so an interrupted experiment resumes where
it stopped. A worker that dies (a killed process, an OOM kill) has its run retried:
the local pool is rebuilt and the unfinished runs resubmitted (at most ``RETRIES`` times
per run); Dask reschedules the task on another worker by itself (``retries``).
"""

from __future__ import annotations

import os
import socket
import time
from typing import Any, Callable

from ..exceptions import ReclaimlabError
from ..results import Store
from .noise import NOISE_NONE, Noise
from .spec import Experiment

__all__ = ["execute", "run_experiment", "RETRIES"]

RETRIES = 2


def execute(job: dict[str, Any]) -> dict[str, Any]:
    """Run one job (in a worker); returns the run dict :meth:`Store.add_run` takes."""
    from .. import _core, prepare, replay, transaction_metrics
    from .. import config as _config

    started = time.time()
    kw = dict(job["kwargs"])
    seed = int(job["seed"])
    if job.get("program") is not None:
        settings = dict(kw.get("set") or {})
        if "policy" in kw:
            settings["policy"] = kw["policy"]
        settings["seed"] = seed
        cfg = _core.Config()
        _config.apply(cfg, settings)
        _config.validate(cfg)
        source = _core.generate(job["program"], seed)
        workload, apt = f"generator (seed {seed})", None
    else:
        p = prepare(**kw, seed=seed, params=job.get("workload_params"))
        cfg, source, workload, apt = p.cfg, p.source, p.workload, p.transactions
    # This repetition's machine: the noise model's draw for this run (none: no change).
    noise = Noise(**job["noise"]) if job.get("noise") else NOISE_NONE
    for k, v in noise.overrides(dict(cfg.items()), job["run_id"]).items():
        cfg.set(k, v)
    raw = replay(cfg, source)
    metrics = dict(raw["metrics"])
    if apt:
        metrics.update(transaction_metrics(metrics, apt))
    return {
        "run_id": job["run_id"], "variant": job["variant"], "params": job["params"], "repetition": job["repetition"],
        "seed": seed, "policy": raw["policy"], "workload": workload, "config": dict(cfg.items()),
        "started": started, "finished": time.time(), "worker": f"{socket.gethostname()}:{os.getpid()}",
        "metrics": metrics, "vmstat": dict(raw["vmstat"]),
        "timeseries": {k: list(v) for k, v in raw["timeseries"].items()} if job.get("timeseries", True) else {},
    }


def _validate(jobs: list[dict[str, Any]]) -> None:
    """Resolve every distinct configuration once here, so bad input is one clear error
    before any worker starts."""
    from .. import _core, prepare
    from .. import config as _config

    seen = set()
    for job in jobs:
        key = repr(sorted((k, repr(v)) for k, v in job["kwargs"].items())) + repr(job.get("workload_params"))
        if key in seen:
            continue
        seen.add(key)
        if job.get("program") is not None:
            cfg = _core.Config()
            _config.apply(cfg, {**job["kwargs"].get("set", {}), **({"policy": job["kwargs"]["policy"]} if "policy" in job["kwargs"] else {})})
            _config.validate(cfg)
        else:
            prepare(**job["kwargs"], seed=job["seed"], params=job.get("workload_params"))


def run_experiment(
    exp: Experiment,
    out: str | os.PathLike,
    *,
    jobs: int | None = None,
    scheduler: str | None = None,
    progress: bool = True,
    on_stored: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, int]:
    """Run every missing run of ``exp`` into the store in ``out``; returns
    ``{"total", "skipped", "ran"}``. ``scheduler``: a Dask scheduler address
    (``tcp://host:8786``), or ``local`` / ``local:N`` for an in-process LocalCluster."""
    all_jobs = exp.jobs()
    _check_empty_or_same(exp, out)
    with Store(out) as store:
        store.set_meta(identity=exp.identity(), experiment=exp.name, description=exp.description, metric=exp.metric,
                       baseline=exp.baseline, variant_axis=exp.variant,
                       axes=[a.name for a in exp.axes if a.name != exp.variant],
                       source=str(exp.path) if exp.path else None, noise=exp.noise.spec(),
                       repetitions=exp.repetitions)
        done = store.done_ids()
        todo = [j for j in all_jobs if j["run_id"] not in done]
        skipped = len(all_jobs) - len(todo)
        if todo:
            _validate(todo)
        from tqdm import tqdm

        bar = tqdm(total=len(all_jobs), initial=skipped, unit="run", desc=exp.name, disable=not progress,
                   dynamic_ncols=True, smoothing=0.1)
        ran = 0

        def stored(run: dict[str, Any]) -> None:
            nonlocal ran
            if store.add_run(run):
                ran += 1
            bar.update(1)
            if on_stored is not None:
                on_stored(run)

        try:
            if not todo:
                pass
            elif scheduler:
                _run_dask(todo, scheduler, stored)
            elif (jobs or os.cpu_count() or 1) <= 1 or len(todo) == 1:
                for job in todo:
                    stored(execute(job))
            else:
                _run_pool(todo, min(len(todo), jobs or os.cpu_count() or 1), stored)
        finally:
            bar.close()
    return {"total": len(all_jobs), "skipped": skipped, "ran": ran}


def _check_empty_or_same(exp: Experiment, out: str | os.PathLike) -> None:
    """Refuse a results directory that holds runs of a different experiment (before it is
    touched): their runs would mix in every comparison."""
    import json
    from pathlib import Path

    from ..exceptions import ConfigError
    from ..results import DB_NAME

    if not (Path(out) / DB_NAME).exists():
        return
    with Store(out, create=False) as st:
        meta = st.meta()
        if not st.done_ids():
            return
    old = meta.get("identity")
    new = json.loads(json.dumps(exp.identity(), default=str))
    if old == new:
        return
    if old is None:  # a store from before identities: its name and noise are all there is to go by
        if meta.get("experiment") == exp.name and meta.get("noise") in (None, exp.noise.spec()) \
                and (meta.get("noise") is not None or exp.noise.is_none):
            return
        differs = ["name" if meta.get("experiment") != exp.name else "noise"]
    else:
        differs = [k for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
    raise ConfigError(f"{out}: holds runs of experiment '{meta.get('experiment')}' that differs from "
                      f"'{exp.name}' in {', '.join(differs)}; its runs would mix with these in every "
                      f"comparison: give another --out-dir directory")


def _kill_workers(pool: Any) -> None:
    """Stop a pool's workers now (a run is worth nothing half done), not after their runs."""
    import signal

    for proc in list(getattr(pool, "_processes", {}).values()):
        try:
            os.kill(proc.pid, signal.SIGKILL)
        except (OSError, AttributeError):
            pass
    pool.shutdown(wait=False, cancel_futures=True)


def _run_pool(todo: list[dict[str, Any]], n: int, stored: Callable[[dict[str, Any]], None],
              fn: Callable[[dict[str, Any]], dict[str, Any]] = execute) -> None:
    import concurrent.futures as cf
    from concurrent.futures.process import BrokenProcessPool

    from .._pool import process_pool

    pending = {j["run_id"]: j for j in todo}
    attempts = {rid: 0 for rid in pending}
    while pending:
        with process_pool(min(n, len(pending))) as pool:
            futures = {}
            for rid, job in pending.items():
                attempts[rid] += 1
                futures[pool.submit(fn, job)] = rid
            try:
                for fut in cf.as_completed(futures):
                    rid = futures[fut]
                    try:
                        run = fut.result()
                    except BrokenProcessPool:
                        raise
                    stored(run)
                    pending.pop(rid, None)
            except BrokenProcessPool:
                # A worker died: collect what finished, then rebuild the pool for the rest.
                for fut, rid in futures.items():
                    if rid in pending and fut.done() and not fut.cancelled() and fut.exception() is None:
                        stored(fut.result())
                        pending.pop(rid, None)
                over = [rid for rid in pending if attempts[rid] > RETRIES]
                if over:
                    raise ReclaimlabError(f"{len(over)} run(s) killed their worker {RETRIES + 1} times (e.g. run {over[0]})")
            except BaseException:
                # Stopped (SIGTERM, SIGHUP, ^C) or failed: the finished runs are stored; no
                # worker may outlive this.
                _kill_workers(pool)
                raise


def _run_dask(todo: list[dict[str, Any]], scheduler: str, stored: Callable[[dict[str, Any]], None],
              fn: Callable[[dict[str, Any]], dict[str, Any]] = execute) -> None:
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:  # pragma: no cover
        raise ReclaimlabError("--scheduler needs Dask: pip install 'reclaimlab[dask]'") from None
    cluster = None
    if scheduler == "local" or scheduler.startswith("local:"):
        n = int(scheduler.partition(":")[2] or 2)
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
    else:
        client = Client(scheduler)
    try:
        futures = client.map(fn, todo, key=[f"reclaimlab-run-{j['run_id']}" for j in todo], retries=RETRIES,
                             pure=False)
        for fut in as_completed(futures):
            stored(fut.result())
            fut.release()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
