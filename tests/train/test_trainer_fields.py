"""Every TrainingArguments / GRPOConfig / SFTConfig field py4 sets exists under both transformers
releases the stages run with: this repository's (.venv, 5.24) and the trainer environment's (vLLM's
side pins 5.17, with the same TRL 1.16; docs/training.md).

5.17 cannot be installed next to 5.24, so its ``TrainingArguments`` field names are a fixture
generated from the release's wheel by ``scripts/training_args_fields.py`` (the fixture names the
wheel and its sha256). The vLLM tier (tests/real_vllm/) runs the same checks inside that environment.
A "5.17 GRPOConfig" below is a dataclass with exactly those fields plus TRL 1.16's own: building it
with py4's keywords raises the ``TypeError`` a GRPO run met there when a field is unknown.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from py4.config import load_config
from py4.train import common, grpo, loading, sft

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).parent / "fixtures" / "training_args_fields_5.17.0.json"
CPU = loading.DeviceSettings(use_cpu=True, bf16=False, gradient_checkpointing=False, device="cpu")
GPU = loading.DeviceSettings(use_cpu=False, bf16=True, gradient_checkpointing=True, device="cuda")


def _generator():
    spec = importlib.util.spec_from_file_location("training_args_fields", ROOT / "scripts/training_args_fields.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fields_517() -> frozenset[str]:
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    assert data["transformers"] == "5.17.0" and data["source"].startswith("transformers-5.17.0-py3-none-any.whl")
    return frozenset(data["fields"])


def _pin(name: str) -> str:
    """The version envs/vllm-common.txt (the trainer environment, ``make vllm-env``) pins ``name`` to."""
    import re

    text = (ROOT / "envs" / "vllm-common.txt").read_text(encoding="utf-8")
    return re.search(rf"^{name}==(\S+)$", text, flags=re.M).group(1)


def test_the_fixture_is_the_trainer_environments_release():
    """The fixture's release is the one the trainer environment pins; TRL is the same on both sides."""
    import trl

    assert json.loads(FIXTURE.read_text(encoding="utf-8"))["transformers"] == _pin("transformers")
    assert trl.__version__ == _pin("trl")


def _trl_own(config_class) -> frozenset[str]:
    from transformers import TrainingArguments

    return common.installed_fields(config_class) - common.installed_fields(TrainingArguments)


def _like(config_class, fields: frozenset[str]):
    """A dataclass with exactly ``fields``: the constructor of ``config_class`` under another release."""
    return dataclasses.make_dataclass(f"{config_class.__name__}Of517", [(n, Any, None) for n in sorted(fields)])


def test_the_generator_reads_a_releases_fields():
    """The fixture's generator, run on the installed release's source, gives its real dataclass fields."""
    from transformers import TrainingArguments

    source = Path(inspect.getsourcefile(TrainingArguments)).read_text(encoding="utf-8")
    assert frozenset(_generator().dataclass_fields(source)) == {f.name for f in dataclasses.fields(TrainingArguments)}


def test_517_names_checkpointing_the_old_way():
    f517 = fields_517()
    assert {"gradient_checkpointing", "gradient_checkpointing_kwargs"} <= f517
    assert not {"activation_checkpointing", "activation_checkpointing_kwargs"} & f517
    assert common.checkpointing_fields(f517) == ("gradient_checkpointing", "gradient_checkpointing_kwargs")
    assert common.checkpointing_fields(common.installed_fields()) == ("activation_checkpointing",
                                                                      "activation_checkpointing_kwargs")


@pytest.mark.parametrize("release", ["5.17", "installed"])
def test_every_field_py4_sets_exists(release):
    from transformers import TrainingArguments
    from trl import GRPOConfig, SFTConfig

    base = fields_517() if release == "5.17" else common.installed_fields(TrainingArguments)
    assert common.trainer_fields(base) <= base
    for module, config_class in ((grpo, GRPOConfig), (sft, SFTConfig)):
        available = base | _trl_own(config_class)
        missing = module.config_fields(available) - available
        assert not missing, f"{config_class.__name__} under {release}: {sorted(missing)}"


