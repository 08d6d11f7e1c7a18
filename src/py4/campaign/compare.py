"""Compare two campaign output folders file by file: the same files, the same content once what
cannot be equal between two runs of the same campaign is taken out.

Used to show a change left a campaign's results alone (`python scripts/compare_campaigns.py
BEFORE AFTER`, e.g. two `py4 demo --out` folders) and that the Slurm backend gives the local
backend's results (tests/campaign/test_slurm_cluster.py). The rules, for every file both have:

- JSON (``*.json``): parsed, each campaign's folder replaced by ``<out>`` in every string, the keys
  in EXCLUDED_KEYS left out (timestamps, durations, host facts, memory, fingerprints of absolute
  paths), lists under UNORDERED keys sorted (PEFT writes a set), then compared value by value;
- ``*.jsonl`` (transcripts, rows): line by line, as JSON;
- text (``*.md``, ``*.yaml``, ``*.jinja``, ``*.txt``): the folders replaced; README.md (TRL's model
  card: its tags are a set, ordered by the process's string hashing) as sorted lines;
- ``training_args.bin``: the Trainer's pickled arguments, loaded and compared as JSON (they hold the
  run folder);
- everything else (weights, optimizer states, data shards, the bank): bytes (sha256).

In every text, the checkout py4 was imported from is spelled ``<src>/py4/`` and TensorBoard folder
names (``runs/<date_time_host>``) ``runs/<time>``. Left out: EXCLUDED_FILES (stage and server logs,
TensorBoard event files: logs with times), and what a caller's ``skip`` names.

A recorded hash of an input or output (a dict with "path" and "sha256" / "manifest_sha256") that
differs is checked: the before run's file (or folder) is hashed again with the after run's folder
written in place of its own; when that gives the after run's hash, or the hashed file is a JSON
(or the hashed folder holds files) equal to the other run's by these rules, the difference is paths
(and times) only, and is listed as such.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from py4.runs import file_sha256, tree_sha256

EXCLUDED_KEYS = {
    "started_at", "finished_at", "timings", "hardware", "total_s", "wall_s", "seconds", "elapsed_s",
    "fingerprint", "ready_s", "peak_rss_bytes", "stream_seconds", "created_at", "train_runtime",
    "train_samples_per_second", "train_steps_per_second", "total_flos", "time", "duration_s",
    "dedup_seconds", "validation_seconds", "generated_at", "date", "pid", "process_seconds",
    # a hash of the resolved config, which holds absolute paths (resolved_config.yaml is compared as text)
    "config_sha256",
    "stream_mb_per_s",  # the graft's streaming speed
    "boa_s",  # an episode's time in Boa
    "step_time",  # GRPO's seconds per step
    "plan_fingerprint",  # the graft's plan hash: its input files' sizes and mtimes
    "implementation",  # boa.implementation: the hash of Boa's source (differs whenever Boa's code does)
    "provenance",  # the code's commit and the command line: which code ran, not what it made
}
SRC_ROOT = re.compile(r"/[^\s\"']*?/src/py4/")  # a file of the checkout the run imported py4 from
TENSORBOARD_RUN = re.compile(r"runs/[A-Z][a-z]{2}\d{2}_\d{2}-\d{2}-\d{2}_[\w.-]+")  # Trainer's logging_dir: time_host
UNORDERED = {"target_modules"}  # PEFT stores a set: its JSON order follows the process's string hashing
EXCLUDED_FILES = re.compile(r"(stage\.log|server\.log|events\.out\.tfevents\..*)$")
TEXT = re.compile(r"\.(md|yaml|yml|jinja|txt)$")

# What a run hands on, without what names its folder or times it: the files two backends (or two
# machines) running the same campaign must write identically (tests/campaign/test_slurm_cluster.py).
METADATA = {"manifest.json", "resolved_config.yaml", "run_manifest.json", ".graft_journal.json"}
"""Run and data manifests, resolved configs, graft journals: folders, start and end times, durations,
counters of the Boa cache two campaigns share."""
LEDGERS = {"CAMPAIGN_STATUS.md", "WEIGHTS_INDEX.md"}
"""The campaign's ledgers (py4.campaign.ledgers): each run's status, attempts and times."""
UNCOMPARED = {"training_args.bin"}
"""The trainers' pickled TrainingArguments: they name the run's TensorBoard folder (start time, host)."""


def outputs_only(rel: Path) -> bool:
    """True for what `skip` leaves out when only a run's outputs are compared: the campaign's own
    records and job logs (``_campaign/``) and ledgers (LEDGERS: statuses and times), METADATA,
    UNCOMPARED, trainer logs (a ``runs/`` folder: TensorBoard events) and checkpoints
    (``checkpoint-*``: resumable trainer state; the weights a run hands on are compared)."""
    return (rel.parts[0] == "_campaign" or rel.as_posix() in LEDGERS or rel.name in METADATA | UNCOMPARED
            or "runs" in rel.parts[:-1] or any(part.startswith("checkpoint-") for part in rel.parts))


def written_files(run_dir: str | Path) -> list[str]:
    """What a run wrote into its folder (relative paths, sorted), `outputs_only` left out."""
    root = Path(run_dir)
    return sorted(rel.as_posix() for rel in (p.relative_to(root) for p in root.rglob("*") if p.is_file())
                  if not outputs_only(rel))


def spellings(folder: str | Path) -> list[str]:
    """A campaign folder as its files may name it: resolved, and as given."""
    return [str(Path(folder).resolve()), str(folder).rstrip("/")]


def normalise(value: Any, roots: list[str]) -> Any:
    """A JSON value with the campaign's folder (``roots``) spelled ``<out>`` and EXCLUDED_KEYS left out."""
    if isinstance(value, dict):
        return {k: sorted(normalise(v, roots)) if k in UNORDERED and isinstance(v, list) else normalise(v, roots)
                for k, v in value.items() if k not in EXCLUDED_KEYS}
    if isinstance(value, list):
        return [normalise(v, roots) for v in value]
    if isinstance(value, str):
        return _normalise_text(value, roots)
    return value


