"""EFT doses: gold rows (Boa-certified Python-4 solutions) + on-policy replay rows.

- **Gold rows**: problems of a training split (``eft_pool`` for held-in doses,
  ``eft_large`` for the large dose), their gold solution certified by Boa (compiles,
  passes every test, no warning) and, for a held-in dose, exercising no held-out rule
  (``compile_py4(gold).rules_exercised``). Rendered without thinking (an empty think
  block), in one of two formats (``gold_format``):

  - ``submit_call`` (default): the episode's own opening — the system prompt and the
    problem, with the ``run_code``/``submit`` tool schemas (``tools=``), exactly as
    ``py4.episodes`` renders evaluation and GRPO prompts — and an assistant turn that is a
    ``submit`` tool call carrying the gold solution. The supervised tokens are then the
    call that evaluation certifies (it certifies only ``submit`` calls: a fenced answer
    counts as ``no_submission``).
  - ``fenced``: user = the problem prompt, assistant = the solution in a ``python`` fence,
    no tools. The reference table records only that gold rows are Boa-certified
    solutions, not their chat format; this plain-answer format is kept for doses meant
    for a policy evaluated on text answers.
- **Replay rows**: instruction prompts (Dolci at campaign scale, the smoke instruction
  set here) answered on-policy by the parent being tuned, sampled at T = 0.7; the
  parent's thinking, when it thinks, is kept (``reasoning_content``) and supervised.
  Only the answer's content and reasoning are kept (replay prompts carry no tools).
  The parent answers either in this process, on the accelerator when there is one (bf16,
  spread over the node's GPUs with ``device_map="auto"``; CPU and float32 otherwise), in
  batches, or through an OpenAI-compatible endpoint serving it (``replay_settings.endpoint``,
  e.g. vLLM on the GPU node, started with the family's ``--reasoning-parser`` so that the
  thinking arrives as ``reasoning_content``). A local answer is cut at the first end-of-turn
  token and read with the tokenizer's response schema or, without one (Gemma-4, GLM-4.5),
  its chat family's parser (:func:`py4.episodes.parsing.parse_with_tokenizer`).
- Sizes: the configs give each dose's rows and its gold / replay split (docs/training.md,
  "Table sizes"); the 256-row dose is drawn from the 1,024-row one (``draw_from``).

The dose folder holds ``data.jsonl``, ``manifest.json`` with the counts, the problem ids,
``held_out_rules_in_targets`` and content hashes, and ``run_manifest.json`` (the code, command line
and library versions that built it).
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pydantic

from py4.config import StrictModel
from py4.data.instructions import InstructionSourceSpec
from py4.episodes.sampling import effective_sampling, generation_config
from py4.fileio import read_json_object
from py4.train import loading
from py4.train.common import TrainingSplit
from py4.train.errors import TrainingError

# Named doses of the table: rows -> (gold, replay).
DOSES: dict[str, tuple[int, int]] = {
    "1024": (922, 102),
    "256": (230, 26),
    "512": (461, 51),
    "2048": (1843, 205),
}


class ReplayEndpoint(StrictModel):
    """An OpenAI-compatible server already serving the parent (``vllm serve <parent>``)."""

    url: str
    """Base URL up to ``/v1``, e.g. ``http://gpu-node:8000/v1``."""
    model: str
    """The name the server serves the parent under (its ``--served-model-name``)."""
    concurrency: int = pydantic.Field(32, ge=1)
    timeout_s: float = 1800.0
    """Per request: a 4,096-token answer from a 110B model takes minutes."""


