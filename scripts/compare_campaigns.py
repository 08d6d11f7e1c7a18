"""Compare two campaign output folders (e.g. `py4 demo --out` before and after a change) run by run.

JSON files: parsed, the folders' absolute paths replaced by <out>, then compared with the keys in
EXCLUDED_KEYS left out (timestamps, durations, host facts, memory, fingerprints of absolute paths).
results.md / README.md / *.yaml / *.jinja / *.txt: text with the paths replaced (README.md, TRL's model
card, as sorted lines: its tags are a set, ordered by the process's string hashing).
training_args.bin: the Trainer's pickled arguments, loaded and compared as JSON (they hold the run folder).
Everything else (weights, optimizer states, data shards, transcripts, the bank): bytes (sha256).
Excluded whole: stage.log, server.log, TensorBoard event files (logs with times); TensorBoard folder
names (runs/<date_time_host>) in JSON and text are replaced by runs/<time>.
*.jsonl: line by line as JSON. training_args.bin: see below.
A recorded hash of an input or output (a dict with "path" and "sha256" / "manifest_sha256") that
differs is checked: the before run's file (or folder) is hashed again with the after run's folder
written in place of its own; when that gives the after run's hash, or the hashed file is a JSON
(or the hashed folder holds files) equal to the other run's by these rules, the difference is
paths (and times) only. Lists under UNORDERED keys are compared sorted.

usage: python scripts/compare_campaigns.py BEFORE AFTER
  every run done in both campaign folders (its record in _campaign/runs/<id>/run_manifest.json says
  done): its record and its run folder, then report/ and calibration/ when both have them; exit 1 on a
  difference.
usage: python scripts/compare_campaigns.py --folders BEFORE AFTER [ROOT_BEFORE ROOT_AFTER]
  two folders (the roots, default the folders themselves, are the campaign folders whose paths are replaced)
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

EXCLUDED_KEYS = {
    "started_at", "finished_at", "timings", "hardware", "total_s", "wall_s", "seconds", "elapsed_s",
    "fingerprint", "ready_s", "peak_rss_bytes", "stream_seconds", "created_at", "train_runtime",
    "train_samples_per_second", "train_steps_per_second", "total_flos", "time", "duration_s",
    "dedup_seconds", "validation_seconds", "generated_at", "date", "pid", "process_seconds",
    "config_sha256",  # a hash of the resolved config, which holds absolute paths (resolved_config.yaml is compared as text)
    "stream_mb_per_s",  # the graft's streaming speed
    "boa_s",  # an episode's time in Boa
    "step_time",  # GRPO's seconds per step
    "plan_fingerprint",  # the graft's plan hash: its input files' sizes and mtimes
    "implementation",  # boa.implementation: the hash of Boa's source (differs whenever Boa's code does)
}
SRC_ROOT = re.compile(r"/[^\s\"']*?/src/py4/")  # a file of the checkout the run imported py4 from
TENSORBOARD_RUN = re.compile(r"runs/[A-Z][a-z]{2}\d{2}_\d{2}-\d{2}-\d{2}_[\w.-]+")  # Trainer's logging_dir: time_host
UNORDERED = {"target_modules"}  # PEFT stores a set: its JSON order follows the process's string hashing
EXCLUDED_FILES = re.compile(r"(stage\.log|server\.log|events\.out\.tfevents\..*)$")
TEXT = re.compile(r"\.(md|yaml|yml|jinja|txt)$")


def _rewritten_hash(target: Path, old: list[str], new: str) -> str:
    def digest(path: Path) -> str:
        data = path.read_bytes()
        for root in old:
            data = data.replace(root.encode(), new.encode())
        return hashlib.sha256(data).hexdigest()

    if target.is_file():
        return digest(target)
    h = hashlib.sha256()
    for file in sorted(p for p in target.rglob("*") if p.is_file()):
        rel = file.relative_to(target)
        if file.name == "run_manifest.json" or any(part.startswith(".") for part in rel.parts):
            continue
        h.update(rel.as_posix().encode() + b"\0" + digest(file).encode() + b"\n")
    return h.hexdigest()


def _same_json(before: Path, after: Path, roots_b, roots_a) -> bool:
    """A hashed JSON file (a data manifest) equal to the other run's but for paths and EXCLUDED_KEYS
    (its build time, e.g.)."""
    if before.suffix not in (".json", ".jsonl") or not after.is_file():
        return False
    if before.suffix == ".jsonl":
        return ([normalise(json.loads(x), roots_b) for x in before.read_text().splitlines() if x.strip()]
                == [normalise(json.loads(x), roots_a) for x in after.read_text().splitlines() if x.strip()])
    jb, ja = json.loads(before.read_text()), json.loads(after.read_text())
    settle_hashes(jb, ja, roots_b, roots_a, str(before))
    return normalise(jb, roots_b) == normalise(ja, roots_a)


def _same_folder(before: Path, after: Path, roots_b, roots_a) -> bool:
    """A hashed folder (a model) whose files all compare equal by these rules."""
    if not (before.is_dir() and after.is_dir()):
        return False
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):
        return main(str(before), str(after), roots_b[1], roots_a[1]) == 0


PATH_ONLY = []


def settle_hashes(before, after, roots_b, roots_a, where=""):
    """Hashes that differ only because the hashed files hold each run's own folder: marked equal."""
    if isinstance(before, dict) and isinstance(after, dict):
        path = after.get("path")
        for key, name in (("sha256", None), ("manifest_sha256", "manifest.json")):
            if isinstance(path, str) and before.get(key) != after.get(key) and key in before and key in after:
                target = before.get("path", "")
                for root in roots_b:
                    target = target.replace(root, roots_b[0]) if target.startswith(root) else target
                target_path = Path(target) / name if name else Path(target)
                after_path = Path(path) / name if name else Path(path)
                if target_path.exists() and (_rewritten_hash(target_path, roots_b, roots_a[0]) == after[key]
                                             or _same_json(target_path, after_path, roots_b, roots_a)
                                             or _same_folder(target_path, after_path, roots_b, roots_a)):
                    before[key] = after[key] = "<same content, own paths>"
                    PATH_ONLY.append(f"{where}.{key}")
        for k in before.keys() & after.keys():
            settle_hashes(before[k], after[k], roots_b, roots_a, f"{where}.{k}")
    elif isinstance(before, list) and isinstance(after, list):
        for i, (x, y) in enumerate(zip(before, after)):
            settle_hashes(x, y, roots_b, roots_a, f"{where}[{i}]")


