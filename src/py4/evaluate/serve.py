"""One OpenAI-compatible server per evaluated model: its command, and its lifecycle.

    plan = plan_server(ServeConfig(engine="transformers"), weights="runs/x/graft", name="x/graft")
    with serving(plan, log_path="server.log") as server:   # started, ready, and always stopped
        ...  # py4 eval --endpoint {server.base_url} --model {server.request_model}

The campaign runner starts a server for each evaluation node's weights, waits until it
answers (``ready_timeout_s``, else :class:`ServeError` with the end of the server's log),
runs the evaluation against it and stops it — on success, on an error, on Ctrl-C and on
SIGTERM. Engines:

- ``vllm`` (GPU nodes, campaign scale): ``vllm serve`` from vLLM's own environment
  (``executable``: vLLM cannot share the training environment, ../shared/design/STACK.md),
  with the family's server-side tool-call and reasoning parsers (vLLM answers HTTP 400 to a
  request with ``tools`` unless started with ``--enable-auto-tool-choice --tool-call-parser``);
  an adapter is served as a LoRA module on its base (``--enable-lora --max-lora-rank 64
  --lora-modules NAME=PATH``; vLLM's default maximum rank is 16, the campaign's LoRA is 64).
  A multimodal model (Gemma-4) can be served as its language model alone
  (``language_model_only``, per model: vLLM 0.31's ``--language-model-only``, every modality's
  input limit 0, so the vision and audio encoders never run, and vLLM builds no processor); the
  plan records the choice. Without it vLLM builds the model's processor from the folder's
  processor files when it starts and refuses a folder without them (every training output holds
  them: ``py4.train.model_files``). Per model, ``merge_adapter`` serves that model's adapters
  merged into their base instead (a servable copy, :func:`merged_copy`; no ``--enable-lora``), with
  the rest of the command line unchanged: the CPU rehearsal's GLM-4.5, since vLLM with
  ``--enable-lora`` runs an unquantized MoE on its Triton kernels, which have no CPU backend.
- ``transformers`` (CPU, rehearsal scale): ``transformers serve`` of this interpreter, pinned to
  one model folder (``force_model``: requests must name exactly that path). It serves a
  *servable copy* written to a scratch folder before it starts and removed after it stops:
  an adapter merged into its base (``py4.evaluate.local_model``: logits equal to the unmerged
  adapter's; the server cannot load an adapter folder), and a Gemma-4 model as its language
  model alone (``Gemma4ForCausalLM``, ``Gemma4UnifiedForCausalLM`` for the 12B's
  ``gemma4_unified``; the same logits): the server loads a multimodal model's
  processor, and Gemma-4's needs torchvision, which this environment does not have. The copy
  keeps the server's own Gemma-4 response schema (transformers' fallback for ``gemma4``), so
  the server returns its calls as ``tool_calls`` as it would for the whole model. GLM-4.5 has
  no such schema in transformers: its calls come back as text (read by the client).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Iterator, Literal

import pydantic

from py4.config import StrictModel

# Server-side parsers per model family, by vLLM's registered names (docs.vllm.ai, tool_parsers/
# gemma4_tool_parser: "--enable-auto-tool-choice --tool-call-parser gemma4"; GLM-4.5's model card
# and vLLM's GLM-4.5 recipe: "--tool-call-parser glm45 --reasoning-parser glm45").
VLLM_TOOL_CALL_PARSERS = {"gemma4": "gemma4", "glm45": "glm45"}
VLLM_REASONING_PARSERS = {"gemma4": "gemma4", "glm45": "glm45"}
FAMILIES = tuple(VLLM_TOOL_CALL_PARSERS)


class ServeError(RuntimeError):
    """A server could not be started, did not become ready, or its weights are missing."""


class ServeConfig(StrictModel):
    """How an evaluated model is served (campaign: ``evaluation.serve``)."""

    engine: Literal["vllm", "transformers"] = "vllm"
    executable: str | None = None
    """vllm: the ``vllm`` program of vLLM's own environment (``.venv-vllm/bin/vllm``, which ``make
    vllm-env`` builds); never looked up on PATH. transformers: unused (this interpreter's
    ``transformers serve``)."""
    host: str = "127.0.0.1"
    port: int = pydantic.Field(8000, ge=1, le=65535)
    ready_timeout_s: float = pydantic.Field(1800.0, gt=0)
    """Loading 110B parameters over tensor parallelism takes minutes: wait this long at most."""
    stop_timeout_s: float = pydantic.Field(60.0, gt=0)
    """After SIGTERM, how long the server may take to exit before it is killed."""
    family: dict[str, str] = {}
    """Model key -> family (gemma4, glm45): the server's tool-call/reasoning parsers and the
    client's parser for tool calls written as text."""
    tensor_parallel: dict[str, int] = {}
    """Model key -> GPUs of its server (vllm --tensor-parallel-size; default 1)."""
    language_model_only: dict[str, bool] = {}
    """Model key -> serve a multimodal model's language model alone (vllm --language-model-only;
    default false). The transformers engine serves Gemma-4 so in any case (its servable copy)."""
    merge_adapter: dict[str, bool] = {}
    """Model key -> vllm: serve this model's adapters merged into their base (a servable copy
    written before the server starts) rather than as a LoRA module on it (default false). The
    transformers engine serves every adapter merged."""
    max_lora_rank: int = 64
    max_model_len: int | None = None
    device: str = "cpu"
    """transformers: the server's device."""
    extra_args: list[str] = []
    """Appended as they are to the command of every server."""

    @pydantic.model_validator(mode="after")
    def _check(self) -> "ServeConfig":
        problems = [f"family.{k}: unknown family {v!r}; expected one of {', '.join(FAMILIES)}"
                    for k, v in self.family.items() if v not in FAMILIES]
        if self.engine == "vllm" and not self.executable:
            problems.append("executable: engine vllm needs the vllm program of vLLM's own environment "
                            "(e.g. .venv-vllm/bin/vllm); it is not looked up on PATH")
        if problems:
            raise ValueError("; ".join(problems))
        return self


