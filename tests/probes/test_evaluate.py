"""py4.probes.evaluate: a --base / --compare results.json must be of the probe set being scored,
and a local model is placed on the GPUs when CUDA is available."""

from __future__ import annotations

import json

import pytest


def _probe_set() -> tuple[list[dict], str]:
    from py4.problems.probe_set.build import load_probes, probe_paths

    return load_probes(), json.loads(probe_paths()[1].read_text())["jsonl_sha256"]


def _results_of(probes: list[dict], sha: str) -> dict:
    """A probes results.json covering every pair id, made on the probe set with hash ``sha``."""
    return {"model": "m", "probes": {"version": 1, "jsonl_sha256": sha},
            "scores": [{"id": p["id"], "p4_logprob": -1.0, "py3_logprob": -2.0, "p4_tokens": 1, "py3_tokens": 1}
                       for p in probes]}


@pytest.mark.parametrize("flag", ["--base", "--compare"])
def test_results_of_another_probe_set_are_refused_though_ids_cover(tmp_path, flag):
    from py4.errors import Py4Error
    from py4.probes.evaluate import evaluate_probes

    probes, sha = _probe_set()
    other = tmp_path / "other.json"
    other.write_text(json.dumps(_results_of(probes, "0" * 64)))  # same ids, a rebuilt probe set
    kwargs = {"base": str(other)} if flag == "--base" else {"compare": other}
    with pytest.raises(Py4Error) as err:
        evaluate_probes(str(tmp_path / "no-model"), tmp_path / "out", **kwargs)
    message = str(err.value)
    assert "\n" not in message and flag in message and str(other) in message
    assert "0" * 64 in message and sha in message
    assert not (tmp_path / "out").exists()  # refused before any scoring


def test_results_of_the_same_probe_set_are_read():
    from py4.probes.evaluate import _covering_scores

    probes, sha = _probe_set()
    rows = _covering_scores(_results_of(probes, sha), probes[:5], sha, "r.json", "--compare")
    assert [r["id"] for r in rows] == [p["id"] for p in probes[:5]]


def test_model_load_kwargs_keep_cpu_defaults_and_use_the_gpus_with_cuda(monkeypatch):
    import torch

    from py4.probes.evaluate import model_load_kwargs

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert model_load_kwargs() == {}
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert model_load_kwargs() == {"device_map": "auto", "dtype": "auto"}


def test_load_model_passes_the_placement_to_from_pretrained(monkeypatch, tmp_path):
    import torch
    import transformers

    from py4.probes import evaluate

    calls = []

    class Fake:
        @staticmethod
        def from_pretrained(path, **kwargs):
            calls.append(kwargs)
            return object()

    monkeypatch.setattr(transformers, "AutoModelForCausalLM", Fake)
    monkeypatch.setattr(transformers, "AutoTokenizer", Fake)
    for cuda, expected in ((False, {}), (True, {"device_map": "auto", "dtype": "auto"})):
        calls.clear()
        monkeypatch.setattr(torch.cuda, "is_available", lambda cuda=cuda: cuda)
        evaluate.load_model(str(tmp_path))
        assert calls == [{}, expected]  # the tokenizer, then the model
