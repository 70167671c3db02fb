"""Bring your own policy: :class:`Policy`, cache_ext's hooks in Python (docs/plugins.md).

What this module owns: the :class:`Policy` base class (hooks named as cache_ext's
``struct cache_ext_ops``; the batched dispatch of ``folio_added``/``folio_accessed``/
``folio_removed``), ``python:MODULE:CLASS`` / ``python:PATH.py:CLASS`` policy specs
(:func:`load`, :func:`spec_of`), ``rust:PATH:NAME`` specs (checked here, loaded by the
bindings), and the ``attach`` factory the engine calls once per
lruvec (memcg x node) for that lruvec's instance. The engine side, and when each hook
runs, is ``crates/core/src/policy/ext/mod.rs``; the bridge is ``crates/python/src/policy.rs``.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import importlib
import importlib.util
import os
import signal
import sys
import threading
import time
from typing import Any, Callable, Iterable, Iterator

from .exceptions import ConfigError

#: The prefix of a Python policy's name (``--policy python:mypol:MRU``).
PREFIX = "python:"
#: The prefix of a policy in a shared library (``--policy rust:PATH.so:MRU``).
RUST_PREFIX = "rust:"

_HOOKS = ("folio_added", "folio_accessed", "folio_removed")


class _HookError(Exception):
    """A hook raised: the message names the hook and the folio (read by the bridge)."""

    def __init__(self, message: str):
        super().__init__(message)
        self.reclaimlab_hook_message = message


#: The longest one hook call may take, in seconds, before the run ends with an error (a
#: policy that never returns). A class sets its own ``hook_timeout_s``; None or 0: no
#: limit. Enforced by SIGALRM in a run on the main thread (a run on another thread has
#: no limit).
HOOK_TIMEOUT_S = 60.0

#: The hook calls in progress on the main thread: (hook, monotonic start, limit).
_calls: list[tuple[str, float, float]] = []


class _HookTimeout(BaseException):
    """A hook call outlived its limit. A BaseException, so that a hook's own ``except
    Exception`` does not swallow it; the bridge reads the message."""

    def __init__(self, hook: str, limit: float):
        super().__init__(f"{hook} did not return within {limit:g} s")
        self.reclaimlab_hook_message = f"did not return within {limit:g} s (hook_timeout_s)"


class _Timed:
    """What the engine holds of one instance when its class has a hook time limit: the
    hooks it calls, each timed for the watchdog, and the flags it reads. The user's
    object itself is left as it was."""

    def __init__(self, obj: "Policy", limit: float):
        self._obj, self._limit = obj, limit
        self._has_admit_folio, self._has_folio_accessed = obj._has_admit_folio, obj._has_folio_accessed

    def _call(self, hook: str, *args: Any) -> Any:
        _calls.append((hook, time.monotonic(), self._limit))
        try:
            return getattr(self._obj, hook)(*args)
        finally:
            _calls.pop()

    def init(self, cgroup: str, node: int) -> None:
        return self._call("init", cgroup, node)

    def evict_folios(self, nr: int) -> Any:
        return self._call("evict_folios", nr)

    def _events(self, buf: bytes) -> None:
        return self._call("_events", buf)

    def admit_folio(self, folio: int) -> Any:
        return self._call("admit_folio", folio)


def _guard(obj: "Policy") -> "Policy | _Timed":
    """``obj`` as the engine should call it: timed unless its class has no limit."""
    limit = getattr(obj, "hook_timeout_s", HOOK_TIMEOUT_S)
    return _Timed(obj, limit) if limit else obj


@contextlib.contextmanager
def watchdog() -> Iterator[None]:
    """While a run with Python policies lasts: SIGALRM every second, raising in a hook
    call that has run longer than its limit. System calls the alarm interrupts are
    restarted (``siginterrupt`` off), so the engine's own I/O does not see it."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def on_alarm(signum: int, frame: Any) -> None:
        if _calls:
            hook, start, limit = _calls[0]
            if time.monotonic() - start > limit:
                raise _HookTimeout(hook, limit)

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.siginterrupt(signal.SIGALRM, False)
    signal.setitimer(signal.ITIMER_REAL, 1.0, 1.0)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        _calls.clear()