@pytest.mark.parametrize("device", [CPU, GPU], ids=["cpu", "gpu"])
@pytest.mark.parametrize("scheduler", ["cosine_with_min_lr", "constant"])
def test_trainer_kwargs_stay_within_the_declared_fields(device, scheduler):
    f517 = fields_517()
    opt = common.Optimisation(lr_scheduler=scheduler, min_lr_rate=0.1 if scheduler != "constant" else None)
    run = common.RunSettings(output_dir="/tmp/x", report_to=[])
    for available in (f517, common.installed_fields()):
        kwargs = common.trainer_kwargs(opt, run, device, 4, available)
        assert set(kwargs) <= common.trainer_fields(available) <= available


def _campaign_grpo() -> grpo.GRPOStageConfig:
    return load_config(grpo.GRPOStageConfig, ROOT / "configs/train/gemma4_31b/grpo.yaml", [])


@pytest.mark.parametrize("device", [CPU, GPU], ids=["cpu", "gpu"])
def test_grpo_config_of_517_accepts_the_campaigns_keywords(monkeypatch, device):
    """The campaign's GRPO config builds under 5.17's field set (a TypeError there before)."""
    import trl

    available = fields_517() | _trl_own(trl.GRPOConfig)
    monkeypatch.setattr(trl, "GRPOConfig", _like(trl.GRPOConfig, available))
    monkeypatch.setattr(common, "installed_fields", lambda cls=None: available, raising=False)
    args = grpo.grpo_args(_campaign_grpo(), device, [1.0])
    assert args.gradient_checkpointing is device.gradient_checkpointing
    assert args.gradient_checkpointing_kwargs == ({"use_reentrant": False} if device.gradient_checkpointing else None)
    assert args.max_tool_calling_iterations == _campaign_grpo().episode.max_tool_calls


def test_sft_config_of_517_accepts_the_chat_keywords(monkeypatch):
    import trl

    available = fields_517() | _trl_own(trl.SFTConfig)
    monkeypatch.setattr(trl, "SFTConfig", _like(trl.SFTConfig, available))
    monkeypatch.setattr(common, "installed_fields", lambda cls=None: available, raising=False)
    kwargs = sft.checked_chat_kwargs(common.Optimisation(), common.RunSettings(output_dir="/tmp/x"), GPU, 4, 512, False)
    assert kwargs["gradient_checkpointing"] is True and "activation_checkpointing" not in kwargs
    trl.SFTConfig(**kwargs)


def test_a_missing_field_is_refused_by_name(monkeypatch):
    """A release without a field py4 sets: a TrainingError naming it and the release, not a TypeError."""
    import transformers
    import trl

    available = (fields_517() | _trl_own(trl.GRPOConfig)) - {"max_tool_calling_iterations"}
    monkeypatch.setattr(trl, "GRPOConfig", _like(trl.GRPOConfig, available))
    with pytest.raises(common.TrainingError) as caught:
        grpo.grpo_args(_campaign_grpo(), GPU, [1.0])
    text = str(caught.value)
    assert "GRPO" in text and "max_tool_calling_iterations" in text and transformers.__version__ in text
    assert sys.executable in text


def test_the_installed_configs_build_without_warnings(tmp_path):
    """Under 5.24 the new names are used: no FutureWarning for the deprecated aliases."""
    import warnings

    from trl import GRPOConfig

    config = load_config(grpo.GRPOStageConfig, ROOT / "configs/train/gemma4_31b/grpo.yaml",
                         ["grpo.use_vllm=false", "grpo.vllm_server_gpus=null", f"run.output_dir={tmp_path}",
                          "run.report_to=[]"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        args = grpo.grpo_args(config, CPU, [1.0])
    assert isinstance(args, GRPOConfig) and args.activation_checkpointing is False
