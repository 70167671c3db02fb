"""`reclaimlab report DIR -o FILE.html`: one self-contained HTML file with embedded PNG
figures, checked by rendering it in headless Chromium where Chromium is installed."""

from __future__ import annotations

import base64
import re
import shutil
import subprocess

import pytest

pytest.importorskip("matplotlib")

from reclaimlab.experiment import load, run_experiment  # noqa: E402

from conftest import cli  # noqa: E402
from test_experiment import tiny  # noqa: E402


@pytest.fixture(scope="module")
def experiment_dir(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("report")
    run_experiment(load(tiny(tmp)), tmp / "out", jobs=2, progress=False)
    return tmp / "out"


def test_report_is_self_contained_html(experiment_dir, tmp_path):
    out = tmp_path / "report.html"
    p = cli("report", experiment_dir, "-o", out)
    assert p.returncode == 0, p.stderr
    html = out.read_text()
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    imgs = re.findall(r"src='data:image/png;base64,([A-Za-z0-9+/=]+)'", html)
    assert len(imgs) == 3  # forest plot + time series of the two configurations
    for b in imgs:
        assert base64.b64decode(b)[:8] == b"\x89PNG\r\n\x1a\n"
    assert "http://" not in html and "https://" not in html  # nothing fetched from a server
    assert "swap=swapoff" in html and "swap=swapon" in html and "classic@6.15" in html
    # issue 21 item 5: provenance, the noise, the knobs behind the axes, variant-named headers.
    from reclaimlab import __version__

    assert f"reclaimlab {__version__}, commit " in html and "rendered 20" in html
    assert "noise: default (per run:" in html and "Effective configuration of the 8 runs" in html
    assert "machine.memory" in html and "cost.file_read_ns" in html  # common, and varying by noise
    assert "swap=swapoff (swap.device=none)" in html and "mean other" not in html
    assert "mean runtime_s: classic@6.15</th><th class='l'>against</th>" in html and "<td class='l'>mglru@6.15</td>" in html
    assert re.search(r"<td class='(better|worse|eq)'>", html)
    # The plain-text summary: printed, written beside the HTML, every line a mail's width.
    txt = out.with_suffix(".txt").read_text()
    assert txt in p.stdout and "swapoff" in txt and "noise: default" in txt
    assert max(len(line) for line in txt.splitlines()) <= 80


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def test_report_renders_in_headless_chromium(experiment_dir, tmp_path):
    browser = _chromium()
    if browser is None:
        pytest.skip("chromium is not installed (Debian: apt-get install -y chromium; .ci/run installs it): "
                    "the HTML report was not rendered in a browser")
    out = tmp_path / "report.html"
    assert cli("report", experiment_dir, "-o", out).returncode == 0
    shot = tmp_path / "shot.png"
    p = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                        "--disable-dev-shm-usage", "--hide-scrollbars", "--window-size=1280,2200",
                        f"--screenshot={shot}", out.as_uri()], capture_output=True, text=True, timeout=120)
    assert shot.exists(), p.stderr[-2000:]
    import matplotlib.image as mpimg
    import numpy as np

    img = mpimg.imread(shot)[..., :3]
    assert img.shape[0] == 2200 and img.shape[1] == 1280
    # The figures are on the page: matplotlib's default line colours (C0 blue, C1 orange)
    # and the forest plot's green appear, each in a good number of pixels.
    def count(rgb, tol=0.08):
        return int((np.abs(img - np.array(rgb) / 255).max(axis=2) < tol).sum())

    assert count((31, 119, 180)) > 200, "no tab:blue time-series lines in the screenshot"
    assert count((255, 127, 14)) > 200, "no tab:orange time-series lines in the screenshot"
    # The forest plot: green (better), red (worse) or grey (equal) intervals.
    assert count((44, 160, 44)) + count((214, 39, 40)) + count((127, 127, 127)) > 50, "no forest plot in the screenshot"