def _describe(exc: BaseException) -> str:
    msg = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


class Policy:
    """A page reclaim policy written against cache_ext's hooks. Subclass it, implement
    :meth:`evict_folios` and the hooks you need, and run it with
    ``reclaimlab run --policy python:mymodule:MyPolicy`` or
    ``reclaimlab.run(policy=MyPolicy())``.

    One instance serves one lruvec (a memory cgroup on one node): it sees only that
    lruvec's folios. A folio is an ``int``, the trace's page id of its first page; it
    stays the same when the page is evicted and read back, so it can key ghost entries.
    The simulated kernel calls the hooks in this order for a folio: ``admit_folio``,
    then ``folio_added``, any number of ``folio_accessed``, then ``folio_removed`` when
    reclaim takes it; reclaim asks ``evict_folios`` for candidates in between. The
    three ``folio_*`` notifications are delivered in batches, in order, just before
    each ``evict_folios`` (and ``admit_folio``) call.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Only a class that overrides admit_folio is asked (one call per fault), and
        # only one that overrides folio_accessed (or _events) hears of accesses.
        # A class may say so itself (a batched ``_events`` that ignores accesses).
        if "_has_admit_folio" not in cls.__dict__:
            cls._has_admit_folio = cls.admit_folio is not Policy.admit_folio
        if "_has_folio_accessed" not in cls.__dict__:
            cls._has_folio_accessed = cls.folio_accessed is not Policy.folio_accessed or cls._events is not Policy._events

    _has_admit_folio = False
    _has_folio_accessed = False
    #: Seconds one hook call may take before the run ends with an error naming the hook
    #: (None: no limit); see :data:`HOOK_TIMEOUT_S`.
    hook_timeout_s: float | None = HOOK_TIMEOUT_S

    def init(self, cgroup: str, node: int) -> None:
        """``init(memcg)``: the instance is attached to memory cgroup ``cgroup`` (``""``
        is the root) on NUMA node ``node``, before any other hook."""

    def evict_folios(self, nr: int) -> Iterable[int]:
        """``evict_folios``: reclaim wants ``nr`` (1..32) folios of this lruvec; return
        up to ``nr`` candidates, best first. Return only folios the hooks reported as
        added and not removed, each once, at most 32. A candidate whose accessed bit is
        set is kept (you hear ``folio_accessed``) and you are asked again. Returning
        nothing hands this reclaim pass to the kernel's default order (cache_ext's
        fallback)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement evict_folios")

    def folio_added(self, folio: int) -> None:
        """``folio_added``: ``folio`` joined the lruvec (a fault, or a folio reclaim
        could not free coming back)."""

    def folio_accessed(self, folio: int) -> None:
        """``folio_accessed``: what the kernel sees of an access: ``folio_mark_accessed``
        (a ``read()`` of a resident page) or an accessed bit reclaim harvested. Sent only
        to a class that overrides it (or ``_events``)."""

    def folio_removed(self, folio: int) -> None:
        """``folio_removed``: reclaim took ``folio``; forget it (keep a ghost if you
        like)."""

    def admit_folio(self, folio: int) -> bool:
        """``admit_folio``: return False to keep ``folio`` out of your set; it is then
        reclaimed first, without the other hooks hearing of it. (cache_ext returns the
        opposite: true bypasses the cache.) Called only if a subclass overrides it."""
        return True

    def _events(self, buf: bytes) -> None:
        """The batched hooks: little-endian u64 ``folio << 2 | kind`` each."""
        hooks = (self.folio_added, self.folio_accessed, self.folio_removed)
        view = memoryview(buf).cast("Q") if sys.byteorder == "little" else _swapped(buf)
        e = 0
        try:
            for e in view:
                hooks[e & 3](e >> 2)
        except Exception as exc:
            raise _HookError(f"{_HOOKS[e & 3]}: folio {e >> 2}: {_describe(exc)}") from None


def _swapped(buf: bytes):
    import array

    a = array.array("Q")
    a.frombytes(buf)
    a.byteswap()
    return a


