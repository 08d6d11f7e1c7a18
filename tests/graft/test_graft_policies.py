"""Name matching, mismatch errors, missing-tensor policies, provenance of -it files."""

from __future__ import annotations

import json

import pytest
import torch

from graft_fixtures import SHAPES, graft_config, load_output, related_triple, write_checkpoint, write_triple
from py4.graft import GraftError, run
from py4.runs import file_sha256, read_manifest


def _expected(triple, name, lam=1.0):
    mid, it, base = (triple[r][name].float() for r in ("mid", "it", "base"))
    return (mid + torch.tensor(lam) * (it - base)).to(torch.bfloat16)


def test_names_match_across_different_shard_layouts(tmp_path):
    triple = related_triple()
    single = write_triple(tmp_path / "single", triple)
    shuffled = write_triple(tmp_path / "sharded", triple, shards={"mid": 1, "it": 3, "base": 4})
    assert (shuffled["it"] / "model.safetensors.index.json").is_file()
    run(graft_config(single, tmp_path / "a", lambda_=0.5), show_progress=False)
    run(graft_config(shuffled, tmp_path / "b", lambda_=0.5), show_progress=False)
    a, b = load_output(tmp_path / "a"), load_output(tmp_path / "b")
    for name in SHAPES:
        assert torch.equal(a[name].view(torch.int16), b[name].view(torch.int16)), name
        assert torch.equal(a[name].view(torch.int16), _expected(triple, name, 0.5).view(torch.int16)), name
    assert (tmp_path / "a" / "model-00001-of-00001.safetensors").read_bytes() == \
        (tmp_path / "b" / "model-00001-of-00001.safetensors").read_bytes()


def test_tensors_are_matched_by_name_not_position(tmp_path):
    # Same shapes, names stored in different orders and files: a positional match would mix them up.
    triple = related_triple()
    reordered = {role: dict(reversed(list(w.items()))) for role, w in triple.items()}
    dirs = {role: write_checkpoint(tmp_path / role, reordered[role], shards=2, seed=7 + i)
            for i, role in enumerate(reordered)}
    run(graft_config(dirs, tmp_path / "out"), show_progress=False)
    out = load_output(tmp_path / "out")
    for name in SHAPES:
        assert torch.equal(out[name].view(torch.int16), _expected(triple, name).view(torch.int16)), name


def test_shape_mismatch_is_an_error_naming_the_tensor(tmp_path):
    triple = related_triple()
    triple["it"]["model.layers.1.mlp.up_proj.weight"] = torch.zeros(25, 16, dtype=torch.bfloat16)
    dirs = write_triple(tmp_path, triple)
    with pytest.raises(GraftError, match=r"model\.layers\.1\.mlp\.up_proj\.weight: shape mismatch: "
                                         r"mid \[24, 16\], it \[25, 16\], base \[24, 16\].*mismatch\.shape=error"):
        run(graft_config(dirs, tmp_path / "out"), show_progress=False)
    assert not (tmp_path / "out" / "model.safetensors.index.json").exists()


def test_shape_mismatch_policy_take_mid(tmp_path):
    triple = related_triple()
    name = "model.layers.1.mlp.up_proj.weight"
    triple["it"][name] = torch.zeros(25, 16, dtype=torch.bfloat16)
    dirs = write_triple(tmp_path, triple)
    result = run(graft_config(dirs, tmp_path / "out", mismatch={"shape": "take_mid"}), show_progress=False)
    assert torch.equal(load_output(tmp_path / "out")[name], triple["mid"][name])
    assert result.copied[name].startswith("take_mid: shape mismatch")
    manifest = read_manifest(tmp_path / "out")
    assert manifest["tensors"]["copied"][name].startswith("take_mid: shape mismatch")


def test_dtype_mismatch_is_an_error_unless_computed(tmp_path):
    triple = related_triple()
    name = "model.norm.weight"
    triple["mid"][name] = triple["mid"][name].float()  # e.g. a midtraining run saved in fp32
    dirs = write_triple(tmp_path, triple)
    with pytest.raises(GraftError, match=r"model\.norm\.weight: dtype mismatch: mid F32, it BF16, base BF16"):
        run(graft_config(dirs, tmp_path / "out"), show_progress=False)
    run(graft_config(dirs, tmp_path / "ok", mismatch={"dtype": "compute"}), show_progress=False)
    assert torch.equal(load_output(tmp_path / "ok")[name], _expected(triple, name))