class ReplaySettings(StrictModel):
    instructions: InstructionSourceSpec
    """Dolci (Hub id + revision; strict alternation filter) or a local folder in its format."""
    prompt_pool: int = 20000
    """Replay prompts are drawn from the first N kept conversations of the source."""
    parent: loading.ModelSource
    temperature: float = 0.7
    """The replay answers' sampling: sent whole to the server or to ``generate``
    (py4.episodes.sampling), so the parent's generation_config.json fills in none of it."""
    top_p: float = 1.0
    top_k: int = pydantic.Field(0, ge=-1)
    """0 (or -1): no top-k filter."""
    min_p: float = pydantic.Field(0.0, ge=0.0, le=1.0)
    repetition_penalty: float = pydantic.Field(1.0, gt=0.0)
    max_new_tokens: int = 4096
    enable_thinking: bool = True
    batch_size: int = pydantic.Field(8, ge=1)
    """Prompts answered together by a local parent."""
    device: Literal["auto", "cuda", "cpu"] = "auto"
    """Where a local parent answers: ``auto`` = the GPUs when CUDA is there, else the CPU."""
    endpoint: ReplayEndpoint | None = None
    """Answer through this server instead of loading the parent here (``parent`` is still
    recorded as the replay parent: the server must serve that model)."""

    @pydantic.field_validator("instructions", mode="before")
    @classmethod
    def _folder_shorthand(cls, value: Any) -> Any:
        """A plain string is a local folder in Dolci's format (strict alternation filter)."""
        return {"path": value} if isinstance(value, str) else value


class EFTDoseConfig(StrictModel):
    out: str
    gold: int
    replay: int
    split: TrainingSplit = "eft_pool"
    bank_version: str = "v1"
    bank_dir: str | None = None
    """The bank's folder (shipped layout; a campaign's pinned bank); None: the shipped bank."""
    held_out_rules: list[str] | None = None
    """Default: py4.lang.rules.DEFAULT_HELD_OUT."""
    allow_held_out_rules: bool = False
    draw_from: str | None = None
    """A bigger dose folder to draw this one from (the 256-row dose from the 1,024)."""
    replay_settings: ReplaySettings | None = None
    gold_format: Literal["submit_call", "fenced"] = "submit_call"
    """submit_call: episode prompt + tools, assistant = a submit call with the gold code; fenced: a plain answer."""
    system_prompt: str | None = None
    """submit_call only: the episode's system prompt (default: py4.episodes' SYSTEM_PROMPT; match the eval's)."""
    gold_max_chars: int | None = pydantic.Field(None, ge=1)
    """Only problems whose gold solution has at most this many characters (None: any). Smoke
    scale: short targets a tiny model memorises in few steps and answers within a small
    evaluation token budget (the train_sanity check); the table's doses set no limit."""
    seed: int = 424242

    @pydantic.model_validator(mode="after")
    def _source(self) -> "EFTDoseConfig":
        if self.draw_from is None and self.replay > 0 and self.replay_settings is None:
            raise ValueError("replay rows need replay_settings (or draw_from an existing dose)")
        return self


def gold_row(problem, gold: str, gold_format: str = "submit_call", system_prompt: str | None = None) -> dict[str, Any]:
    """A gold chat row for ``problem`` (see the module docstring for the two formats).

    Raises ValueError for an unknown ``gold_format``.
    """
    meta = {"source": "gold", "problem_id": problem.id, "chat_template_kwargs": {"enable_thinking": False}}
    if gold_format == "fenced":
        return {"messages": [{"role": "user", "content": problem.prompt},
                             {"role": "assistant", "content": f"```python\n{gold.rstrip()}\n```"}],
                "tools": None, **meta}
    if gold_format != "submit_call":
        raise ValueError(f"unknown gold_format {gold_format!r}; expected 'submit_call' or 'fenced'")
    from py4.episodes.config import EpisodeConfig
    from py4.episodes.environment import TOOL_SCHEMAS, initial_messages

    episode = EpisodeConfig() if system_prompt is None else EpisodeConfig(system_prompt=system_prompt)
    call = {"type": "function", "function": {"name": "submit", "arguments": {"code": gold}}}
    messages = [*initial_messages(problem, episode), {"role": "assistant", "content": "", "tool_calls": [call]}]
    return {"messages": messages, "tools": TOOL_SCHEMAS, **meta}


