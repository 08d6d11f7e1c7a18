"""``run(config) -> GraftResult``: the chat-vector graft, resumable, with its manifest.

    from py4.graft import GraftConfig, run
    result = run(GraftConfig(mid="runs/mid", it="runs/it", base="runs/base", out="runs/graft"))

Flow: resolve and index the three checkpoints, plan every tensor and the shard layout,
hash the inputs, copy the -it model's config/tokenizer/template, stream each shard that
the journal does not already hold, write the index, verify a sample, record everything
in ``run_manifest.json``.
"""

from __future__ import annotations

import contextlib
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch

from py4.graft.checkpoint import DTYPES, INDEX_NAME, GraftError, open_checkpoints
from py4.graft.config import GraftConfig
from py4.graft.plan import ON_BASE, GraftPlan
from py4.graft.provenance import copy_aux_files, input_hashes
from py4.graft.stream import ArithmeticSpec, ChunkBuffers, InputReader, ShardRecord, write_shard
from py4.graft.verify import verify_graft
from py4.fileio import read_json_object
from py4.runs import RunRecorder, atomic_write_json

__all__ = ["GraftResult", "run", "JOURNAL_NAME", "peak_rss_bytes"]

JOURNAL_NAME = ".graft_journal.json"


@dataclass
class GraftResult:
    out: Path
    shards: list[str]
    total_size: int
    grafted: list[str]
    copied: dict[str, str]  # name -> "take_it: only in it"
    skipped: dict[str, str]  # name -> reason
    on_base: dict[str, str]  # name -> reason: W_base + lambda_ (W_it - W_base), mid lacks the tensor
    mid_rounded: dict[str, str]  # name -> "F32 -> BF16": mid rounded to the -it dtype before grafting
    resumed_shards: int
    written_shards: int
    stream_seconds: float
    stream_cpu_seconds: float  # user + system time of the whole process (all threads) while streaming
    peak_rss_bytes: int
    largest_tensor_bytes: int
    verified: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """One line: what was grafted, copied and skipped, where, in how many shards
        (``py4 graft``'s first line; a campaign run's stage log)."""
        on_base = f", {len(self.on_base)} on base (mid lacks them)" if self.on_base else ""
        rounded = f" ({len(self.mid_rounded)} with mid rounded to the -it dtype)" if self.mid_rounded else ""
        return (f"grafted {len(self.grafted)} tensors{rounded}{on_base}, copied {len(self.copied)}, skipped "
                f"{len(self.skipped)} -> {self.out} ({len(self.shards)} shard(s), "
                f"{self.total_size / 1e6:.1f} MB; {self.resumed_shards} resumed)")


