"""Build the probe set: minimal pairs per rule in three contexts, confirmed by Boa and Python 3.

A pair is stored as ``prefix + p4 + suffix`` / ``prefix + py3 + suffix``; the split points
sit on word boundaries so a tokenizer sees whole words in the differing spans.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
from pathlib import Path
from collections.abc import Sequence
from typing import Any

from py4.errors import FileFormatError, where
from py4.fileio import parse_json_line, read_json_object
from py4.lang.rules import RULES
from py4.problems.probe_set.templates import VARIANTS, _expressions, _syntax, candidates, variant

DATA_DIR = Path(__file__).resolve().parent / "data"
VERSION = "v1"
CANARY = "PY4-PROBES-CANARY 7c1e0f3a-probe-set-v1"
CONTEXTS = ("bare", "repl", "prose")
INTROS = ["Here is a short example.", "Consider this snippet.", "The following code runs as shown.",
          "A small program:", "Try this in a file."]
LENGTH_TOKENIZERS = "length-tokenizers"
SEMANTIC = "semantic"
SYNTAX = "syntax"


class ProbeBuildError(RuntimeError):
    """A template failed its confirmation (names the rule and variant): a bug in the templates
    or the language, so it keeps its traceback (not a user error)."""


def _repl(code: str) -> str:
    out, inside = [], False
    for line in code.rstrip("\n").split("\n"):
        indented = line.startswith(" ")
        if inside and not indented:
            out.append("...")
        out.append(("... " if indented else ">>> ") + line)
        inside = indented
    return "\n".join(out) + "\n"


def _render(context: str, code: str, i: int, result: str | None) -> str:
    if context == "bare":
        return code if result is None else code.rstrip("\n") + f"  # -> {result}\n"
    if context == "repl":
        return _repl(code) + ("" if result is None else result + "\n")
    intro = INTROS[i % len(INTROS)]
    tail = "" if result is None else f"\nIts output is `{result}`.\n"
    return f"{intro}\n\n```python\n{code}```\n{tail}"


def split_pair(a: str, b: str) -> tuple[str, str, str, str]:
    """(prefix, a span, b span, suffix), prefix/suffix shared, cut on word boundaries."""
    word = lambda c: c.isalnum() or c == "_"
    p = 0
    while p < min(len(a), len(b)) and a[p] == b[p]:
        p += 1
    while p > 0 and word(a[p - 1]) and (word(a[p:p + 1] or " ") or word(b[p:p + 1] or " ")):
        p -= 1
    if p > 0 and a[p - 1] == " ":  # the space belongs to the next word for most tokenizers
        p -= 1
    s = 0
    while s < min(len(a), len(b)) - p and a[len(a) - 1 - s] == b[len(b) - 1 - s]:
        s += 1
    while s > 0 and word(a[len(a) - s]) and (word(a[len(a) - s - 1]) or word(b[len(b) - s - 1])):
        s -= 1
    prefix, sa, sb, suffix = a[:p], a[p:len(a) - s], b[p:len(b) - s], a[len(a) - s:]
    # An insertion (`let x` vs `x`) leaves one span empty: both spans take the next word.
    while (not sa.strip() or not sb.strip()) and suffix:
        j = 1
        while j < len(suffix) and (word(suffix[j]) or not suffix[:j].strip()):
            j += 1
        sa, sb, suffix = sa + suffix[:j], sb + suffix[:j], suffix[j:]
    return prefix, sa, sb, suffix


def _result(run) -> str:
    if run.status == "ok":
        return run.stdout.strip()
    lines = [ln for ln in run.stderr.strip().splitlines() if ln.strip()]
    return lines[-1].split(":")[0].strip() if lines else run.status


def length_tokenizers(data_dir: str | Path | None = None) -> dict[str, Any]:
    """The tokenizers the members are matched under: every ``length-tokenizers/*.json`` (a
    ``tokenizer.json``) beside the probe set, by file stem. The smoke tokenizer ships there; a
    pinned model's ``tokenizer.json`` copied in joins the matching at the next build."""
    from tokenizers import Tokenizer

    folder = (Path(data_dir) if data_dir else DATA_DIR) / LENGTH_TOKENIZERS
    return {path.stem: Tokenizer.from_file(str(path)) for path in sorted(folder.glob("*.json"))}


def _span_tokens(tokenizer: Any, text: str) -> int:
    """Tokens of a span as the scorers count them (no special tokens)."""
    return len(tokenizer.encode(text, add_special_tokens=False).ids)


def _split_members(members: Sequence[tuple[str, str | None]], i: int) -> list[tuple[str, str, str, str, str]]:
    """(context, prefix, p4, py3, suffix) of a pair's three renderings."""
    out = []
    for context in CONTEXTS:
        a, b = (_render(context, code, i, res) for code, res in members)
        out.append((context, *split_pair(a, b)))
    return out


def _matched(splits: list[tuple[str, str, str, str, str]], tokenizers: dict[str, Any]) -> bool:
    return all(_span_tokens(t, p4) == _span_tokens(t, py3) for _, _, p4, py3, _ in splits for t in tokenizers.values())


def _semantic_members(rid: str, code: str, runs: dict) -> tuple[list, dict] | None:
    """The members of a semantic pair, or None when Boa and Python 3 agree (or print several lines)."""
    p4_out, py3_out = _result(runs[4][code]), _result(runs[3][code])
    if p4_out == py3_out or "\n" in p4_out + py3_out:
        return None
    return [(code, p4_out), (code, py3_out)], {"code": code, "p4_result": p4_out, "py3_result": py3_out}


def _first_matched_syntax(rid: str, i: int, tokenizers: dict[str, Any], used: set[str]) -> int:
    """The parameter set variant ``i`` of syntax rule ``rid`` takes: the first confirmed by Boa
    whose spans match under ``tokenizers`` and whose program no earlier variant took; else its own.
    Raises ProbeBuildError when its own is not confirmed."""
    from py4.boa import frontend

    for j in candidates(i):
        p4_code, py3_code = _syntax(variant(j), i)[rid]
        c4, c3 = frontend.compile_source(p4_code), frontend.compile_source(py3_code)
        confirmed = c4.ok and not c4.diagnostics and rid in {d.rule for d in c3.diagnostics}
        if j == i and not confirmed:
            raise ProbeBuildError(f"{rid} variant {i}: Python-4 member diagnostics "
                                  f"{[d.rule for d in c4.diagnostics]}, Python 3 member "
                                  f"{[d.rule for d in c3.diagnostics]}; expected none and {rid}")
        if confirmed and p4_code not in used and _matched(_split_members([(p4_code, None), (py3_code, None)], i),
                                                          tokenizers):
            return j
    return i


def build_probes(workers: int = 2, tokenizers: dict[str, Any] | None = None) -> list[dict]:
    """All pairs, in a fixed order. Raises ProbeBuildError when a variant's own template is not confirmed.

    Length matching: each variant takes the first of its parameter sets (``templates.candidates``,
    its own first) whose pair is confirmed and whose two spans have as many tokens under every
    tokenizer in ``tokenizers`` (default: :func:`length_tokenizers`) in all three contexts; with
    none such, its own. The rule's form never changes, only names, words and numbers."""
    from py4.boa.executor import Executor

    tokenizers = length_tokenizers() if tokenizers is None else tokenizers
    chosen: dict[tuple[str, int], tuple[list, str, dict, list]] = {}
    semantic = sorted(rid for rid, r in RULES.items() if r.kind == "semantics")
    syntax = sorted(rid for rid, r in RULES.items() if r.kind != "semantics")
    for rid in syntax:
        used: set[str] = set()
        for i in range(len(VARIANTS)):
            j = _first_matched_syntax(rid, i, tokenizers, used)
            p4_code, py3_code = _syntax(variant(j), i)[rid]
            members = [(p4_code, None), (py3_code, None)]
            chosen[rid, i] = (members, SYNTAX, {"p4_code": p4_code, "py3_code": py3_code}, _split_members(members, i))
            used.add(p4_code)
    with Executor(workers=workers) as ex4, Executor(workers=workers, dialect="python3") as ex3:
        runs: dict[int, dict] = {4: {}, 3: {}}
        open_ = {(rid, i): list(candidates(i)) for rid in semantic for i in range(len(VARIANTS))}
        used_codes: dict[str, set[str]] = {rid: set() for rid in semantic}
        while open_:
            # one parameter set per open variant per round, every round's programs in one batch
            batch = {key: f"print({_expressions(key[1], todo[0])[key[0]]})\n" for key, todo in open_.items()}
            fresh = sorted(set(batch.values()) - set(runs[4]))
            runs[4].update(zip(fresh, ex4.run_many(fresh), strict=True))
            runs[3].update(zip(fresh, ex3.run_many(fresh), strict=True))
            for (rid, i), code in sorted(batch.items()):
                j = open_[rid, i].pop(0)
                done = not open_[rid, i]
                found = _semantic_members(rid, code, runs)
                if j == i and found is None:
                    raise ProbeBuildError(f"{rid} variant {i}: {code.strip()!r} gives the same output in "
                                          "Boa and Python 3 (or a multi-line output); change its template")
                if found is not None and (j == i or code not in used_codes[rid]):
                    splits = _split_members(found[0], i)
                    if j == i:
                        chosen[rid, i] = (found[0], SEMANTIC, found[1], splits)
                    if _matched(splits, tokenizers):
                        chosen[rid, i] = (found[0], SEMANTIC, found[1], splits)
                        done = True
                if done:
                    used_codes[rid].add(chosen[rid, i][2]["code"])
                    del open_[rid, i]
    records: list[dict] = []
    for rid, rule in sorted(RULES.items()):
        for i in range(len(VARIANTS)):
            _, kind, check, splits = chosen[rid, i]
            for context, prefix, p4, py3, suffix in splits:
                if not p4.strip() or not py3.strip():
                    raise ProbeBuildError(f"{rid} variant {i} ({context}): an empty differing span")
                records.append({"id": f"{rid}/{i:02d}/{context}", "rule": rid, "held_out": rule.held_out,
                                "kind": kind, "context": context, "prefix": prefix, "p4": p4, "py3": py3,
                                "suffix": suffix, "check": check, "canary": CANARY})
    return records


def length_matched(records: list[dict], tokenizers: dict[str, Any] | None = None) -> dict[str, dict[str, int]]:
    """Per tokenizer, per rule: the pairs whose two spans have as many tokens."""
    tokenizers = length_tokenizers() if tokenizers is None else tokenizers
    out: dict[str, dict[str, int]] = {}
    for name, tok in tokenizers.items():
        counts: dict[str, int] = {}
        for r in records:
            counts[r["rule"]] = counts.get(r["rule"], 0) + (_span_tokens(tok, r["p4"]) == _span_tokens(tok, r["py3"]))
        out[name] = counts
    return out


def probe_paths(data_dir: str | Path | None = None) -> tuple[Path, Path]:
    d = Path(data_dir) if data_dir else DATA_DIR
    return d / f"probes-{VERSION}.jsonl.gz", d / f"probes-{VERSION}.manifest.json"


def jsonl_bytes(records: list[dict]) -> bytes:
    return ("\n".join(json.dumps(r, sort_keys=True, ensure_ascii=False) for r in records) + "\n").encode()


def write_probes(records: list[dict], data_dir: str | Path | None = None) -> tuple[Path, Path]:
    """Write the gzipped JSONL (mtime 0: byte-identical rebuilds) and its manifest with the hash."""
    path, manifest_path = probe_paths(data_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = jsonl_bytes(records)
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
        gz.write(raw)
    path.write_bytes(buf.getvalue())
    per_rule: dict[str, int] = {}
    for r in records:
        per_rule[r["rule"]] = per_rule.get(r["rule"], 0) + 1
    folder = DATA_DIR / LENGTH_TOKENIZERS
    manifest = {"version": VERSION, "pairs": len(records), "per_rule": per_rule, "contexts": list(CONTEXTS),
                "canary": CANARY, "jsonl_sha256": hashlib.sha256(raw).hexdigest(), "file": path.name,
                "length_tokenizers": {p.stem: hashlib.sha256(p.read_bytes()).hexdigest()
                                      for p in sorted(folder.glob("*.json"))},
                "length_matched": length_matched(records)}
    manifest_path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return path, manifest_path


def load_probes(data_dir: str | Path | None = None, verify: bool = True) -> list[dict]:
    """The shipped pairs; raises FileFormatError (a ValueError) naming the file (and line) when a
    file is missing or malformed, or its hash is not the manifest's."""
    path, manifest_path = probe_paths(data_dir)
    rebuild = "rebuild with `py4 probes build`"
    manifest = read_json_object(manifest_path, missing=f"no probe manifest ({rebuild})")
    try:
        raw = gzip.decompress(path.read_bytes())
    except FileNotFoundError:
        raise FileFormatError(f"{path}: no probe set ({rebuild})") from None
    except (OSError, EOFError) as exc:  # not gzip, or truncated
        raise FileFormatError(f"{path}: cannot read the probe set: {exc} ({rebuild})") from None
    if verify and hashlib.sha256(raw).hexdigest() != manifest.get("jsonl_sha256"):
        raise FileFormatError(f"{path}: content hash does not match {manifest_path.name} jsonl_sha256; {rebuild}")
    return [parse_json_line(line, where(path, lineno)) for lineno, line in enumerate(raw.decode().splitlines(), 1)
            if line.strip()]

