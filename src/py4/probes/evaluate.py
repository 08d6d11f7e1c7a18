"""Evaluate a model on the probe set: ``evaluate_probes`` (one code path for ``py4 eval probes``,
``py4 probes eval`` and the campaign), writing ``results.json`` + ``results.md`` in a run folder.

The model is a local folder (+ PEFT adapter) or a served name on an OpenAI-compatible
endpoint. The untrained base is scored beside it as the floor (``base``: a model folder, a
served name with an endpoint, or a probes ``results.json`` already made for it), and
``compare`` (another run's ``results.json``) gives paired differences. The results.json
schema is documented in docs/probes.md and versioned by ``SCHEMA``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from py4.errors import Py4Error
from py4.fileio import read_json_object
from py4.probes.score import BATCH_SIZE

SCHEMA = 1
NO_BASE = ("No base scored beside this model (--base): spans differ in length, so the summed score is "
           "biased and an accuracy means little without the untrained base's on the same pairs.")
RESULTS, TABLE = "results.json", "results.md"


def load_model(model_dir: str, adapter: str | None = None):
    """(model, tokenizer) from a local folder or Hub id, with a PEFT adapter applied when given."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    for flag, folder in (("--model", model_dir), ("--adapter", adapter)):
        # A Hub id (`org/name`, the campaign's bases) loads from the Hub cache; a path must exist.
        if folder is not None and not Path(folder).is_dir() and _looks_local(folder):
            raise Py4Error(f"{flag} {folder!r}: no such folder (a local model folder or a Hub id is expected)")
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, **model_load_kwargs())
    if adapter:
        from peft import PeftModel

        model = PeftModel.from_pretrained(model, adapter)
    return model, tokenizer


def model_load_kwargs() -> dict[str, Any]:
    """from_pretrained's placement: on the GPUs when CUDA is available (the campaign's probe nodes
    request them; a 31B checkpoint scored on CPU would take days), in the checkpoint's own dtype
    (bf16 for the campaign's), sharded over every visible GPU; on CPU, transformers' defaults."""
    import torch

    return {"device_map": "auto", "dtype": "auto"} if torch.cuda.is_available() else {}


def _looks_local(name: str) -> bool:
    return name.startswith(("/", ".", "~")) or name.count("/") != 1