@dataclass
class ServerPlan:
    """A server for one evaluated model: its command and what the client sends."""

    argv: list[str]
    base_url: str
    """http://host:port/v1"""
    request_model: str
    """The name requests carry: the served name, or the LoRA module's name for an adapter."""
    weights: str
    """The evaluated weights: a model folder, or an adapter folder."""
    base: str | None = None
    """For an adapter: the model folder it was trained on (served with it)."""
    servable_copy: str | None = None
    """The scratch folder the served copy is written to before the server starts (and removed from
    after it stops): transformers engine, and vllm with ``merge_adapter``."""
    family: str | None = None
    gpus: int = 1
    language_model_only: bool = False
    """Served as its language model alone (no image/audio/video inputs)."""
    engine: str = "vllm"
    ready_timeout_s: float = 1800.0
    stop_timeout_s: float = 60.0

    @property
    def command(self) -> str:
        import shlex

        return shlex.join(self.argv)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def served_name(node_id: str) -> str:
    """A name vLLM accepts for ``--served-model-name`` and ``--lora-modules NAME=PATH``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", node_id).strip("-")


def plan_server(config: ServeConfig, weights: str, *, name: str, base: str | None = None,
                model_key: str | None = None, scratch: str | None = None) -> ServerPlan:
    """The server for ``weights`` (a model folder; with ``base``, an adapter folder on that model).

    ``name`` becomes the served name; ``scratch`` is where a servable copy is written (the
    transformers engine's, or an adapter merged for vllm; default: ``<weights>.served``). Raises
    ServeError for a model key without a family when the engine is vLLM (its server-side tool
    parser must be named).
    """
    family = config.family.get(model_key) if model_key else None
    gpus = config.tensor_parallel.get(model_key, 1) if model_key else 1
    text_only = config.language_model_only.get(model_key, False) if model_key else False
    merged = bool(base and model_key and config.merge_adapter.get(model_key, False))
    engine = config.engine
    url = f"http://{config.host}:{config.port}/v1"
    common: dict[str, Any] = dict(weights=weights, base=base, family=family, gpus=gpus, engine=engine,
                                  ready_timeout_s=config.ready_timeout_s, stop_timeout_s=config.stop_timeout_s)
    served = scratch or f"{weights.rstrip('/')}.served"
    extra_args = config.extra_args
    if engine == "transformers":
        argv = [sys.executable, "-m", "transformers.cli.transformers", "serve", served, "--host", config.host,
                "--port", str(config.port), "--device", config.device,
                *extra_args]
        # the servable copy of a Gemma-4 model is its language model alone, whatever the config says
        return ServerPlan(argv, url, served, servable_copy=served, language_model_only=text_only or family == "gemma4",
                          **common)
    if family is None:
        raise ServeError(f"evaluation.serve.family: no family for model {model_key!r}; vLLM needs its tool-call "
                         f"parser (one of {', '.join(FAMILIES)}) or it answers HTTP 400 to requests with tools")
    model_name = served_name(name)
    assert config.executable  # ServeConfig's check: a vllm engine names its program
    lora = bool(base) and not merged
    argv = [config.executable, "serve", served if merged else (base or weights),
            "--served-model-name", f"{model_name}.base" if lora else model_name,
            "--host", config.host, "--port", str(config.port), "--tensor-parallel-size", str(gpus),
            "--enable-auto-tool-choice", "--tool-call-parser", VLLM_TOOL_CALL_PARSERS[family],
            "--reasoning-parser", VLLM_REASONING_PARSERS[family],
            # string contents, as transformers and TRL render them in training: vLLM's `auto` picks
            # OpenAI content parts for Gemma-4's template, whose system turn then gains a space
            "--chat-template-content-format", "string"]
    if config.max_model_len:
        argv += ["--max-model-len", str(config.max_model_len)]
    if text_only:
        argv.append("--language-model-only")
    if lora:
        argv += ["--enable-lora", "--max-lora-rank", str(config.max_lora_rank),
                 "--lora-modules", f"{model_name}={weights}"]
    return ServerPlan([*argv, *extra_args], url, model_name, servable_copy=served if merged else None,
                      language_model_only=text_only, **common)


@dataclass
class RunningServer:
    plan: ServerPlan
    process: subprocess.Popen
    log_path: Path
    ready_s: float = 0.0

    @property
    def base_url(self) -> str:
        return self.plan.base_url

    @property
    def request_model(self) -> str:
        return self.plan.request_model


@contextlib.contextmanager
def serving(plan: ServerPlan, log_path: str | Path) -> Iterator[RunningServer]:
    """Start the server, wait until it serves ``plan.request_model``, yield; always stop it.

    The server runs in its own session (process group), so stopping it also stops what it
    spawned (vLLM's engine and tensor-parallel workers). Raises ServeError when the weights are
    missing, the port is taken, the server exits early or is not ready in time (naming the
    log and quoting its end).
    """
    _check_inputs(plan)
    _check_port_free(plan)
    log_path = Path(log_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    process = None
    restore = _sigterm_as_exit()
    try:
        if plan.servable_copy:
            try:
                (transformers_copy if plan.engine == "transformers" else merged_copy)(plan)
            except (OSError, ValueError, RuntimeError) as exc:
                raise ServeError(f"cannot serve {plan.weights}: its servable copy for the {plan.engine} engine "
                                 f"({plan.servable_copy}) could not be made: {exc}") from exc
        with open(log_path, "ab") as log:
            log.write(f"$ {plan.command}\n".encode())
            log.flush()
            process = subprocess.Popen(plan.argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       start_new_session=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
            log.write(f"pid {process.pid}\n".encode())
            log.flush()
        server = RunningServer(plan, process, log_path)
        server.ready_s = _wait_ready(server)
        yield server
    finally:
        if process is not None:
            stop(process, plan.stop_timeout_s)
        if plan.servable_copy:
            shutil.rmtree(plan.servable_copy, ignore_errors=True)
        restore()


def stop(process: subprocess.Popen, timeout_s: float) -> None:
    """SIGTERM to the server's process group, SIGKILL after ``timeout_s``; waits for the exit."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if process.poll() is not None:
            break
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=timeout_s)
    # what the server spawned in its group (vLLM's workers) goes with it
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def _check_inputs(plan: ServerPlan) -> None:
    for label, path in (("weights", plan.weights), ("base model", plan.base)):
        if path and not Path(path).exists():
            raise ServeError(f"cannot serve {plan.weights}: its {label} folder {path} does not exist")
    program = plan.argv[0]
    if not (Path(program).is_file() and os.access(program, os.X_OK)):
        raise ServeError(f"evaluation.serve.executable: {program} is not an executable file (vLLM's own "
                         "environment, e.g. .venv-vllm/bin/vllm: make vllm-env builds it)")


def _check_port_free(plan: ServerPlan) -> None:
    host, port = _host_port(plan.base_url)
    with socket.socket() as s:
        s.settimeout(1.0)
        if s.connect_ex((host, port)) == 0:
            raise ServeError(f"{host}:{port} is already in use (a server left from an earlier run?): stop it, "
                             "or set evaluation.serve.port to a free port")


def _host_port(url: str) -> tuple[str, int]:
    hostport = url.split("://", 1)[1].split("/", 1)[0]
    host, port = hostport.rsplit(":", 1)
    return host, int(port)


def _wait_ready(server: RunningServer) -> float:
    """Seconds until GET /v1/models lists the request model; ServeError if it exits or times out."""
    import httpx

    plan, t0 = server.plan, time.monotonic()
    delay = 0.25
    while True:
        code = server.process.poll()
        if code is not None:
            raise ServeError(f"the server for {plan.weights} exited with status {code} before it was ready "
                             f"(command: {plan.command}); its log {server.log_path} ends:\n{log_tail(server.log_path)}")
        try:
            reply = httpx.get(f"{plan.base_url}/models", timeout=5.0)
            if reply.status_code == 200 and plan.request_model in _model_ids(reply):
                return time.monotonic() - t0
        except (httpx.TransportError, ValueError):
            pass
        if time.monotonic() - t0 > plan.ready_timeout_s:
            raise ServeError(f"the server for {plan.weights} was not ready after {plan.ready_timeout_s:.0f} s "
                             f"(evaluation.serve.ready_timeout_s; command: {plan.command}); its log "
                             f"{server.log_path} ends:\n{log_tail(server.log_path)}")
        time.sleep(delay)
        delay = min(delay * 2, 5.0)


def _model_ids(reply: Any) -> list[str]:
    return [m.get("id") for m in (reply.json().get("data") or []) if isinstance(m, dict)]


def log_tail(path: str | Path, lines: int = 20) -> str:
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.splitlines()[-lines:])