def gold_code(row: dict[str, Any]) -> str:
    """The gold solution a gold row supervises (its submit call's code, or its fenced answer).

    Raises TrainingError (a ValueError) for a row whose last message carries neither (a dose
    drawn from was edited by hand, or is not a dose).
    """
    last = row["messages"][-1]
    for call in last.get("tool_calls") or []:
        fn = call.get("function", call)
        args = fn.get("arguments")
        if isinstance(args, str):  # JSON text (OpenAI-style rows): not JSON is no submit call
            try:
                args = json.loads(args)
            except json.JSONDecodeError:
                args = None
        if fn.get("name") == "submit" and isinstance(args, dict) and isinstance(args.get("code"), str):
            return args["code"]
    content = last.get("content") or ""
    if content.startswith("```python\n"):
        return content.removeprefix("```python\n").removesuffix("\n```")
    raise TrainingError(f"gold row {row.get('problem_id')!r}: last message is neither a submit call "
                        "nor a fenced answer")


def select_gold(problems: list, count: int, held_out: set[str], allow_held_out: bool,
                rng: random.Random, gold_format: str = "submit_call",
                system_prompt: str | None = None, max_chars: int | None = None) -> tuple[list[dict], dict[str, int]]:
    """Certified gold rows for ``count`` problems (shuffled with ``rng``); counts of what was skipped."""
    from py4.boa.certify import certify_many
    from py4.boa.executor import Executor
    from py4.lang import compile_py4
    from py4.problems.schema import gold_is_idiomatic

    order = list(problems)
    rng.shuffle(order)
    rows, skipped = [], {"held_out_rule": 0, "uncertified": 0, "no_gold": 0, "too_long": 0,
                         "not_idiomatic": 0}
    candidates = []
    for problem in order:
        if not problem.gold:
            skipped["no_gold"] += 1
            continue
        if max_chars is not None and len(problem.gold) > max_chars:
            skipped["too_long"] += 1
            continue
        if not gold_is_idiomatic(problem.gold):  # a migration helper is no Python-4 to learn
            skipped["not_idiomatic"] += 1
            continue
        rules = set(compile_py4(problem.gold).rules_exercised)
        if rules & held_out and not allow_held_out:
            skipped["held_out_rule"] += 1
            continue
        candidates.append(problem)
    with Executor(workers=2) as executor:
        for start in range(0, len(candidates), 64):
            batch = candidates[start:start + 64]
            for problem, cert in zip(batch, certify_many([(p, p.gold) for p in batch], executor=executor), strict=True):
                if cert.certified:
                    rows.append(gold_row(problem, problem.gold, gold_format, system_prompt))
                else:
                    skipped["uncertified"] += 1
                if len(rows) == count:
                    return rows, skipped
    if len(rows) < count:
        raise TrainingError(f"gold: only {len(rows)} certified gold rows available, {count} asked "
                            f"(skipped: {skipped})")
    return rows, skipped


@dataclass(frozen=True)
class GenerationDevice:
    """Where and how a local parent generates replay answers."""

    device: str
    dtype: str
    device_map: str | None
    """``auto``: accelerate spreads the layers over every visible GPU (a 110B parent needs several)."""


def generation_device(requested: str = "auto", cuda_available: bool | None = None) -> GenerationDevice:
    """The accelerator (bf16, spread over the GPUs) when CUDA is there, else the CPU (float32).

    Raises TrainingError (a ValueError) when ``replay_settings.device`` asks for cuda on a machine without it.
    """
    if cuda_available is None:
        import torch

        cuda_available = torch.cuda.is_available()
    if requested == "cuda" and not cuda_available:
        raise TrainingError("replay_settings.device: 'cuda' asked, but CUDA is not available here "
                         "(expected 'auto' or 'cpu', or replay_settings.endpoint to answer through a server)")
    if requested == "cpu" or not cuda_available:
        return GenerationDevice("cpu", "float32", None)
    return GenerationDevice("cuda", "bfloat16", "auto")


def load_generator(source: loading.ModelSource, where: GenerationDevice):
    """The parent, in eval mode, placed for generation (``loading.load_model`` leaves it on the CPU)."""
    import torch
    from transformers import AutoModelForCausalLM

    # Same source rules as loading.load_model: a Hub id must be pinned, a folder is never
    # looked up on the Hub.
    loading._check_source(source, "replay_settings.parent")
    hub = {"local_files_only": True} if loading.is_local(source.path) else {"revision": source.revision}
    dtype = getattr(torch, where.dtype) if source.dtype == "auto" else getattr(torch, source.dtype)
    model = AutoModelForCausalLM.from_pretrained(source.path, dtype=dtype, device_map=where.device_map,
                                                 attn_implementation=source.attn_implementation, **hub)
    return model.eval()


