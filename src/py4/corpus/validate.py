"""Validation of a document's code blocks by Boa, cached by content hash.

Boa's *result* for a program (diagnostics, status, stdout, exception line) is stored on
disk under the SHA-256 of (tag, source); the check of a document's *claims* against it is
redone every time. A corpus draws its programs from a pool, so a 50M-token corpus runs
Boa once per distinct program, not once per document.

    with BoaValidator(cache_dir) as validator:
        problems = validator.check_document(text)   # [] when every block is right
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import lru_cache
from pathlib import Path

from py4.corpus.blocks import BlockFormatError, Program, parse_programs

_EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*)(: .*)?$")
CACHE_FILE = "boa_results.jsonl"
RESULT_VERSION = 1  # bump when the stored result's shape or meaning changes


@lru_cache(maxsize=1)
def implementation_fingerprint() -> str:
    """SHA-256 of Boa's and the language's sources: a changed interpreter invalidates the cache."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted([*root.glob("lang/**/*.py"), *root.glob("boa/*.py")]):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def program_key(tag: str, source: str) -> str:
    """The cache key of a program: SHA-256 of its tag, its source and Boa's implementation."""
    return hashlib.sha256(f"v{RESULT_VERSION}\0{implementation_fingerprint()}\0{tag}\0{source}"
                          .encode()).hexdigest()


def exception_line(stderr: str) -> str | None:
    """`Type: message` from the last line of a traceback (None when there is none)."""
    for row in reversed(stderr.strip().splitlines()):
        match = _EXCEPTION_LINE.match(row.strip())
        if match and not row.startswith(" "):
            return row.strip()
    return None


class BoaValidator:
    """Runs programs in Boa (sandboxed executor) once each, and checks documents' claims.

    Executors start lazily: a fully cached corpus never starts one. A context manager.
    Raises py4.boa.executor.WorkerError when Boa's workers cannot start.
    """

    def __init__(self, cache_dir: str | Path | None, workers: int = 2, timeout_s: float = 5.0):
        self.workers, self.timeout_s = workers, timeout_s
        self.results: dict[str, dict] = {}
        self._executors: dict[str, object] = {}
        self._cache_path = Path(cache_dir) / CACHE_FILE if cache_dir else None
        self.boa_runs = 0
        if self._cache_path and self._cache_path.exists():
            for row in self._cache_path.read_text(encoding="utf-8").splitlines():
                try:  # a line cut by a killed run is only a cache miss
                    entry = json.loads(row)
                    self.results[entry["key"]] = entry["result"]
                except (json.JSONDecodeError, KeyError, TypeError):
                    continue

    def __enter__(self) -> "BoaValidator":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        for executor in self._executors.values():
            executor.close()
        self._executors.clear()

    def _executor(self, dialect: str):
        if dialect not in self._executors:
            from py4.boa.executor import Executor
            self._executors[dialect] = Executor(workers=self.workers, timeout_s=self.timeout_s,
                                                dialect=dialect)
        return self._executors[dialect]

    def observe(self, programs: list[tuple[str, str]]) -> None:
        """Run (tag, source) programs not yet in the cache; record Boa's results."""
        todo = {program_key(tag, src): (tag, src) for tag, src in programs}
        todo = {k: v for k, v in todo.items() if k not in self.results}
        for dialect, tags in (("py4", ("py4", "py3")), ("python3", ("python",))):
            batch = [(k, src) for k, (tag, src) in todo.items() if tag in tags]
            if not batch:
                continue
            runs = self._executor(dialect).run_many([src for _, src in batch])
            self.boa_runs += len(batch)
            new = {}
            for (key, src), run in zip(batch, runs, strict=True):
                new[key] = _result_of(run, _verbatim_diagnostics(src) if dialect == "py4" else [])
            self._store(new)

    def _store(self, new: dict[str, dict]) -> None:
        self.results.update(new)
        if self._cache_path and new:
            self._cache_path.parent.mkdir(parents=True, exist_ok=True)
            with self._cache_path.open("a", encoding="utf-8") as out:
                # one write per batch: lines from concurrent runs do not interleave mid-line
                out.write("".join(json.dumps({"key": k, "result": r}) + "\n" for k, r in new.items()))

    def result(self, tag: str, source: str) -> dict:
        """Boa's result for one program (runs it when it is not cached)."""
        key = program_key(tag, source)
        if key not in self.results:
            self.observe([(tag, source)])
        return self.results[key]

    def check_document(self, text: str) -> list[str]:
        """What is wrong with a document's blocks ([] when every claim holds)."""
        try:
            programs = parse_programs(text)
        except BlockFormatError as exc:
            return [f"blocks: {exc}"]
        self.observe([(p.tag, p.source) for p in programs])
        problems = []
        for program in programs:
            problems += [f"line {program.line} ({program.tag}): {why}"
                         for why in check_program(program, self.result(program.tag, program.source))]
        return problems


def _verbatim_diagnostics(source: str) -> list[str]:
    from py4.lang import compile_py4
    return [d.render("verbatim") for d in compile_py4(source).diagnostics]


def _result_of(run, diagnostics: list[str]) -> dict:
    from py4.boa.executor import TRUNCATION_MARKER
    raised = exception_line(run.stderr) if run.status == "runtime_error" else None
    errors = [d for d in run.diagnostics if d.get("severity") == "error"]
    return {"status": run.status, "stdout": run.stdout, "raised": raised,
            "diagnostics": diagnostics, "has_errors": bool(errors),
            "truncated": TRUNCATION_MARKER in run.stdout or TRUNCATION_MARKER in run.stderr}


def check_program(program: Program, result: dict) -> list[str]:
    """What differs between a program's claims and Boa's result ([] when they agree)."""
    if result.get("truncated"):
        return ["output too long for Boa's cap: its claims cannot be checked"]
    if program.tag == "py4" and result["diagnostics"]:
        return ["presented as Python-4 but Boa reports: " + " | ".join(result["diagnostics"])]
    if program.diagnostics is not None:
        if list(program.diagnostics) != result["diagnostics"]:
            return [f"diagnostics differ: document {list(program.diagnostics)} vs Boa {result['diagnostics']}"]
        return []
    if result["status"] == "compile_error":
        return ["does not compile and no diagnostics block says so: " + " | ".join(result["diagnostics"])]
    if result["status"] not in ("ok", "runtime_error"):
        return [f"Boa status {result['status']}"]
    if result["status"] == "runtime_error" and result["raised"] is None:
        return ["failed without an exception line (crash or non-zero exit)"]
    problems = []
    if (program.output or "") != result["stdout"]:
        problems.append(f"output differs: document {program.output!r} vs Boa {result['stdout']!r}")
    if program.raises != result["raised"]:
        problems.append(f"exception differs: document {program.raises!r} vs Boa {result['raised']!r}")
    return problems
