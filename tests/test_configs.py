"""Every YAML under configs/, recursively, loads and validates against its config type.

Folders map to config types through the explicit table CONFIG_TYPES (longest matching
folder prefix wins). A YAML in a folder the table does not know fails the test: add the
folder (and its type, or a function choosing the type from the file) to the table.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from py4.config import load_config, read_yaml

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


def _train_type(path: Path) -> type:
    """configs/train/**: the stage is the file name's first word (midtrain_iso → midtrain)."""
    from py4.train.assets import SmokeAssetsConfig
    from py4.train.eft_data import EFTDoseConfig
    from py4.stages import config_type

    stem = path.stem
    if stem.startswith("smoke_assets"):
        return SmokeAssetsConfig
    if stem.startswith("eft_dose"):
        return EFTDoseConfig
    stage = stem.split("_")[0].removesuffix("512")
    return config_type("eft" if stage.startswith("eft") else stage)


def _data_type(path: Path) -> type:
    from py4.data.configs import config_type_for

    return config_type_for(read_yaml(path)["kind"])


def _corpus_type(path: Path) -> type:
    from py4.corpus.config import CorpusConfig

    return CorpusConfig


def _check_accelerate(path: Path) -> None:
    """accelerate's own loader accepts it; FSDP2, the process count left to the launch (-1: each
    run's --num_processes, its stage config's optimisation.gpus)."""
    from accelerate.commands.config.config_args import ClusterConfig

    config = ClusterConfig.from_yaml_file(str(path))
    assert config.distributed_type == "FSDP", path
    assert config.fsdp_config["fsdp_version"] == 2, path
    assert config.num_processes == -1, (path, config.num_processes)


def _check_graft(path: Path) -> None:
    """configs/graft/*: the campaign's graft policies; the DAG gives mid/it/base/out as flags."""
    from py4.config import validate_config
    from py4.graft.config import GraftConfig

    validate_config(GraftConfig, {"mid": "m", "it": "i", "base": "b", "out": "o", **read_yaml(path)}, str(path))


# folder (relative to configs/) -> a function returning the config type, or a checker (returns None)
CONFIG_TYPES: dict[str, Callable[[Path], type | None]] = {
    "accelerate": _check_accelerate,
    "train": _train_type,
    "data": _data_type,
    "corpus": _corpus_type,
    "graft": _check_graft,
    "campaign": lambda p: __import__("py4.campaign.spec", fromlist=["spec"]).config_type_for_file(p),
    "rehearsal": lambda p: __import__("py4.rehearsal.rehearse", fromlist=["rehearse"]).RehearsalConfig,
}


def _yaml_files() -> list[Path]:
    return sorted(p for p in CONFIGS.rglob("*.y*ml") if p.suffix in (".yaml", ".yml"))


def _handler(path: Path) -> Callable[[Path], type | None]:
    rel = path.relative_to(CONFIGS).parent.as_posix()
    matches = [folder for folder in CONFIG_TYPES if rel == folder or rel.startswith(folder + "/")]
    if not matches:
        pytest.fail(f"{path}: folder {rel!r} has no entry in CONFIG_TYPES of tests/test_configs.py")
    return CONFIG_TYPES[max(matches, key=len)]


def test_configs_are_found():
    files = _yaml_files()
    assert len(files) >= 20, files
    assert any("train" in p.parts for p in files) and any("accelerate" in p.parts for p in files)


@pytest.mark.parametrize("path", _yaml_files(), ids=lambda p: p.relative_to(CONFIGS).as_posix())
def test_config_validates(path: Path):
    config_type = _handler(path)(path)
    if config_type is not None:
        load_config(config_type, path)


def test_campaign_train_configs_open_with_their_launch_command():
    for path in (CONFIGS / "train").rglob("*.yaml"):
        first = path.read_text().splitlines()[0]
        assert first.startswith(("# py4 train ", "# py4 smoke assets ", "# accelerate launch ")), path
        assert path.relative_to(CONFIGS.parent).as_posix() in first, path