def _normalise_text(text: str, roots: list[str]) -> str:
    for root in roots:
        text = text.replace(root, "<out>")
    return TENSORBOARD_RUN.sub("runs/<time>", SRC_ROOT.sub("<src>/py4/", text))


def differences(a: Any, b: Any, where: str = "") -> list[str]:
    """Every place two JSON values differ (``where``: the path to them)."""
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
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in differences(x, y, f"{where}[{i}]")]
    return [] if a == b else [f"{where}: {str(a)[:120]!r} != {str(b)[:120]!r}"]


def first_difference(a: Any, b: Any, where: str = "") -> str | None:
    found = differences(a, b, where)
    return "; ".join(found[:5]) + (f" (+{len(found) - 5} more)" if len(found) > 5 else "") if found else None


@dataclass
class Comparison:
    """What comparing two folders found: files compared by kind, differences, recorded hashes that
    differ by paths only."""

    files: int = 0
    kinds: dict[str, int] = field(default_factory=lambda: {"json": 0, "text": 0, "bytes": 0})
    differences: list[str] = field(default_factory=list)
    path_only: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.differences

    def report(self) -> list[str]:
        """The lines `compare_folders` prints."""
        return [f"compared {self.files} files ({self.kinds['json']} JSON, {self.kinds['text']} text, "
                f"{self.kinds['bytes']} by bytes)",
                *(f"DIFF {d}" for d in self.differences),
                f"{len(self.path_only)} recorded hash(es) differ by paths / excluded keys only (checked by "
                "rehashing, or comparing the hashed JSON or folder):",
                *(f"  PATH-ONLY {p}" for p in self.path_only),
                f"{len(self.differences)} difference(s)"]


