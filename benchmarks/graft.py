"""Benchmark the streaming graft against a plain copy of the same bytes, in the same run.

    .venv/bin/python benchmarks/graft.py                 # 2 GB per checkpoint, ~6 GB read
    .venv/bin/python benchmarks/graft.py --size-gb 0.5 --repeats 1

Builds three synthetic bf16 checkpoints (mid, it, base) of ``--size-gb`` each with
different shard layouts, then times, each in a fresh subprocess and in alternating
order (so that both see the same page-cache conditions):

- copy: read all three inputs' weight files a chunk at a time and write one output
  file the size of the graft's output — the I/O floor any graft must pay;
- graft: ``py4.graft.run`` with input hashing reduced to metadata, so that the timed
  work is the same read-3-write-1 (its ``stream_s`` phase), and end to end with the
  defaults (full input hashes, output hashes, verification of a sample).

Peak memory is the child's VmHWM (resident high-water mark), set against the largest
tensor. Goals: graft >= 0.7x copy throughput; peak < 4x largest tensor + 500 MB.
Everything is written under ``--dir`` (default: a temporary folder) and deleted at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HIDDEN = 4096
VOCAB = 32768


def _shapes(size_bytes: int) -> dict[str, tuple[int, ...]]:
    """A Llama-like layout: embeddings and head (the largest tensors), then whole layers."""
    shapes = {"model.embed_tokens.weight": (VOCAB, HIDDEN), "lm_head.weight": (VOCAB, HIDDEN),
              "model.norm.weight": (HIDDEN,)}
    layer = {"self_attn.q_proj.weight": (HIDDEN, HIDDEN), "self_attn.k_proj.weight": (HIDDEN // 4, HIDDEN),
             "self_attn.v_proj.weight": (HIDDEN // 4, HIDDEN), "self_attn.o_proj.weight": (HIDDEN, HIDDEN),
             "mlp.gate_proj.weight": (2 * HIDDEN, HIDDEN), "mlp.up_proj.weight": (2 * HIDDEN, HIDDEN),
             "mlp.down_proj.weight": (HIDDEN, 2 * HIDDEN), "input_layernorm.weight": (HIDDEN,),
             "post_attention_layernorm.weight": (HIDDEN,)}

    def total() -> int:
        return sum(2 * _numel(s) for s in shapes.values())

    i = 0
    while total() < size_bytes:
        shapes.update({f"model.layers.{i}.{k}": v for k, v in layer.items()})
        i += 1
    return shapes


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def build_checkpoints(root: Path, size_bytes: int) -> dict[str, Path]:
    import torch
    from safetensors.torch import save_file

    shapes = _shapes(size_bytes)
    names = list(shapes)
    # Different shard layouts per input: tensors are matched by name, not by file.
    layouts = {"mid": (names, 700 * 10**6), "it": (names[::-1], 400 * 10**6), "base": (sorted(names), 550 * 10**6)}
    dirs = {}
    for seed, (role, (order, shard_bytes)) in enumerate(layouts.items()):
        folder = root / role
        folder.mkdir(parents=True)
        groups, current, current_bytes = [], [], 0
        for name in order:
            if current and current_bytes + 2 * _numel(shapes[name]) > shard_bytes:
                groups.append(current)
                current, current_bytes = [], 0
            current.append(name)
            current_bytes += 2 * _numel(shapes[name])
        groups.append(current)
        g = torch.Generator().manual_seed(seed)
        weight_map = {}
        for i, group in enumerate(groups, start=1):
            file = f"model-{i:05d}-of-{len(groups):05d}.safetensors"
            tensors = {n: torch.randn(shapes[n], generator=g, dtype=torch.float32).to(torch.bfloat16) for n in group}
            save_file(tensors, folder / file, metadata={"format": "pt"})
            del tensors
            weight_map.update({n: file for n in group})
        (folder / "model.safetensors.index.json").write_text(json.dumps(
            {"metadata": {"total_size": sum(2 * _numel(s) for s in shapes.values())}, "weight_map": weight_map}))
        (folder / "config.json").write_text(json.dumps({"model_type": "llama", "role": role}))
        dirs[role] = folder
    return dirs


def _vm_hwm_bytes() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def child_copy(dirs: dict[str, Path], out_file: Path, out_bytes: int, chunk: int = 32 * 2**20) -> dict:
    """Read every input weight file in chunks, interleaved, and write ``out_bytes`` to one file."""
    paths = [p for role in ("mid", "it", "base") for p in sorted(dirs[role].glob("*.safetensors"))]
    buffers = [bytearray(chunk) for _ in range(3)]
    t0, cpu0 = time.perf_counter(), time.process_time()
    written, read = 0, 0
    with contextlib.ExitStack() as stack, open(out_file, "wb", buffering=0) as out:
        files = [stack.enter_context(open(p, "rb", buffering=0)) for p in paths]
        active = list(files)
        while active:
            for i, fh in enumerate(list(active)):
                n = fh.readinto(buffers[i % 3])
                read += n
                if n == 0:
                    active.remove(fh)
                elif written < out_bytes and i % 3 == 0:
                    take = min(n, out_bytes - written)
                    out.write(memoryview(buffers[0])[:take])
                    written += take
        if written < out_bytes:  # the mid files are slightly smaller than three quarters of the output
            pad = bytearray(chunk)
            while written < out_bytes:
                take = min(chunk, out_bytes - written)
                out.write(memoryview(pad)[:take])
                written += take
    seconds, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    return {"seconds": seconds, "cpu_seconds": cpu, "read_bytes": read, "written_bytes": written,
            "vm_hwm": _vm_hwm_bytes()}


def child_graft(dirs: dict[str, Path], out: Path, defaults: bool, hash_outputs: bool) -> dict:
    from py4.graft import GraftConfig, run

    fields = {} if defaults else {"input_hashes": "metadata", "verify_sample": 0, "hash_outputs": hash_outputs}
    config = GraftConfig(mid=str(dirs["mid"]), it=str(dirs["it"]), base=str(dirs["base"]), out=str(out),
                         fsync=False, overwrite=True, **fields)
    t0 = time.perf_counter()
    result = run(config, show_progress=False)
    total = time.perf_counter() - t0
    return {"seconds": result.stream_seconds, "cpu_seconds": result.stream_cpu_seconds, "total_seconds": total,
            "written_bytes": result.total_size,
            "largest_tensor": result.largest_tensor_bytes, "vm_hwm": _vm_hwm_bytes(),
            "shards": len(result.shards)}


def _in_child(kind: str, args: dict) -> dict:
    for stale in (args.get("out"), args.get("out_file")):  # every run writes from scratch
        if stale is not None and Path(stale).is_dir():
            shutil.rmtree(stale)
        elif stale is not None:
            Path(stale).unlink(missing_ok=True)
    code = (f"import json, sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import graft as b; "
            f"from pathlib import Path; a = json.loads(sys.argv[1]); "
            f"a['dirs'] = {{k: Path(v) for k, v in a['dirs'].items()}}; a['out' if 'out' in a else 'out_file'] = "
            f"Path(a.get('out') or a.get('out_file')); print(json.dumps(b.child_{kind}(**a)))")
    proc = subprocess.run([sys.executable, "-c", code, json.dumps(args, default=str)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{kind} child failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-gb", type=float, default=2.0, help="size of each synthetic checkpoint (GB)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each kind (alternating)")
    parser.add_argument("--dir", type=Path, default=None, help="scratch folder (default: a new temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder (and its inputs)")
    parser.add_argument("--reuse", type=Path, default=None, help="a scratch folder kept with --keep: reuse its inputs")
    args = parser.parse_args()

    root = args.reuse or Path(tempfile.mkdtemp(prefix="py4-graft-bench-", dir=args.dir))
    try:
        print(f"scratch: {root}; free disk: {shutil.disk_usage(root).free / 1e9:.0f} GB")
        t = time.perf_counter()
        if not (root / "in" / "base" / "model.safetensors.index.json").is_file():
            dirs = build_checkpoints(root / "in", int(args.size_gb * 1e9))
        dirs = {role: root / "in" / role for role in ("mid", "it", "base")}
        print(f"3 checkpoints ready in {time.perf_counter() - t:.0f} s")
        # Warm-up of each kind (not timed); establishes the output size for the copy baseline.
        first = _in_child("graft", {"dirs": dirs, "out": root / "graft", "defaults": False, "hash_outputs": False})
        out_bytes = first["written_bytes"]
        copy_args = {"dirs": dirs, "out_file": root / "copy.bin", "out_bytes": out_bytes}
        _in_child("copy", copy_args)
        runs: dict[str, list[dict]] = {"copy": [], "graft": [], "graft_hash": []}
        for i in range(args.repeats):  # ABCCBA... so that neither kind always runs on a warmer cache
            order = ["copy", "graft", "graft_hash"] if i % 2 == 0 else ["graft_hash", "graft", "copy"]
            for kind in order:
                if kind == "copy":
                    runs[kind].append(_in_child("copy", copy_args))
                else:
                    runs[kind].append(_in_child("graft", {"dirs": dirs, "out": root / "graft", "defaults": False,
                                                          "hash_outputs": kind == "graft_hash"}))
        default_run = _in_child("graft", {"dirs": dirs, "out": root / "graft", "defaults": True, "hash_outputs": True})
        report(runs, default_run, first, args)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


def report(runs: dict[str, list[dict]], default_run: dict, first: dict, args) -> None:
    read_bytes = runs["copy"][0]["read_bytes"]
    out_bytes = first["written_bytes"]
    moved = read_bytes + out_bytes

    def median_s(kind: str) -> float:
        return statistics.median(r["seconds"] for r in runs[kind])

    copy_s = median_s("copy")
    largest = first["largest_tensor"]
    budget = 4 * largest + 500 * 10**6
    load = os.getloadavg()[0]
    print(f"\nload average {load:.1f} on {os.cpu_count()} cores; inputs read {read_bytes / 1e9:.2f} GB, "
          f"output {out_bytes / 1e9:.2f} GB, largest tensor {largest / 1e6:.0f} MB; "
          f"median of {args.repeats} alternating runs")
    print(f"{'kind':34s} {'seconds':>8s} {'GB/s moved':>10s} {'x copy':>7s} {'peak RSS':>9s}   "
          f"best s (x best copy)   CPU s (x copy CPU)")
    rows = [("copy (read 3, write 1)", "copy"), ("graft stream", "graft"),
            ("graft stream + output sha256", "graft_hash")]
    best_copy = min(r["seconds"] for r in runs["copy"])
    copy_cpu = statistics.median(r["cpu_seconds"] for r in runs["copy"])
    for label, kind in rows:
        s = median_s(kind)
        best = min(r["seconds"] for r in runs[kind])
        peak = max(r["vm_hwm"] for r in runs[kind])
        print(f"{label:34s} {s:8.2f} {moved / 1e9 / s:10.2f} {copy_s / s:7.2f} {peak / 2**20:7.0f} MiB"
              f"   {best:.2f} ({best_copy / best:.2f})"
              f"   {statistics.median(r['cpu_seconds'] for r in runs[kind]):.2f} "
              f"({copy_cpu / statistics.median(r['cpu_seconds'] for r in runs[kind]):.2f})")
    d = default_run
    print(f"{'graft end to end, defaults':34s} {d['total_seconds']:8.2f} {moved / 1e9 / d['total_seconds']:10.2f} "
          f"{copy_s / d['total_seconds']:7.2f} {d['vm_hwm'] / 2**20:7.0f} MiB  (full input hashes, verify 8)")
    peak = max(r["vm_hwm"] for kind in ("graft", "graft_hash") for r in runs[kind])
    peak = max(peak, d["vm_hwm"])
    print(f"\nthroughput goal (>= 0.70x copy): {copy_s / median_s('graft'):.2f}x plain, "
          f"{copy_s / median_s('graft_hash'):.2f}x with output hashes")
    print(f"memory goal (< 4 x {largest / 1e6:.0f} MB + 500 MB = {budget / 2**20:.0f} MiB): "
          f"peak {peak / 2**20:.0f} MiB = {peak / largest:.2f}x largest tensor")


if __name__ == "__main__":
    main()
