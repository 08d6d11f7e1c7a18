"""The vLLM pre-flight of a GRPO run: what makes a vLLM launch fail, found before any weights load.

Two moments. When the config loads (any machine, :func:`vllm_layout_problems`, called by
``GRPOStageConfig``'s validator): colocate mode with a tensor parallel size that does not divide
the trainer's processes (TRL would fail after the model loaded), server mode without an
``http://HOST:PORT`` base URL (TRL would quietly try 0.0.0.0:8000), server GPUs that are not one
distinct GPU per tensor-parallel rank. When ``py4 train grpo`` starts, before the tokenizer or
any weights load (:func:`check_vllm_launch`, a :class:`VllmLaunchError` listing every problem):
vLLM importable in the trainer's process within the range TRL supports; in server mode the
trainer's ``CUDA_VISIBLE_DEVICES`` set and disjoint from ``grpo.vllm_server_gpus``, and a server
answering as ``trl vllm-serve`` does (development endpoints, a weight-transfer engine, processed
logprobs, a context holding prompt + token budget, world size = tensor parallel size), all
read with GETs: no weights, no NCCL. The launch recipe is docs/training.md, "GRPO with vLLM".

TRL meets these problems only once the policy has loaded, or never (a server without a
weight-transfer engine simply never receives the weights); on the 31B model that is minutes of
loading, with a 4-GPU server up, before the first error.
"""

from __future__ import annotations

import os
import sys
import time
import urllib.parse
from typing import TYPE_CHECKING, Any

from py4.train import common

if TYPE_CHECKING:
    from py4.train.grpo_settings import GRPOSettings


def vllm_layout_problems(g: GRPOSettings, gpus: int) -> list[str]:
    """What makes this vLLM set-up impossible on any machine (checked when the config loads)."""
    if not g.use_vllm:
        return []
    problems = []
    tp = g.vllm_tensor_parallel_size
    if g.vllm_mode == "server":
        problems += [f"grpo.{name} is for vllm_mode: colocate (a server takes its engine arguments on its own "
                     f"command line: docs/training.md, GRPO with vLLM)"
                     for name in ("vllm_language_model_only", "vllm_kv_cache_memory_bytes", "vllm_dtype")
                     if getattr(g, name) not in (None, False)]
    if g.vllm_mode == "colocate":
        if gpus % tp:
            problems.append(
                f"grpo.vllm_tensor_parallel_size = {tp} with grpo.vllm_mode = colocate needs a world size divisible "
                f"by {tp} (TRL splits the trainer's processes into tensor-parallel groups), but optimisation.gpus = "
                f"{gpus}: use vllm_mode: server with a vLLM server on other GPUs (docs/training.md, GRPO with vLLM), "
                f"or a tensor parallel size dividing {gpus}")
        if g.vllm_server_gpus is not None:
            problems.append("grpo.vllm_server_gpus is for vllm_mode: server (colocated vLLM uses the trainer's GPUs)")
        return problems
    url = g.vllm_server_base_url
    if not url:
        problems.append("grpo.vllm_mode = server needs grpo.vllm_server_base_url (http://HOST:PORT of the "
                        "`trl vllm-serve` server); TRL would otherwise try 0.0.0.0:8000")
    else:
        parsed = urllib.parse.urlsplit(url)
        try:
            port = parsed.port
        except ValueError:
            port = None
        if parsed.scheme not in ("http", "https") or not parsed.hostname or port is None:
            problems.append(f"grpo.vllm_server_base_url = {url!r}: expected http://HOST:PORT (scheme, host and port)")
    gpu_list = g.vllm_server_gpus
    if gpu_list is not None:
        if len(set(gpu_list)) != len(gpu_list) or any(i < 0 for i in gpu_list):
            problems.append(f"grpo.vllm_server_gpus = {gpu_list}: expected distinct GPU indices >= 0")
        elif len(gpu_list) != tp:
            problems.append(f"grpo.vllm_server_gpus = {gpu_list} has {len(gpu_list)} GPU(s), but "
                            f"grpo.vllm_tensor_parallel_size = {tp}: the server needs one GPU per tensor-parallel rank")
    return problems


# The vLLM versions TRL 1.16 accepts (trl/import_utils.py, is_vllm_available: 0.22.0 <= base version
# <= 0.31.0; tests/train/test_grpo_config_check.py reads them back from the installed TRL).
TRL_VLLM_RANGE = ("0.22.0", "0.31.0")
RECIPE = "docs/training.md, section 'GRPO with vLLM'"