def test_non_float_shared_tensor_is_an_error_by_default(tmp_path):
    triple = related_triple()
    for role in triple:
        triple[role]["model.position_ids"] = torch.arange(4, dtype=torch.int64)
    dirs = write_triple(tmp_path, triple)
    with pytest.raises(GraftError, match=r"model\.position_ids: not a floating tensor"):
        run(graft_config(dirs, tmp_path / "out"), show_progress=False)
    run(graft_config(dirs, tmp_path / "ok", mismatch={"non_float": "take_it"}), show_progress=False)
    assert torch.equal(load_output(tmp_path / "ok")["model.position_ids"], torch.arange(4))


def _with_extras(triple):
    triple["it"]["vision_tower.patch_embed.weight"] = torch.ones(4, 4, dtype=torch.bfloat16)
    triple["mid"]["mtp_head.weight"] = torch.ones(3, dtype=torch.bfloat16)
    triple["base"]["base_only.weight"] = torch.ones(2, dtype=torch.bfloat16)
    return triple


def test_default_missing_policies_take_it_only_tensors_and_skip_the_others(tmp_path):
    dirs = write_triple(tmp_path, _with_extras(related_triple()))
    result = run(graft_config(dirs, tmp_path / "out"), show_progress=False)
    out = load_output(tmp_path / "out")
    assert torch.equal(out["vision_tower.patch_embed.weight"], torch.ones(4, 4, dtype=torch.bfloat16))
    assert "mtp_head.weight" not in out and "base_only.weight" not in out
    assert result.skipped == {"mtp_head.weight": "only in mid", "base_only.weight": "only in base"}
    manifest = read_manifest(tmp_path / "out")
    assert manifest["tensors"]["skipped"] == result.skipped
    assert manifest["tensors"]["copied"] == {"vision_tower.patch_embed.weight": "take_it: only in it"}
    assert sorted(manifest["tensors"]["grafted"]) == sorted(SHAPES)
    assert manifest["counts"] == {"grafted": len(SHAPES), "copied": 1, "skipped": 2, "shards": 1}


def test_skip_and_error_policies_for_missing_tensors(tmp_path):
    dirs = write_triple(tmp_path, _with_extras(related_triple()))
    result = run(graft_config(dirs, tmp_path / "skip", missing={"only_in_it": "skip", "only_in_mid": "take_mid"}),
                 show_progress=False)
    out = load_output(tmp_path / "skip")
    assert "vision_tower.patch_embed.weight" not in out and "mtp_head.weight" in out
    assert result.skipped["vision_tower.patch_embed.weight"] == "only in it"
    with pytest.raises(GraftError,
                       match=r"vision_tower\.patch_embed\.weight: only in it \(policy missing\.only_in_it=error\)"):
        run(graft_config(dirs, tmp_path / "err", missing={"only_in_it": "error"}), show_progress=False)


def test_missing_in_base_is_an_error_by_default_and_can_take_mid(tmp_path):
    triple = related_triple()
    del triple["base"]["lm_head.weight"]
    dirs = write_triple(tmp_path, triple)
    with pytest.raises(GraftError, match=r"lm_head\.weight: missing in base"):
        run(graft_config(dirs, tmp_path / "out"), show_progress=False)
    run(graft_config(dirs, tmp_path / "ok", missing={"missing_in_base": "take_mid"}), show_progress=False)
    assert torch.equal(load_output(tmp_path / "ok")["lm_head.weight"], triple["mid"]["lm_head.weight"])


def test_every_error_is_listed_at_once(tmp_path):
    triple = related_triple()
    triple["it"]["model.norm.weight"] = torch.zeros(17, dtype=torch.bfloat16)
    del triple["base"]["lm_head.weight"]
    dirs = write_triple(tmp_path, triple)
    with pytest.raises(GraftError, match=r"2 tensor\(s\) cannot be grafted") as info:
        run(graft_config(dirs, tmp_path / "out"), show_progress=False)
    assert "model.norm.weight" in str(info.value) and "lm_head.weight" in str(info.value)


