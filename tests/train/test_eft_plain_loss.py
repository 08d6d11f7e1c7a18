"""plain_loss (the model's own causal-LM loss, EFT and the -it SFT) equals TRL's fused LM-head loss."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.smoke


def test_plain_loss_equals_the_fused_loss_on_a_batch(smoke_assets, tmp_path):
    import torch

    from py4.train import common, eft, loading, sft
    from py4.train.eft_data import gold_row
    from py4.problems.schema import Problem, TestCase

    problems = [Problem(id=f"t/{i}", family="f", title="t", prompt=f"Write fn f{i}(x: int) -> int returning x + {i}.",
                        entry_point=f"f{i}", tests=[TestCase(args=[1], expected=1 + i)], rules=["P4-12"],
                        split="eft_pool", gold=f"fn f{i}(x: int) -> int:\n    return x + {i}") for i in range(3)]
    rows = [gold_row(p, p.gold) for p in problems]
    source = loading.ModelSource(path=str(smoke_assets / "it"))
    device = loading.device_settings(False)
    opt = common.Optimisation(learning_rate=1e-3, lr_scheduler="constant", min_lr_rate=None, warmup=0,
                              optim="adamw_torch", micro_batch=3, gradient_checkpointing=False)
    losses = []
    for plain in (False, True):
        run = common.RunSettings(output_dir=str(tmp_path / str(plain)), report_to=[], progress_bar=False,
                                 resume="never")
        torch.manual_seed(0)
        trainer = sft.build_chat_trainer(loading.load_model(source, device), loading.load_tokenizer(source),
                                         sft.chat_dataset(rows), opt, run, device, 1, 1024, False,
                                         peft_config=eft.LoraSpec(modules_to_save=["embed_tokens"]).peft_config(),
                                         plain_loss=plain)
        assert (trainer.compute_loss is sft._plain_loss) is plain  # the option takes effect
        batch = next(iter(trainer.get_train_dataloader()))
        trainer.model.train()
        with torch.no_grad():
            losses.append(float(trainer.compute_loss(trainer.model, batch)))
    assert losses[0] > 0.1  # a real loss, not an empty mask
    assert losses[1] == pytest.approx(losses[0], rel=1e-5)
