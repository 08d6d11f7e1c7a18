"""EFT: the dose builder (certified gold + on-policy replay) and the LoRA stage on the tiny -it model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from py4.train import common

from train_helpers import FirstBatch, ParamSnapshot

pytestmark = pytest.mark.smoke
TINY_RUN = {"logging_steps": 1, "save_steps": 1000, "report_to": [], "progress_bar": False}


def _eft_config(model: Path, data: Path, out: Path, max_length: int = 512, save_steps: int = 1000, **optimisation):
    """An EFT config on the tiny model; ``optimisation`` overrides the tests' common settings."""
    from py4.train import eft

    settings = {"learning_rate": 1e-3, "lr_scheduler": "cosine", "min_lr_rate": None, "warmup": 0.0,
                "weight_decay": 0.0, "optim": "adamw_torch", "seed": 424242, "micro_batch": 2,
                "grad_accum": 1, "epochs": 1, **optimisation}
    return eft.EFTConfig.model_validate({
        "model": {"path": str(model)}, "data": {"path": str(data), "max_length": max_length},
        "optimisation": settings, "run": {"output_dir": str(out), **TINY_RUN, "save_steps": save_steps}})


@pytest.fixture(scope="module")
def dose(smoke_assets, tmp_path_factory) -> Path:
    from py4.train.eft_data import EFTDoseConfig, build_dose

    out = tmp_path_factory.mktemp("dose") / "dose10"
    config = EFTDoseConfig(out=str(out), gold=8, replay=2, split="eft_pool", replay_settings={
        "instructions": {"path": str(smoke_assets / "instructions"), "filter": "none"},
        "parent": {"path": str(smoke_assets / "it")},
        "max_new_tokens": 24, "batch_size": 2})
    return build_dose(config)


def test_dose_has_certified_held_in_gold_and_on_policy_replay(dose):
    from py4.episodes.environment import TOOL_SCHEMAS
    from py4.lang import compile_py4
    from py4.lang.rules import DEFAULT_HELD_OUT
    from py4.train.eft_data import gold_code

    manifest = json.loads((dose / "manifest.json").read_text())
    rows = [json.loads(line) for line in (dose / "data.jsonl").read_text().splitlines()]
    assert manifest["rows"] == 10 and manifest["per_source"] == {"gold": 8, "replay": 2}
    assert manifest["held_out_rules_in_targets"] == 0
    assert manifest["config"]["gold_format"] == "submit_call"
    for row in rows:
        if row["source"] == "gold":
            assert [m["role"] for m in row["messages"]] == ["system", "user", "assistant"]
            assert row["tools"] == TOOL_SCHEMAS
            [call] = row["messages"][2]["tool_calls"]
            assert call["function"]["name"] == "submit" and row["messages"][2]["content"] == ""
            result = compile_py4(gold_code(row))
            assert result.ok and not set(result.rules_exercised) & DEFAULT_HELD_OUT
            assert row["chat_template_kwargs"] == {"enable_thinking": False}
        else:
            assert row["messages"][0]["role"] == "user" and row["messages"][1]["role"] == "assistant"
    assert manifest["replay_parent"]["revision"].startswith("sha256:")


def test_smaller_dose_is_drawn_from_the_bigger(dose, tmp_path):
    from py4.train.eft_data import EFTDoseConfig, build_dose

    small = build_dose(EFTDoseConfig(out=str(tmp_path / "small"), gold=4, replay=1, draw_from=str(dose)))
    big_rows = {line for line in (dose / "data.jsonl").read_text().splitlines()}
    small_rows = (small / "data.jsonl").read_text().splitlines()
    assert len(small_rows) == 5 and set(small_rows) <= big_rows


def test_eft_trains_only_the_lora_adapters(smoke_assets, dose, tmp_path):
    from transformers import AutoTokenizer

    from py4.train import eft

    snapshot, first = ParamSnapshot(), FirstBatch()
    config = _eft_config(smoke_assets / "it", dose, tmp_path / "run", warmup=0.05, grad_accum=2)
    result = eft.run(config, callbacks=[snapshot, first])

    assert result.global_step == 3  # ceil(10 rows / (2 × 2)) for one epoch
    assert result.adapted_modules == 14  # 2 layers × q,k,v,o,gate,up,down
    snapshot.assert_every_trainable_changed_and_nothing_else()
    assert all("lora_" in name for name in snapshot.trainable)
    tokenizer = AutoTokenizer.from_pretrained(smoke_assets / "tokenizer")
    ids, labels = first.batch["input_ids"], first.batch["labels"]
    supervised = tokenizer.decode(ids[labels != -100])
    assert "<end_of_turn>" in supervised and "<start_of_turn>user" not in supervised
    adapter = Path(result.model_dir)
    assert (adapter / "adapter_model.safetensors").exists() and (adapter / "adapter_config.json").exists()
    manifest = json.loads((tmp_path / "run" / "run_manifest.json").read_text())
    assert manifest["lora"]["adapted_modules"] == 14 and manifest["held_out_rules_in_targets"] == 0
    assert manifest["inputs"]["dose"]["manifest"]["per_source"] == {"gold": 8, "replay": 2}
    card = (adapter / "README.md").read_text()  # PEFT's generic card replaced by what made the adapter
    assert "library_name: peft" in card and "kind: eft" in card and manifest["inputs"]["dose"]["sha256"] in card


