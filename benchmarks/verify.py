"""Benchmark `py4 campaign run|status --verify` on one large finished run: hashing every recorded
file on each call (one at a time, as a check without kept results does) against the check that
hashes only files touched since they were last hashed, several at once.

    .venv/bin/python benchmarks/verify.py                    # 1 GiB: 16 x 60 MiB shards + 2,000 small files
    .venv/bin/python benchmarks/verify.py --shards 40 --shard-mib 100 --small 5000 --dir /tmp/verify-bench

A real runner (`py4.campaign.runner.run_campaign`) writes the run folder as one node (shards of
random bytes, like a checkpoint's weights, plus small JSON files, like its logs and configs) and
records it; the benchmark waits until its files have settled (`py4.campaign.records.SETTLED_NS`)
when a configuration needs it. Timed, each on the same folder:

- every file, one at a time: ``file_sha256`` of each recorded file in turn — what each
  ``--verify`` cost when every call hashed every file;
- every file with `py4.campaign.records.hash_files`, as it chooses (a thread per core the load
  leaves idle) and with 2 threads — what a ``--verify`` costs where nothing is known yet (a record
  written before stat keys, files that had not settled when the record was written, a folder
  copied to another machine);
- a first ``--verify`` after the run (`output_changes`): hashes the files that had not settled
  when the record was written (a run's last files) and keeps what it found;
- a repeated ``--verify``: hashes nothing;
- after rewriting one shard (same bytes, new inode, its mtime set back): hashes that shard only.

Files are read from the page cache (just written, and the machine has the memory): the hashing
is CPU-bound here; a cold read from disk adds the disk's time to every configuration that reads.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shards", type=int, default=16)
    parser.add_argument("--shard-mib", type=int, default=60)
    parser.add_argument("--small", type=int, default=2000)
    parser.add_argument("--dir", default=None, help="where the run is written (default: a temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the folder")
    args = parser.parse_args()

    from py4.campaign import records
    from py4.campaign.dag import Node
    from py4.campaign.runner import run_campaign

    out = Path(args.dir or tempfile.mkdtemp(prefix="verify-bench-"))
    out.mkdir(parents=True, exist_ok=True)
    node = Node(id="big", stage="midtrain", run_dir=str(out / "big"))

    def write(n: Node) -> None:
        run = Path(n.run_dir)
        (run / "logs").mkdir(parents=True, exist_ok=True)
        for i in range(args.small):
            (run / "logs" / f"{i:05d}.json").write_text(json.dumps({"step": i, "loss": 1.0 / (i + 1)}))
        for i in range(args.shards):
            with open(run / f"model-{i:05d}.safetensors", "wb") as fh:
                for _ in range(args.shard_mib):
                    fh.write(os.urandom(1 << 20))

    t0 = time.monotonic()
    summary = run_campaign([node], out, {"midtrain": write}, progress=False, log=lambda s: None)
    assert summary.ok, summary
    made = time.monotonic() - t0
    seen = records.read_record(out, node)["outputs_seen"]
    paths = [Path(node.run_dir) / rel for rel in seen]
    size = sum(p.stat().st_size for p in paths)
    keyed = sum(1 for entry in seen.values() if "stat" in entry)
    print(f"run folder: {len(paths)} files, {size / 2**30:.2f} GiB; written and recorded in {made:.1f} s "
          f"(record hashes every file once); {keyed} files had settled when recorded; "
          f"load average {os.getloadavg()[0]:.2f}", flush=True)

    counted: list[Path] = []
    real = records.file_sha256

    def counting(path):
        counted.append(Path(path))
        return real(path)

    records.file_sha256 = counting

    def timed(label: str, call) -> None:
        counted.clear()
        load = os.getloadavg()[0]
        t = time.monotonic()
        result = call()
        seconds = time.monotonic() - t
        hashed = sum(p.stat().st_size for p in counted)
        print(f"| {label} | {len(counted)} | {hashed / 2**30:.2f} | {seconds:.2f} | {load:.2f} |"
              + (f" {result}" if result else ""), flush=True)

    wait = records.SETTLED_NS / 1e9
    time.sleep(wait)  # the files have settled: the cases below see them as a later check would
    print("\n| check | files hashed | GiB hashed | s | load (1 min) |\n|---|---|---|---|---|")
    timed("every file, one at a time", lambda: [counting(p) for p in paths] and None)
    from py4.threads import usable_cores

    free = min(8, usable_cores() - int(round(os.getloadavg()[0])))
    timed(f"every file, hash_files as it chooses ({max(1, free)} thread(s) now)",
          lambda: records.hash_files(paths) and None)
    timed("every file, hash_files with 2 threads", lambda: records.hash_files(paths, workers=2) and None)
    timed("first --verify after the run", lambda: records.output_changes(out, node, verify=True) or None)
    timed("repeated --verify", lambda: records.output_changes(out, node, verify=True) or None)
    shard = paths[[p.name for p in paths].index("model-00000.safetensors")]
    st = shard.stat()
    copy = shard.with_name("copy.tmp")
    shutil.copyfile(shard, copy)
    os.replace(copy, shard)
    os.utime(shard, ns=(st.st_atime_ns, st.st_mtime_ns))
    time.sleep(wait)
    timed("--verify after one shard was rewritten", lambda: records.output_changes(out, node, verify=True) or None)
    timed("cheap check (no --verify)", lambda: records.output_changes(out, node) or None)
    if not args.keep:
        shutil.rmtree(out)


if __name__ == "__main__":
    main()
