"""The results store of an experiment: ``DIR/results.sqlite``.

SQLite through the standard library's :mod:`sqlite3`, because it needs no extra
dependency, no server and no daemon, and because its transactions are atomic and durable
under a process crash: a run is written in **one transaction** (its row, metrics, vmstat
counters and time series together), so a SIGKILL at any point leaves either the whole run
or nothing of it. The database is in WAL mode with ``synchronous=NORMAL``: a committed
transaction survives the death of the process (only a power loss can drop the last
few commits, never corrupt the file). Only the coordinating process writes; workers
return their results to it. (DuckDB was the alternative: faster for big analytical
scans, but an extra binary dependency and weaker guarantees for many tiny
transactions; the stores here hold at most thousands of runs, and the analysis happens in
polars.)

Runs are keyed by ``run_id`` = a SHA-256 of the run's canonical configuration and seed,
so running the same experiment again skips every run already stored.

Query helpers return polars DataFrames: :meth:`Store.runs`, :meth:`Store.metrics`,
:meth:`Store.vmstat`, :meth:`Store.timeseries`, :meth:`Store.measurements`.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import sqlite3
import time
from pathlib import Path
from typing import Any, Iterable, Mapping

__all__ = ["Store", "run_key", "DB_NAME"]

DB_NAME = "results.sqlite"

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    run_id      TEXT PRIMARY KEY,
    variant     TEXT NOT NULL,
    params      TEXT NOT NULL,   -- JSON: matrix axis -> label (the configuration columns)
    repetition  INTEGER NOT NULL,
    seed        INTEGER NOT NULL,
    policy      TEXT NOT NULL,
    workload    TEXT NOT NULL,
    config      TEXT NOT NULL,   -- JSON: the effective engine configuration
    started     REAL NOT NULL,   -- unix time the run started (in its worker)
    finished    REAL NOT NULL,   -- unix time it finished
    stored      REAL NOT NULL,   -- unix time it was committed here
    worker      TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS metrics (run_id TEXT NOT NULL REFERENCES runs(run_id), name TEXT NOT NULL,
    value REAL, PRIMARY KEY (run_id, name));
CREATE TABLE IF NOT EXISTS vmstat (run_id TEXT NOT NULL REFERENCES runs(run_id), name TEXT NOT NULL,
    value INTEGER NOT NULL, PRIMARY KEY (run_id, name));
CREATE TABLE IF NOT EXISTS timeseries (run_id TEXT PRIMARY KEY REFERENCES runs(run_id),
    parquet BLOB NOT NULL);
"""


