"""How fast `boa migrate` is, against the work any migrator must do anyway.

One command: `.venv/bin/python benchmarks/migrate.py [--repeat N]`. Programs: the
standard-library doctest programs of tests/migrate/doctest_corpus.py. Baselines measured
in the same run: CPython's `compile()` of the Python 3 source (parse + codegen), and
`compile_py4` of the migrated source. Prints per-program milliseconds and ratios.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "migrate"))

from doctest_corpus import build_programs

from py4.lang.compile import compile_py4
from py4.lang.migrate import migrate


def best_of(repeat: int, func) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sources = []
    for program in build_programs(packages=False):
        try:  # test_metaclass's program is rejected by CPython's compiler itself
            compile(program.source, "<py3>", "exec")
        except SyntaxError:
            continue
        sources.append(program.source)
    migrated = [migrate(s, assume_python3=True).source for s in sources]
    chars = sum(map(len, sources))
    t_migrate = best_of(args.repeat, lambda: [migrate(s, assume_python3=True) for s in sources])
    t_compile = best_of(args.repeat, lambda: [compile(s, "<py3>", "exec") for s in sources])
    t_py4 = best_of(args.repeat, lambda: [compile_py4(s) for s in migrated])
    n = len(sources)
    print(f"{n} programs, {chars / n:.0f} characters on average, best of {args.repeat}")
    print(f"migrate            {1000 * t_migrate / n:7.2f} ms/program")
    print(f"CPython compile()  {1000 * t_compile / n:7.2f} ms/program   ratio {t_migrate / t_compile:6.1f}")
    print(f"compile_py4()      {1000 * t_py4 / n:7.2f} ms/program   ratio {t_migrate / t_py4:6.1f}")


if __name__ == "__main__":
    main()