def stop_token_ids(model, tokenizer) -> set[int]:
    """The ids that end a turn: the generation config's EOS list (e.g. Gemma-4's ``<turn|>``), the tokenizer's EOS."""
    eos = model.generation_config.eos_token_id
    ids = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
    if tokenizer.eos_token_id is not None:
        ids.add(tokenizer.eos_token_id)
    return ids


def answer_message(content: str | None, reasoning: str | None) -> dict[str, Any]:
    """A replay row's assistant turn: content, and the parent's thinking when it thought."""
    message: dict[str, Any] = {"role": "assistant", "content": (content or "").strip()}
    if reasoning and reasoning.strip():
        message["reasoning_content"] = reasoning.strip()
    return message


def local_answers(settings: ReplaySettings, prompts: list[str], seed: int) -> list[dict]:
    """Answers from the parent loaded in this process, batched on :func:`generation_device`."""
    import torch
    from tqdm.auto import tqdm

    from py4.episodes.parsing import parse_with_tokenizer
    from py4.run_progress import report
    from py4.threads import use_cpu_threads

    where = generation_device(settings.device)
    if where.device == "cpu":
        use_cpu_threads()
    tokenizer = loading.load_tokenizer(settings.parent, "replay_settings.parent")
    tokenizer.padding_side = "left"
    model = load_generator(settings.parent, where)
    stops = stop_token_ids(model, tokenizer)
    torch.manual_seed(seed)
    answers = []
    with tqdm(total=len(prompts), desc=f"replay answers ({where.device})", unit="row") as bar:
        for start in range(0, len(prompts), settings.batch_size):
            batch = prompts[start:start + settings.batch_size]
            texts = [tokenizer.apply_chat_template([{"role": "user", "content": p}], tokenize=False,
                                                   add_generation_prompt=True, enable_thinking=settings.enable_thinking)
                     for p in batch]
            enc = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False).to(model.device)
            with torch.no_grad():  # every sampling field set: none from the parent's generation_config.json
                out = model.generate(**enc, generation_config=generation_config(
                    settings, settings.max_new_tokens, pad_token_id=tokenizer.pad_token_id))
            for text, ids in zip(texts, out[:, enc["input_ids"].shape[1]:].tolist(), strict=True):
                end = next((i for i, token in enumerate(ids) if token in stops), len(ids))
                # The response schema when the tokenizer has one, else the tokenizer's chat
                # family's reader (Gemma-4: <|channel>thought…<channel|>; GLM-4.5: <think>…</think>).
                turn = parse_with_tokenizer(tokenizer, ids[:end], text)
                answers.append(answer_message(turn.content, turn.reasoning))
            bar.update(len(batch))
            report("replay rows", len(answers), len(prompts))
    return answers


def endpoint_answers(settings: ReplaySettings, prompts: list[str], seed: int) -> list[dict]:
    """Answers from the server in ``settings.endpoint`` (requests run ``concurrency`` at a time)."""
    from tqdm.auto import tqdm

    from py4.episodes.policy import TurnRequest
    from py4.episodes.endpoint import EndpointPolicy

    server = settings.endpoint
    policy = EndpointPolicy(server.url, server.model, temperature=settings.temperature, top_p=settings.top_p,
                            top_k=settings.top_k, min_p=settings.min_p,
                            repetition_penalty=settings.repetition_penalty, seed=seed,
                            concurrency=server.concurrency, timeout_s=server.timeout_s)
    answers = []
    try:
        with tqdm(total=len(prompts), desc=f"replay answers ({server.url})", unit="row") as bar:
            for start in range(0, len(prompts), server.concurrency):
                requests = [TurnRequest(key=f"replay{start + i}", problem=None, sample=0, turn=0,
                                        messages=[{"role": "user", "content": p}], tools=None,
                                        max_new_tokens=settings.max_new_tokens,
                                        enable_thinking=settings.enable_thinking)
                            for i, p in enumerate(prompts[start:start + server.concurrency])]
                for turn in policy.act(requests):
                    answers.append(answer_message(turn.parsed.content, turn.parsed.reasoning))
                bar.update(len(requests))
    finally:
        policy.close()
    return answers