def run_key(config: Mapping[str, Any], seed: int) -> str:
    """The run id: SHA-256 (hex, 16 bytes) of the canonical JSON of ``config`` and ``seed``."""
    blob = json.dumps({"config": config, "seed": int(seed)}, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


class Store:
    """An experiment's results database in directory ``root``."""

    def __init__(self, root: str | os.PathLike, create: bool = True):
        self.root = Path(root)
        if create:
            self.root.mkdir(parents=True, exist_ok=True)
        self.path = self.root / DB_NAME
        if not create and not self.path.exists():
            raise FileNotFoundError(str(self.path))
        self.db = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        try:
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA foreign_keys=ON")
            self.db.executescript(SCHEMA)
            self.db.execute("PRAGMA quick_check").fetchall()
        except sqlite3.DatabaseError as e:  # not SQLite, truncated, or not ours
            self.db.close()
            from ..exceptions import ReclaimlabError

            raise ReclaimlabError(f"{self.path}: not a readable results store ({e})") from None

    # ---- context / lifetime ----
    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- writing ----
    def set_meta(self, **items: Any) -> None:
        with self._tx():
            for k, v in items.items():
                self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (k, json.dumps(v, default=str)))

    def meta(self) -> dict[str, Any]:
        return {k: json.loads(v) for k, v in self.db.execute("SELECT key, value FROM meta")}

    def done_ids(self) -> set[str]:
        return {r[0] for r in self.db.execute("SELECT run_id FROM runs")}

    def add_run(self, run: Mapping[str, Any]) -> bool:
        """Store one finished run in a single transaction; False if it was already there.
        ``run``: run_id, variant, params, repetition, seed, policy, workload, config,
        started, finished, worker, metrics, vmstat, timeseries (column -> list)."""
        ts = run.get("timeseries") or {}
        blob = None
        if ts:
            import polars as pl

            buf = io.BytesIO()
            pl.DataFrame({k: pl.Series(k, v, dtype=pl.Float64) for k, v in ts.items()}).write_parquet(buf)
            blob = buf.getvalue()
        with self._tx():
            cur = self.db.execute(
                "INSERT OR IGNORE INTO runs VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (run["run_id"], run["variant"], json.dumps(run["params"]), int(run["repetition"]), int(run["seed"]),
                 run["policy"], run["workload"], json.dumps(run["config"], sort_keys=True), float(run["started"]),
                 float(run["finished"]), time.time(), str(run.get("worker", ""))),
            )
            if cur.rowcount == 0:
                return False
            self.db.executemany("INSERT INTO metrics VALUES (?,?,?)",
                                [(run["run_id"], k, float(v)) for k, v in run["metrics"].items()])
            self.db.executemany("INSERT INTO vmstat VALUES (?,?,?)",
                                [(run["run_id"], k, int(v)) for k, v in run["vmstat"].items()])
            if blob is not None:
                self.db.execute("INSERT INTO timeseries VALUES (?, ?)", (run["run_id"], blob))
        return True

    class _Tx:
        def __init__(self, db: sqlite3.Connection):
            self.db = db

        def __enter__(self) -> None:
            self.db.execute("BEGIN IMMEDIATE")

        def __exit__(self, et: Any, *rest: Any) -> None:
            self.db.execute("COMMIT" if et is None else "ROLLBACK")

    def _tx(self) -> "_Tx":
        return Store._Tx(self.db)

    # ---- queries (polars) ----
    def runs(self):
        """One row per run: run_id, variant, the configuration columns, repetition, seed,
        policy, workload, started, finished, stored, worker."""
        import polars as pl

        rows = self.db.execute(
            "SELECT run_id, variant, params, repetition, seed, policy, workload, started, finished, stored, worker "
            "FROM runs ORDER BY rowid").fetchall()
        axes = self._axes(rows)
        recs = []
        for r in rows:
            p = json.loads(r[2])
            recs.append({"run_id": r[0], "variant": r[1], **{a: str(p.get(a, "")) for a in axes}, "repetition": r[3],
                         "seed": r[4], "policy": r[5], "workload": r[6], "started": r[7], "finished": r[8],
                         "stored": r[9], "worker": r[10]})
        if not recs:
            return pl.DataFrame(schema={"run_id": pl.Utf8, "variant": pl.Utf8, "repetition": pl.Int64, "seed": pl.Int64})
        return pl.DataFrame(recs)

    def _axes(self, rows: Iterable[tuple]) -> list[str]:
        order = self.meta().get("axes")
        if order:
            return [a for a in order if a != "variant"]
        seen: dict[str, None] = {}
        for r in rows:
            for k in json.loads(r[2]):
                seen.setdefault(k, None)
        return [a for a in seen if a != "variant"]

    def _long(self, table: str):
        import polars as pl

        runs = self.runs()
        vals = pl.DataFrame(self.db.execute(f"SELECT run_id, name, value FROM {table}").fetchall(),
                            schema={"run_id": pl.Utf8, "name": pl.Utf8, "value": pl.Float64}, orient="row")
        return runs, vals

    def metrics(self):
        """Runs × metrics, wide: the :meth:`runs` columns plus one column per metric."""
        runs, vals = self._long("metrics")
        if vals.height == 0:
            return runs
        return runs.join(vals.pivot(on="name", index="run_id", values="value"), on="run_id", how="left")

    def vmstat(self):
        """Runs × vmstat counters, wide (counter deltas of each run)."""
        runs, vals = self._long("vmstat")
        if vals.height == 0:
            return runs
        return runs.join(vals.pivot(on="name", index="run_id", values="value"), on="run_id", how="left")

    def timeseries(self, run_id: str | None = None):
        """One run's time series, or all of them with run_id/variant/configuration columns."""
        import polars as pl

        q = "SELECT run_id, parquet FROM timeseries" + (" WHERE run_id = ?" if run_id else "")
        frames = []
        for rid, blob in self.db.execute(q, (run_id,) if run_id else ()):
            frames.append(pl.read_parquet(io.BytesIO(blob)).with_columns(pl.lit(rid).alias("run_id")))
        if not frames:
            return pl.DataFrame()
        ts = pl.concat(frames, how="diagonal")
        if run_id:
            return ts.drop("run_id")
        return ts.join(self.runs().select([c for c in self.runs().columns
                                           if c not in ("started", "finished", "stored", "worker", "workload")]),
                       on="run_id", how="left")

    def effective_config(self) -> dict[str, Any]:
        """The engine configuration the runs had: ``{"runs", "common": {knob: value},
        "varying": {knob: [distinct values, sorted]}}`` — knobs set by the matrix or the
        noise model vary, the rest are common to every run."""
        from ..provenance import config_summary

        return config_summary(json.loads(blob) for (blob,) in self.db.execute("SELECT config FROM runs ORDER BY rowid"))

    def measurements(self, metric: str | None = None):
        """The long measurements frame :mod:`reclaimlab.stats` compares: metric, variant,
        configuration columns, repetition, value (every metric, or one)."""
        import polars as pl

        runs, vals = self._long("metrics")
        axes = [c for c in runs.columns if c not in ("run_id", "variant", "repetition", "seed", "policy", "workload",
                                                     "started", "finished", "stored", "worker")]
        if metric is not None:
            vals = vals.filter(pl.col("name") == metric)
        df = runs.join(vals, on="run_id", how="inner").rename({"name": "metric"})
        return df.select(["metric", "variant", *axes, "repetition", "value"])