GEMMA4_TEXT_CLASSES = {"gemma4": "Gemma4ForCausalLM", "gemma4_unified": "Gemma4UnifiedForCausalLM"}
"""The language-model-only class transformers serve loads for each multimodal Gemma-4 (31B, 12B)."""


def transformers_copy(plan: ServerPlan) -> Path:
    """transformers engine: what ``transformers serve`` can load, written to ``plan.servable_copy``.

    The weights (an adapter: merged into its base), in float32, with the tokenizer, chat
    template and generation config; a Gemma-4 model as its language model alone, with the
    server's Gemma-4 response schema on the tokenizer.
    """
    import torch
    from transformers import AutoTokenizer
    from transformers.cli.serving.utils import get_response_template

    from py4.evaluate.local_model import load_model

    out = Path(plan.servable_copy)
    shutil.rmtree(out, ignore_errors=True)
    model = load_model(plan.weights)
    source = plan.weights if (Path(plan.weights) / "tokenizer_config.json").is_file() else plan.base
    tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=True)
    if model.config.model_type in GEMMA4_TEXT_CLASSES:
        import transformers

        # transformers serve's Gemma-4 response schema (its fallback is keyed on model_type gemma4; the
        # 12B's gemma4_unified renders the same template)
        tokenizer.response_template = get_response_template(tokenizer, SimpleNamespace(
            config=SimpleNamespace(model_type="gemma4")))
        text_class = getattr(transformers, GEMMA4_TEXT_CLASSES[model.config.model_type])
        text = text_class(model.config.text_config).to(torch.float32)
        text.model.load_state_dict(model.model.language_model.state_dict(), strict=True)
        text.lm_head.load_state_dict(model.lm_head.state_dict())
        text.generation_config = model.generation_config
        model = text
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    for folder in [Path(p) for p in (plan.base, plan.weights) if p]:  # as the weights' folders have them
        for name in ("chat_template.jinja", "generation_config.json"):
            if (folder / name).is_file():
                shutil.copy(folder / name, out / name)
    (out / "py4_served_copy.json").write_text(json.dumps({"weights": plan.weights, "base": plan.base,
                                                          "class": type(model).__name__}))
    return out


