"""A model's stage files: one mapping from a stage of the registry (or another file role) to its
config file(s), checked when the campaign loads."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from py4.campaign.spec import OTHER_FILES, load_campaign
from py4.config import ConfigError
from py4.stages import STAGES

ROOT = Path(__file__).resolve().parents[2]


def _smoke_with_files(tmp_path: Path, **files) -> Path:
    data = yaml.safe_load((ROOT / "configs/campaign/smoke.yaml").read_text())
    data["models"]["tiny"]["files"].update(files)
    path = tmp_path / "campaign.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_an_unknown_stage_names_the_file_and_field_and_lists_the_stages(tmp_path):
    path = _smoke_with_files(tmp_path, polish="configs/train/smoke/sft.yaml")
    with pytest.raises(ConfigError) as exc:
        load_campaign(path)
    text = str(exc.value)
    assert str(path) in text and "models.tiny.files" in text and "unknown stage 'polish'" in text
    assert all(stage in text for stage in STAGES)


def test_any_stage_of_the_registry_takes_a_file_without_a_spec_field(tmp_path):
    stage = next(s for s in STAGES if s not in ("midtrain", "sft", "eft", "eft_dose", "grpo", "graft", "mix"))
    files = load_campaign(_smoke_with_files(tmp_path, **{stage: "configs/some/file.yaml"})).models["tiny"].files
    assert files.get(stage) == "configs/some/file.yaml"


def test_one_file_serves_every_arm_and_a_mapping_must_name_them_all(tmp_path):
    spec_file = _smoke_with_files(tmp_path, midtrain="configs/train/smoke/midtrain.yaml")
    files = load_campaign(spec_file).models["tiny"].files
    assert {files.of("midtrain", arm) for arm in ("control", "iso", "prop")} == {"configs/train/smoke/midtrain.yaml"}
    with pytest.raises(ConfigError, match=r"models\.tiny\.files\.mix: no config for arm\(s\) prop"):
        load_campaign(_smoke_with_files(tmp_path, mix={"control": "a.yaml", "iso": "b.yaml"}))


def test_the_shipped_campaigns_name_only_stages_and_known_roles():
    for name in ("python4", "smoke"):
        for model in load_campaign(ROOT / f"configs/campaign/{name}.yaml").models.values():
            assert set(model.files.root) <= set(STAGES) | set(OTHER_FILES)
            assert model.files.paths()