def test_rename_rules_align_prefixes(tmp_path):
    triple = related_triple()
    triple["it"] = {k.replace("model.", "model.language_model.", 1): v for k, v in triple["it"].items()}
    dirs = write_triple(tmp_path, triple)
    rename = {"it": [{"pattern": r"^model\.language_model\.", "replacement": "model."}]}
    run(graft_config(dirs, tmp_path / "out", rename=rename), show_progress=False)
    out = load_output(tmp_path / "out")
    assert set(out) == set(SHAPES)  # stored under mid's names


def test_tokenizer_config_and_template_come_from_it(tmp_path):
    dirs = write_triple(tmp_path, related_triple())
    out = tmp_path / "out"
    run(graft_config(dirs, out), show_progress=False)
    manifest = read_manifest(out)
    for name in ("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
                 "chat_template.jinja"):
        assert (out / name).read_bytes() == (dirs["it"] / name).read_bytes(), name
        assert manifest["aux_files"][name] == {"from": "it", "source": str(dirs["it"] / name),
                                               "sha256": file_sha256(dirs["it"] / name)}
    assert json.loads((out / "config.json").read_text())["made_for"] == "it"
    assert "it template" in (out / "chat_template.jinja").read_text()


def test_manifest_records_inputs_lambda_dtypes_and_timing(tmp_path):
    dirs = write_triple(tmp_path, related_triple(), shards={"it": 2})
    out = tmp_path / "out"
    result = run(graft_config(dirs, out, lambda_=0.25), show_progress=False)
    manifest = read_manifest(out)
    assert manifest["status"] == "done" and manifest["kind"] == "graft"
    assert manifest["lambda_"] == 0.25
    assert (manifest["accumulate_dtype"], manifest["output_dtype"]) == ("float32", "bfloat16")
    for role in ("mid", "it", "base"):
        entry = manifest["inputs"][role]
        assert entry["path"] == str(dirs[role]) and len(entry["sha256"]) == 64
        weights = [f for f in entry["files"] if f.endswith(".safetensors")]
        assert weights and all(entry["files"][f]["sha256"] == file_sha256(dirs[role] / f) for f in weights)
    assert len(manifest["inputs"]["it"]["files"]) > len(manifest["inputs"]["mid"]["files"]) - 1
    assert {"plan_s", "hash_inputs_s", "stream_s", "verify_s", "total_s"} <= set(manifest["timings"])
    assert manifest["peak_rss_bytes"] > 0 and manifest["verification"]["mismatches"] == []
    shards = manifest["outputs"]["model"]["shards"]
    assert {k: v["sha256"] for k, v in shards.items()} == {s: file_sha256(out / s) for s in result.shards}
    assert (out / "resolved_config.yaml").is_file()
    from huggingface_hub import ModelCard  # the graft is a model folder: its card says what made it

    card = ModelCard.load(out / "README.md")
    assert card.data.py4["kind"] == "graft" and card.data.py4["config_sha256"] == manifest["config_sha256"]
    assert all(manifest["inputs"][role]["sha256"] in card.text for role in ("mid", "it", "base"))


def test_metadata_input_hashes_do_not_read_the_weights(tmp_path, monkeypatch):
    import py4.graft.provenance as provenance

    dirs = write_triple(tmp_path, related_triple())
    run(graft_config(dirs, tmp_path / "small", input_hashes="metadata"), show_progress=False)
    files = read_manifest(tmp_path / "small")["inputs"]["mid"]["files"]
    assert "sha256" in files["model.safetensors"]  # small weight files are hashed in full anyway
    monkeypatch.setattr(provenance, "_SMALL_FILE", 0)
    run(graft_config(dirs, tmp_path / "out", input_hashes="metadata"), show_progress=False)
    files = read_manifest(tmp_path / "out")["inputs"]["mid"]["files"]
    assert set(files["model.safetensors"]) == {"size", "header_sha256"}
    assert files["config.json"]["sha256"] == file_sha256(dirs["mid"] / "config.json")