class VllmLaunchError(common.TrainingGuardError):
    """A vLLM GRPO launch that cannot work (found before any weights load)."""


def installed_vllm_version() -> str | None:
    """vLLM's version in this process's environment, or None when it is not importable here."""
    import importlib.metadata
    import importlib.util

    if importlib.util.find_spec("vllm") is None:
        return None
    try:
        return importlib.metadata.version("vllm")
    except importlib.metadata.PackageNotFoundError:
        return None


def check_vllm_launch(g: GRPOSettings, token_budget: int, environ: dict | None = None) -> dict | None:
    """The pre-flight of a vLLM run of settings ``g`` whose episodes take up to ``token_budget``
    tokens (``episode.token_budget``), before any weights load; None when ``use_vllm`` is off.

    Checks what the config alone cannot: vLLM importable in the trainer's process (TRL's
    server client imports it too) in the range TRL supports; in server mode, that the
    trainer's CUDA_VISIBLE_DEVICES is set and shares no GPU with ``vllm_server_gpus``, and
    that a server started by ``trl vllm-serve`` answers at ``vllm_server_base_url`` (health,
    model, development endpoints with the weight-transfer engine, processed logprobs, context
    length, world size = tensor parallel size). Returns what the server reported; raises
    VllmLaunchError listing every problem (one problem: one line, as the command line shows it).
    """
    if not g.use_vllm:
        return None
    from packaging.version import Version

    environ = os.environ if environ is None else environ
    problems, info = [], {}
    version = installed_vllm_version()
    low, high = TRL_VLLM_RANGE
    if version is None:
        problems.append(f"grpo.use_vllm = true, but vLLM is not importable in this process ({sys.executable}); "
                        f"TRL's vLLM client runs in the trainer's process and needs vLLM {low}-{high}: run the trainer "
                        f"in the vLLM environment ({RECIPE}), or set grpo.use_vllm=false")
    elif not Version(low) <= Version(Version(version).base_version) <= Version(high):
        problems.append(f"grpo.use_vllm = true, but this environment has vLLM {version}; TRL 1.16 supports vLLM "
                        f"{low}-{high} only ({RECIPE} pins 0.31.0)")
    info["vllm_version"] = version
    if g.vllm_mode == "server":
        problems += _gpu_overlap_problems(g, environ)
        server, server_problems = probe_vllm_server(g, token_budget)
        info.update(server)
        problems += server_problems
    if len(problems) == 1:
        raise VllmLaunchError(f"vLLM GRPO launch check failed: {problems[0]}")
    if problems:
        raise VllmLaunchError("vLLM GRPO launch check failed:\n" + "\n".join(f"  - {p}" for p in problems))
    return info


def _gpu_overlap_problems(g: GRPOSettings, environ) -> list[str]:
    if g.vllm_server_gpus is None:
        return []
    server = sorted(g.vllm_server_gpus)
    visible = (environ.get("CUDA_VISIBLE_DEVICES") or "").strip()
    if not visible:
        return [f"CUDA_VISIBLE_DEVICES is not set: the trainer would see every GPU of the node, the vLLM server's "
                f"{server} (grpo.vllm_server_gpus) included; start it with CUDA_VISIBLE_DEVICES set to other GPUs "
                f"({RECIPE})"]
    try:
        mine = [int(part) for part in visible.split(",")]
    except ValueError:
        return [f"CUDA_VISIBLE_DEVICES = {visible!r}: expected GPU indices (0,1,...) to compare with "
                f"grpo.vllm_server_gpus = {server}"]
    shared = sorted(set(mine) & set(server))
    if shared:
        return [f"CUDA_VISIBLE_DEVICES = {visible!r} shares GPU(s) {shared} with the vLLM server "
                f"(grpo.vllm_server_gpus = {server}): give the trainer other GPUs"]
    return []


