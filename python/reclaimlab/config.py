"""Run configuration from TOML files, under the kernel's knob names.

A config file is a TOML document whose tables flatten to the engine's dotted keys::

    policy = "classic@6.15"
    seed = 7
    scenario = "default"          # or a [trace] table, not both

    [machine]
    memory = "4G"                 # -> machine.memory

    [vm]
    swappiness = 10               # -> vm.swappiness
    watermark_scale_factor = 10

    [swap]
    device = "zram"
    size = "2G"

    [cgroup.db]
    "memory.max" = "1G"           # -> cgroup.db.memory.max (memory.max = "1G" works too)

    [trace]
    path = "traces/app.trace"     # relative to this file
    format = "address"            # native | lirs | address | csv | oracle (default: detect)
    kind = "anon"                 # file-read | file-mapped | anon

Values may be TOML strings, integers, floats or booleans; they are handed to the engine
as strings. An unknown key is a :class:`~reclaimlab.exceptions.ConfigError` naming the
file, the key and its line.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from .exceptions import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = ["ConfigFile", "load", "flatten", "to_value_string", "apply"]

TRACE_KEYS = ("path", "format", "kind")


@dataclass
class ConfigFile:
    """A parsed config file: engine settings plus what to replay."""

    path: Path
    settings: dict[str, str] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    trace: dict[str, str] | None = None
    scenario: str | None = None

    def where(self, key: str = "") -> str:
        """``FILE, line N`` of a (dotted) key, or ``FILE`` when the key has no line."""
        line = self.lines.get(key)
        return f"{self.path}, line {line}" if line else str(self.path)

    def error(self, key: str, msg: str) -> ConfigError:
        """A ConfigError about ``key``, located in this file."""
        return ConfigError(f"{self.where(key)}: {msg}", key=key, path=str(self.path), line=self.lines.get(key))


def to_value_string(value: Any) -> str:
    """A TOML/Python value as the string the engine's ``Config.set`` parses."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return str(value)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise TypeError(f"expected a string or a number, got {type(value).__name__}")


