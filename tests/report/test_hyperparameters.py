"""The regenerated hyperparameter table matches the reference value by value."""

import json
from pathlib import Path

import pytest

from py4.report import formats
from py4.report.hp_eft_grpo import dose_split
from py4.report.hyperparameters import TableError, build_table, render_latex, render_markdown

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT.parent / "shared" / "reference" / "python4_hyperparameters.json"
CAMPAIGN = "configs/campaign/python4.yaml"


@pytest.fixture(scope="module")
def table():
    return build_table(CAMPAIGN, root=ROOT)


@pytest.fixture(scope="module")
def reference():
    if not REFERENCE.is_file():
        pytest.skip(f"reference table absent: {REFERENCE} (CI provides ../shared/reference/)")
    return json.loads(REFERENCE.read_text())


def test_parts_match(table, reference):
    assert table["parts"] == reference["parts"]


def test_groups_match(table, reference):
    got = [(group["part"], group["title"], group.get("descriptor")) for group in table["groups"]]
    want = [(group["part"], group["title"], group.get("descriptor")) for group in reference["groups"]]
    assert got == want


def test_every_row_and_value_matches(table, reference):
    for want_group, got_group in zip(reference["groups"], table["groups"], strict=True):
        assert [r["name"] for r in got_group["rows"]] == [r["name"] for r in want_group["rows"]], want_group["title"]
        for want, got in zip(want_group["rows"], got_group["rows"], strict=True):
            strip = lambda r: {k: v for k, v in r.items() if k != "source"}
            assert strip(got) == strip(want), (want_group["title"], want["name"])


def test_sources_name_our_configs(table):
    for group in table["groups"]:
        for row in group["rows"]:
            if row.get("label"):
                continue
            src = row["source"]
            assert any(prefix in src for prefix in ("configs/", "src/py4/")), (group["title"], row["name"], src)
            for token in src.replace(";", " ").replace("(", " ").split():
                if token.startswith("configs/") and token.endswith(".yaml") and "*" not in token:
                    assert (ROOT / token).is_file(), f"{row['name']}: source names missing file {token}"


def test_renderings(table):
    latex = render_latex(table)
    assert latex.count("\\begin{tabular}") == 3 and "1 $\\times$ 8 $\\times$ 4" in latex
    md = render_markdown(table)
    assert "| Seed |" in md and "GLM-4.5-Air 110B" in md


def test_inconsistent_step_count_is_an_error(tmp_path):
    # A midtrain max_steps that disagrees with its schedule must fail, naming the file.
    import shutil
    shutil.copytree(ROOT / "configs", tmp_path / "configs")
    midtrain = tmp_path / "configs/train/gemma4_12b/midtrain_iso.yaml"
    midtrain.write_text(midtrain.read_text().replace("max_steps: 306", "max_steps: 305"))
    with pytest.raises(TableError, match="midtrain_iso.yaml"):
        build_table(CAMPAIGN, root=tmp_path)


@pytest.mark.parametrize("rows,split", [(1024, (922, 102)), (256, (230, 26)), (512, (461, 51)), (2048, (1843, 205))])
def test_dose_split(rows, split):
    assert dose_split(rows, 0.1) == split


def test_formats():
    assert formats.millions(5_397_107) == "5.40M" and formats.millions(111_529_248) == "111.5M"
    assert formats.power_of_ten(1e-5) == "$1\\times10^{-5}$"
    assert formats.signed(-0.1) == "$-$0.10" and formats.signed(1.0) == "+1"
    assert formats.projections(["q_proj", "k_proj", "v_proj", "o_proj"]) == "q, k, v, o (attention only)"


def test_every_grpo_loss_type_has_its_name():
    """The table's Loss row names whichever grpo.loss_type the config allows (was: KeyError for 5 of 8)."""
    import typing

    from py4.report.hp_eft_grpo import LOSS_TYPE_NAMES
    from py4.train.grpo import GRPOSettings

    assert set(LOSS_TYPE_NAMES) == set(typing.get_args(GRPOSettings.model_fields["loss_type"].annotation))


def _loss_row(table) -> str:
    [values] = [row["values"] for group in table["groups"] if group["part"] == "grpo"
                for row in group["rows"] if row["name"] == "Loss"]
    return values[0]


def test_the_loss_row_names_a_loss_type_the_campaign_did_not_use(tmp_path, table):
    import shutil
    shutil.copytree(ROOT / "configs", tmp_path / "configs")
    grpo = tmp_path / "configs/train/gemma4_31b/grpo.yaml"
    grpo.write_text(grpo.read_text().replace("grpo:\n", "grpo:\n  loss_type: cispo\n", 1))
    campaign = _loss_row(table)
    assert campaign.startswith("Dr.\\ GRPO, ")  # the default, dr_grpo
    assert _loss_row(build_table(CAMPAIGN, root=tmp_path)) == campaign.replace("Dr.\\ GRPO", "CISPO")
