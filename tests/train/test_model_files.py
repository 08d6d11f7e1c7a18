"""A training stage's output of a multimodal model is a complete model folder: the processor files
(which neither the model's nor the tokenizer's save writes) come from the -it model, as the graft
takes them. vLLM builds a Gemma-4 model's processor at start; without them it cannot serve the
folder. The source here is a tiny folder holding the files a Gemma-4 -it checkpoint ships."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from py4.train.model_files import PROCESSOR_FILES, copy_files, copy_processor_files

# What transformers names them (transformers.utils: PROCESSOR_NAME, IMAGE_PROCESSOR_NAME,
# VIDEO_PROCESSOR_NAME, AUDIO_TOKENIZER_NAME; CHAT_TEMPLATE_FILE): the list must follow it.
PROCESSOR_JSON = {"processor_class": "Gemma4Processor", "image_seq_length": 280}


def test_the_list_names_transformers_processor_files():
    import transformers.utils as tu
    from transformers.utils import CHAT_TEMPLATE_FILE

    names = {tu.PROCESSOR_NAME, tu.IMAGE_PROCESSOR_NAME, tu.FEATURE_EXTRACTOR_NAME, tu.VIDEO_PROCESSOR_NAME,
             tu.AUDIO_TOKENIZER_NAME, CHAT_TEMPLATE_FILE}
    assert names <= set(PROCESSOR_FILES)


def _it_folder(root: Path) -> Path:
    it = root / "it"
    it.mkdir()
    (it / "processor_config.json").write_text(json.dumps(PROCESSOR_JSON))
    (it / "preprocessor_config.json").write_text('{"image_processor_type": "Gemma4ImageProcessor"}')
    (it / "video_preprocessor_config.json").write_text('{"video_processor_type": "Gemma4VideoProcessor"}')
    (it / "chat_template.jinja").write_text("{{ it template }}")
    return it


def test_processor_files_come_from_the_first_source_holding_them(tmp_path):
    it = _it_folder(tmp_path)
    base = tmp_path / "base"
    base.mkdir()
    (base / "preprocessor_config.json").write_text('{"from": "base"}')
    (base / "audio_tokenizer_config.json").write_text('{"from": "base"}')
    out = tmp_path / "model"
    out.mkdir()
    (out / "chat_template.jinja").write_text("{{ the tokenizer's save }}")
    copied = copy_processor_files([(str(it), None), (str(base), None)], out)
    assert {n: c["from"] for n, c in copied.items()} == {
        "processor_config.json": str(it), "preprocessor_config.json": str(it),
        "video_preprocessor_config.json": str(it), "audio_tokenizer_config.json": str(base)}
    assert json.loads((out / "processor_config.json").read_text()) == PROCESSOR_JSON
    assert (out / "chat_template.jinja").read_text() == "{{ the tokenizer's save }}"  # never over the save's


def test_an_unreachable_hub_source_is_passed_over(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    it = _it_folder(tmp_path)
    out = tmp_path / "model"
    out.mkdir()
    copied = copy_processor_files([("google/gemma-4-31B-it", "842da379"), (str(it), None)], out)
    assert set(copied) == {"processor_config.json", "preprocessor_config.json", "video_preprocessor_config.json",
                           "chat_template.jinja"}


def test_copies_take_the_umasks_mode_and_replace_atomically(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "config.json").write_text("{}")
    out = tmp_path / "out"
    copy_files(src, out, ["config.json", "absent.json"])
    assert sorted(p.name for p in out.iterdir()) == ["config.json"]


@pytest.mark.smoke
def test_a_trained_model_folder_holds_the_processor_files(smoke_assets, tmp_path):
    """Midtraining (py4.train.packed, as SFT) of a model whose tokenizer source is an -it folder with
    a processor: the saved model folder has its processor files, and the manifest says whence."""
    import shutil

    from train_helpers import pack_text

    from py4.chat.smoke_tokenizer import stdlib_texts
    from py4.stages import config_type
    from py4.train import midtrain

    it = _it_folder(tmp_path)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        if (smoke_assets / "tokenizer" / name).is_file():
            shutil.copy(smoke_assets / "tokenizer" / name, it / name)
    docs = [t[:2000] for t in stdlib_texts(60_000)][:4]
    data = pack_text(tmp_path / "packed", smoke_assets / "tokenizer", docs, seq_len=64, micro_batch=1, warmup=0)
    config = config_type("midtrain").model_validate({
        "model": {"path": str(smoke_assets / "base"), "tokenizer_path": str(it)}, "data": {"path": str(data)},
        "optimisation": {"optim": "adamw_torch", "micro_batch": 1, "max_steps": 1, "warmup": 0},
        "run": {"output_dir": str(tmp_path / "run"), "save_steps": 10, "report_to": [], "progress_bar": False}})
    midtrain.run(config)
    model_dir = tmp_path / "run" / "model"
    for name in ("processor_config.json", "preprocessor_config.json", "video_preprocessor_config.json"):
        assert (model_dir / name).read_bytes() == (it / name).read_bytes(), name
    manifest = json.loads((tmp_path / "run" / "run_manifest.json").read_text())
    assert manifest["processor_files"]["processor_config.json"]["from"] == str(it)
