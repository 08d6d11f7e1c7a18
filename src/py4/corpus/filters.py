"""Document filters: exact duplicates, near-duplicates (MinHash LSH), Python 3 presented as Python-4.

Block-level checks (a `py4` block that Boa does not accept) are the validator's; the prose
check here catches sentences that recommend a Python 3 spelling as Python-4.
"""

from __future__ import annotations

import re
import zlib

import numpy as np

from py4.corpus.config import FilterSpec

_WORD = re.compile(r"\w+")
_PY3_TOKEN = r"(?:def|elif|lambda|import|except|raise|None|True|False|f\"|f')"
_PROSE_PATTERNS = (
    re.compile(r"(?:in python-4|python-4 code|python-4 programs?)"
               rf"[^.\n]*\b(?:use|write|prefer|spell)s?\s+`{_PY3_TOKEN}", re.I),
    re.compile(rf"`{_PY3_TOKEN}[^`]*`[^.\n]*\bis (?:valid|correct|idiomatic|allowed|fine) (?:in )?python-4", re.I),
    re.compile(r"python-4 (?:still )?(?:has|keeps|supports) (?:`def`|`elif`|`lambda`|`except`|`raise`|`None`)", re.I),
)


def prose_outside_code(text: str) -> str:
    """The document's text with fenced blocks removed."""
    return re.sub(r"```[^\n]*\n.*?```", " ", text, flags=re.S)


def python3_presented_as_python4(text: str) -> list[str]:
    """Sentences of the prose that present a Python 3 form as valid Python-4."""
    prose = prose_outside_code(text)
    return [m.group(0)[:120] for pattern in _PROSE_PATTERNS for m in pattern.finditer(prose)]


def shingles(text: str, size: int) -> list[bytes]:
    words = _WORD.findall(text.lower())
    if len(words) < size:
        return [" ".join(words).encode()]
    return [" ".join(words[i:i + size]).encode() for i in range(len(words) - size + 1)]


def _hash32(items: list[bytes]) -> np.ndarray:
    # crc32 is C-fast and stable across processes (unlike hash()); 32 bits suit MinHash.
    return np.fromiter((zlib.crc32(s) for s in items), dtype=np.uint64, count=len(items))


_PRIME = np.uint64((1 << 61) - 1)
_MAX32 = np.uint64((1 << 32) - 1)


class NearDuplicateFilter:
    """MinHash LSH over word shingles; `check_and_add(text, key)` is True for a near-duplicate.

    Signatures use datasketch's legacy scheme (universal hashing of 32-bit shingle hashes)
    computed in one numpy step per document. Memory grows with the documents kept: one
    entry per LSH band per document in the index (signatures are not kept).
    """

    def __init__(self, spec: FilterSpec, seed: int = 1):
        from datasketch import MinHashLSH
        self.spec = spec
        gen = np.random.RandomState(seed)
        self._a = gen.randint(1, _PRIME, size=spec.num_perm, dtype=np.uint64)
        self._b = gen.randint(0, _PRIME, size=spec.num_perm, dtype=np.uint64)
        self.lsh = MinHashLSH(threshold=spec.threshold, num_perm=spec.num_perm)
        self.count = 0

    def signature(self, text: str):
        from datasketch import MinHash
        hashes = _hash32(shingles(text, self.spec.shingle_words))
        with np.errstate(over="ignore"):
            values = ((np.outer(hashes, self._a) + self._b) % _PRIME) & _MAX32
        return MinHash(num_perm=self.spec.num_perm, hashvalues=values.min(axis=0),
                       permutations=(self._a, self._b), scheme="legacy")

    def check_and_add(self, text: str, key: int) -> bool:
        """True (and nothing added) when `text` is a near-duplicate of a kept text."""
        mh = self.signature(text)
        if self.lsh.query(mh):
            return True
        self.lsh.insert(key, mh, check_duplication=False)
        self.count += 1
        return False


class ExactDuplicateFilter:
    """Exact duplicates by SHA-256 of the text (8 bytes of it kept per document)."""

    def __init__(self):
        self._seen: set[bytes] = set()

    def check_and_add(self, sha256_hex: str) -> bool:
        key = bytes.fromhex(sha256_hex[:16])
        if key in self._seen:
            return True
        self._seen.add(key)
        return False


def jaccard(a: str, b: str, size: int) -> float:
    sa, sb = set(shingles(a, size)), set(shingles(b, size))
    return len(sa & sb) / max(1, len(sa | sb))