def test_gold_rows_supervise_exactly_the_submit_call(smoke_assets, dose, tmp_path):
    """The loss mask of a gold row: the episode prompt (system, tools, problem) is masked,
    the assistant's submit call (empty think block, the call, <end_of_turn>) is supervised."""
    from transformers import AutoTokenizer

    from py4.episodes import EpisodeConfig
    from py4.episodes.environment import TOOL_SCHEMAS, initial_messages
    from py4.problems.bank import load_bank
    from py4.train import eft
    from py4.train.eft_data import EFTDoseConfig, build_dose

    gold_only = build_dose(EFTDoseConfig(out=str(tmp_path / "gold2"), gold=2, replay=0, draw_from=str(dose)))
    first = FirstBatch()
    config = _eft_config(smoke_assets / "it", gold_only, tmp_path / "run", max_length=1024,
                         lr_scheduler="constant", seed=1, max_steps=1)
    eft.run(config, callbacks=[first])

    tokenizer = AutoTokenizer.from_pretrained(smoke_assets / "tokenizer")
    bank = {p.id: p for p in load_bank()}
    expected = {}
    for row in (gold_only / "data.jsonl").read_text().splitlines():
        problem = bank[json.loads(row)["problem_id"]]
        call = json.dumps({"name": "submit", "arguments": {"code": problem.gold}}, ensure_ascii=False)
        prompt = tokenizer.apply_chat_template(initial_messages(problem, EpisodeConfig()), tools=TOOL_SCHEMAS,
                                               add_generation_prompt=True, tokenize=False)
        expected[prompt] = f"<think>\n\n</think>\n<tool_call>{call}</tool_call><end_of_turn>"
    ids, labels = first.batch["input_ids"], first.batch["labels"]
    seen = {}
    for row_ids, row_labels in zip(ids, labels, strict=True):
        real = row_ids != tokenizer.pad_token_id
        supervised = tokenizer.decode(row_ids[real & (row_labels != -100)])
        masked = tokenizer.decode(row_ids[real & (row_labels == -100)])
        prompt = next((p for p in expected if masked.startswith(p)), None)
        assert prompt is not None, f"masked part is not an episode prompt: {masked[:400]!r}"
        assert masked.removeprefix(prompt) == "\n"  # the newline after <end_of_turn> is outside the turn
        seen[prompt] = supervised
    assert seen == expected  # masked part = the episode's generation prompt, supervised = the call


def test_eft_refuses_a_dose_with_held_out_rules(tmp_path):
    from py4.train import eft

    (tmp_path / "manifest.json").write_text(json.dumps({"held_out_rules_in_targets": 3}))
    (tmp_path / "data.jsonl").write_text("")
    config = eft.EFTConfig.model_validate({"model": {"path": str(tmp_path)}, "data": {"path": str(tmp_path)},
                                           "run": {"output_dir": str(tmp_path / "run")}})
    with pytest.raises(common.TrainingGuardError, match="held-out rule"):
        eft.run(config)


def test_killed_eft_resumes_from_its_checkpoint_to_the_same_step(smoke_assets, dose, tmp_path):
    # LoRA runs resume too: the checkpoint holds the adapter, optimizer, scheduler and RNG,
    # and the resumed run continues the same cosine schedule to the planned step count.
    from train_helpers import KillAt

    from py4.train import eft

    config = _eft_config(smoke_assets / "it", dose, tmp_path / "run", save_steps=2)
    with pytest.raises(KeyboardInterrupt):
        eft.run(config, callbacks=[KillAt(3)])
    assert json.loads((tmp_path / "run" / "run_manifest.json").read_text())["status"] == "interrupted"
    result = eft.run(config)
    assert result.resumed_from.endswith("checkpoint-2")
    assert result.global_step == 5  # ceil(10 rows / 2) for one epoch, as an uninterrupted run
    manifest = json.loads((tmp_path / "run" / "run_manifest.json").read_text())
    assert manifest["status"] == "done" and manifest["attempt"] == 2
    assert manifest["lr_trace"]["steps"][0] == 3
    assert (Path(result.model_dir) / "adapter_model.safetensors").exists()
