"""Result.to_pandas: the time series through polars and pyarrow, with the
reclaimlab[pandas] extra, and an ImportError naming the extra without it."""

from __future__ import annotations

import sys

import pytest

import reclaimlab


def result() -> reclaimlab.Result:
    return reclaimlab.Result({"policy": "p", "vmstat": {}, "metrics": {}, "timeseries": {"t": [0.0, 1.0]}})


@pytest.mark.parametrize("missing", ["pandas", "pyarrow"])
def test_to_pandas_names_the_extra(monkeypatch, missing):
    monkeypatch.setitem(sys.modules, missing, None)  # import MISSING -> ImportError
    with pytest.raises(ImportError, match=r"needs pandas and pyarrow.*pip install 'reclaimlab\[pandas\]'"):
        result().to_pandas()


def test_to_pandas_with_the_extra():
    pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    assert list(result().to_pandas()["t"]) == [0.0, 1.0]
