"""Import Python 3 benchmark problems (MBPP, HumanEval) as Python-4 problems.

For each record: structured tests are recovered from `assert f(<literals>) == <literal>`
statements (anything else is skipped with a reason), the reference must pass them under
Python 3, `boa migrate` turns it into Python-4, and the problem is kept only when it is
discriminative: the fully migrated reference certifies, and for at least one non-core
rule R the reference migrated without R's fixer fails certification. Kept problems
target exactly those rules, carry provenance (source, task id) and go to split
`imported`. A migrated gold that still calls `py3_*` helpers is kept but marked
``provenance["gold_idiomatic"] = False``: it is no training target (the EFT builder skips
it) until rewritten. Test inputs keep their tuples (``to_test_value``); the reference is
checked with certification's own equality (``values_equal``), so a problem kept here is
judged the same way by Boa; an entry point the migrator renamed (a builtin's name) is
renamed in the problem too.

At campaign scale the same code reads the Hub datasets (``load_hub_records``).
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path
from typing import Any, Iterable

from py4.errors import Py4Error
from py4.problems.family import Call, FamilyError
from py4.problems.generate import load_reference, run_reference, to_json_value, to_test_value
from py4.problems.schema import CANARY, Problem, TestCase, gold_is_idiomatic

__all__ = ["ProblemImportError", "parse_assert", "records_to_candidates", "import_records", "import_file", "import_hub",
           "load_hub_records"]

FORMATS = ("mbpp", "humaneval")
_NON_CORE = frozenset(f"P4-{n:02d}" for n in range(6, 31))
HUB_DATASETS = {"mbpp": ("google-research-datasets/mbpp", "full", "test"),
                "humaneval": ("openai/openai_humaneval", None, "test")}


class ProblemImportError(Py4Error, ValueError):
    """The input file or a record is unusable as a whole (names the file and line)."""


def parse_assert(statement: ast.stmt, callee: str | None) -> tuple[str, Call, Any] | str:
    """(function name, call, expected) for `assert f(literals) == literal`, else a skip reason."""
    if not isinstance(statement, ast.Assert):
        return "not an assert"
    test = statement.test
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return "assert is not a single == comparison"
    left, right = test.left, test.comparators[0]
    if not isinstance(left, ast.Call) and isinstance(right, ast.Call):
        left, right = right, left
    if not (isinstance(left, ast.Call) and isinstance(left.func, ast.Name)):
        return "left side is not a plain function call"
    if callee and left.func.id != callee:
        return f"calls {left.func.id}, not {callee}"
    try:
        args = [ast.literal_eval(a) for a in left.args]
        kwargs = {k.arg: ast.literal_eval(k.value) for k in left.keywords}
        expected = ast.literal_eval(right)
    except (ValueError, TypeError, SyntaxError):
        return "arguments or expected value are not literals"
    try:
        call = Call(to_test_value(args), to_test_value(kwargs))
        expected = to_json_value(expected)
    except FamilyError as exc:
        return f"not JSON-representable ({exc})"
    return left.func.id, call, expected


def _asserts(source: str, callee: str | None) -> tuple[list[tuple[str, Call, Any]], list[str]]:
    tests, skipped = [], []
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return [], [f"tests do not parse: {exc.msg}"]
    body = tree.body
    check = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check"), None)
    if check is not None:
        body = check.body
    for stmt in body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.Expr)) or (isinstance(stmt, ast.Assign) and check is None):
            continue
        parsed = parse_assert(stmt, callee)
        if isinstance(parsed, str):
            skipped.append(parsed)
        else:
            tests.append(parsed)
    return tests, skipped


def records_to_candidates(records: Iterable[dict], fmt: str) -> tuple[list[dict], list[dict]]:
    """Turn raw records into candidates (reference, entry point, tests) and skips with reasons."""
    candidates, skips = [], []
    for rec in records:
        if fmt == "mbpp":
            task, text, reference = str(rec["task_id"]), rec["text"], rec["code"]
            tests, why = _asserts("\n".join(rec["test_list"]), None)
            entry = tests[0][0] if tests else None
        else:
            task, text = str(rec["task_id"]), rec["prompt"]
            reference, entry = rec["prompt"] + rec["canonical_solution"], rec["entry_point"]
            tests, why = _asserts(rec["test"], "candidate")
        tests = [t for t in tests if fmt == "humaneval" or t[0] == entry]
        if not tests:
            skips.append({"task_id": task,
                          "reason": "no structured test: " + "; ".join(sorted(set(why))) if why else "no tests"})
            continue
        candidates.append({"task_id": task, "text": text, "reference": reference.replace("\r\n", "\n"),
                           "entry_point": entry, "tests": [(c, e) for _, c, e in tests], "skipped_asserts": why})
    return candidates, skips


def _reference_passes(cand: dict) -> str | None:
    from py4.boa.certify import values_equal  # the rule certification judges by

    try:
        fn = load_reference(cand["reference"], cand["entry_point"])
        for call, expected in cand["tests"]:
            if not values_equal(expected, run_reference(fn, cand["entry_point"], call)):
                return "reference fails its own test"
    except FamilyError as exc:
        return f"reference does not run: {exc}"
    return None


def _problem(cand: dict, fmt: str, gold: str, rules: list[str]) -> Problem:
    sig = next((ln.rstrip().removesuffix(":") for ln in gold.splitlines()
                if ln.startswith(f"fn {cand['entry_point']}(")), "")
    task_id = re.sub(r"[^A-Za-z0-9_\-]", "_", cand["task_id"])
    prompt = cand["text"].strip() + (f"\n\nWrite it in Python-4. Signature:\n\n    {sig}\n" if sig else "")
    return Problem(id=f"{fmt}/{task_id}", family=f"import_{fmt}",
                   title=cand["text"].strip().splitlines()[0][:80] or task_id,
                   prompt=prompt, entry_point=cand["entry_point"], signature=sig,
                   tests=[TestCase(args=c.args, kwargs=c.kwargs, expected=e) for c, e in cand["tests"]],
                   rules=rules, split="imported", gold=gold, reference_py3=cand["reference"], difficulty=2,
                   provenance={"source": fmt, "task_id": cand["task_id"],
                               "skipped_asserts": len(cand["skipped_asserts"]),
                               "gold_idiomatic": gold_is_idiomatic(gold)},
                   canary=CANARY, bank_version="imported")


def import_records(records: Iterable[dict], fmt: str, workers: int | None = None) -> tuple[list[Problem], list[dict]]:
    """Migrate and keep the discriminative records; returns (problems, skips with reasons)."""
    from py4.boa.certify import certify_many
    from py4.boa.executor import Executor
    from py4.lang.migrate import migrate

    if fmt not in FORMATS:
        raise ProblemImportError(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}")
    candidates, skips = records_to_candidates(records, fmt)
    kept: list[Problem] = []
    with Executor(workers=workers) as executor:
        for cand in candidates:
            why = _reference_passes(cand)
            full = migrate(cand["reference"]) if why is None else None
            if why is None and full.cannot_convert:
                why = f"migrator cannot convert: {full.cannot_convert[0].reason}"
            if why is not None:
                skips.append({"task_id": cand["task_id"], "reason": why})
                continue
            # a builtin's name is Python-4's: the migrator renamed the function (`count_`)
            cand = {**cand, "entry_point": full.module_renames.get(cand["entry_point"], cand["entry_point"])}
            violated = [r for r in full.rules_violated if r in _NON_CORE]
            probe = _problem(cand, fmt, full.source, violated or ["P4-06"])
            jobs = [full.source] + [migrate(cand["reference"], skip_rules={r}).source for r in violated]
            certs = certify_many([(probe, src) for src in jobs], executor=executor)
            rules = [r for r, c in zip(violated, certs[1:], strict=True) if not c.certified]
            if not certs[0].certified:
                skips.append({"task_id": cand["task_id"], "reason": "migrated reference does not certify"})
            elif not rules:
                skips.append({"task_id": cand["task_id"], "reason": "not discriminative on any non-core rule"})
            else:
                kept.append(_problem(cand, fmt, full.source, rules))
    return kept, skips


def _read_jsonl(path: Path) -> list[dict]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise ProblemImportError(f"{path}: no such file") from None
    records = []
    for i, line in enumerate(lines, 1):
        if line.strip():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ProblemImportError(f"{path}:{i}: not JSON ({exc.msg})") from None
    return records


def _check_fields(records: list[dict], fmt: str, path: Path) -> None:
    need = {"mbpp": ("task_id", "text", "code", "test_list"),
            "humaneval": ("task_id", "prompt", "canonical_solution", "test", "entry_point")}[fmt]
    for i, rec in enumerate(records, 1):
        missing = [k for k in need if k not in rec]
        if missing:
            raise ProblemImportError(f"{path}: record {i} lacks {missing} (a {fmt} record needs {list(need)})")


def _write_and_summarise(records: list[dict], fmt: str, out: str | Path, workers: int | None) -> dict:
    kept, skips = import_records(records, fmt, workers)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(p.to_json(), sort_keys=True) + "\n" for p in kept), encoding="utf-8")
    reasons: dict[str, int] = {}
    for s in skips:
        key = s["reason"].split(":")[0]
        reasons[key] = reasons.get(key, 0) + 1
    return {"read": len(records), "kept": len(kept), "ids": [p.id for p in kept], "skipped": skips,
            "skipped_reasons": reasons, "out": str(out)}


def import_hub(fmt: str, out: str | Path, workers: int | None = None) -> dict:
    """Import the benchmark straight from the Hub (campaign scale; needs network).

    Raises ProblemImportError for a bad format.
    """
    if fmt not in FORMATS:
        raise ProblemImportError(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}")
    return _write_and_summarise(load_hub_records(fmt), fmt, out, workers)


def import_file(path: str | Path, fmt: str, out: str | Path, workers: int | None = None) -> dict:
    """Import a local JSONL file in ``fmt``; writes kept problems to ``out`` (JSONL) and returns a summary.

    Raises ProblemImportError for an unknown format, a missing/unreadable file or records
    lacking the format's fields.
    """
    if fmt not in FORMATS:
        raise ProblemImportError(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}")
    path = Path(path)
    records = _read_jsonl(path)
    _check_fields(records, fmt, path)
    return _write_and_summarise(records, fmt, out, workers)


def load_hub_records(fmt: str) -> list[dict]:
    """The benchmark's records from the Hugging Face Hub (campaign scale; needs network)."""
    from datasets import load_dataset

    name, config, split = HUB_DATASETS[fmt]
    ds = load_dataset(name, config, split=split) if config else load_dataset(name, split=split)
    return [dict(row) for row in ds]
