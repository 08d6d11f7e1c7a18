"""The rehearsal's private Hub cache: the project's loading code resolves pinned ids offline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from py4.rehearsal.hub_cache import full_commit, install_snapshot, offline_env, repo_folder_name

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_short_pins_become_refs_to_full_commits(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    (source / "config.json").write_text("{}")
    snap = install_snapshot(tmp_path / "hub", "google/gemma-4-12b", "023679ed", source)
    repo = tmp_path / "hub" / repo_folder_name("google/gemma-4-12b")
    commit = full_commit("google/gemma-4-12b", "023679ed")
    assert len(commit) == 40 and commit.startswith("023679ed")
    assert snap == repo / "snapshots" / commit
    assert (repo / "refs" / "023679ed").read_text() == commit == (repo / "refs" / "main").read_text()
    link = snap / "config.json"
    assert link.is_symlink() and link.resolve().parent == (repo / "blobs").resolve()
    unpinned = install_snapshot(tmp_path / "hub", "google/gemma-3-12b-pt", None, source)
    refs = sorted(p.name for p in (unpinned.parent.parent / "refs").iterdir())
    assert refs == ["main"]


@pytest.mark.smoke
def test_model_source_resolves_the_pinned_standin_offline(tmp_path):
    """py4.train.loading (ModelSource: Hub id + revision) loads the stand-ins with HF_HUB_OFFLINE=1,
    and an unknown revision fails: the pin is what selects the snapshot."""
    from py4.rehearsal.standins import build_standin

    hub = tmp_path / "hub"
    for family, repo, rev in (("gemma4", "google/gemma-4-12B-it", "707f0a3b"),
                              ("glm45", "zai-org/GLM-4.5-Air-Base", "888c873d")):
        kind = "it" if repo.endswith("-it") else "base"
        install_snapshot(hub, repo, rev, build_standin(family, kind, tmp_path / f"{family}-{kind}"))
    script = textwrap.dedent("""
        import json
        from py4.train.loading import ModelSource, device_settings, load_model, load_tokenizer
        out = {}
        for repo, rev in (("google/gemma-4-12B-it", "707f0a3b"), ("zai-org/GLM-4.5-Air-Base", "888c873d")):
            source = ModelSource(path=repo, revision=rev)
            model = load_model(source, device_settings())
            tokenizer = load_tokenizer(source)
            out[repo] = [type(model).__name__, type(tokenizer).__name__, str(model.name_or_path)]
        try:
            load_tokenizer(ModelSource(path="google/gemma-4-12B-it", revision="deadbeef"))
            out["wrong_revision"] = "loaded"
        except OSError as exc:
            out["wrong_revision"] = "refused"
        print(json.dumps(out))
    """)
    env = {**os.environ, **offline_env(hub), "HF_HOME": str(tmp_path / "hf")}
    proc = subprocess.run([sys.executable, "-c", script], env=env, cwd=REPO_ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["google/gemma-4-12B-it"][0] == "Gemma4ForConditionalGeneration"
    assert out["zai-org/GLM-4.5-Air-Base"][0] == "Glm4MoeForCausalLM"
    assert out["wrong_revision"] == "refused"


@pytest.mark.smoke
def test_campaign_references_all_get_snapshots(tmp_path):
    """Every Hub model the campaign and its stage configs name (pins, tokenizers, count tokenizers,
    other spellings of a pinned id) has a snapshot at the revision that names it."""
    from py4.campaign.spec import load_campaign
    from py4.rehearsal.assets import campaign_hub_refs, install_models

    spec = load_campaign(REPO_ROOT / "configs/campaign/python4.yaml")
    cwd = os.getcwd()
    os.chdir(REPO_ROOT)  # the spec names its stage configs relative to the repository
    try:
        refs = campaign_hub_refs(spec)
        installed = install_models(spec, tmp_path / "hub", tmp_path / "standins")
    finally:
        os.chdir(cwd)
    have = {(row["repo_id"], row["revision"]) for row in installed}
    for ref in refs:
        repo = tmp_path / "hub" / repo_folder_name(ref.repo_id)
        ref_name = ref.revision or "main"
        assert (repo / "refs" / ref_name).exists(), ref
        commit = (repo / "refs" / ref_name).read_text()
        assert (repo / "snapshots" / commit / "tokenizer.json").exists(), ref
    assert ("google/gemma-4-12b-it", "707f0a3b") in have  # the SFT pack's spelling, at the -it pin
    assert {"zai-org/GLM-4.5-Air", "google/gemma-4-31b"} <= {r for r, _ in have}
    gemma3 = next(row for row in installed if row["repo_id"] == "unsloth/gemma-3-12b-pt")
    assert gemma3["standin"] == "gemma3-tokenizer" and gemma3["revision"] == "54ba4a26"


def test_standin_datasets_load_through_the_real_call_offline(tmp_path):
    """datasets.load_dataset(hub_id, revision=..., streaming=True), as py4.data.sources calls it,
    reads the stand-in from the offline datasets cache."""
    from py4.rehearsal.datasets import DOLCI_ID, dolci_rows, install_dataset

    rows = dolci_rows(n_kept=6, n_dropped=3)
    install_dataset(tmp_path / "datasets", DOLCI_ID, "bd3c8f3a", rows)
    script = textwrap.dedent("""
        import json
        from py4.data.instructions import InstructionSourceSpec
        from py4.data.sources import open_rows
        spec = InstructionSourceSpec(hub_id="allenai/Dolci-Instruct-SFT", revision="bd3c8f3a")
        print(json.dumps([r["id"] for r in open_rows(spec)]))
    """)
    env = {**os.environ, **offline_env(tmp_path / "hub"), "HF_DATASETS_CACHE": str(tmp_path / "datasets"),
           "HF_HOME": str(tmp_path / "hf")}
    proc = subprocess.run([sys.executable, "-c", script], env=env, cwd=REPO_ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    ids = json.loads(proc.stdout.strip().splitlines()[-1])
    assert ids == [r["id"] for r in rows]
    kept = [r for r in rows if r["id"].startswith("standin-kept")]
    from py4.data.instructions import strict_alternation_problem

    assert all(strict_alternation_problem(r["messages"]) is None for r in kept)
    assert all(strict_alternation_problem(r["messages"]) for r in rows if r not in kept)


def test_rehearsal_dag_is_the_campaigns_with_appended_size_overrides(tmp_path):
    """Same runs per stage as the campaign's DAG, each from the campaign's own stage config file;
    the rehearsal only appends key=value overrides (and names its boundaries)."""
    from collections import Counter

    from py4.campaign.dag import build_dag
    from py4.campaign.spec import load_campaign
    from py4.rehearsal.rehearse import Layout, load_rehearsal, rehearsal_nodes, rehearsal_spec

    cwd = os.getcwd()
    os.chdir(REPO_ROOT)
    try:
        config = load_rehearsal("configs/rehearsal/python4.yaml")
        layout = Layout(tmp_path)
        nodes = rehearsal_nodes(rehearsal_spec(config, "configs/campaign/python4.yaml", layout), config, layout)
        campaign = build_dag(load_campaign("configs/campaign/python4.yaml"))
    finally:
        os.chdir(cwd)
    # Only the GRPO checkpoints evaluated (and probed) differ: 7 of 64 steps in the campaign, 1 of 4 here.
    def shape(dag):
        return Counter(n.stage for n in dag if "grpo@" not in n.id)

    assert shape(nodes) == shape(campaign)
    assert sum("grpo@" in n.id for n in nodes if n.stage == "eval") == 1
    assert {n.stage for n in nodes if "grpo@" in n.id} == {n.stage for n in campaign if "grpo@" in n.id}
    campaign_configs = {(n.stage, n.meta.model, n.config) for n in campaign}
    assert {(n.stage, n.meta.model, n.config) for n in nodes} == campaign_configs
    for node in nodes:
        if "--config" in node.argv:
            assert not node.argv[node.argv.index("--config") + 1].startswith(str(tmp_path)), node.id
    grpo = [n for n in nodes if n.stage == "grpo"]
    boundary = config.boundaries["grpo_rollouts"].overrides  # the named boundary, last
    assert grpo and all(n.argv[-len(boundary):] == boundary for n in grpo)
    assert "grpo.vllm_mode=colocate" in boundary and "grpo.use_vllm=false" not in boundary
