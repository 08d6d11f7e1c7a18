"""Corpus quality measures: distinct n-gram ratio, a single-template baseline, near-duplicate rate.

The distinct n-gram ratio depends on sample size, so corpora are compared on samples of
the same number of words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from py4.corpus.config import FilterSpec
from py4.corpus.filters import NearDuplicateFilter, jaccard

_WORD = re.compile(r"\w+|[^\w\s]")


def distinct_ngram_ratio(texts: Iterable[str], n: int = 4, max_words: int = 2_000_000) -> tuple[float, int]:
    """(distinct word n-grams / all n-grams, words used) over texts, up to `max_words` words."""
    seen: set[int] = set()
    total = used = 0
    for text in texts:
        words = _WORD.findall(text.lower())[: max_words - used]
        used += len(words)
        for i in range(len(words) - n + 1):
            seen.add(hash(tuple(words[i:i + n])))
            total += 1
        if used >= max_words:
            break
    return len(seen) / max(1, total), used


def single_template_documents(pool, rules: list[str]) -> Iterable[str]:
    """The baseline: one fixed template (statement + one example) per document, cycling the pool."""
    from py4.lang import RULES
    index = 0
    while True:
        for rule in rules:
            lessons = pool.lessons(rule)
            lesson = lessons[index % len(lessons)]
            body = lesson.good.render() if lesson.good else lesson.bad.render()
            yield f"# {rule}: {RULES[rule].title}\n\n{RULES[rule].summary}\n\nExample:\n\n{body}"
        index += 1


def near_duplicate_rate(texts: Iterable[str], spec: FilterSpec, seed: int = 7,
                        verify: bool = True) -> dict:
    """Share of documents with an earlier near-duplicate, by a fresh LSH (own seed, 128 perms).

    With `verify`, each LSH candidate pair is confirmed by the exact shingle Jaccard, so the
    rate counts only real near-duplicates (Jaccard >= threshold).
    """
    check = FilterSpec(num_perm=128, threshold=spec.threshold, shingle_words=spec.shingle_words)
    filt = NearDuplicateFilter(check, seed=seed)
    kept: dict[int, str] = {}
    docs = dups = candidates = 0
    for key, text in enumerate(texts):
        docs += 1
        mh = filt.signature(text)
        hits = filt.lsh.query(mh)
        if hits:
            candidates += 1
            if not verify or any(jaccard(text, kept[h], spec.shingle_words) >= spec.threshold for h in hits):
                dups += 1
        filt.lsh.insert(key, mh, check_duplication=False)
        if verify:
            kept[key] = text
    return {"docs": docs, "lsh_candidates": candidates, "near_duplicates": dups,
            "rate": dups / max(1, docs), "threshold": spec.threshold}
