"""The progress bar: on stderr, only on a terminal, only after the delay."""

from __future__ import annotations

import io
import sys

from reclaimlab.progress import Progress


class FakeSource:
    def meta(self):
        return {"records": 1000}

    def progress(self):
        return None


class Tty(io.StringIO):
    def isatty(self):
        return True


def drive(monkeypatch, stream, **kw) -> str:
    monkeypatch.setattr(sys, "stderr", stream)
    with Progress(**kw) as p:
        p.update(400, FakeSource())
        p.update(1000, FakeSource())
    return stream.getvalue()


def test_bar_drawn_on_a_terminal_after_the_delay(monkeypatch):
    out = drive(monkeypatch, Tty(), delay=0)
    assert "acc" in out and "1.00k" in out


def test_no_bar_when_quiet_not_a_terminal_or_short(monkeypatch):
    assert drive(monkeypatch, Tty(), enabled=False, delay=0) == ""
    assert drive(monkeypatch, io.StringIO(), delay=0) == ""
    assert drive(monkeypatch, Tty(), delay=3600) == ""
