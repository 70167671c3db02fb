"""A self-contained static HTML report of an experiment's results store.

One HTML file, no server, no external assets: every figure is a matplotlib PNG embedded
as a ``data:`` URI. Sections: the experiment and its runs; a forest plot of the Welch 95%
CIs (relative change of each variant against the baseline, the MGLRU Hadoop benchmark's percentages); per
configuration, the time series of one repetition per variant (free memory, refault rate,
scan rate) and a table of the metric (n, mean, SD, Welch CI).
"""

from __future__ import annotations

import base64
import html
import importlib
import io
import math
import os
from pathlib import Path
from typing import Any

__all__ = ["write_report", "render_html", "render", "summary_path"]

CSS = """
body{font-family:sans-serif;margin:2em;max-width:1200px;color:#222}
h1{font-size:1.6em}h2{font-size:1.25em;border-bottom:1px solid #ccc;margin-top:2em}
table{border-collapse:collapse;margin:0.5em 0}td,th{border:1px solid #bbb;padding:3px 8px;text-align:right}
th{background:#eee}td.l,th.l{text-align:left}img{max-width:100%;display:block;margin:0.5em 0}
.better{color:#060;background:#e8f5e8}.worse{color:#a00;background:#fbeaea}.eq{color:#444}
.mark{font-weight:bold;text-align:center}.prov,.noise{color:#444;font-size:0.9em}
"""


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def _rate(t: list[float], v: list[float]) -> tuple[list[float], list[float]]:
    xs, ys = [], []
    for i in range(1, len(t)):
        dt = t[i] - t[i - 1]
        if dt > 0:
            xs.append(t[i])
            ys.append((v[i] - v[i - 1]) / dt)
    return xs, ys


def _axis_keys(meta: dict) -> dict[str, tuple[str, dict[str, str]]]:
    """Axis name -> (the knob it sets, label -> value), from the store's experiment identity."""
    out = {}
    for a in (meta.get("identity") or {}).get("axes", []):
        key, vals = a["key"], a["values"]
        if isinstance(key, list):  # several keys set together
            key, vals = " + ".join(key), [", ".join(map(str, v)) for v in vals]
        out[a["name"]] = (key, {str(lab): str(v) for lab, v in zip(a["labels"], vals)})
    return out


def _config_html(effective: dict, noise: str) -> str:
    """The effective configuration: knobs common to every run, and those that vary."""
    esc = html.escape
    common = "".join(f"<tr><td class='l'>{esc(k)}</td><td class='l'>{esc(v)}</td></tr>"
                     for k, v in effective["common"].items())
    varying = "".join(f"<tr><td class='l'>{esc(k)}</td><td class='l'>{len(v)} values: {esc(', '.join(v[:6]))}"
                      f"{' …' if len(v) > 6 else ''}</td></tr>" for k, v in effective["varying"].items())
    return (f"<details><summary>Effective configuration of the {effective['runs']} runs</summary>"
            f"<p>{esc(noise)}</p><table><tr><th class='l'>knob (varies by run)</th><th class='l'>values</th></tr>"
            f"{varying}</table><table><tr><th class='l'>knob (every run)</th><th class='l'>value</th></tr>{common}"
            "</table></details>")


def render_html(source: str | os.PathLike, metric: str | None = None, baseline: str | None = None) -> str:
    """The report's HTML (see :func:`render`)."""
    return render(source, metric, baseline)[0]