class _Folders:
    """Two folders of two campaigns (``roots_b``/``roots_a``: how each campaign's folder is spelled)."""

    def __init__(self, roots_b: list[str], roots_a: list[str], skip: Callable[[Path], bool] | None,
                 found: Comparison):
        self.roots_b, self.roots_a, self.skip, self.found = roots_b, roots_a, skip, found

    def compare(self, before: Path, after: Path) -> None:
        b_root, a_root = before.resolve(), after.resolve()
        files_b, files_a = self._files(b_root), self._files(a_root)
        for rel in sorted(files_b ^ files_a):
            self.found.differences.append(f"{rel}: only in {'before' if rel in files_b else 'after'}")
        for rel in sorted(files_b & files_a):
            self.found.files += 1
            problem = self._compare_file(rel, b_root / rel, a_root / rel)
            if problem:
                self.found.differences.append(f"{rel}: {problem}")

    def _files(self, root: Path) -> set[Path]:
        return {rel for rel in (p.relative_to(root) for p in root.rglob("*") if p.is_file())
                if not EXCLUDED_FILES.search(rel.name) and not (self.skip and self.skip(rel))}

    def _compare_file(self, rel: Path, pb: Path, pa: Path) -> str | None:
        kinds = self.found.kinds
        if pb.suffix == ".json":
            kinds["json"] += 1
            jb, ja = json.loads(pb.read_text()), json.loads(pa.read_text())
            self.settle_hashes(jb, ja, str(rel))
            return first_difference(normalise(jb, self.roots_b), normalise(ja, self.roots_a))
        if TEXT.search(pb.name):
            kinds["text"] += 1
            tb = _normalise_text(pb.read_text(errors="replace"), self.roots_b)
            ta = _normalise_text(pa.read_text(errors="replace"), self.roots_a)
            if pb.name == "README.md":  # TRL's model card lists its tags from a set: order follows string hashing
                tb, ta = "\n".join(sorted(tb.splitlines())), "\n".join(sorted(ta.splitlines()))
            return None if tb == ta else "text differs"
        if pb.suffix == ".jsonl":  # transcripts, rows: line by line, as JSON
            kinds["json"] += 1
            return first_difference(_jsonl(pb, self.roots_b), _jsonl(pa, self.roots_a))
        if pb.name == "training_args.bin":  # the Trainer's pickled arguments: they hold the run's folder
            kinds["json"] += 1
            return first_difference(_training_args(pb, self.roots_b), _training_args(pa, self.roots_a))
        kinds["bytes"] += 1
        return None if file_sha256(pb) == file_sha256(pa) else "bytes differ"  # (weights: read in chunks)

    def settle_hashes(self, before: Any, after: Any, where: str = "") -> None:
        """Hashes that differ only because the hashed files hold each run's own folder: marked equal."""
        if isinstance(before, dict) and isinstance(after, dict):
            path = after.get("path")
            for key, name in (("sha256", None), ("manifest_sha256", "manifest.json")):
                if isinstance(path, str) and key in before and key in after and before[key] != after[key]:
                    target = before.get("path", "")
                    for root in self.roots_b:
                        target = target.replace(root, self.roots_b[0]) if target.startswith(root) else target
                    target_path = Path(target) / name if name else Path(target)
                    after_path = Path(path) / name if name else Path(path)
                    if target_path.exists() and (_rewritten_hash(target_path, self.roots_b, self.roots_a[0])
                                                 == after[key] or self._same_json(target_path, after_path)
                                                 or self._same_folder(target_path, after_path)):
                        before[key] = after[key] = "<same content, own paths>"
                        self.found.path_only.append(f"{where}.{key}")
            for k in before.keys() & after.keys():
                self.settle_hashes(before[k], after[k], f"{where}.{k}")
        elif isinstance(before, list) and isinstance(after, list):
            # a list that grew or shrank is a difference normalise/differences report; here only the
            # hashes of the entries both have are checked
            for i, (x, y) in enumerate(zip(before, after, strict=False)):
                self.settle_hashes(x, y, f"{where}[{i}]")

    def _same_json(self, before: Path, after: Path) -> bool:
        """A hashed JSON file (a data manifest) equal to the other run's but for paths and
        EXCLUDED_KEYS (its build time, e.g.)."""
        if before.suffix not in (".json", ".jsonl") or not after.is_file():
            return False
        if before.suffix == ".jsonl":
            return _jsonl(before, self.roots_b) == _jsonl(after, self.roots_a)
        jb, ja = json.loads(before.read_text()), json.loads(after.read_text())
        self.settle_hashes(jb, ja, str(before))
        return normalise(jb, self.roots_b) == normalise(ja, self.roots_a)

    def _same_folder(self, before: Path, after: Path) -> bool:
        """A hashed folder (a model) whose files all compare equal by these rules."""
        if not (before.is_dir() and after.is_dir()):
            return False
        inner = Comparison()
        _Folders(self.roots_b, self.roots_a, None, inner).compare(before, after)
        self.found.path_only += inner.path_only
        return inner.ok