def peak_rss_bytes() -> int:
    """High-water resident memory of this process (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _load_journal(out: Path) -> dict | None:
    """The journal of an earlier (interrupted) graft into ``out``, or None when there is none. A
    malformed one is a GraftError naming path:line, not a fresh start: the shards it lists are
    what a resume trusts (the journal is written atomically, so only a hand edit breaks it)."""
    path = out / JOURNAL_NAME
    return read_json_object(path, error=GraftError) if path.exists() else None


def _prepare_out_dir(out: Path, plan: GraftPlan, overwrite: bool) -> dict:
    """The journal to continue from; raises GraftError before touching a foreign output."""
    out.mkdir(parents=True, exist_ok=True)
    journal = _load_journal(out)
    existing = sorted(out.glob("model*.safetensors")) + sorted(out.glob(INDEX_NAME))
    same = journal is not None and journal.get("fingerprint") == plan.fingerprint
    if not same and (existing or journal is not None):
        if not overwrite:
            what = "a graft made from other inputs or settings" if journal else "weights not written by py4 graft"
            raise GraftError(f"{out}: holds {what}; choose another folder or set overwrite=true (--overwrite)")
        for path in existing:
            path.unlink()
        journal = None
    if not same:
        journal = {"fingerprint": plan.fingerprint, "shards": {}}
        atomic_write_json(out / JOURNAL_NAME, journal)
    return journal


def _shard_is_complete(out: Path, name: str, size: int, journal: dict) -> bool:
    record = journal["shards"].get(name)
    path = out / name
    return bool(record) and record["size"] == size and path.is_file() and path.stat().st_size == size


@contextlib.contextmanager
def _torch_threads(n: int):
    previous = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def _progress(enabled: bool):
    from rich.progress import (BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn,
                               TransferSpeedColumn)

    return Progress(TextColumn("[bold]graft"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                    TimeRemainingColumn(), disable=not enabled)


def _stream(config: GraftConfig, plan: GraftPlan, out: Path, journal: dict,
            on_tensor: Callable[[str], None] | None, show_progress: bool) -> tuple[int, int]:
    acc = getattr(torch, config.accumulate_dtype)
    spec = ArithmeticSpec(config.lambda_, acc, max(1, config.chunk_bytes // acc.itemsize))
    kept = [d for s in plan.shards for d in s.tensors]
    max_in = max(e.info.itemsize for d in kept for e in d.sources.values())
    rounded = max((DTYPES[d.mid_round].itemsize for d in kept if d.mid_round), default=0)
    buffers = ChunkBuffers(spec, max_in, max(DTYPES[d.out_dtype].itemsize for d in kept), round_itemsize=rounded)
    resumed = written = 0
    with _torch_threads(config.compute_threads), InputReader() as reader, _progress(show_progress) as bar:
        task = bar.add_task("graft", total=plan.total_size)
        for shard in plan.shards:
            if _shard_is_complete(out, shard.file_name, shard.size, journal):
                resumed += 1
                bar.advance(task, shard.size - len(shard.header))
                continue
            record: ShardRecord = write_shard(shard, out, reader, buffers, spec, fsync=config.fsync,
                                              hash_output=config.hash_outputs, on_tensor=on_tensor,
                                              on_bytes=lambda n: bar.advance(task, n))
            journal["shards"][shard.file_name] = {"size": record.size, "sha256": record.sha256}
            atomic_write_json(out / JOURNAL_NAME, journal)
            written += 1
    return resumed, written


def _write_index(out: Path, plan: GraftPlan) -> None:
    weight_map = {d.name: s.file_name for s in plan.shards for d in s.tensors}
    atomic_write_json(out / INDEX_NAME, {"metadata": {"total_size": plan.total_size},
                                         "weight_map": dict(sorted(weight_map.items()))})


def _tensor_record(plan: GraftPlan) -> dict:
    return {
        "grafted": [d.name for d in plan.by_action("graft")],
        "copied": {d.name: f"{d.action}: {d.reason}" for d in plan.decisions if d.action.startswith("take_")},
        "skipped": {d.name: d.reason for d in plan.by_action("skip")},
        # Neither grafted onto mid nor copied: W_base + lambda_ (W_it - W_base) for a tensor mid lacks.
        ON_BASE: {d.name: d.reason for d in plan.by_action(ON_BASE)},
        "mid_rounded": {d.name: f"{d.sources['mid'].dtype} -> {d.mid_round} (nearest, ties to even)"
                        for d in plan.by_action("graft") if d.mid_round},
    }


def _record_inputs(recorder: RunRecorder, checkpoints: dict, mode: str) -> None:
    for role, ckpt in checkpoints.items():
        hashes = input_hashes(ckpt, mode)
        recorder.add_input(role, path=ckpt.folder, hub_id=ckpt.hub_id, revision=ckpt.commit or ckpt.revision,
                           hash_content=False, requested_revision=ckpt.revision, sha256=hashes["digest"],
                           hash_mode=mode, files=hashes["files"])


def run(config: GraftConfig, *, on_tensor: Callable[[str], None] | None = None,
        show_progress: bool = True) -> GraftResult:
    """Graft, or continue an interrupted graft in ``config.out``; returns what was done.

    ``on_tensor(name)`` is called before each tensor is streamed (tests interrupt with it).
    Raises GraftError on bad inputs, tensors whose policy is ``error``, an output folder
    holding a different graft, or a failed verification; the manifest then says "failed".
    """
    out = Path(config.out)
    t0 = time.monotonic()
    checkpoints = open_checkpoints(config)
    for role, ckpt in checkpoints.items():
        if out.resolve() == ckpt.folder.resolve():
            raise GraftError(f"out {out} is the {role} checkpoint's folder; write the graft elsewhere")
    from py4.graft.plan import build_plan

    plan = build_plan(config, checkpoints)
    journal = _prepare_out_dir(out, plan, config.overwrite)
    with RunRecorder(out, config, kind="graft") as recorder:
        recorder.timing("plan_s", time.monotonic() - t0)
        recorder.set(lambda_=config.lambda_, accumulate_dtype=config.accumulate_dtype,
                     output_dtype=config.output_dtype, plan_fingerprint=plan.fingerprint,
                     tensors=_tensor_record(plan))
        t = time.monotonic()
        _record_inputs(recorder, checkpoints, config.input_hashes)
        recorder.timing("hash_inputs_s", time.monotonic() - t)
        recorder.set(aux_files=copy_aux_files(checkpoints["it"], out, config.aux_files))
        t, cpu = time.monotonic(), time.process_time()
        resumed, written = _stream(config, plan, out, journal, on_tensor, show_progress)
        stream_s, stream_cpu_s = time.monotonic() - t, time.process_time() - cpu
        recorder.timing("stream_s", stream_s)
        recorder.timing("stream_cpu_s", stream_cpu_s)
        _write_index(out, plan)
        result = _result(plan, out, resumed, written, stream_s, stream_cpu_s)
        recorder.add_output("model", out, hash_content=False, total_size=plan.total_size,
                            shards=journal["shards"], index=INDEX_NAME)
        if config.verify_sample:
            t = time.monotonic()
            check = verify_graft(config, sample=config.verify_sample, seed=config.verify_seed, checkpoints=checkpoints)
            recorder.timing("verify_s", time.monotonic() - t)
            recorder.set(verification={"checked": check.checked, "mismatches": check.mismatches})
            if not check.ok:
                raise GraftError("verification failed:\n" + "\n".join(f"  - {m}" for m in check.mismatches))
            result.verified = check.checked
        result.peak_rss_bytes = peak_rss_bytes()
        counts = {"grafted": len(result.grafted), "copied": len(result.copied), "skipped": len(result.skipped),
                  "shards": len(plan.shards)}
        counts.update({k: len(v) for k, v in ((ON_BASE, result.on_base), ("mid_rounded", result.mid_rounded)) if v})
        recorder.set(counts=counts,
                     resumed_shards=resumed, written_shards=written, peak_rss_bytes=result.peak_rss_bytes,
                     largest_tensor_bytes=result.largest_tensor_bytes,
                     stream_mb_per_s=round(plan.total_size / 1e6 / stream_s, 1) if stream_s > 0 else None)
    return result


def _result(plan: GraftPlan, out: Path, resumed: int, written: int, stream_s: float,
            stream_cpu_s: float) -> GraftResult:
    records = _tensor_record(plan)
    largest = max((e.end - e.begin for d in plan.decisions for e in d.sources.values()), default=0)
    return GraftResult(out=out, shards=[s.file_name for s in plan.shards], total_size=plan.total_size,
                       grafted=records["grafted"], copied=records["copied"], skipped=records["skipped"],
                       on_base=records[ON_BASE], mid_rounded=records["mid_rounded"],
                       resumed_shards=resumed, written_shards=written, stream_seconds=stream_s,
                       stream_cpu_seconds=stream_cpu_s, peak_rss_bytes=peak_rss_bytes(), largest_tensor_bytes=largest)
