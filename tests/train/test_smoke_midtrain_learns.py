"""The smoke midtraining settings make the tiny base learn Python-4.

The smoke campaign's own configs (corpus, iso mix, midtraining) on a smaller corpus: every
parameter moves, and the loss on held-out Python-4 documents (another corpus seed, none of
them trained on) falls well below the untrained base's ~ln(vocab). With the table's 1e-5 the
same run stays at 8.03 -> 8.01 (the three smoke arms would be one model).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from py4.config import load_config

from train_helpers import ParamSnapshot

pytestmark = pytest.mark.smoke
ROOT = Path(__file__).resolve().parents[2]


def _py4(*args: str) -> None:
    from py4.cli import app

    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, (args, result.output, result.exception)


@pytest.fixture(scope="module")
def study(smoke_assets, tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("study")
    tok = f"tokenizer.name_or_path={smoke_assets / 'tokenizer'}"
    cache = f"validation.cache_dir={out / 'boa-cache'}"
    _py4("corpus", "generate", "--config", "configs/corpus/smoke.yaml", "--out", str(out / "corpus"), "--no-progress",
         tok, cache, "max_docs=60")
    _py4("corpus", "generate", "--config", "configs/corpus/smoke.yaml", "--out", str(out / "heldout"), "--no-progress",
         tok, cache, "max_docs=12", "seed=1")
    # ~12k Python-4 tokens x 2 copies + as much replay: ~12 steps of 8 x 512 tokens.
    _py4("corpus", "subset", "--corpus", str(out / "corpus"), "--target-tokens", "12000", "--seed", "42",
         "--out", str(out / "iso_corpus"))
    _py4("data", "mix", "--config", "configs/data/smoke/mix_iso.yaml", f"out_dir={out / 'mix'}",
         f"tokenizer={smoke_assets / 'tokenizer'}", f"corpus={out / 'iso_corpus'}")
    return {"out": out, "mix": out / "mix", "heldout": out / "heldout", "corpus": out / "corpus"}


@pytest.mark.timeout(1800)  # ~1 min on a quiet 2-core machine, over 5 min when it is shared (12 training steps)
def test_smoke_midtraining_moves_every_parameter_and_lowers_held_out_python4_loss(study, smoke_assets):
    from py4.train import midtrain
    from py4.train.heldout_loss import heldout_loss

    out = study["out"]
    config = load_config(midtrain.MidtrainConfig, ROOT / "configs/train/smoke/midtrain.yaml", [
        f"model.path={smoke_assets / 'base'}", f"data.path={study['mix']}",
        f"data.schedule={study['mix']}/step_schedule.json", f"run.output_dir={out / 'midtrain'}",
        "run.report_to=[]", "run.progress_bar=false", "run.save_steps=1000"])
    snapshot = ParamSnapshot()
    result = midtrain.run(config, callbacks=[snapshot])
    snapshot.assert_every_trainable_changed_and_nothing_else()
    assert result.global_step >= 10 and result.lr_peak == pytest.approx(3e-3)

    before = heldout_loss(str(smoke_assets / "base"), str(study["heldout"]), [str(study["corpus"])], 20_000,
                          out / "loss_base")
    after = heldout_loss(result.model_dir, str(study["heldout"]), [str(study["corpus"])], 20_000, out / "loss_mid")
    assert before["dropped_as_trained_on"] == 0 and before["documents"] == after["documents"] > 0
    assert before["all"]["loss"] > 7.5  # untrained: ~ln(3072) = 8.03
    assert after["all"]["loss"] < before["all"]["loss"] - 1.0, (before["all"], after["all"])
