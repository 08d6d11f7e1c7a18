"""Leak checks: no probe text in the texts a model learns from (the corpus, the bank).

What counts as probe text (``probe_patterns``):
- the probe set's canary (``PY4-PROBES-CANARY …``), as the bank carries its own;
- every member's text as scored (prefix + span + suffix, stripped), Python-4 and Python 3;
- every syntax pair's program (the whole Python-4 or Python 3 program, a few lines long);
- every semantic pair's program *with its Python-4 result* as a probe states it
  (``print(-7 // 2)  # -> -3``): the one-line program alone (``print(-7 // 2)``) is an
  ordinary example a document may well show, and is not the probe's answer.

``LeakIndex`` finds them in many texts in one pass per text: patterns are keyed by their
first ``KEY`` characters, so a text costs one dictionary look-up per character, not one
search per pattern (a 50M-token corpus is checked in about a minute).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

KEY = 12
CANARY_ID = "<canary>"


def probe_patterns(records: list[dict]) -> dict[str, str]:
    """Each probe text (see the module doc) -> the first probe id it belongs to."""
    from py4.problems.probe_set.build import CONTEXTS, _render

    out: dict[str, str] = {}
    for r in records:
        out.setdefault(r["canary"], CANARY_ID)
        for span in (r["p4"], r["py3"]):
            out.setdefault((r["prefix"] + span + r["suffix"]).strip(), r["id"])
        check = r["check"]
        for code in (check.get("p4_code"), check.get("py3_code")):
            if code:
                out.setdefault(code.strip(), r["id"])
        if check.get("code"):  # a semantic program as each context states its Python-4 result
            for i, context in enumerate(CONTEXTS):
                out.setdefault(_render(context, check["code"], i, check["p4_result"]).strip(), r["id"])
    return out


class LeakIndex:
    """Probe texts indexed for substring search: ``index.find(text)`` -> probe ids found."""

    def __init__(self, records: list[dict]):
        self.by_key: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for pattern, pid in probe_patterns(records).items():
            self.by_key[pattern[:KEY]].append((pattern, pid))
        self.short = {p: v for p, v in self.by_key.items() if len(p) < KEY}  # patterns shorter than a key
        self.firsts = {p[0] for p in self.by_key}

    def find(self, text: str) -> set[str]:
        found: set[str] = set()
        firsts, by_key = self.firsts, self.by_key
        for i, c in enumerate(text):
            if c not in firsts:
                continue
            for pattern, pid in by_key.get(text[i:i + KEY], ()):
                if text.startswith(pattern, i):
                    found.add(pid)
        for key, entries in self.short.items():
            if key in text:
                found.update(pid for _, pid in entries)
        return found


def leaked(records: list[dict], texts: Iterable[str]) -> list[str]:
    """Sorted ids of probes whose text occurs in any of ``texts`` (``<canary>`` for the canary)."""
    index, found = LeakIndex(records), set()
    for text in texts:
        found |= index.find(text)
    return sorted(found)


def corpus_leaks(documents: Iterable[dict], records: list[dict] | None = None) -> dict[str, list[str]]:
    """{document id: probe ids} for the documents (``{"id", "text"}``, e.g. a corpus folder's
    ``py4.corpus.output.iter_documents``) that contain probe text."""
    from py4.problems.probe_set.build import load_probes

    index = LeakIndex(records if records is not None else load_probes())
    return {doc["id"]: sorted(hits) for doc in documents if (hits := index.find(doc["text"]))}


def bank_leaks(problems, records: list[dict] | None = None) -> dict[str, list[str]]:
    """{problem id: probe ids} for the bank problems whose prompt, gold or Python 3 reference contains probe text."""
    from py4.problems.probe_set.build import load_probes

    index = LeakIndex(records if records is not None else load_probes())
    out = {}
    for p in problems:
        hits = set().union(*(index.find(t or "") for t in (p.prompt, p.gold, p.reference_py3)))
        if hits:
            out[p.id] = sorted(hits)
    return out
