"""The smoke study's train_sanity check, on its own: EFT with the smoke campaign's settings on
the sanity dose, then evaluation of those problems as the campaign evaluates them.

A broken loss mask, adapter path or data path shows here as 0 certified after EFT; the
parent (dose 0, the same evaluation) scores 0, so the rise is the EFT's doing. The parent is
the smoke -it model (the campaign's chat parents need the whole corpus/midtrain/SFT chain;
`tests/campaign/test_demo_slow.py` checks them in the full smoke campaign).
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.smoke, pytest.mark.slow]


def _eval(spec, model: str, bank_dir: Path, out: Path) -> dict:
    from py4.config import load_config
    from py4.evaluate.harness import EvalConfig, run

    ev = spec.evaluation  # as the campaign's eval:<model>:train_sanity runs evaluate
    config = load_config(EvalConfig, None, [*ev.overrides, *ev.sanity_overrides, f"splits=[{ev.sanity_split}]",
                                            f"bank_dir={bank_dir}", "policy.name=local", f"policy.model={model}"])
    return run(config, out, progress=False)["splits"][spec.evaluation.sanity_split]


@pytest.mark.timeout(1800)
def test_train_sanity_rises_above_zero_after_smoke_eft(smoke_assets, tmp_path, monkeypatch):
    from py4.evaluate.sanity_bank import write_sanity_bank
    from py4.campaign.spec import load_campaign
    from py4.config import load_config
    from py4.train import eft
    from py4.train.eft_data import EFTDoseConfig, build_dose

    monkeypatch.chdir(ROOT)
    spec = load_campaign(ROOT / "configs/campaign/smoke.yaml")
    files = spec.models["tiny"].files
    rows = min(x for x in spec.eft.doses if x > 0)
    replay = round(rows * spec.eft.replay_fraction)
    parent = str(smoke_assets / "it")
    dose = build_dose(load_config(EFTDoseConfig, files.get("eft_dose"), [
        f"out={tmp_path / 'dose'}", f"gold={rows - replay}", f"replay={replay}",
        f"replay_settings.parent.path={parent}",
        f"replay_settings.instructions={smoke_assets / 'instructions'}", "replay_settings.max_new_tokens=32"]))
    bank = tmp_path / "bank"
    assert write_sanity_bank(dose, bank) == rows - replay
    result = eft.run(load_config(eft.EFTConfig, files.get("eft"), [
        f"model.path={parent}", f"data.path={dose}", f"run.output_dir={tmp_path / 'eft'}", "run.report_to=[]",
        *spec.eft.overrides]))
    assert result.global_step > 0, result
    after = _eval(spec, str(tmp_path / "eft" / "model"), bank, tmp_path / "eval_eft")
    before = _eval(spec, parent, bank, tmp_path / "eval_parent")
    assert before["certified_rate"] == 0.0, before["outcomes"]
    assert after["certified_rate"] >= 0.5, after["outcomes"]
