"""`py4 corpus generate`: stream documents, validate, filter, count tokens, write shards.

    manifest = run(config, out_dir)

Documents come from the offline generator (`offline_documents`) or the LLM pipeline
(`py4.corpus.llm`). Each candidate goes through: Boa validation of every block (cached),
the prose check, the probe-text check (no text of a rule probe, `py4.problems.probe_set.verify`:
the shipped probe set, or the one `probes_dir` names, a campaign's pinned set), exact dedup,
near-dedup (MinHash LSH); survivors are token-counted in batches with the configured tokenizer
and written until `target_tokens`/`max_docs`.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from py4.corpus.blocks import has_py4_program
from py4.corpus.config import CorpusConfig
from py4.corpus.filters import ExactDuplicateFilter, NearDuplicateFilter, python3_presented_as_python4
from py4.corpus.output import MANIFEST, ShardWriter, text_sha256
from py4.corpus.validate import BoaValidator
from py4.run_progress import report
from py4.runs import RunRecorder, atomic_write_json

MAX_ATTEMPTS_PER_DOC = 20  # give up when fewer than 1 in 20 candidates survive the filters


def offline_documents(config: CorpusConfig, pool, spec_path: str | None) -> Iterator[dict]:
    """An endless, seeded stream of candidate documents (dicts with text and metadata)."""
    from py4.corpus.compose import make_plan
    from py4.corpus.doctypes import RENDERERS
    rng = random.Random(config.seed)
    rules = config.taught_rules()
    index = 0
    while True:
        doc_type = config.doc_types[index % len(config.doc_types)]
        plan = make_plan(doc_type, rules, config.max_rules_per_doc, config.stated_fraction, pool,
                         random.Random(rng.getrandbits(64)), spec_path)
        text = RENDERERS[doc_type](plan)
        index += 1
        yield {"text": text, "type": doc_type, "rules": plan.rules,
               "stated": [r for r in plan.rules if plan.stated[r]], "persona": plan.persona.name,
               "audience": plan.audience, "tone": plan.tone, "length": plan.length, "generator": "offline"}


def _candidates(config: CorpusConfig, validator: BoaValidator) -> tuple[Iterator[dict], dict]:
    if config.generator == "llm":
        from py4.corpus.llm import llm_documents
        return llm_documents(config, validator), {}
    from py4.corpus.pool import build_pool
    spec_path = config.pool.spec_path if config.pool.spec_path and Path(config.pool.spec_path).exists() else None
    pool = build_pool(config.pool.model_copy(update={"spec_path": spec_path}), config.taught_rules(), validator)
    return offline_documents(config, pool, spec_path), pool.counts


def _progress(enabled: bool):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    return Progress(TextColumn("corpus"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[note]}"),
                    TimeElapsedColumn(), disable=not enabled)


def run(config: CorpusConfig, out_dir: str | Path, progress: bool = True,
        probes_dir: str | Path | None = None) -> dict:
    """Generate the corpus into `out_dir`; returns the manifest (also written as manifest.json).
    `probes_dir`: the probe set whose text no document may hold (default: the shipped one).

    Raises:
        py4.data.tokens.DataError: the tokenizer cannot be loaded.
        RuntimeError: too few candidates survive validation and filtering.
    """
    from py4.data.tokens import DocumentEncoder, load_tokenizer
    from py4.problems.probe_set.build import load_probes, probe_paths
    from py4.problems.probe_set.verify import LeakIndex

    out = Path(out_dir)
    with RunRecorder(out, config, "corpus.generate") as recorder:
        started = time.monotonic()
        tok = config.tokenizer
        encoder = DocumentEncoder(load_tokenizer(tok.name_or_path, tok.revision), tok.add_bos, tok.add_eos)
        recorder.add_input("tokenizer", path=tok.name_or_path if Path(tok.name_or_path).exists() else None,
                           hub_id=None if Path(tok.name_or_path).exists() else tok.name_or_path,
                           revision=tok.revision)
        leaks = LeakIndex(load_probes(probes_dir))
        recorder.add_input("probes", path=probe_paths(probes_dir)[0])
        with BoaValidator(config.validation.cache_dir, config.validation.workers,
                          config.validation.timeout_s) as validator:
            stream, pool_counts = _candidates(config, validator)
            recorder.timing("pool_s", time.monotonic() - started)
            writer = ShardWriter(out, config.shard_docs)
            try:
                stats = _fill(config, stream, validator, leaks, encoder, writer, progress)
            finally:
                if hasattr(stream, "close"):  # the LLM stream closes its HTTP client and event loop
                    stream.close()
            content = writer.close()
        manifest = _manifest(config, stats, writer.shards, content, encoder, pool_counts, validator)
        atomic_write_json(out / MANIFEST, manifest)
        recorder.add_output("corpus", out / MANIFEST, docs=stats["docs"], tokens=stats["tokens"])
        recorder.set(docs=stats["docs"], tokens=stats["tokens"], filters=stats["filters"])
    return manifest


def _done(config: CorpusConfig, docs: int, tokens: int) -> bool:
    return ((config.target_tokens is not None and tokens >= config.target_tokens)
            or (config.max_docs is not None and docs >= config.max_docs))


def _fill(config, stream, validator, leaks, encoder, writer, progress: bool) -> dict:
    exact, near = ExactDuplicateFilter(), NearDuplicateFilter(config.filters)
    reasons: Counter = Counter()
    per_rule: Counter = Counter()
    per_type: Counter = Counter()
    docs = tokens = generated = 0
    goal = config.target_tokens or config.max_docs
    batch_size = config.tokenizer.batch_docs
    with _progress(progress) as bar:
        task = bar.add_task("generate", total=goal, note="")
        while not _done(config, docs, tokens):
            batch = []
            for candidate in stream:
                generated += 1
                reason = _reject_reason(candidate, validator, leaks, exact, near, generated)
                if reason:
                    reasons[reason] += 1
                else:
                    batch.append(candidate)
                if (len(batch) >= _wanted(config, docs, tokens, batch_size)
                        or generated > MAX_ATTEMPTS_PER_DOC * (docs + len(batch) + 50)):
                    break
            if not batch:
                raise RuntimeError(f"only {docs} documents survived {generated} candidates "
                                   f"(rejections: {dict(reasons)})")
            for candidate, count in zip(batch, encoder.count_batch([c["text"] for c in batch]), strict=True):
                if _done(config, docs, tokens):
                    break
                record = {"id": f"{config.name}-{docs:07d}", **candidate, "tokens": count}
                writer.write(record)
                docs, tokens = docs + 1, tokens + count
                per_rule.update(candidate["rules"])
                per_type[candidate["type"]] += 1
            bar.update(task, completed=tokens if config.target_tokens else docs, note=f"{docs} docs")
            report("tokens" if config.target_tokens else "docs", tokens if config.target_tokens else docs, goal,
                   docs=docs)
    return {"docs": docs, "tokens": tokens, "per_rule": dict(sorted(per_rule.items())),
            "per_type": dict(sorted(per_type.items())), "lsh_entries": near.count,
            "filters": {"generated": generated, "kept": docs, "rejected": dict(sorted(reasons.items())),
                        "near_duplicate_removal_rate": round(reasons["near_duplicate"] / max(1, generated), 6)}}


def _wanted(config: CorpusConfig, docs: int, tokens: int, batch_size: int) -> int:
    """How many more documents to collect before counting (avoids generating far past the goal)."""
    wanted = batch_size
    if config.max_docs is not None:
        wanted = min(wanted, config.max_docs - docs)
    if config.target_tokens is not None and docs:
        wanted = min(wanted, int((config.target_tokens - tokens) / (tokens / docs)) + 8)
    return max(1, wanted)


def _reject_reason(candidate: dict, validator, leaks, exact, near, key: int) -> str | None:
    text = candidate["text"]
    if validator.check_document(text):
        return "validation"
    if leaks.find(text):  # `py4 corpus validate` fails such a document; it never gets in
        return "probe_text"
    if candidate.get("generator") == "llm" and not has_py4_program(text):  # teaches by no program
        return "no_py4_program"
    if python3_presented_as_python4(text):
        return "python3_as_python4"
    candidate["sha256"] = text_sha256(text)
    if exact.check_and_add(candidate["sha256"]):
        return "exact_duplicate"
    if near.check_and_add(text, key):
        return "near_duplicate"
    return None


def _manifest(config, stats, shards, content, encoder, pool_counts, validator) -> dict:
    from py4.lang import RULES
    return {
        "name": config.name, "version": config.version, "generator": config.generator,
        "docs": stats["docs"], "tokens": stats["tokens"],
        "tokenizer": {"name_or_path": config.tokenizer.name_or_path, "revision": config.tokenizer.revision,
                      **encoder.describe()},
        "per_rule": stats["per_rule"], "per_type": stats["per_type"],
        "rules_below_1_percent": [r for r in config.taught_rules()
                                  if stats["per_rule"].get(r, 0) < 0.01 * max(1, stats["docs"])],
        "held_out_rules_taught": sorted(r for r in config.taught_rules() if RULES[r].held_out),
        "content_sha256": content, "shards": shards, "filters": stats["filters"],
        "lsh_entries": stats["lsh_entries"], "pool": pool_counts,
        "validation": {"boa_runs": validator.boa_runs, "cached_results": len(validator.results)},
        "config": config.model_dump(mode="json"),
    }
