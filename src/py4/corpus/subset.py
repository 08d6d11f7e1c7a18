"""Corpus subsets by token target, statistics, and re-validation of a corpus folder.

Subset semantics (the campaign's prop-token subsets): whole documents; order =
`random.Random(seed).shuffle` of the document indices; documents are taken in that order
until the running token total reaches at least the target (the last one taken may
overshoot). Tokens are the `tokens` field each document carries (counted at generation
with the corpus's tokenizer).
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

from py4.corpus.output import MANIFEST, CorpusError, ShardWriter, iter_documents, read_manifest, text_sha256
from py4.runs import RunRecorder, atomic_write_json


def choose_subset(token_counts: list[int], target_tokens: int, seed: int) -> list[int]:
    """Indices (in corpus order) of the documents a subset keeps.

    Raises CorpusError when the whole corpus holds fewer than `target_tokens` tokens.
    """
    if target_tokens < 1:
        raise CorpusError(f"target tokens must be >= 1, got {target_tokens}")
    total = sum(token_counts)
    if total < target_tokens:
        raise CorpusError(f"the corpus has {total} tokens, fewer than the target {target_tokens}")
    order = list(range(len(token_counts)))
    random.Random(seed).shuffle(order)
    taken, running = [], 0
    for index in order:
        if running >= target_tokens:
            break
        taken.append(index)
        running += token_counts[index]
    return sorted(taken)


def _tokens_of(record: dict, where: str) -> int:
    value = record.get("tokens")
    if not isinstance(value, int) or value < 0:
        raise CorpusError(f"{where}: document {record.get('id')!r} has no integer `tokens` field")
    return value


def subset(corpus_dir: str | Path, target_tokens: int, seed: int, out_dir: str | Path,
           shard_docs: int = 2000) -> dict:
    """Write the subset of `corpus_dir` to `out_dir` (shards + manifest); returns the manifest.

    `out_dir` is a run folder: its ``run_manifest.json`` records the code, command line and
    library versions that wrote it, with the source corpus as input.
    Memory: one int per document, plus one document at a time.
    Raises CorpusError for a malformed corpus or an unreachable target.
    """
    with RunRecorder(out_dir, None, kind="corpus.subset") as recorder:
        recorder.add_input("corpus", path=corpus_dir, hash_content=False,
                           content_sha256=read_manifest(corpus_dir).get("content_sha256"))
        manifest = _write_subset(corpus_dir, target_tokens, seed, out_dir, shard_docs)
        recorder.add_output("corpus", Path(out_dir) / MANIFEST, docs=manifest["docs"], tokens=manifest["tokens"])
    return manifest


def _write_subset(corpus_dir: str | Path, target_tokens: int, seed: int, out_dir: str | Path,
                  shard_docs: int) -> dict:
    source = read_manifest(corpus_dir)
    counts = [_tokens_of(r, str(corpus_dir)) for r in iter_documents(corpus_dir)]
    keep = set(choose_subset(counts, target_tokens, seed))
    writer = ShardWriter(out_dir, shard_docs)
    per_rule: Counter = Counter()
    per_type: Counter = Counter()
    tokens = 0
    for index, record in enumerate(iter_documents(corpus_dir)):
        if index in keep:
            record.setdefault("sha256", text_sha256(record["text"]))
            writer.write(record)
            tokens += record["tokens"]
            per_rule.update(record.get("rules", []))
            per_type[record.get("type", "unknown")] += 1
    manifest = {
        "name": f"{source.get('name', 'corpus')}-subset", "version": source.get("version"),
        "generator": "subset", "docs": len(keep), "tokens": tokens, "tokenizer": source.get("tokenizer"),
        "per_rule": dict(sorted(per_rule.items())), "per_type": dict(sorted(per_type.items())),
        "content_sha256": writer.close(), "shards": writer.shards,
        "subset": {"source": str(corpus_dir), "source_content_sha256": source.get("content_sha256"),
                   "target_tokens": target_tokens, "seed": seed, "source_docs": len(counts),
                   "source_tokens": sum(counts),
                   "semantics": "random.Random(seed).shuffle of document indices; whole documents taken "
                                "until the total reaches at least target_tokens"},
    }
    atomic_write_json(Path(out_dir) / MANIFEST, manifest)
    return manifest


def stats(corpus_dir: str | Path) -> dict:
    """`{"docs", "tokens", "per_rule": {rule: docs}, "per_type": {type: docs}}` counted from the shards."""
    docs = tokens = 0
    per_rule: Counter = Counter()
    per_type: Counter = Counter()
    for record in iter_documents(corpus_dir):
        docs += 1
        tokens += _tokens_of(record, str(corpus_dir))
        per_rule.update(record.get("rules", []))
        per_type[record.get("type", "unknown")] += 1
    return {"docs": docs, "tokens": tokens, "per_rule": dict(sorted(per_rule.items())),
            "per_type": dict(sorted(per_type.items()))}


def validate_corpus(corpus_dir: str | Path, cache_dir: str | None, workers: int = 2,
                    progress: bool = False, probes_dir: str | Path | None = None) -> dict:
    """Re-check every code block of every document with Boa (cached by content hash), and that
    no document holds the text of a probe of ``probes_dir``'s probe set (default: the shipped one;
    a campaign's pinned set is the folder its ``dataset:probes`` run writes).

    Returns {"docs", "blocks", "failed_docs", "failures": [first 20 {id, problems}]}.
    """
    from py4.corpus.blocks import parse_programs
    from py4.corpus.validate import BoaValidator
    from py4.problems.probe_set.build import load_probes
    from py4.problems.probe_set.verify import LeakIndex

    probes = LeakIndex(load_probes(probes_dir))
    failures, docs, blocks = [], 0, 0
    with BoaValidator(cache_dir, workers) as validator:
        for record in iter_documents(corpus_dir):
            docs += 1
            try:
                blocks += len(parse_programs(record["text"]))
            except ValueError:
                pass
            problems = validator.check_document(record["text"])
            leaks = probes.find(record["text"])  # no rule-probe text in the corpus (docs/probes.md)
            problems = problems + ([f"contains the text of probes {sorted(leaks)[:3]}"] if leaks else [])
            if problems:
                failures.append({"id": record["id"], "problems": problems[:5]})
        runs = validator.boa_runs
    return {"docs": docs, "blocks": blocks, "failed_docs": len(failures), "boa_runs": runs,
            "failures": failures[:20]}


def dumps(data: dict) -> str:
    return json.dumps(data, indent=2, sort_keys=False)
