"""The hyperparameter table reads stage configs through their types, so the config files state
only what is not their type's default."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from py4.config import read_yaml
from py4.report.hyperparameters import build_table
from stage_config_defaults import config_type, needlessly_stated, repeated_defaults

ROOT = Path(__file__).resolve().parents[2]
STAGE_CONFIGS = sorted([*(ROOT / "configs/train").rglob("*.yaml"), *(ROOT / "configs/data").rglob("*.yaml")])
CAMPAIGNS = ["configs/campaign/python4.yaml", "configs/campaign/smoke.yaml"]


@pytest.mark.parametrize("path", STAGE_CONFIGS, ids=lambda p: p.relative_to(ROOT / "configs").as_posix())
def test_stage_configs_do_not_repeat_their_types_defaults(path):
    repeated = needlessly_stated(path)
    assert not repeated, (f"{path.relative_to(ROOT)} repeats its type's default in {', '.join(repeated)}: "
                          "remove the keys (or, for a decision a reader must see, see STATED_DEFAULTS in "
                          "tests/report/stage_config_defaults.py)")


def _strip_every_default(configs: Path) -> list[str]:
    """Rewrite every stage config under ``configs`` without any key its type would fill in the same,
    the stated ones (kind, rounding, batch geometry, ...) included. Returns what was removed."""
    removed = []
    for path in sorted([*(configs / "train").rglob("*.yaml"), *(configs / "data").rglob("*.yaml")]):
        keys = repeated_defaults(path, config_type(path))
        data = read_yaml(path) or {}
        for dotted in keys:
            node = data
            *parents, leaf = dotted.split(".")
            for key in parents:
                node = node[key]
            del node[leaf]
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        removed += [f"{path.name}:{key}" for key in keys]
    return removed


@pytest.mark.parametrize("campaign", CAMPAIGNS)
def test_table_is_the_same_when_configs_leave_every_default_unset(campaign, tmp_path):
    shutil.copytree(ROOT / "configs", tmp_path / "configs")
    removed = _strip_every_default(tmp_path / "configs")
    assert any(key.endswith(":rounding") for key in removed) and any(key.endswith(":gpus") for key in removed)
    assert build_table(campaign, root=tmp_path) == build_table(campaign, root=ROOT)


def test_graft_rows_read_each_models_graft_config(tmp_path):
    shutil.copytree(ROOT / "configs", tmp_path / "configs")
    graft = tmp_path / "configs/graft/gemma4_12b.yaml"
    graft.write_text(graft.read_text() + "lambda_: 0.5\noutput_dtype: float32\n")
    table = build_table("configs/campaign/python4.yaml", root=tmp_path)
    rows = {row["name"]: row for group in table["groups"] if group["title"] == "Chat-vector graft"
            for row in group["rows"]}
    assert rows["$\\lambda$"]["values"] == ["0.5", "1.0", "1.0"]
    assert rows["Arithmetic"]["values"] == ["fp32 accumulate, stored fp32", "fp32 accumulate, stored bf16",
                                            "fp32 accumulate, stored bf16"]
    assert "configs/graft/gemma4_12b.yaml" in rows["$\\lambda$"]["source"]
