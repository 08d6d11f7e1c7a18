"""`py4 problems build`: families -> problems -> splits -> the shipped bank files.

Output (``out_dir``, default the package's ``data/``):
- ``bank-<version>.jsonl.gz``: one problem per line, sorted by id, gzip with mtime 0;
- ``bank-<version>.manifest.json``: seed, held-out set, counts, and the sha256 of the
  uncompressed JSONL (the content hash ``load_bank`` checks).
Same config -> byte-identical files.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import time
from pathlib import Path

import pydantic

from py4.config import StrictModel
from py4.problems.family import Family, FamilyError, all_families
from py4.problems.generate import GeneratedProblem, generate_family
from py4.problems.schema import Problem
from py4.problems.splits import SplitItem, SplitSizes, assign_splits

__all__ = ["BuildConfig", "BuildResult", "build_bank", "write_bank", "DATA_DIR", "DEFAULT_HELD_OUT"]

DATA_DIR = Path(__file__).parent / "data"
# Each family owns a block of ids (family position * ID_BLOCK + variant + 1), so changing
# one family's generator never renumbers another family's problems.
ID_BLOCK = 100
DEFAULT_HELD_OUT = ("P4-09", "P4-11", "P4-13", "P4-19", "P4-20", "P4-22", "P4-24", "P4-30")


class BuildConfig(StrictModel):
    """How the bank is built. Changing any field changes the bank (bump ``version``)."""

    version: str = pydantic.Field("v1", description="bank version; part of the file names")
    seed: int = pydantic.Field(20261202, description="seed of every family generator and of the splits")
    per_family: int = pydantic.Field(100, ge=1, le=ID_BLOCK, description="distinct problems drawn per family (at most)")
    held_out: tuple[str, ...] = pydantic.Field(DEFAULT_HELD_OUT, description="held-out rule ids")
    grpo: int = pydantic.Field(512, ge=0)
    eft_pool: int = pydantic.Field(1120, ge=0)
    test_min: int = pydantic.Field(250, ge=0)
    test_cap_per_family: int = pydantic.Field(40, ge=1)
    families: tuple[str, ...] = pydantic.Field((), description="restrict to these families (empty = all)")


class BuildResult(pydantic.BaseModel):
    problems: list[Problem]
    dropped: int
    seconds: float


def _exercised(gold: str, where: str) -> tuple[str, ...]:
    from py4.lang import compile_py4

    res = compile_py4(gold)
    if not res.ok:
        errors = "; ".join(d.render("verbatim") for d in res.errors[:3])
        raise FamilyError(f"{where}: gold does not compile: {errors}")
    return tuple(res.rules_exercised)


def _families(cfg: BuildConfig) -> list[Family]:
    fams = all_families()
    if cfg.families:
        from py4.problems.family import get_family

        fams = [get_family(name) for name in cfg.families]
    return fams


def build_bank(cfg: BuildConfig, progress=None) -> BuildResult:
    """Generate every family's problems, assign ids and splits.

    Raises FamilyError (naming family and variant) when a family is broken or a gold
    does not compile.
    """
    start = time.perf_counter()
    generated: list[GeneratedProblem] = []
    ids: list[str] = []
    positions = {fam.name: i for i, fam in enumerate(all_families())}
    for fam in _families(cfg):
        problems = generate_family(fam, cfg.seed, cfg.per_family)
        generated.extend(problems)
        ids.extend(f"py4/{positions[fam.name] * ID_BLOCK + gp.index + 1:05d}" for gp in problems)
        if progress:
            progress(fam.name)
    items = []
    for id_, gp in zip(ids, generated, strict=True):
        exercised = _exercised(gp.variant.gold, f"{gp.family.name} variant {gp.index}")
        items.append(SplitItem(id_, gp.family.name, tuple(gp.variant.rules or gp.family.rules), exercised,
                               gp.variant.difficulty or gp.family.difficulty))
    sizes = SplitSizes(grpo=cfg.grpo, eft_pool=cfg.eft_pool, test_min=cfg.test_min,
                       test_cap_per_family=cfg.test_cap_per_family)
    splits = assign_splits(items, cfg.held_out, cfg.seed, sizes)
    problems = [gp.to_problem(id_, splits[id_], cfg.seed, cfg.version)
                for id_, gp in zip(ids, generated, strict=True) if id_ in splits]
    return BuildResult(problems=problems, dropped=len(generated) - len(problems),
                       seconds=time.perf_counter() - start)


def _jsonl(problems: list[Problem]) -> bytes:
    lines = [json.dumps(p.to_json(), sort_keys=True, ensure_ascii=False) for p in sorted(problems, key=lambda p: p.id)]
    return ("\n".join(lines) + "\n").encode("utf-8")


def _gzip_deterministic(data: bytes) -> bytes:
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
        gz.write(data)
    return buf.getvalue()


def write_bank(result: BuildResult, cfg: BuildConfig, out_dir: str | Path = DATA_DIR) -> tuple[Path, Path]:
    """Write the bank and its manifest; returns (bank path, manifest path)."""
    from py4.runs import atomic_write_json

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    raw = _jsonl(result.problems)
    bank_path = out_dir / f"bank-{cfg.version}.jsonl.gz"
    tmp = bank_path.with_suffix(".tmp")
    tmp.write_bytes(_gzip_deterministic(raw))
    tmp.replace(bank_path)
    per_split: dict[str, int] = {}
    for p in result.problems:
        per_split[p.split] = per_split.get(p.split, 0) + 1
    manifest = {
        "version": cfg.version,
        "config": json.loads(cfg.model_dump_json()),
        "problems": len(result.problems),
        "dropped": result.dropped,
        "families": len({p.family for p in result.problems}),
        "per_split": dict(sorted(per_split.items())),
        "jsonl_sha256": hashlib.sha256(raw).hexdigest(),
        "file": bank_path.name,
    }
    manifest_path = out_dir / f"bank-{cfg.version}.manifest.json"
    atomic_write_json(manifest_path, manifest)
    return bank_path, manifest_path