def probe_vllm_server(g: GRPOSettings, token_budget: int) -> tuple[dict, list[str]]:
    """Ask the server what TRL's client will rely on (all GETs, no weights, no NCCL).

    Each GET may take ``grpo.vllm_server_check_timeout_s`` (a loaded machine slows every answer of
    a CPU server; one deadline for all of them would leave the last GETs little), and ``/health``
    is asked again until then while nothing answers (a server about to start). The context it
    needs: ``max_prompt_length`` + ``token_budget``.
    """
    url = g.vllm_server_base_url.rstrip("/")
    wait = g.vllm_server_check_timeout_s
    waited = f"waited {wait:g} s (grpo.vllm_server_check_timeout_s)"
    status, _ = _get_json(f"{url}/health", wait, retry=True)
    if status is None:
        return {}, [f"no vLLM server answers at {url}/health (grpo.vllm_server_base_url); {waited}: start "
                    f"`trl vllm-serve` first and wait until it is ready ({RECIPE})"]
    if status != 200:
        return {}, [f"{url}/health answered HTTP {status}, not a ready vLLM server's 200 (grpo.vllm_server_base_url): "
                    f"start `trl vllm-serve` there and wait until it is ready ({RECIPE})"]
    info, problems = {}, []
    status, models = _get_json(f"{url}/v1/models", wait)
    if status == 200 and isinstance(models, dict) and models.get("data"):
        info["served_model"] = models["data"][0].get("id")
    status, server_info = _get_json(f"{url}/server_info?config_format=json", wait)
    start = "start the server with `trl vllm-serve` (not plain `vllm serve`)"
    if status == 404:
        problems.append(f"{url} has no development endpoints (/server_info), which TRL's weight sync uses: {start}, "
                        "which sets VLLM_SERVER_DEV_MODE=1")
    elif status is None:
        problems.append(f"{url}/server_info gave no answer; {waited}: cannot tell whether it can take weight "
                        f"updates (on a loaded machine, wait longer)")
    elif status != 200 or not isinstance(server_info, dict) or not isinstance(server_info.get("vllm_config"), dict):
        problems.append(f"{url}/server_info answered HTTP {status} without a vLLM config: cannot tell whether it can "
                        f"take weight updates; {start}")
    else:
        vllm_config = server_info["vllm_config"]
        if vllm_config.get("weight_transfer_config") is None:
            problems.append(f"{url} has no weight-transfer engine, so the policy's weights would never reach it: "
                            f"{start}, which adds --weight-transfer-config '{{\"backend\": \"nccl\"}}'")
        mode = _find_key(vllm_config, "logprobs_mode")
        if mode is not None and mode != "processed_logprobs":
            problems.append(f"{url} returns {mode} logprobs; TRL's importance-sampling correction needs "
                            f"--logprobs-mode processed_logprobs (what `trl vllm-serve` sets)")
        context = _find_key(vllm_config, "max_model_len")
        needed = g.max_prompt_length + token_budget
        if isinstance(context, int) and context < needed:
            problems.append(f"{url} serves a context of {context} tokens, but grpo.max_prompt_length + "
                            f"episode.token_budget = {needed}: start it with --max-model-len >= {needed}")
        info["max_model_len"] = context
    status, world = _get_json(f"{url}/get_world_size", wait)
    if status == 200 and isinstance(world, dict) and isinstance(world.get("world_size"), int):
        info["world_size"] = world["world_size"]
        if world["world_size"] != g.vllm_tensor_parallel_size:
            problems.append(f"{url} runs {world['world_size']} worker(s), but grpo.vllm_tensor_parallel_size = "
                            f"{g.vllm_tensor_parallel_size}: start it with --tensor-parallel-size "
                            f"{g.vllm_tensor_parallel_size} (the config records the server's layout)")
    elif not problems:  # (a server without development endpoints was reported above)
        answer = f"gave no answer; {waited}" if status is None else f"answered HTTP {status}"
        problems.append(f"{url}/get_world_size {answer}: TRL's weight sync needs it; {start}")
    return info, problems


def _get_json(url: str, timeout_s: float, retry: bool = False) -> tuple[int | None, Any]:
    """GET ``url`` within ``timeout_s`` → (HTTP status or None when there was no answer, decoded
    JSON or None); ``retry``: ask again while nothing answers, until ``timeout_s`` has passed."""
    import json
    import urllib.error
    import urllib.request

    deadline = time.monotonic() + timeout_s
    while True:
        left = max(0.1, deadline - time.monotonic())
        try:
            with urllib.request.urlopen(url, timeout=left) as response:
                body = response.read()
                try:
                    return response.status, json.loads(body) if body else None
                except ValueError:
                    return response.status, None
        except urllib.error.HTTPError as exc:
            return exc.code, None
        except (urllib.error.URLError, OSError):
            if not retry or time.monotonic() >= deadline:
                return None, None
            time.sleep(min(0.5, max(0.0, deadline - time.monotonic())))


def _find_key(tree: Any, key: str) -> Any:
    """The first value of ``key`` anywhere in a JSON tree (vLLM nests its config by section)."""
    if isinstance(tree, dict):
        if key in tree:
            return tree[key]
        values = tree.values()
    elif isinstance(tree, list):
        values = tree
    else:
        return None
    for value in values:
        found = _find_key(value, key)
        if found is not None:
            return found
    return None