def replay_prompts(settings: ReplaySettings, count: int, rng: random.Random) -> list[str]:
    """``count`` tool-free first user prompts drawn from the first ``prompt_pool`` of the source."""
    from py4.data.instructions import load_instruction_source

    prompts = []
    # Rows with tools are skipped whatever their tools hold, so they are not read (check_tools).
    for conversation in load_instruction_source(settings.instructions, check_tools=False):
        first = next((m for m in conversation.messages if m["role"] != "system"), None)
        if not conversation.has_tools and first is not None and first["role"] == "user":
            prompts.append(first["content"])
        if len(prompts) >= settings.prompt_pool:
            break
    if len(prompts) < count:
        where = settings.instructions.hub_id or settings.instructions.path
        raise TrainingError(f"replay_settings.instructions {where}: {len(prompts)} tool-free prompts "
                            f"(among the first prompt_pool = {settings.prompt_pool}), {count} replay rows asked")
    return rng.sample(prompts, count)


def replay_generation(settings: ReplaySettings) -> dict[str, Any]:
    """What the dose manifest records about how the replay answers were generated, the sampling
    every request or ``generate`` call carried included."""
    seed = "drawn from the dose's seed (random.Random(seed)); per request: + crc32(row key)"
    if settings.endpoint is not None:
        return {"route": "endpoint", "url": settings.endpoint.url, "model": settings.endpoint.model,
                "sampling": effective_sampling(settings, max_tokens=settings.max_new_tokens, seed=seed,
                                               engine="OpenAI-compatible chat completions")}
    where = generation_device(settings.device)
    return {"route": "local", "device": where.device, "dtype": where.dtype, "batch_size": settings.batch_size,
            "sampling": effective_sampling(settings, max_tokens=settings.max_new_tokens,
                                           seed="drawn from the dose's seed (torch.manual_seed once)",
                                           engine="transformers generate")}


def replay_rows(settings: ReplaySettings, count: int, rng: random.Random) -> list[dict[str, Any]]:
    """``count`` instruction prompts answered by the parent at the configured temperature."""
    chosen = replay_prompts(settings, count, rng)
    seed = rng.randrange(2**31)
    answers = (endpoint_answers(settings, chosen, seed) if settings.endpoint is not None
               else local_answers(settings, chosen, seed))
    return [{"messages": [{"role": "user", "content": prompt}, answer], "tools": None, "source": "replay",
             "chat_template_kwargs": {"enable_thinking": settings.enable_thinking}}
            for prompt, answer in zip(chosen, answers, strict=True)]


def draw_rows(source_dir: str | Path, gold: int, replay: int, rng: random.Random) -> tuple[list[dict], dict]:
    """Draw ``gold`` + ``replay`` rows from an existing dose (the 256 from the 1,024).

    The gold rows drawn depend only on the seed and the problem ids (not on the source's
    row order); raises TrainingError (a ValueError) when the source holds too few rows.
    """
    from py4.train.sft import read_chat_rows

    rows = read_chat_rows(source_dir)
    by_source = {s: [r for r in rows if r.get("source") == s] for s in ("gold", "replay")}
    if len(by_source["gold"]) < gold or len(by_source["replay"]) < replay:
        raise TrainingError(f"draw_from {source_dir}: has {len(by_source['gold'])} gold + "
                            f"{len(by_source['replay'])} replay rows; {gold} + {replay} asked")
    source_manifest = read_json_object(Path(source_dir) / "manifest.json",
                                       missing="no dose manifest (draw_from expects a py4 train eft_dose folder)")
    # Gold rows are ranked by a seeded hash of their problem id, not sampled by position: the
    # same problems are drawn from every arm's bigger dose even when those doses differ by a
    # few problems (their replay rows always differ), so the arms' small doses line up.
    salt = rng.randrange(2**32)
    ranked = sorted(by_source["gold"], key=lambda r: hashlib.sha256(f"{salt}/{r.get('problem_id')}".encode()).digest())
    return ranked[:gold] + rng.sample(by_source["replay"], replay), source_manifest


