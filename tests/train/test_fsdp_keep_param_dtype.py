"""``optimisation.master_weights: bf16`` rests on one decision in accelerate's FSDP2 preparation: the
fp32 upcast of trainable parameters happens when ``accelerator.mixed_precision != "no"``. These
tests pin that decision in the installed accelerate (a version that moves it fails here, not on 8
GPUs) and check that the patched preparation hands accelerate an accelerator that says ``no`` while
everything else is the real one's."""

from __future__ import annotations

import inspect

from py4.train import fsdp


def test_accelerate_upcasts_on_mixed_precision_only():
    from accelerate.utils import fsdp_utils

    source = inspect.getsource(fsdp_utils.fsdp2_prepare_model)
    assert 'if accelerator.mixed_precision != "no" and not model_has_params4bit:' in source
    assert "param.data = param.data.to(torch.float32)" in source


def test_keep_param_dtype_shows_no_mixed_precision_to_the_preparation(monkeypatch):
    import accelerate.accelerator as accelerator_module

    seen = {}

    def fake_prepare(accelerator, model):
        seen["mixed_precision"] = accelerator.mixed_precision
        seen["device"] = accelerator.device
        return model

    monkeypatch.setattr(accelerator_module, "fsdp2_prepare_model", fake_prepare)
    monkeypatch.setattr(fsdp, "_PREPARE", None)
    fsdp.keep_param_dtype()

    class Real:
        mixed_precision = "bf16"
        device = "cuda:3"

    model = object()
    assert accelerator_module.fsdp2_prepare_model(Real(), model) is model
    assert seen == {"mixed_precision": "no", "device": "cuda:3"}
