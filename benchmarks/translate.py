"""Benchmark: Python-4 translate+analyse (`compile_py4`) vs CPython's `compile()` of the
translated Python 3 source, measured in the same run on the same machine.

    .venv/bin/python benchmarks/translate.py [--repeats 30] [--profile]

Corpora: the Python-4 examples of docs/python4.md (every `py4` block) and
benchmarks/data/program300.py4 (a ~300-line program). The ratio is the median time of
compile_py4 (token rewrite, parse, analysis, transform and compile to a code object)
over the median time of compile(python_source, ..., "exec"). Goal: <= 3x.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import time
from pathlib import Path

from py4.lang import RULES, compile_py4

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "docs" / "python4.md"
PROGRAM = ROOT / "benchmarks" / "data" / "program300.py4"


def spec_sources() -> list[str]:
    """Every compiling `py4` example of the spec (the registry's examples if no spec)."""
    sources: list[str] = []
    if SPEC.exists():
        try:
            from py4.lang.spec_examples import parse_examples

            sources = [e.source for e in parse_examples(SPEC) if e.kind == "py4"]
        except ImportError:
            sources = []
    if not sources:
        sources = [rule.example for rule in RULES.values()]
    return [s for s in sources if compile_py4(s).ok]


def _median_seconds(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(name: str, sources: list[str], repeats: int) -> dict:
    translated = [compile_py4(s).python_source for s in sources]

    def run_py4():
        for source in sources:
            compile_py4(source, "<bench>")

    def run_cpython():
        for source in translated:
            compile(source, "<bench>", "exec", dont_inherit=True)

    run_py4(), run_cpython()  # warm up
    py4_s = _median_seconds(run_py4, repeats)
    cpython_s = _median_seconds(run_cpython, repeats)
    lines = sum(s.count("\n") + 1 for s in sources)
    return {"corpus": name, "programs": len(sources), "lines": lines,
            "compile_py4_ms": py4_s * 1e3, "cpython_compile_ms": cpython_s * 1e3,
            "ratio": py4_s / cpython_s}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--profile", action="store_true", help="profile compile_py4 on the program")
    args = parser.parse_args(argv)
    program = PROGRAM.read_text(encoding="utf-8")
    rows = [measure("spec examples", spec_sources(), args.repeats),
            measure("program300.py4", [program], args.repeats)]
    print(f"{'corpus':<16} {'programs':>8} {'lines':>6} {'compile_py4 ms':>15} "
          f"{'compile() ms':>13} {'ratio':>6}")
    for row in rows:
        print(f"{row['corpus']:<16} {row['programs']:>8} {row['lines']:>6} "
              f"{row['compile_py4_ms']:>15.2f} {row['cpython_compile_ms']:>13.2f} "
              f"{row['ratio']:>5.2f}x")
    if args.profile:
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(20):
            compile_py4(program)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(15)
    return 0


if __name__ == "__main__":
    sys.exit(main())