def flatten(table: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Flatten nested tables to dotted keys: ``{"vm": {"swappiness": 10}}`` -> ``{"vm.swappiness": 10}``."""
    out: dict[str, Any] = {}
    for k, v in table.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(flatten(v, key + "."))
        else:
            out[key] = v
    return out


_BARE = r"[A-Za-z0-9_\-]+"
_KEYPART = rf"(?:{_BARE}|\"(?:[^\"\\]|\\.)*\"|'[^']*')"
_DOTTED = rf"{_KEYPART}(?:\s*\.\s*{_KEYPART})*"
_TABLE_RE = re.compile(rf"^\s*\[\[?\s*({_DOTTED})\s*\]\]?")
_KEY_RE = re.compile(rf"^\s*({_DOTTED})\s*=")


def _split_key(dotted: str) -> list[str]:
    return [p.strip().strip("\"'") for p in re.findall(_KEYPART, dotted)]


def key_lines(text: str) -> dict[str, int]:
    """Map each flattened key of a TOML text to its 1-based line (a line scanner,
    good for the flat documents configs are; keys it cannot place are left out)."""
    lines: dict[str, int] = {}
    table: list[str] = []
    for n, raw in enumerate(text.splitlines(), start=1):
        m = _TABLE_RE.match(raw)
        if m:
            table = _split_key(m.group(1))
            lines.setdefault(".".join(table), n)
            continue
        m = _KEY_RE.match(raw)
        if m:
            lines.setdefault(".".join(table + _split_key(m.group(1))), n)
    return lines


def _syntax_error(path: Path, e: Exception) -> ConfigError:
    msg = str(e)
    m = re.search(r"\(at line (\d+), column (\d+)\)", msg)
    line = int(m.group(1)) if m else None
    short = re.sub(r"\s*\(at line \d+, column \d+\)", "", msg) if m else msg
    where = f"{path}, line {line}" if line else str(path)
    return ConfigError(f"{where}: invalid TOML: {short}", path=str(path), line=line)


def parse_toml(path: Path) -> tuple[dict[str, Any], dict[str, int]]:
    """Read and parse a TOML file: (document, flattened key -> line). Unreadable text or
    bad syntax is a ConfigError naming the file and line."""
    text = read_text(path)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise _syntax_error(path, e) from None
    return doc, key_lines(text)


def read_text(path: Path) -> str:
    """The file's text; a binary file is a ConfigError naming it."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not a UTF-8 text (TOML) file (byte {e.start})", path=str(path)) from None


def load(path: str | os.PathLike) -> ConfigFile:
    """Read and flatten a TOML config file (raises ConfigError / OSError)."""
    path = Path(path)
    doc, lines = parse_toml(path)
    cf = ConfigFile(path=path, lines=lines)

    def err(key: str, msg: str) -> ConfigError:
        return cf.error(key, f"config key '{key}': {msg}")

    trace = doc.pop("trace", None)
    if trace is not None:
        if not isinstance(trace, dict):
            raise err("trace", "expected a [trace] table with path, format, kind")
        for k in trace:
            if k not in TRACE_KEYS:
                raise err(f"trace.{k}", "unknown key; a [trace] table takes path, format and kind")
        if "path" not in trace:
            raise err("trace", "the [trace] table needs a path")
        t = {k: to_value_string(v) for k, v in trace.items()}
        t["path"] = str((path.parent / t["path"]))
        cf.trace = t
    scenario = doc.pop("scenario", None)
    if scenario is not None:
        if not isinstance(scenario, str):
            raise err("scenario", "expected a scenario name (see `reclaimlab scenarios`)")
        if cf.trace is not None:
            raise err("scenario", "a config names either a scenario or a [trace], not both")
        cf.scenario = scenario
    for key, value in flatten(doc).items():
        try:
            cf.settings[key] = to_value_string(value)
        except TypeError as e:
            raise err(key, str(e)) from None
    return cf


def alias_settings(values: Mapping[str, Any]) -> dict[str, Any]:
    """The knob settings of shortcut values given by flag name (``{"memory": "2G", "swap":
    "zram:1G"}``; None = not given), by the alias rows (crates/core/src/config.rs
    ``KNOB_ALIASES``): a two-key row's ``A:B`` sets both keys, a plain ``A`` the first."""
    from . import _core

    out: dict[str, Any] = {}
    for flag, metavar, keys in _core.knob_aliases():
        value = values.get(flag) if flag else None
        if value is None:
            continue
        if len(keys) == 1:
            out[keys[0]] = value
            continue
        first, colon, second = str(value).partition(":")
        if colon and not second.strip():
            word = keys[1].rsplit(".", 1)[-1]
            raise ConfigError(f"--{flag} {value}: no {word} after ':' (e.g. {first.strip()}:"
                              f"{metavar.rsplit(':', 1)[-1].strip('[]')}; or just {first.strip()} for the default {word})",
                              key=keys[1])
        out[keys[0]] = first.strip()
        if colon:
            out[keys[1]] = second.strip()
    return out


def apply(config: Any, settings: Mapping[str, Any], origin: ConfigFile | None = None) -> None:
    """``config.set`` every key; errors name the file and line when ``origin`` is a file."""
    for key, value in settings.items():
        try:
            config.set(key, to_value_string(value))
        except ConfigError as e:
            if origin is not None:
                raise origin.error(key, str(e)) from None
            raise
        except TypeError as e:
            raise ConfigError(f"config key '{key}': {e}", key=key) from None


def validate(config: Any, origin: ConfigFile | None = None) -> None:
    """Cross-key checks; a failing key that came from the file is located in it."""
    try:
        config.validate()
    except ConfigError as e:
        if origin is not None and e.key in origin.lines:
            raise origin.error(e.key, str(e)) from None
        raise
