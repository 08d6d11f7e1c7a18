"""`py4 campaign preflight SPEC`: the pinned models' own metadata, checked before the campaign is booked.

Two steps (docs/campaign.md, "Preflight"):

1. :func:`fetch_metadata` (a login node with Hub access): for every pinned model of the spec
   (``base``, ``it``, ``it_base``), the metadata files the campaign reads — config, generation
   config, tokenizer files, chat template, safetensors index — go into the Hugging Face cache with
   ``huggingface_hub.hf_hub_download`` (the pinned revision; never a weight file), and the
   safetensors headers, read by HTTP range with ``get_safetensors_metadata``, are stored beside
   them (:data:`py4.train.model_shape.HEADERS_FILE`).
2. :func:`run_checks` (offline, on what step 1 put in the cache): per model, the checks the
   campaign depends on, against the real files —

   - the -it tokenizer and its chat template load (``local_files_only``);
   - GRPO with tools (the spec's ``grpo.model``): what TRL 1.16's ``GRPOTrainer.__init__`` does with
     a template — a response template or schema present, else ``add_response_schema`` must
     recognise the template by its exact text; a template that is not prefix-preserving must have
     a training template (``get_training_chat_template``);
   - py4's tool-call parser of the model's family reads back a ``run_code`` call and a ``submit``
     call from the real template's own rendering of them;
   - the graft: base and -it agree on vocabulary (config and tokenizer) and, where both headers
     are there, on tensor names and shapes;
   - the EFT LoRA: the modules PEFT adapts (its own rule over the names transformers builds from
     the real config) number what the campaign recorded (328 / 410 / 184), and each is a tensor of
     the checkpoint's safetensors index;
   - the memory plan from the real config (:mod:`py4.campaign.memory_plan`).

One report: every check with its detail, and a go/no-go per training run (a run is go when its
model's checks pass, the GRPO check too for GRPO runs, and its plan fits).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

from py4.errors import FileFormatError
from py4.fileio import WEIGHT_INDEX_NAME, read_weight_map

__all__ = ["METADATA_FILES", "Check", "PreflightReport", "fetch_metadata", "run_checks", "pinned_models"]

METADATA_FILES = ("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
                  "special_tokens_map.json", "chat_template.jinja", "chat_template.json", "processor_config.json",
                  "preprocessor_config.json", WEIGHT_INDEX_NAME)
"""The files preflight fetches when the repository has them: kilobytes to megabytes, never weights."""


@dataclass
class Check:
    model: str
    name: str
    ok: bool
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "check": self.name, "ok": self.ok, "detail": self.detail}


@dataclass
class PreflightReport:
    checks: list[Check] = field(default_factory=list)
    runs: list[dict[str, Any]] = field(default_factory=list)

    @property
    def go(self) -> bool:
        return all(r["go"] for r in self.runs) and all(c.ok for c in self.checks)

    def to_json(self) -> dict[str, Any]:
        return {"go": self.go, "checks": [c.to_json() for c in self.checks], "runs": self.runs}

    def lines(self) -> list[str]:
        out = [f"{'ok ' if c.ok else 'NO '} {c.model}: {c.name}: {c.detail}" for c in self.checks]
        out += [f"{'go   ' if r['go'] else 'NO-GO'} {r['run']}" + ("" if r["go"] else f"  ({'; '.join(r['why'])})")
                for r in self.runs]
        return out


def pinned_models(spec) -> dict[str, list[tuple[str, str | None]]]:
    """Per model key, its pinned Hub references (base, it, it_base), without repeats."""
    out: dict[str, list[tuple[str, str | None]]] = {}
    for key, model in spec.models.items():
        refs: list[tuple[str, str | None]] = []
        for pin in (model.base, model.it, model.it_base):
            if (pin.hub_id, pin.revision) not in refs:
                refs.append((pin.hub_id, pin.revision))
        out[key] = refs
    return out


def fetch_metadata(spec, log: Callable[[str], None] = print) -> list[str]:
    """Put every pinned model's metadata (never weights) into the HF cache; returns the files fetched."""
    from huggingface_hub import HfApi, get_safetensors_metadata, hf_hub_download

    from py4.train.model_shape import HEADERS_FILE

    api, fetched = HfApi(), []
    for refs in pinned_models(spec).values():
        for repo, revision in refs:
            present = set(api.list_repo_files(repo, revision=revision))
            config_path = None
            for name in METADATA_FILES:
                if name in present:
                    path = hf_hub_download(repo, name, revision=revision)
                    fetched.append(f"{repo}@{revision}/{name}")
                    config_path = config_path or path
            if config_path is None:
                raise FileNotFoundError(f"{repo}@{revision}: none of {', '.join(METADATA_FILES)}")
            metadata = get_safetensors_metadata(repo, revision=revision)  # headers by HTTP range
            headers = {name: {t: {"dtype": info.dtype, "shape": list(info.shape)} for t, info in file.tensors.items()}
                       for name, file in metadata.files_metadata.items()}
            from pathlib import Path

            (Path(config_path).parent / HEADERS_FILE).write_text(json.dumps(headers), encoding="utf-8")
            fetched.append(f"{repo}@{revision}/{HEADERS_FILE}")
            log(f"fetched {repo}@{revision}: metadata and {len(headers)} safetensors header(s)")
    return fetched