def is_spec(name: Any) -> bool:
    return isinstance(name, str) and name.startswith(PREFIX)


def is_rust_spec(name: Any) -> bool:
    return isinstance(name, str) and name.startswith(RUST_PREFIX)


def check_rust(spec: str) -> None:
    """``rust:PATH:NAME`` names an existing file (the library is loaded by the run)."""
    path, sep, name = spec[len(RUST_PREFIX):].rpartition(":")
    if not sep or not path or not name:
        raise _bad(spec, "expected rust:PATH:NAME (a shared library built with export_cache_ext_policies!)")
    if not os.path.isfile(path):
        raise _bad(spec, f"no such file: {os.path.abspath(path)}")


def _bad(spec: str, why: str) -> ConfigError:
    return ConfigError(f"policy {spec}: {why}", key="policy")


def load(spec: str) -> type[Policy]:
    """The :class:`Policy` subclass ``python:MODULE:CLASS`` (MODULE importable from the
    current directory or ``PYTHONPATH``) or ``python:PATH.py:CLASS`` names."""
    where, sep, cls_name = spec[len(PREFIX):].rpartition(":")
    if not sep or not where or not cls_name:
        raise _bad(spec, "expected python:MODULE:CLASS or python:PATH.py:CLASS")
    try:
        if where.endswith(".py") or "/" in where or os.sep in where:
            path = os.path.abspath(where)
            if not os.path.isfile(path):
                raise _bad(spec, f"no such file: {path}")
            name = "_reclaimlab_policy_" + hashlib.sha1(path.encode()).hexdigest()[:12]
            module = sys.modules.get(name)
            if module is None:
                mspec = importlib.util.spec_from_file_location(name, path)
                module = importlib.util.module_from_spec(mspec)
                sys.modules[name] = module
                try:
                    mspec.loader.exec_module(module)
                except BaseException:
                    del sys.modules[name]
                    raise
        else:
            if os.getcwd() not in sys.path and "" not in sys.path:
                sys.path.insert(0, os.getcwd())
            module = importlib.import_module(where)
    except ConfigError:
        raise
    except Exception as exc:
        raise _bad(spec, f"cannot import {where}: {_describe(exc)}") from None
    cls = getattr(module, cls_name, None)
    if cls is None:
        raise _bad(spec, f"{where} has no {cls_name}")
    if not (isinstance(cls, type) and issubclass(cls, Policy)):
        raise _bad(spec, f"{cls_name} is not a reclaimlab.Policy subclass")
    return cls


def canonical(spec: str) -> str:
    """``spec`` with a file path made absolute (so worker processes find it)."""
    if is_rust_spec(spec):
        path, _, name = spec[len(RUST_PREFIX):].rpartition(":")
        return f"{RUST_PREFIX}{os.path.abspath(path)}:{name}" if path else spec
    where, _, cls_name = spec[len(PREFIX):].rpartition(":")
    if where.endswith(".py") or "/" in where or os.sep in where:
        return f"{PREFIX}{os.path.abspath(where)}:{cls_name}"
    return spec


def spec_of(policy: Any) -> str:
    """The name a run reports for a Policy class or instance."""
    cls = policy if isinstance(policy, type) else type(policy)
    return f"{PREFIX}{cls.__module__}:{cls.__qualname__}"


def check(policy: Any) -> None:
    cls = policy if isinstance(policy, type) else type(policy)
    if not (isinstance(cls, type) and issubclass(cls, Policy)):
        raise ConfigError(f"policy: expected a policy name, a reclaimlab.Policy subclass or instance, got {type(policy).__name__}", key="policy")


def attach_factory(policy: Any) -> Callable[[str, int], "Policy | _Timed"]:
    """``attach(memcg, node)``: a class is instantiated per lruvec; an instance serves
    the first lruvec and copies of it (taken before the run) the others."""
    if isinstance(policy, type):
        return lambda memcg, node: _guard(policy())
    template = copy.deepcopy(policy)
    first = [policy]

    def attach(memcg: str, node: int) -> "Policy | _Timed":
        return _guard(first.pop() if first else copy.deepcopy(template))

    return attach
