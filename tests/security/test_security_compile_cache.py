"""The parent's compile cache is bounded by bytes, not only by count (frontend.py): a full
cache of large distinct programs (an attacker's many 19,000-character submissions) held
~736 MiB in the trusted parent."""

from __future__ import annotations

import gc
import tracemalloc

import pytest

from py4.boa import frontend

pytestmark = pytest.mark.security


def _program(n: int) -> str:
    """A distinct program of ~19,000 characters (under the cache's size limit)."""
    lines = [f"let v{n}_{i} = [{i}, {n}, 'x{i}']\n" for i in range(700)]
    return "".join(lines)[:19_000].rsplit("\n", 1)[0] + "\n"


_MEASURE = r"""
import gc, json, sys, tracemalloc
sys.path.insert(0, sys.argv[1])
from py4.boa import frontend
from test_security_compile_cache import _program

budget = 2 * 2**20
frontend.COMPILE_CACHE_BYTES = budget
cache = frontend._CACHE
frontend.compile_source(_program(-1))  # the front end's own first-use allocations, before
cache.clear()
gc.collect()
tracemalloc.start()
before = tracemalloc.get_traced_memory()[0]
for n in range(30):  # ~5 MiB of entries by the count limit alone
    assert frontend.compile_source(_program(n)).ok
gc.collect()
held = tracemalloc.get_traced_memory()[0] - before
print(json.dumps({"held": held, "budget": budget, "bytes": cache.bytes, "entries": len(cache.entries)}))
"""


def test_compile_cache_memory_stays_within_its_byte_budget():
    """Measured in a process of its own: tracemalloc counts every thread's allocations, and a
    thread another test left running (a server's, a pool's) would be counted against the cache."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    done = subprocess.run([sys.executable, "-c", _MEASURE, str(Path(__file__).parent)], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["bytes"] <= got["budget"]
    assert 0 < got["entries"] < 30 or got["bytes"] == 0
    # What the process really holds after 30 programs (~8 MiB unbounded) is the budget,
    # give or take the interpreter's own allocations meanwhile.
    assert got["held"] < got["budget"] + 2**20, got


def test_an_entry_is_counted_at_least_at_what_it_holds():
    frontend.compile_source(_program(-2))  # the front end's own first-use allocations, before
    frontend._CACHE.clear()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        source = _program(10_001)
        compiled = frontend.compile_source(source)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    counted = frontend.entry_bytes(source, compiled)
    frontend._CACHE.clear()
    assert counted >= held * 0.8, (counted, held)