def _tokenizer(repo: str, revision: str | None):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(repo, revision=revision, local_files_only=True)


def _grpo_template_check(tokenizer) -> tuple[bool, str]:
    """What TRL's GRPOTrainer does with the template when the run has tools."""
    from trl.chat_template_utils import (add_response_schema, get_training_chat_template,
                                         is_chat_template_prefix_preserving)

    steps = []
    if getattr(tokenizer, "response_template", None) is None and getattr(tokenizer, "response_schema", None) is None:
        try:
            add_response_schema(tokenizer)
        except ValueError as exc:
            return False, f"TRL add_response_schema: {str(exc).splitlines()[0]}"
        steps.append("TRL recognises the template (add_response_schema)")
    else:
        steps.append("the tokenizer ships its own response template")
    if not is_chat_template_prefix_preserving(tokenizer):
        try:
            get_training_chat_template(tokenizer)
        except (ValueError, TypeError) as exc:
            return False, f"not prefix-preserving and TRL has no training template: {exc}"
        steps.append("not prefix-preserving: TRL swaps in its training template")
    else:
        steps.append("prefix-preserving")
    return True, "; ".join(steps)


def _parser_check(tokenizer, family: str) -> tuple[bool, str]:
    """The real template renders a run_code and a submit call; py4's parser reads both back."""
    from py4.episodes.environment import TOOL_SCHEMAS
    from py4.episodes.parsing import parse_assistant_text

    problems = []
    for name, code in (("run_code", 'print("x")'), ("submit", "def f():\n    return 1")):
        messages = [{"role": "user", "content": "Solve it."}]
        call = {"role": "assistant", "content": "",
                "tool_calls": [{"type": "function", "function": {"name": name, "arguments": {"code": code}}}]}
        prefix = tokenizer.apply_chat_template(messages, tools=TOOL_SCHEMAS, tokenize=False, add_generation_prompt=True)
        full = tokenizer.apply_chat_template([*messages, call], tools=TOOL_SCHEMAS, tokenize=False)
        if not full.startswith(prefix):
            problems.append(f"{name}: the rendered turn does not extend the prompt")
            continue
        turn = parse_assistant_text(full[len(prefix):], family)
        got = [(c.name, c.arguments) for c in turn.valid_calls]
        if got != [(name, {"code": code})]:
            problems.append(f"{name}: parsed {got or [c.error for c in turn.calls] or 'no call'}")
    return (not problems), "; ".join(problems) or f"{family} parser reads run_code and submit as rendered"


def _graft_check(key: str, spec) -> tuple[bool, str]:
    from py4.train.model_shape import model_config, safetensors_headers

    model = spec.models[key]
    base, it = model.base, model.it
    configs = [model_config(p.hub_id, p.revision) for p in (base, it)]
    if any(c is None or not c[1].startswith("HF cache") for c in configs):
        return False, "base or -it config.json not in the HF cache (run preflight with Hub access first)"
    vocab = [(c[0].get("text_config") or c[0]).get("vocab_size") for c in configs]  # type: ignore[index]
    problems = [] if vocab[0] == vocab[1] else [f"config vocab_size base {vocab[0]} vs -it {vocab[1]}"]
    sizes = [len(_tokenizer(p.hub_id, p.revision)) for p in (base, it)]
    if sizes[0] != sizes[1]:
        problems.append(f"tokenizer sizes base {sizes[0]} vs -it {sizes[1]}")
    headers = [safetensors_headers(p.hub_id, p.revision) for p in (base, it)]
    detail = f"vocab {vocab[1]}, tokenizers {sizes[1]}"
    if all(h is not None for h in headers):
        shapes = [{t: tuple(info["shape"]) for f in h.values() for t, info in f.items()} for h in headers]  # type: ignore[union-attr]
        only = set(shapes[0]) ^ set(shapes[1])
        differ = [t for t in set(shapes[0]) & set(shapes[1]) if shapes[0][t] != shapes[1][t]]
        if only or differ:
            problems.append(f"{len(only)} tensor name(s) in one checkpoint only (e.g. {sorted(only)[:2]}), "
                            f"{len(differ)} shape(s) differ (e.g. {sorted(differ)[:2]})")
        detail += f", {len(shapes[1])} tensors agree in name and shape"
    else:
        detail += " (safetensors headers not in the cache: names and shapes not compared)"
    return (not problems), "; ".join(problems) or detail