def merged_copy(plan: ServerPlan) -> Path:
    """vllm engine, ``merge_adapter``: the adapter merged into its base, written to ``plan.servable_copy``.

    The merge is ``load_model``'s (float32, the same function as the unmerged adapter); the folder
    has what vLLM reads from the base folder when it serves the adapter as a LoRA module: the
    base's tokenizer, chat template, generation config and processor files. vLLM computes in the
    dtype the server's arguments give, as for any model folder (``--dtype auto`` downcasts a float32
    checkpoint to the platform's preferred dtype).
    """
    from transformers import AutoTokenizer

    from py4.evaluate.local_model import load_model
    from py4.train.model_files import PROCESSOR_FILES, copy_files

    if not plan.base:
        raise ValueError("a merged copy is made of an adapter on its base; this plan has no base")
    out, base = Path(plan.servable_copy), Path(plan.base)
    shutil.rmtree(out, ignore_errors=True)
    model = load_model(plan.weights)
    model.save_pretrained(out)
    AutoTokenizer.from_pretrained(base, local_files_only=True).save_pretrained(out)
    copy_files(base, out, [*PROCESSOR_FILES, "generation_config.json"])
    (out / "py4_served_copy.json").write_text(json.dumps({"weights": plan.weights, "base": plan.base,
                                                          "class": type(model).__name__, "merged": True}))
    return out


def _sigterm_as_exit():
    """While a server runs, SIGTERM to this process unwinds (so ``finally`` stops the server)."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def handler(signum, frame):
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, handler)
    return lambda: signal.signal(signal.SIGTERM, previous)
