"""An optimizer whose package is missing is refused before any weights load.

The GLM-4.5-Air midtraining and SFT configs use ``adamw_torch_8bit``, which transformers builds
from torchao; without torchao the Trainer failed only when it created the optimizer, after
the 110B model had loaded. torchao comes with the ``campaign`` extra, never with CI's install.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from py4.config import ConfigError, load_config
from py4.train import common, loading
from py4.train.midtrain import MidtrainConfig
from py4.overrides import overrides
from py4.stages import StageCall, run_call

REPO = Path(__file__).resolve().parents[2]
GLM_CONFIGS = ["configs/train/glm45_air/midtrain_iso.yaml", "configs/train/glm45_air/midtrain_prop.yaml",
               "configs/train/glm45_air/midtrain_control.yaml", "configs/train/glm45_air/sft.yaml"]


@pytest.fixture
def no_torchao(monkeypatch):
    """This environment as CI has it: torchao not importable (whatever is installed here)."""
    real = common._module_available
    monkeypatch.setattr(common, "_module_available", lambda module: module != "torchao" and real(module))


@pytest.fixture
def no_weights(monkeypatch):
    """Any attempt to load a tokenizer or weights fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError("weights or tokenizer loaded before the optimizer was checked")

    monkeypatch.setattr(loading, "load_model", refuse)
    monkeypatch.setattr(loading, "load_tokenizer", refuse)


def test_the_table_knows_exactly_the_optimizers_of_transformers():
    from transformers.training_args import OptimizerNames

    assert set(common.OPTIMIZER_PACKAGES) == {o.value for o in OptimizerNames}


def test_an_unknown_optimizer_is_a_config_error_naming_file_and_field():
    with pytest.raises(ConfigError) as err:
        load_config(MidtrainConfig, REPO / GLM_CONFIGS[0], ["optimisation.optim=adamw_torch_8bits"])
    text = str(err.value)
    assert "glm45_air/midtrain_iso.yaml" in text and "optimisation.optim" in text
    assert "did you mean 'adamw_torch_8bit'" in text


@pytest.mark.parametrize("config", GLM_CONFIGS)
def test_glm_configs_are_refused_before_loading_when_torchao_is_missing(config, no_torchao, no_weights, tmp_path):
    # The stage config exactly as the campaign runs it (only the output folder moved).
    with pytest.raises(ValueError) as err:
        run_call(StageCall(stage="midtrain" if "midtrain" in config else "sft", config=str(REPO / config),
                           overrides=tuple(overrides({"run.output_dir": str(tmp_path / "run")}))))
    text = str(err.value)
    assert config in text  # the file
    assert "optimisation.optim" in text and "'adamw_torch_8bit'" in text  # the field and its value
    assert "torchao" in text  # the package
    assert "pip install -e '.[campaign]' torch==2.13.0" in text  # the install command
    assert not (tmp_path / "run").exists()  # refused before the run folder was even made


def test_an_optimizer_whose_package_is_there_passes(monkeypatch):
    monkeypatch.setattr(common, "_module_available", lambda module: True)
    common.check_optimizer(common.Optimisation(optim="adamw_torch_8bit"), "x.yaml")
    common.check_optimizer(common.Optimisation(optim="adamw_torch_fused"), "x.yaml")


def test_the_cli_says_it_in_one_line_and_exits_2(tmp_path):
    import importlib.util

    if importlib.util.find_spec("torchao") is not None:
        pytest.skip("torchao is installed here (campaign extra): nothing to refuse")
    # data.path exists (py4 train names a missing one first): the optimizer is what it refuses.
    proc = subprocess.run([sys.executable, "-m", "py4", "train", "midtrain", "--config", GLM_CONFIGS[0],
                           f"data.path={tmp_path}", f"run.output_dir={tmp_path / 'run'}"], cwd=REPO,
                          capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "torchao" in proc.stderr and "campaign" in proc.stderr and "Traceback" not in proc.stderr


def test_torchao_is_in_the_campaign_extra_and_not_in_ci_install():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    assert any(req.startswith("torchao") for req in extras["campaign"])
    assert not any(req.startswith("torchao") for req in project["dependencies"] + extras["test"])
    # CI runs `make test`, whose install (the $(STAMP) rule) never names the campaign extra;
    # only `make rehearsal` installs it.
    makefile = (REPO / "Makefile").read_text()
    install = makefile.split("\n$(STAMP):", 1)[1].split("\n\n", 1)[0]
    assert "pip install" in install and "campaign" not in install
    assert "\ntest: $(STAMP)\n" in makefile
