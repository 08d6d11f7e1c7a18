"""Corpus benchmark: a 50M-token offline corpus on this machine, and its quality figures.

    nice -n 10 .venv/bin/python benchmarks/corpus.py [--tokens 50000000] [--out DIR]

Prints: generation time and peak memory (the generator runs as a child process), the
Boa re-validation of every block (cached) against an uncached validation of a sample
(the cache's speed-up ratio), rule coverage, near-duplicate rate after filtering (fresh
LSH, exact Jaccard confirmation), and the distinct 4-gram ratio against a corpus made
from a single template (same word count). Writes DIR/benchmark.json.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SMOKE_TOKENIZER = ROOT / "campaign-out/smoke/assets/tokenizer"


def tokenizer_dir(work: Path) -> Path:
    if SMOKE_TOKENIZER.exists():
        return SMOKE_TOKENIZER
    target = work / "tokenizer"
    if not target.exists():
        from py4.chat.smoke_tokenizer import stdlib_texts, train_tokenizer
        train_tokenizer(stdlib_texts()).save_pretrained(str(target))
    return target


def generate(out: Path, tokens: int, tok: Path, cache: Path) -> tuple[float, float]:
    cmd = [sys.executable, "-m", "py4", "corpus", "generate",
           "--config", str(ROOT / "configs/corpus/smoke.yaml"), "--out", str(out), "--no-progress",
           f"tokenizer.name_or_path={tok}", f"target_tokens={tokens}", "max_docs=null",
           f"validation.cache_dir={cache}", "shard_docs=2000", "pool.variants_per_template=12"]
    start = time.monotonic()
    subprocess.run(cmd, check=True, cwd=ROOT)
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return time.monotonic() - start, peak_mib


def lsh_memory(sizes=(10_000, 20_000, 40_000)) -> dict:
    """Bytes held by the near-duplicate filter's LSH index after inserting N documents (tracemalloc)."""
    import random
    import tracemalloc

    from py4.corpus.config import FilterSpec
    from py4.corpus.filters import NearDuplicateFilter
    rng = random.Random(0)
    vocab = [f"w{i}" for i in range(5000)]
    near = NearDuplicateFilter(FilterSpec())
    signatures = [near.signature(" ".join(rng.choice(vocab) for _ in range(200))) for _ in range(max(sizes))]
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    out = {}
    for key, mh in enumerate(signatures, 1):
        near.lsh.insert(key, mh, check_duplication=False)
        if key in sizes:
            out[key] = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    per_doc = {n: round(b / n) for n, b in out.items()}
    print("LSH index memory (num_perm 64): " + ", ".join(f"{n} docs {b / 2**20:.1f} MiB ({per_doc[n]} B/doc)"
                                                           for n, b in out.items()))
    return {"bytes": out, "bytes_per_doc": per_doc}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=50_000_000)
    parser.add_argument("--out", default=None)
    parser.add_argument("--lsh-only", action="store_true", help="only measure the LSH index's memory growth")
    args = parser.parse_args()
    if args.lsh_only:
        lsh_memory()
        return
    work = Path(args.out or tempfile.mkdtemp(prefix="py4-corpus-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    tok = tokenizer_dir(work)
    cache = work / "boa-cache"
    corpus = work / "corpus"
    seconds, peak_mib = generate(corpus, args.tokens, tok, cache)
    manifest = json.loads((corpus / "manifest.json").read_text())
    print(f"generated {manifest['docs']} docs / {manifest['tokens']} tokens in {seconds:.0f} s, "
          f"peak RSS {peak_mib:.0f} MiB; filters {manifest['filters']}")

    from py4.corpus.config import FilterSpec, PoolSpec
    from py4.corpus.diversity import distinct_ngram_ratio, near_duplicate_rate, single_template_documents
    from py4.corpus.output import iter_documents
    from py4.corpus.pool import build_pool
    from py4.corpus.subset import validate_corpus
    from py4.corpus.validate import BoaValidator
    from py4.lang import RULES

    t0 = time.monotonic()
    report = validate_corpus(corpus, str(cache))
    cached_s = time.monotonic() - t0
    # The first 100 documents of a stream (unequal lengths by design).
    sample = [r["text"] for _, r in zip(range(100), iter_documents(corpus), strict=False)]
    t0 = time.monotonic()
    with BoaValidator(None) as fresh:
        sample_fail = sum(1 for text in sample if fresh.check_document(text))
    uncached_per_doc = (time.monotonic() - t0) / len(sample)
    cached_per_doc = cached_s / max(1, report["docs"])
    print(f"validate (cached): {report['docs']} docs, {report['blocks']} blocks, {report['failed_docs']} failed, "
          f"{cached_s:.0f} s; uncached sample: {sample_fail} failed of {len(sample)}; "
          f"cache speed-up {uncached_per_doc / cached_per_doc:.1f}x per doc")

    docs = manifest["docs"]
    coverage = {r: manifest["per_rule"].get(r, 0) / docs for r in sorted(RULES)}
    low = min(coverage, key=coverage.get)
    print(f"coverage: lowest {low} in {100 * coverage[low]:.2f}% of docs; "
          f"rules under 1%: {manifest['rules_below_1_percent']}")

    t0 = time.monotonic()
    near = near_duplicate_rate((r["text"] for r in iter_documents(corpus)), FilterSpec())
    print(f"near-duplicates after filtering: {near['near_duplicates']} of {near['docs']} "
          f"({100 * near['rate']:.3f}%), {time.monotonic() - t0:.0f} s")

    ours, words = distinct_ngram_ratio((r["text"] for r in iter_documents(corpus)), 4, 2_000_000)
    with BoaValidator(str(cache)) as validator:
        pool = build_pool(PoolSpec(variants_per_template=12), sorted(RULES), validator)
    base, base_words = distinct_ngram_ratio(single_template_documents(pool, sorted(RULES)), 4, words)
    print(f"distinct 4-gram ratio ({words} words): corpus {ours:.4f} vs single template {base:.4f} "
          f"-> {ours / base:.2f}x")
    result = {"tokens_target": args.tokens, "docs": docs, "tokens": manifest["tokens"],
              "generate_s": round(seconds, 1), "peak_rss_mib": round(peak_mib), "filters": manifest["filters"],
              "validation": report | {"failures": report["failures"][:3]}, "cached_validate_s": round(cached_s, 1),
              "cache_speedup_per_doc": round(uncached_per_doc / cached_per_doc, 1),
              "coverage_min": [low, round(coverage[low], 4)], "near_duplicates": near,
              "distinct_4gram_ratio": {"corpus": round(ours, 4), "single_template": round(base, 4),
                                       "words": words, "base_words": base_words},
              "lsh_entries": manifest["lsh_entries"], "pool": manifest["pool"], "lsh_memory": lsh_memory()}
    (work / "benchmark.json").write_text(json.dumps(result, indent=2))
    print(f"wrote {work / 'benchmark.json'}")


if __name__ == "__main__":
    main()