def _lora_check(key: str, spec) -> tuple[bool, str]:
    from peft.tuners.tuners_utils import check_target_module_exists

    from py4.stages import StageCall, load
    from py4.train.model_shape import cached_file, model_config, model_shape

    model = spec.models[key]
    eft = load(StageCall(stage="eft", config=model.files.get("eft")))
    found = model_config(model.it.hub_id, model.it.revision)
    if found is None or not found[1].startswith("HF cache"):
        return False, "-it config.json not in the HF cache"
    shape = model_shape(found[0])
    peft_config = eft.lora.peft_config()
    adapted = [name for name in shape.linear_shapes if check_target_module_exists(peft_config, name)]
    expected = model.recorded["adapted_modules"].value if "adapted_modules" in model.recorded else None
    problems = [] if expected is None or len(adapted) == expected else [
        f"PEFT adapts {len(adapted)} modules of the real config, the campaign recorded {expected}"]
    index = cached_file(model.it.hub_id, model.it.revision, WEIGHT_INDEX_NAME)
    if index is not None:
        try:
            stored = set(read_weight_map(index))
        except FileFormatError as exc:
            return False, str(exc)
        missing = [n for n in adapted if f"{n}.weight" not in stored]
        if missing:
            problems.append(f"{len(missing)} adapted module(s) not in the checkpoint's index (e.g. {missing[:2]})")
    return (not problems), "; ".join(problems) or f"{len(adapted)} adapted modules (recorded {expected})"


def run_checks(spec, nodes) -> PreflightReport:
    """Every check against the metadata in the HF cache (no network) and the go/no-go per training run."""
    from py4.campaign.memory_plan import plan_runs, read_measured

    report = PreflightReport()
    families = spec.evaluation.serve.family if spec.evaluation.serve else {}
    grpo_model = spec.grpo.model if spec.grpo else None
    for key, model in spec.models.items():
        def add(name: str, outcome: tuple[bool, str], key=key) -> None:
            report.checks.append(Check(key, name, *outcome))

        try:
            tokenizer = _tokenizer(model.it.hub_id, model.it.revision)
        except (OSError, ValueError) as exc:
            add("-it tokenizer", (False, f"{model.it.hub_id}@{model.it.revision}: {str(exc).splitlines()[0]}"))
            continue
        add("-it tokenizer", (tokenizer.chat_template is not None,
                              "chat template present" if tokenizer.chat_template else "no chat template"))
        if key == grpo_model:
            add("GRPO template (TRL)", _grpo_template_check(tokenizer))
        if key in families:
            add("tool-call parser", _parser_check(tokenizer, families[key]))
        add("graft base vs -it", _graft_check(key, spec))
        add("EFT LoRA targets", _lora_check(key, spec))
    failed = {c.model for c in report.checks if not c.ok and c.name != "GRPO template (TRL)"}
    grpo_failed = any(not c.ok for c in report.checks if c.name == "GRPO template (TRL)")
    for plan in plan_runs(spec, nodes, read_measured()):
        why = []
        if plan.model in failed:
            why.append(f"{plan.model}'s checks failed")
        if plan.stage == "grpo" and grpo_failed:
            why.append("TRL's GRPO template check failed")
        if not plan.fits:
            why.append(f"{plan.plan.memory.total / 2**30:.1f} GiB per GPU > {plan.gpu_bytes / 2**30:.1f} GiB")
        report.runs.append({"run": plan.node_id, "go": not why, "why": why,
                            "memory_gib_per_gpu": round(plan.plan.memory.total / 2**30, 1),
                            "config_source": plan.parameters_source})
    return report