def _jsonl(path: Path, roots: list[str]) -> list[Any]:
    return [normalise(json.loads(x), roots) for x in path.read_text().splitlines() if x.strip()]


def _rewritten_hash(target: Path, old: list[str], new: str) -> str:
    """sha256 of a file (or folder) as py4.runs.tree_sha256 hashes it, with ``old`` folders written ``new``."""
    def digest(path: Path) -> str:
        data = path.read_bytes()
        for root in old:
            data = data.replace(root.encode(), new.encode())
        return hashlib.sha256(data).hexdigest()

    return tree_sha256(target, file_digest=digest)


def _training_args(path: Path, roots: list[str]) -> Any:
    import torch

    args = torch.load(path, weights_only=False)
    return normalise(json.loads(json.dumps(args.to_dict(), default=str)), roots)


def compare_folders(before: str | Path, after: str | Path, root_before: str | Path | None = None,
                    root_after: str | Path | None = None, *, skip: Callable[[Path], bool] | None = None
                    ) -> Comparison:
    """Compare two folders file by file by the rules above; ``root_*`` are the campaign folders
    whose paths are replaced (default: the folders themselves); ``skip(relative path)`` leaves a
    file out (e.g. `outputs_only`)."""
    found = Comparison()
    roots_b = spellings(root_before if root_before is not None else before)
    roots_a = spellings(root_after if root_after is not None else after)
    _Folders(roots_b, roots_a, skip, found).compare(Path(before), Path(after))
    return found


def done_runs(campaign: Path) -> dict[str, dict[str, Any]]:
    """node id -> its record folder and run folder, for every run whose record says done."""
    out = {}
    for record in (campaign / "_campaign" / "runs").rglob("run_manifest.json"):
        m = json.loads(record.read_text())
        if m.get("status") == "done" and m.get("node"):
            out[m["node"]["id"]] = {"record": record.parent, "run_dir": m["node"]["run_dir"]}
    return out


def compare_campaigns(before: str, after: str, log: Callable[[str], None] = print) -> int:
    """Every run done in both campaign folders: its record and its run folder (once per folder:
    GRPO segments share one), then report/ and calibration/ when both have them. Returns the
    number of folders with differences."""
    b, a = done_runs(Path(before)), done_runs(Path(after))
    both = sorted(set(b) & set(a))
    log(f"done: {len(b)} before, {len(a)} after, {len(both)} in both; only before: {sorted(set(b) - set(a))}")
    pairs: list[tuple[str, Path, Path]] = []
    seen = set()
    for node in both:
        pairs.append((node, b[node]["record"], a[node]["record"]))
        if b[node]["run_dir"] not in seen:
            seen.add(b[node]["run_dir"])
            pairs.append((node, Path(b[node]["run_dir"]), Path(a[node]["run_dir"])))
    for folder in ("report", "calibration"):  # the report's tables and figures; its scripted calibration runs
        if (Path(before) / folder).is_dir() and (Path(after) / folder).is_dir():
            pairs.append((folder, Path(before) / folder, Path(after) / folder))
    failures = 0
    for name, pb, pa in pairs:
        shown = pb.relative_to(before) if str(pb).startswith(before) else pb
        log(f"== {name}: {shown}" if name not in ("report", "calibration") else f"== {name}")
        found = compare_folders(pb, pa, before, after)
        for line in found.report():
            log(line)
        failures += not found.ok
    log(f"{len(both)} runs compared, {failures} folder(s) with differences")
    return failures


def main(argv: list[str]) -> int:
    """``BEFORE AFTER``: `compare_campaigns`; ``--folders BEFORE AFTER [ROOT_BEFORE ROOT_AFTER]``:
    `compare_folders`. Exit status 1 on a difference."""
    if argv[:1] == ["--folders"] and 3 <= len(argv) <= 5:
        found = compare_folders(*argv[1:5])
        for line in found.report():
            print(line)
        return 0 if found.ok else 1
    if len(argv) != 2 or argv[0].startswith("-"):
        print("usage: compare_campaigns.py BEFORE AFTER | --folders BEFORE AFTER [ROOT_BEFORE ROOT_AFTER]")
        return 2
    return 1 if compare_campaigns(argv[0], argv[1]) else 0