def select_probes(probes: list[dict], limit: int | None) -> list[dict]:
    """Every k-th pair so that at least ``limit`` are kept (all rules and contexts stay represented)."""
    return probes[::max(1, len(probes) // limit)] if limit else probes


def evaluate_probes(model: str, out_dir: str | Path, *, adapter: str | None = None, base: str | None = None,
                    endpoint: str | None = None, tokenizer: str | None = None, compare: str | Path | None = None,
                    limit: int | None = None, batch_size: int = BATCH_SIZE, progress: bool = False,
                    bootstrap: int = 1000, probes_dir: str | Path | None = None) -> dict[str, Any]:
    """Score ``model`` (and ``base``) on the probe set; write ``out_dir``/results.json and results.md.

    ``model``: a local model folder, or with ``endpoint`` (``http://host:8000/v1``) the served
    name; ``tokenizer``: with an endpoint, the served model's tokenizer folder (token-id
    prompts, scores equal to the local path's), else text prompts. ``base``: a model folder
    (with an endpoint: a served name) or a probes results.json of it. Returns the results
    object. Raises Py4Error for what the user gave wrong, EndpointError for a server that refuses.
    """
    from py4.problems.probe_set.build import load_probes, probe_paths
    from py4.probes.stats import paired_difference, summarize
    from py4.runs import RunRecorder, atomic_write_json, atomic_write_text

    if adapter and endpoint:
        raise Py4Error("--adapter is for a local model; with --endpoint serve the adapter as a LoRA module and "
                       "give its served name as --model")
    probes = select_probes(load_probes(probes_dir), limit)
    manifest = read_json_object(probe_paths(probes_dir)[1])  # load_probes has read (and checked) it
    # Files given for the base or the comparison are checked before any scoring.
    other = _read_results(compare, "--compare") if compare else None
    probe_set = manifest["jsonl_sha256"]
    other_scores = _covering_scores(other, probes, probe_set, compare, "--compare") if other is not None else None
    base_file = base is not None and Path(base).is_file()
    base_scores = (_covering_scores(_read_results(base, "--base"), probes, probe_set, base, "--base")
                   if base_file else None)
    out = Path(out_dir)
    with RunRecorder(out, None, kind="probes-eval") as recorder:
        # a probe set taken from the Hub: its id, pin, commit and content hash (`install_probes`)
        dataset = {"dataset": manifest["dataset"]} if manifest.get("dataset") else {}
        recorder.add_input("probes", path=probe_paths(probes_dir)[0], jsonl_sha256=manifest["jsonl_sha256"], **dataset)
        how = {"endpoint": endpoint, "tokenizer": _endpoint_tokenizer(endpoint, tokenizer),
               "batch_size": batch_size, "progress": progress}
        scores, conditioned = _score(model, adapter, probes, **how)
        # What the selection's empty prefixes were conditioned on (py4.probes.score: BOS, else EOS).
        empty_prefixes: dict[str, Any] = {"pairs": sum(not p["prefix"] for p in probes), "model": conditioned}
        recorder.set(empty_prefixes=empty_prefixes)
        recorder.add_model_input("model", model, endpoint=endpoint)
        results: dict[str, Any] = {
            "schema": SCHEMA, "model": model, "adapter": adapter, "endpoint": endpoint,
            "probes": {"version": manifest["version"], "jsonl_sha256": manifest["jsonl_sha256"],
                       "selected": len(probes), "limit": limit},
            "rules": {r: {"held_out": p["held_out"], "kind": p["kind"]} for p in probes for r in [p["rule"]]},
            "pairs": len(probes), "scores": scores, "summary": summarize(scores, probes, b=bootstrap)}
        if base:
            if not base_file:
                base_scores, empty_prefixes["base"] = _score(base, None, probes, **how)
                recorder.set(empty_prefixes=empty_prefixes)
            recorder.add_model_input("base", base, endpoint=endpoint)
            results["base"] = {"model": base, "scores": base_scores,
                               "summary": summarize(base_scores, probes, b=bootstrap)}
            results["minus_base"] = paired_difference(scores, base_scores, probes, b=bootstrap)
        if other is not None:
            results["compare"] = str(compare)
            results["compare_model"] = other.get("model")
            results["minus_compare"] = paired_difference(scores, other_scores, probes, b=bootstrap)
        atomic_write_json(out / RESULTS, results)
        atomic_write_text(out / TABLE, markdown(results))
        for name in (RESULTS, TABLE):
            recorder.add_output(name, out / name)
        s = results["summary"]
        recorder.set(probe_accuracy={k: s[k]["accuracy"] for k in ("all", "heldin", "heldout")})
        from py4.tracking import log_to_training_run  # the trained run is the adapter's, else the model's

        recorder.set(tracking=log_to_training_run(adapter or model, {
            f"probe_accuracy/{k}": s[k]["accuracy"] for k in ("all", "heldin", "heldout")}, "probes"))
    return results


def _endpoint_tokenizer(endpoint: str | None, tokenizer: str | None):
    if tokenizer is None:
        return None
    if endpoint is None:
        raise Py4Error("--tokenizer is for --endpoint (a local model folder has its own tokenizer)")
    if not Path(tokenizer).is_dir():
        raise Py4Error(f"--tokenizer {tokenizer!r}: no such folder (the served model's tokenizer folder)")
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tokenizer)


def _score(model: str, adapter: str | None, probes: list[dict], *, endpoint: str | None, tokenizer: Any,
           batch_size: int, progress: bool) -> tuple[list[dict], dict | None]:
    """Rows for every probe, a local folder (+ adapter) loaded once or a served name on ``endpoint``,
    and what conditioned the empty prefixes (``empty_prefix_context``; ``None`` where unknown: text
    prompts with no empty prefix scored)."""
    from rich.progress import Progress

    from py4.run_progress import report

    if endpoint is None:
        from py4.probes.score import empty_prefix_context, score_pairs
        from py4.threads import use_cpu_threads

        use_cpu_threads()
        loaded, tok = load_model(model, adapter)
        score, close = (lambda pairs: score_pairs(loaded, tok, pairs, batch_size=batch_size)), (lambda: None)
        conditioned: Callable[[], dict | None] = partial(empty_prefix_context, tok)
    else:
        from py4.probes.endpoint import ProbeEndpoint

        client = ProbeEndpoint(endpoint, model, tokenizer=tokenizer, batch_size=batch_size)
        score, close, conditioned = client.score_pairs, client.close, client.empty_prefix_context
    step = max(1, batch_size) * 4  # progress steps; the scorers batch within them
    scores: list[dict] = []
    try:
        with Progress(disable=not progress) as bar:
            task = bar.add_task(f"probes: {model}", total=len(probes))
            for start in range(0, len(probes), step):
                scores += score(probes[start:start + step])
                bar.advance(task, len(probes[start:start + step]))
                report("pairs", len(scores), len(probes))
    finally:
        close()
    return scores, conditioned()


def _read_results(path: str | Path, flag: str) -> dict:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise Py4Error(f"{flag} {path}: expected a probes results.json ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("scores"), list):
        raise Py4Error(f"{flag} {path}: expected a probes results.json with a `scores` list")
    return data


def _covering_scores(results: dict, probes: list[dict], probe_set: str, path, flag: str) -> list[dict]:
    """The rows of ``results`` for the selected probes; it must have scored the same probe set
    (``probe_set``: its jsonl_sha256) and every selected pair must be there. Pair ids survive a
    probe rebuild while texts may not, so covering ids alone could mix different pairs."""
    theirs = (results.get("probes") or {}).get("jsonl_sha256") if isinstance(results.get("probes"), dict) else None
    if theirs != probe_set:
        raise Py4Error(f"{flag} {path}: probes.jsonl_sha256 is {theirs!r}, expected {probe_set!r} (the probe set "
                       f"scored now); evaluate it again on this probe set")
    rows = {r.get("id"): r for r in results["scores"] if isinstance(r, dict)}
    missing = [p["id"] for p in probes if p["id"] not in rows]
    if missing:
        raise Py4Error(f"{path}: scores lack {len(missing)} of the {len(probes)} selected pairs (first "
                       f"{missing[0]}); evaluate it with the same --limit and probe set")
    return [rows[p["id"]] for p in probes]


def markdown(results: dict) -> str:
    """results.md: one row per group (all, held-in, held-out, syntax, semantic, each rule), per-token
    accuracy first, the summed one beside, the base beside."""
    s, base = results["summary"], (results.get("base") or {}).get("summary")
    groups = [("all", s["all"], "all"), ("held-in", s["heldin"], "heldin"), ("held-out", s["heldout"], "heldout"),
              *[(k, v, k) for k, v in s["by_kind"].items()], *[(k, v, k) for k, v in s["per_rule"].items()]]
    lines = [f"# Probe results: {results['model']}" + (f" + {results['adapter']}" if results.get("adapter") else ""),
             "", "Per-token accuracy (the primary metric): share of pairs where the Python-4 member's span has "
             "the higher mean log-probability per token; accuracy: the same with the summed log-probability "
             "(length-biased); margin: mean log-probability difference (summed). 95% intervals: cluster "
             "bootstrap over rules and templates, Wilson's over templates where a rate is 0 or 1 "
             "(docs/probes.md).", ""]
    if base:
        lines += [f"Floor: the base {results['base']['model']} scored on the same pairs.", ""]
    else:
        lines += [NO_BASE, ""]
    lines += ["| group | per-token acc [95% CI] | accuracy [95% CI] | mean margin | base per-token | base acc "
              "| pairs |", "|---|---|---|---|---|---|---|"]
    for name, g, key in groups:
        b = _lookup(base, key) if base else None
        lines.append(f"| {name} | {g['accuracy_per_token']:.3f} [{g['per_token_ci_low']:.3f}, "
                     f"{g['per_token_ci_high']:.3f}] | {g['accuracy']:.3f} [{g['ci_low']:.3f}, {g['ci_high']:.3f}] | "
                     f"{g['mean_margin']:+.3f} | "
                     f"{'' if b is None else format(b['accuracy_per_token'], '.3f')} | "
                     f"{'' if b is None else format(b['accuracy'], '.3f')} | {g['pairs']} |")
    for label, what in (("minus_base", "model minus base"), ("minus_compare", f"model minus {results.get('compare')}")):
        d = results.get(label)
        if d:
            lines += ["", f"**{what}** (paired, cluster bootstrap):", "",
                      "| group | per-token diff [95% CI] | accuracy diff [95% CI] | pairs |", "|---|---|---|---|"]
            for key in ("all", "heldin", "heldout", "syntax", "semantic"):
                if key in d:
                    g = d[key]
                    lines.append(f"| {key} | {g['per_token_difference']:+.3f} [{g['per_token_ci_low']:+.3f}, "
                                 f"{g['per_token_ci_high']:+.3f}] | {g['difference']:+.3f} [{g['ci_low']:+.3f}, "
                                 f"{g['ci_high']:+.3f}] | {g['pairs']} |")
    return "\n".join(lines) + "\n"


def _lookup(summary: dict, key: str) -> dict | None:
    if key in ("all", "heldin", "heldout"):
        return summary.get(key)
    return summary["by_kind"].get(key) or summary["per_rule"].get(key)
