"""Exceptions raised by reclaimlab (the Rust engine raises these too).

Every message names what was wrong: the config key (and file/line when it came from a
file), the trace file and record or line, the cgroup that ran out of memory.
"""

from __future__ import annotations

__all__ = ["ReclaimlabError", "ConfigError", "TraceError", "OutOfMemoryError"]


class ReclaimlabError(Exception):
    """Base class of every reclaimlab error (unknown policy or scenario, bad argument...)."""


class ConfigError(ReclaimlabError):
    """A config key that does not exist, or a value it cannot take.

    ``key`` is the dotted knob name (``vm.swappiness``) when known; ``path`` and
    ``line`` locate it when it came from a TOML file.
    """

    def __init__(self, message: str, key: str | None = None, path: str | None = None, line: int | None = None):
        super().__init__(message)
        self.key = key
        self.path = path
        self.line = line


class TraceError(ReclaimlabError):
    """A trace that cannot be read: missing, truncated, corrupt, or a bad line."""


class OutOfMemoryError(ReclaimlabError):
    """The modeled kernel would OOM-kill: reclaim could not make room."""