def render(source: str | os.PathLike, metric: str | None = None, baseline: str | None = None) -> tuple[str, str]:
    """(the HTML report, its plain-text summary) of the results store in ``source``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import polars as pl

    from ..provenance import provenance
    from ..results import Store
    from ..stats import mmtests, sample_sd, welch
    from ..stats.frame import noise_text, select
    from .summary import better, summary

    esc = html.escape
    with Store(source, create=False) as st:
        meta = st.meta()
        runs = st.runs()
        axes = [a for a in (meta.get("axes") or []) if a in runs.columns]
        ts_all = st.timeseries()
        effective = st.effective_config()
    sel = select(source, metric or meta.get("metric") or "runtime_s", baseline)
    metric, df, by, base = sel.metric or "runtime_s", sel.df, sel.by, sel.baseline
    prov = provenance()
    noise = noise_text(sel)
    higher = metric in mmtests.HIGHER_IS_BETTER
    akeys = _axis_keys(meta)
    knob = lambda a: f"{a} ({akeys[a][0]})" if a in akeys and akeys[a][0] != a else a  # noqa: E731
    variants = runs.get_column("variant").unique(maintain_order=True).to_list()
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>reclaimlab report: {esc(str(meta.get('experiment', '')))}</title>"
             f"<style>{CSS}</style></head><body>"]
    parts.append(f"<h1>Experiment {esc(str(meta.get('experiment', '')))}</h1>")
    parts.append(f"<p>{esc(str(meta.get('description') or ''))}</p>")
    parts.append(f"<p class='prov'>reclaimlab {esc(prov['reclaimlab'])}, commit {esc(prov['git_commit'] or 'unknown')}, "
                 f"rendered {esc(prov['date'])}; store {esc(str(source))}</p>")
    parts.append(f"<p class='noise'>{esc(noise)}</p>")
    parts.append(f"<p>{runs.height} runs; variants: {esc(', '.join(map(str, variants)))}; "
                 f"axes: {esc(', '.join(knob(a) for a in axes) or '-')}; metric: <b>{esc(metric)}</b> "
                 f"({'higher' if higher else 'lower'} is better)</p>")
    parts.append(_config_html(effective, noise))
    tests = welch.compare(df, by=by, baseline=base) if df.height else []
    text = summary(meta, prov, noise, metric, by, base, tests, higher)
    if df.height == 0:
        parts.append("<p>No measurements of this metric.</p></body></html>")
        return "".join(parts), text

    # Forest plot of the percentage CIs: colour = better/worse, filled marker = significant.
    if tests:
        fig, ax = plt.subplots(figsize=(8, 0.45 * len(tests) + 1.4))
        for i, w in enumerate(tests):
            if w.error is not None:  # no interval (R: data are essentially constant)
                continue
            lo, hi = w.change_pct
            mid = (w.mean_y - w.mean_x) * 100 / w.mean_x
            b = better(w, higher)
            color = "tab:gray" if b is None else ("tab:green" if b else "tab:red")
            ax.plot([lo, hi], [i, i], color=color, lw=2)
            ax.plot([mid], [i], "o", color=color, markersize=8,
                    markerfacecolor=color if w.significant else "white")
        ax.axvline(0, color="k", lw=0.8)
        ax.set_yticks(range(len(tests)), [w.label for w in tests])
        ax.invert_yaxis()
        group = [c for c in tests[0].group if c != "variant"]
        ax.set_ylabel(" × ".join(knob(c) for c in group) if group else by)
        ax.set_xlabel(f"change of {metric} against {by}={base} (%), Welch 95% CI")
        ax.set_title("green: better, red: worse; filled: significant")
        fig.tight_layout()
        parts.append("<h2>Confidence intervals</h2>")
        parts.append(f"<img alt='forest plot' src='{_png(fig)}'>")
        rows = []
        for w in tests:
            b = better(w, higher)
            cls = "eq" if b is None or w.error else ("better" if b else "worse")
            if w.error:
                stats_cells, ci = "<td>–</td><td>–</td><td>–</td>", f"no test ({w.error})"
            else:
                lo, hi = w.change_pct
                stats_cells, ci = f"<td>{w.t:.4g}</td><td>{w.df:.5g}</td><td>{w.p:.4g}</td>", f"[{lo:.2f}, {hi:.2f}]%"
            rows.append(f"<tr><td class='l'>{esc(w.label)}</td><td>{w.mean_x:.2f}</td><td class='l'>{esc(w.y_name)}</td>"
                        f"<td>{w.mean_y:.2f}</td>{stats_cells}<td class='{cls}'>{esc(ci)}</td>"
                        f"<td class='mark'>{'*' if w.significant else ''}</td></tr>")
        parts.append(f"<table><tr><th class='l'>comparison</th><th>mean {esc(metric)}: {esc(str(base))}</th>"
                     f"<th class='l'>against</th><th>its mean</th><th>t</th><th>df</th><th>p</th>"
                     f"<th>95% CI of the change</th><th>significant</th></tr>{''.join(rows)}</table>")

    # Per configuration: table and time series.
    group_cols = axes
    keys = runs.select(group_cols).unique(maintain_order=True).rows() if group_cols else [()]
    for key in keys:
        title = ", ".join(f"{c}={v}" + (f" ({akeys[c][0]}={akeys[c][1].get(str(v), v)})" if c in akeys else "")
                          for c, v in zip(group_cols, key)) or "all runs"
        parts.append(f"<h2>{esc(title)}</h2>")
        sub = df
        rsub = runs
        for c, v in zip(group_cols, key):
            sub = sub.filter(pl.col(c) == v)
            rsub = rsub.filter(pl.col(c) == v)
        stats_rows = []
        for variant in rsub.get_column("variant").unique(maintain_order=True).to_list():
            vals = sub.filter(pl.col("variant") == variant).get_column("value").to_list()
            n = len(vals)
            mean = math.fsum(vals) / n if n else math.nan
            sd = sample_sd(vals)
            stats_rows.append(f"<tr><td class='l'>{esc(str(variant))}</td><td>{n}</td><td>{mean:.4g}</td><td>{sd:.3g}</td>"
                              f"<td>{min(vals) if vals else math.nan:.4g}</td><td>{max(vals) if vals else math.nan:.4g}</td></tr>")
        parts.append(f"<table><tr><th class='l'>variant</th><th>n</th><th>mean {esc(metric)}</th><th>SD</th><th>min</th><th>max</th></tr>"
                     + "".join(stats_rows) + "</table>")
        if ts_all.height == 0:
            continue
        tsub = ts_all
        for c, v in zip(group_cols, key):
            tsub = tsub.filter(pl.col(c) == v)
        tsub = tsub.filter(pl.col("repetition") == tsub.get_column("repetition").min()) if tsub.height else tsub
        if tsub.height == 0:
            continue
        fig, axs = plt.subplots(1, 3, figsize=(13, 3.2))
        for variant in tsub.get_column("variant").unique(maintain_order=True).to_list():
            one = tsub.filter(pl.col("variant") == variant).sort("time_s")
            t = one.get_column("time_s").to_list()
            if "nr_free_pages" in one.columns:
                axs[0].plot(t, [x * 4096 / 2**20 for x in one.get_column("nr_free_pages").to_list()], label=str(variant))
            ref = [a + b for a, b in zip(one.get_column("workingset_refault_anon").to_list(),
                                         one.get_column("workingset_refault_file").to_list())] if "workingset_refault_file" in one.columns else []
            if ref:
                axs[1].plot(*_rate(t, ref), label=str(variant))
            if "pgscan_kswapd" in one.columns:
                scan = [a + b for a, b in zip(one.get_column("pgscan_kswapd").to_list(), one.get_column("pgscan_direct").to_list())]
                axs[2].plot(*_rate(t, scan), label=str(variant))
        for ax, name in zip(axs, ("free memory (MiB)", "refaults (pages/s)", "pages scanned (pages/s)")):
            ax.set_title(name)
            ax.set_xlabel("simulated time (s)")
            ax.legend(fontsize=7)
        fig.tight_layout()
        parts.append(f"<img alt='time series {esc(title)}' src='{_png(fig)}'>")
    parts.append("<p><small>reclaimlab report; Welch CIs as the R script of the MGLRU Apache Hadoop benchmark computes them "
                 "(CI of the difference over the baseline mean).</small></p></body></html>")
    return "".join(parts), text


def write_report(source: str | os.PathLike, output: str | os.PathLike, metric: str | None = None,
                 baseline: str | None = None) -> Path:
    """Render the report of the results store in ``source`` into ``output`` (atomically)."""
    from .._atomic import atomic_output
    from ..exceptions import ConfigError, ReclaimlabError

    out = Path(output)
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():  # before the rendering, and by its name (not the temp file's)
        raise ConfigError(f"{out}: no such directory: {parent}")
    if not (Path(source) / "results.sqlite").exists():
        raise ConfigError(f"{source}: no results store (results.sqlite) in this directory")
    try:
        importlib.import_module("matplotlib")
    except ImportError:
        raise ReclaimlabError("report needs matplotlib for its figures: pip install 'reclaimlab[plot]'") from None
    page, text = render(source, metric, baseline)
    with atomic_output(out) as tmp:
        tmp.write_text(page, encoding="utf-8")
    with atomic_output(summary_path(out)) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return out


def summary_path(output: str | os.PathLike) -> Path:
    """Where the plain-text summary of the report ``output`` goes: beside it, ``.txt``."""
    return Path(output).with_suffix(".txt")