def _training_args(path: Path, roots):
    import torch

    args = torch.load(path, weights_only=False)
    return normalise(json.loads(json.dumps(args.to_dict(), default=str)), roots)


def normalise(value, roots):
    if isinstance(value, dict):
        return {k: sorted(normalise(v, roots)) if k in UNORDERED and isinstance(v, list) else normalise(v, roots)
                for k, v in value.items() if k not in EXCLUDED_KEYS}
    if isinstance(value, list):
        return [normalise(v, roots) for v in value]
    if isinstance(value, str):
        for root in roots:
            value = value.replace(root, "<out>")
        return TENSORBOARD_RUN.sub("runs/<time>", SRC_ROOT.sub("<src>/py4/", value))
    return value


def differences(a, b, where=""):
    if type(a) is not type(b):
        return [f"{where}: {str(a)[:120]!r} != {str(b)[:120]!r}"]
    if isinstance(a, dict):
        out = []
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                out.append(f"{where}.{k}: only in {'after' if k not in a else 'before'}")
            else:
                out += differences(a[k], b[k], f"{where}.{k}")
        return out
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{where}: {len(a)} items != {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{where}[{i}]")]
    return [] if a == b else [f"{where}: {str(a)[:120]!r} != {str(b)[:120]!r}"]


def first_difference(a, b, where=""):
    found = differences(a, b, where)
    return "; ".join(found[:5]) + (f" (+{len(found) - 5} more)" if len(found) > 5 else "") if found else None


def main(before: str, after: str, root_before: str | None = None, root_after: str | None = None) -> int:
    b_root, a_root = Path(before).resolve(), Path(after).resolve()
    roots_b = [str(Path(root_before or before).resolve()), (root_before or before).rstrip("/")]
    roots_a = [str(Path(root_after or after).resolve()), (root_after or after).rstrip("/")]
    files_b = {p.relative_to(b_root) for p in b_root.rglob("*") if p.is_file() and not EXCLUDED_FILES.search(p.name)}
    files_a = {p.relative_to(a_root) for p in a_root.rglob("*") if p.is_file() and not EXCLUDED_FILES.search(p.name)}
    problems, kinds = [], {"json": 0, "text": 0, "bytes": 0}
    for rel in sorted(files_b ^ files_a):
        problems.append(f"{rel}: only in {'before' if rel in files_b else 'after'}")
    for rel in sorted(files_b & files_a):
        pb, pa = b_root / rel, a_root / rel
        if pb.suffix == ".json":
            kinds["json"] += 1
            jb, ja = json.loads(pb.read_text()), json.loads(pa.read_text())
            settle_hashes(jb, ja, roots_b, roots_a, str(rel))
            d = first_difference(normalise(jb, roots_b), normalise(ja, roots_a))
        elif TEXT.search(pb.name):
            kinds["text"] += 1
            tb, ta = pb.read_text(errors="replace"), pa.read_text(errors="replace")
            for r in roots_b:
                tb = tb.replace(r, "<out>")
            for r in roots_a:
                ta = ta.replace(r, "<out>")
            tb, ta = TENSORBOARD_RUN.sub("runs/<time>", tb), TENSORBOARD_RUN.sub("runs/<time>", ta)
            if pb.name == "README.md":  # TRL's model card lists its tags from a set: order follows string hashing
                tb, ta = "\n".join(sorted(tb.splitlines())), "\n".join(sorted(ta.splitlines()))
            d = None if tb == ta else "text differs"
        elif pb.suffix == ".jsonl":  # transcripts, rows: line by line, as JSON
            kinds["json"] += 1
            lb = [normalise(json.loads(x), roots_b) for x in pb.read_text().splitlines() if x.strip()]
            la = [normalise(json.loads(x), roots_a) for x in pa.read_text().splitlines() if x.strip()]
            d = first_difference(lb, la)
        elif pb.name == "training_args.bin":  # the Trainer's pickled arguments: they hold the run's folder
            kinds["json"] += 1
            d = first_difference(_training_args(pb, roots_b), _training_args(pa, roots_a))
        else:
            kinds["bytes"] += 1
            d = None if hashlib.sha256(pb.read_bytes()).digest() == hashlib.sha256(pa.read_bytes()).digest() else "bytes differ"
        if d:
            problems.append(f"{rel}: {d}")
    print(f"compared {len(files_b & files_a)} files ({kinds['json']} JSON, {kinds['text']} text, {kinds['bytes']} by bytes)")
    for p in problems:
        print("DIFF", p)
    print(f"{len(PATH_ONLY)} recorded hash(es) differ by paths / excluded keys only (checked by rehashing, or comparing the hashed JSON or folder):")
    for p in PATH_ONLY:
        print("  PATH-ONLY", p)
    print(f"{len(problems)} difference(s)")
    return 1 if problems else 0


def done_nodes(root: Path) -> dict[str, dict]:
    out = {}
    for record in (root / "_campaign" / "runs").rglob("run_manifest.json"):
        m = json.loads(record.read_text())
        if m.get("status") == "done" and m.get("node"):
            out[m["node"]["id"]] = {"record": record.parent, "run_dir": m["node"]["run_dir"]}
    return out


def compare_runs(before: str, after: str) -> int:
    b, a = done_nodes(Path(before)), done_nodes(Path(after))
    both = sorted(set(b) & set(a))
    print(f"done: {len(b)} before, {len(a)} after, {len(both)} in both; only before: {sorted(set(b) - set(a))}")
    failures, seen = 0, set()
    for node in both:
        pairs = [(b[node]["record"], a[node]["record"])]
        if b[node]["run_dir"] not in seen:  # GRPO segments share one run folder
            seen.add(b[node]["run_dir"])
            pairs.append((Path(b[node]["run_dir"]), Path(a[node]["run_dir"])))
        for pb, pa in pairs:
            print(f"== {node}: {pb.relative_to(before) if str(pb).startswith(before) else pb}")
            failures += main(str(pb), str(pa), before, after)
    for folder in ("report", "calibration"):  # the report's tables and figures; its scripted calibration runs
        if (Path(before) / folder).is_dir() and (Path(after) / folder).is_dir():
            print(f"== {folder}")
            failures += main(str(Path(before) / folder), str(Path(after) / folder), before, after)
    print(f"{len(both)} runs compared, {failures} folder(s) with differences")
    return 1 if failures else 0


if __name__ == "__main__":
    if sys.argv[1] == "--folders":
        sys.exit(main(*sys.argv[2:6]))
    sys.exit(compare_runs(sys.argv[1], sys.argv[2]))
