"""Benchmark: Python-4 translate+analyse (`compile_py4`) vs CPython's `compile()` of the
translated Python 3 source, measured in the same run on the same machine.

    .venv/bin/python benchmarks/translate.py [--repeats 30] [--profile]

Corpora: the Python-4 examples of docs/python4.md (every `py4` block) and
benchmarks/data/program300.py4 (a ~300-line program). The ratio is the time of
compile_py4 (token rewrite, parse, analysis, transform and compile to a code object)
over that of compile(python_source, ..., "exec"): process CPU time (time.process_time, so
that other jobs on a shared machine do not count), the two sides timed back to back in
each repeat, in alternating order (py4 first in even repeats, CPython first in odd ones).
Headline: the median of the per-repeat ratios; the ratio of the minima is printed too.
No state is kept between calls of compile_py4 (no cache). Goal: <= 3x.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import time
import warnings
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


def _seconds(fn) -> float:
    """CPU seconds of this process: on a shared machine, time spent descheduled is not ours."""
    start = time.process_time()
    fn()
    return time.process_time() - start


def measure(name: str, sources: list[str], repeats: int) -> dict:
    """Time both sides alternately (the machine is shared: load hits both alike)."""
    translated = [compile_py4(s).python_source for s in sources]

    def run_py4():
        for source in sources:
            compile_py4(source, "<bench>")

    def run_cpython():
        for source in translated:
            compile(source, "<bench>", "exec", dont_inherit=True)

    run_py4(), run_cpython()  # warm up
    py4_times, cpython_times = [], []
    for repeat in range(repeats):
        if repeat % 2:  # alternate the order: neither side always runs with warm caches
            cpython_times.append(_seconds(run_cpython))
            py4_times.append(_seconds(run_py4))
        else:
            py4_times.append(_seconds(run_py4))
            cpython_times.append(_seconds(run_cpython))
    ratios = [p / c for p, c in zip(py4_times, cpython_times, strict=True)]
    lines = sum(s.count("\n") + 1 for s in sources)
    return {"corpus": name, "programs": len(sources), "lines": lines,
            "compile_py4_ms": min(py4_times) * 1e3, "cpython_compile_ms": min(cpython_times) * 1e3,
            "ratio_of_minima": min(py4_times) / min(cpython_times),
            "median_pair_ratio": statistics.median(ratios)}


def stage_breakdown(sources: list[str], repeats: int) -> dict[str, float]:
    """CPU ms per stage of compile_py4 (minimum over repeats), summed over ``sources``."""
    import ast

    from py4.lang.analyze import analyze
    from py4.lang.tokens import rewrite_tokens
    from py4.lang.translate import transform

    best: dict[str, float] = {}
    for _ in range(repeats):
        spent = dict.fromkeys(("tokens", "ast.parse", "analysis", "transform", "compile(AST)"), 0.0)
        for source in sources:
            marks = [time.process_time()]
            tokens = rewrite_tokens(source)
            marks.append(time.process_time())
            tree = ast.parse(tokens.text)
            marks.append(time.process_time())
            analysis = analyze(tree, tokens.let_positions, tokens.empty_dicts)
            marks.append(time.process_time())
            transform(tree, tokens.empty_dicts, analysis.sites)
            marks.append(time.process_time())
            compile(tree, "<bench>", "exec", dont_inherit=True)
            marks.append(time.process_time())
            for stage, start, end in zip(spent, marks[:-1], marks[1:], strict=True):
                spent[stage] += end - start
        for stage, seconds in spent.items():
            best[stage] = min(best.get(stage, seconds), seconds)
    return {stage: seconds * 1e3 for stage, seconds in best.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--profile", action="store_true", help="profile compile_py4 on the program")
    parser.add_argument("--stages", action="store_true", help="CPU time of each compile_py4 stage")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", SyntaxWarning)  # CPython's own lint of translated code
    program = PROGRAM.read_text(encoding="utf-8")
    spec = spec_sources()
    rows = [measure("spec examples", spec, args.repeats),
            measure("program300.py4", [program], args.repeats)]
    print(f"{'corpus':<16} {'programs':>8} {'lines':>6} {'compile_py4 ms':>15} "
          f"{'compile() ms':>13} {'median pair ratio':>18} {'ratio of minima':>16}")
    for row in rows:
        print(f"{row['corpus']:<16} {row['programs']:>8} {row['lines']:>6} "
              f"{row['compile_py4_ms']:>15.2f} {row['cpython_compile_ms']:>13.2f} "
              f"{row['median_pair_ratio']:>17.2f}x {row['ratio_of_minima']:>15.2f}x")
    print("CPU times (ms: minimum over repeats); median pair ratio = median over repeats of "
          "compile_py4 / compile(); goal <= 3x")
    if args.stages:
        for name, sources in (("spec examples", spec), ("program300.py4", [program])):
            stages = stage_breakdown(sources, args.repeats)
            print(f"{name}: " + ", ".join(f"{k} {v:.2f} ms" for k, v in stages.items()))
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
