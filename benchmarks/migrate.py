"""How fast and how faithful `boa migrate` is.

Speed: `.venv/bin/python benchmarks/migrate.py [--repeat N]`. Programs: the
standard-library doctest programs of tests/migrate/doctest_corpus.py. Baselines measured
in the same run: CPython's `compile()` of the Python 3 source (parse + codegen), and
`compile_py4` of the migrated source. Prints per-program milliseconds and ratios.

Fidelity: `.venv/bin/python benchmarks/migrate.py --fidelity [--baseline DIR]`. Programs:
HumanEval's 164 (benchmarks/data/humaneval, MIT: prompt + canonical solution +
`check(entry_point)`) and the shapes of each known failure class
(tests/migrate/test_fidelity_classes.py). Each runs under `python3` and its migration
under `boa run` (tests/migrate/differential.py); prints the share migrated complete, the
share behaving the same, refusals by reason, and what `py4 problems import --format
humaneval` keeps and skips. `--baseline DIR` runs the same measurement with DIR's `src`
(a worktree of another commit) in the same run and prints both.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "migrate"))

from doctest_corpus import build_programs

from py4.lang.compile import compile_py4
from py4.lang.migrate import migrate

ROOT = Path(__file__).resolve().parents[1]


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
    parser.add_argument("--fidelity", action="store_true", help="measure behaviour, not speed")
    parser.add_argument("--baseline", type=Path, help="with --fidelity: a checkout to compare with")
    parser.add_argument("--json", action="store_true", help="with --fidelity: one JSON object")
    args = parser.parse_args()
    if args.fidelity:
        fidelity(args.baseline, args.json)
        return
    speed(args.repeat)


def speed(repeat: int) -> None:
    sources = []
    for program in build_programs(packages=False):
        try:  # test_metaclass's program is rejected by CPython's compiler itself
            compile(program.source, "<py3>", "exec")
        except SyntaxError:
            continue
        sources.append(program.source)
    migrated = [migrate(s, assume_python3=True).source for s in sources]
    chars = sum(map(len, sources))
    t_migrate = best_of(repeat, lambda: [migrate(s, assume_python3=True) for s in sources])
    t_compile = best_of(repeat, lambda: [compile(s, "<py3>", "exec") for s in sources])
    t_py4 = best_of(repeat, lambda: [compile_py4(s) for s in migrated])
    n = len(sources)
    print(f"{n} programs, {chars / n:.0f} characters on average, best of {repeat}")
    print(f"migrate            {1000 * t_migrate / n:7.2f} ms/program")
    print(f"CPython compile()  {1000 * t_compile / n:7.2f} ms/program   ratio {t_migrate / t_compile:6.1f}")
    print(f"compile_py4()      {1000 * t_py4 / n:7.2f} ms/program   ratio {t_migrate / t_py4:6.1f}")


def humaneval_records() -> list[dict]:
    with gzip.open(ROOT / "benchmarks" / "data" / "humaneval" / "HumanEval.jsonl.gz", "rt") as handle:
        return [json.loads(line) for line in handle]


def fidelity_corpus() -> dict[str, dict[str, str]]:
    from test_fidelity_classes import fidelity_programs

    humaneval = {rec["task_id"]: f"{rec['prompt']}{rec['canonical_solution']}\n{rec['test']}\n"
                                 f"check({rec['entry_point']})\nprint('ok')\n" for rec in humaneval_records()}
    return {"humaneval": humaneval, "failure classes": fidelity_programs()}


def measure_fidelity() -> dict:
    from differential import Differential

    from py4.problems.importer import import_records

    report: dict = {}
    with Differential() as differential:
        for corpus, programs in fidelity_corpus().items():
            outcomes = [differential.check(name, source, stdlib=True) for name, source in programs.items()]
            refusals = Counter(o.reason.split(": ", 1)[-1][:90] for o in outcomes if o.status == "excluded")
            report[corpus] = {"programs": len(outcomes),
                              "complete": sum(not o.reason.startswith("cannot convert") for o in outcomes),
                              "same": sum(o.status == "pass" for o in outcomes),
                              "differ": sorted(o.name for o in outcomes if o.status == "fail"),
                              "refusals": dict(refusals.most_common())}
    kept, skips = import_records(humaneval_records(), "humaneval", workers=2)
    report["import humaneval"] = {"read": 164, "kept": len(kept),
                                  "gold not idiomatic": sum(not p.provenance["gold_idiomatic"] for p in kept),
                                  "skipped": dict(Counter(s["reason"].split(":")[0] for s in skips).most_common())}
    return report


def fidelity(baseline: Path | None, as_json: bool) -> None:
    started = time.perf_counter()
    reports = {"this checkout": measure_fidelity()}
    if baseline is not None:
        env = {**os.environ, "PYTHONPATH": str(baseline.resolve() / "src")}
        proc = subprocess.run([sys.executable, __file__, "--fidelity", "--json"], env=env, check=True,
                              capture_output=True, text=True)
        reports[f"baseline {baseline}"] = json.loads(proc.stdout)["this checkout"]
    if as_json:
        print(json.dumps(reports))
        return
    for label, report in reports.items():
        print(f"== {label}")
        for corpus, r in report.items():
            if corpus == "import humaneval":
                print(f"  py4 problems import --format humaneval: kept {r['kept']} of {r['read']} "
                      f"({r['gold not idiomatic']} with a gold still calling py3_* helpers); "
                      f"skipped {r['skipped']}")
                continue
            n = r["programs"]
            print(f"  {corpus}: {n} programs, migrated complete {r['complete']} ({100 * r['complete'] / n:.1f} %), "
                  f"behave the same {r['same']} ({100 * r['same'] / n:.1f} %), differ {len(r['differ'])}")
            for name in r["differ"]:
                print(f"    differs: {name}")
            for reason, count in r["refusals"].items():
                print(f"    refused/excluded x{count}: {reason}")
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