def held_out_rules_in(rows: list[dict], held_out: set[str]) -> int:
    """Rows whose supervised target (the gold code) exercises a held-out rule."""
    from py4.lang import compile_py4

    count = 0
    for row in rows:
        if row.get("source") != "gold":
            continue
        if set(compile_py4(gold_code(row)).rules_exercised) & held_out:
            count += 1
    return count


def build_dose(config: EFTDoseConfig) -> Path:
    """Build and write a dose; returns its folder.

    The folder is a run folder (``run_manifest.json``: the code, command line and library versions
    that built it, the status and timings), beside the dose's own ``manifest.json``.

    Raises TrainingError (a ValueError) when too few rows qualify, or when ``draw_from`` holds gold rows of
    another ``gold_format``.
    """
    from py4.runs import RunRecorder

    out = Path(config.out)
    with RunRecorder(out, None, kind="eft_dose") as recorder:
        manifest = dose_rows(config, out)
        recorder.add_output("data", out / "data.jsonl", rows=manifest["rows"])
        recorder.add_output("manifest", out / "manifest.json")
        recorder.set(per_source=manifest["per_source"])
    return out


def dose_rows(config: EFTDoseConfig, out: Path) -> dict[str, Any]:
    """Draw the dose's rows, write ``data.jsonl`` and ``manifest.json`` into ``out``; the manifest."""
    from py4.lang.rules import DEFAULT_HELD_OUT
    from py4.problems.bank import bank_provenance, load_bank
    from py4.runs import atomic_write_json, atomic_write_text

    rng = random.Random(config.seed)
    held_out = set(config.held_out_rules if config.held_out_rules is not None else DEFAULT_HELD_OUT)
    manifest: dict[str, Any] = {"kind": "eft_dose", "config": config.model_dump(mode="json")}
    if config.draw_from:
        rows, source_manifest = draw_rows(config.draw_from, config.gold, config.replay, rng)
        # Doses written before gold_format existed hold fenced answers.
        source_format = source_manifest.get("config", {}).get("gold_format", "fenced")
        if config.gold and source_format != config.gold_format:
            raise TrainingError(f"draw_from {config.draw_from}: its gold rows are {source_format!r}, "
                                f"this dose asks for gold_format {config.gold_format!r}")
        manifest["drawn_from"] = {"path": config.draw_from, "sha256": source_manifest.get("sha256")}
    else:
        problems = [p for p in load_bank(config.bank_version, config.bank_dir) if p.split == config.split]
        manifest["bank"] = bank_provenance(config.bank_version, config.bank_dir)
        rows, skipped = select_gold(problems, config.gold, held_out, config.allow_held_out_rules, rng,
                                    config.gold_format, config.system_prompt, config.gold_max_chars)
        manifest["gold_skipped"] = skipped
        if config.replay:
            rows += replay_rows(config.replay_settings, config.replay, rng)
            manifest["replay_parent"] = loading.model_provenance(config.replay_settings.parent)
            manifest["replay_generation"] = replay_generation(config.replay_settings)
    rng.shuffle(rows)
    # Keys keep their order: the chat template renders tool schemas as written, and the
    # episode prompt lists "name" before "description" (sorted keys would change the prompt).
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    atomic_write_text(out / "data.jsonl", text)
    manifest.update({
        "rows": len(rows),
        "per_source": {s: sum(1 for r in rows if r["source"] == s) for s in ("gold", "replay")},
        "held_out_rules": sorted(held_out),
        "held_out_rules_in_targets": held_out_rules_in(rows, held_out),
        "problem_ids": sorted(r["problem_id"] for r in rows if r.get("problem_id")),
        "sha256": hashlib.sha256(text.encode()).hexdigest(),
    })
    atomic_write_json(out / "manifest.json", manifest)
    return manifest


def run(config: EFTDoseConfig) -> Path:
    """``py4 train eft_dose --config FILE``: build the dose (see :func:`build_dose`)."""
    return build_dose(config)
