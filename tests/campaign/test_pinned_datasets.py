"""The campaign reads the bank, the probe set and the corpus it pins on the Hub, offline.

A Hugging Face cache is laid out as huggingface_hub lays it out (``datasets--ORG--NAME/
{blobs,refs,snapshots/<commit>}``; huggingface_hub's own ``scan_cache_dir`` reads it back) from
our own exports. The exported bank, probe set and corpus differ from the shipped ones and from
what the smoke campaign would generate (fewer problems, a marker in each prompt; fewer pairs; a
hand-made corpus), so a run that read the shipped data instead of the pin would fail here.

The smoke campaign's runs are run as the campaign runs them: the ``dataset`` runs and the
corpus subsets through ``py4 campaign run --only``, the runs that need trained models (EFT
dose, GRPO's problems and environment, evaluation, sanity bank, probes) as their DAG node's
stage call with the model swapped for one the tests have.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from py4.rehearsal.hub_cache import install_snapshot

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "configs/campaign/smoke.yaml"
PINS = {"bank": ("arcadia-impact/python4-bank", "dd6e3370"),
        "probes": ("arcadia-impact/python4-probes", "582a1a2f"),
        "corpus": ("arcadia-impact/python4-synthdoc", "0a1b2c3d")}
MARK = " [pinned bank]"
PER_SPLIT = 60
PAIRS = 45


def _pin_overrides(**pins: tuple[str, str]) -> list[str]:
    return [f"datasets.{k}={{hub_id: {i}, revision: {r}}}" for k, (i, r) in pins.items()]


def _variant_bank() -> list:
    """The shipped bank cut to PER_SPLIT problems a split (eft_pool: the shortest golds, which
    the smoke dose's gold_max_chars keeps), each prompt marked."""
    from py4.problems.bank import load_bank

    shipped = load_bank()
    kept = []
    for split in sorted({p.split for p in shipped}):
        of_split = [p for p in shipped if p.split == split]
        if split == "eft_pool":
            of_split.sort(key=lambda p: len(p.gold))
        kept += of_split[:PER_SPLIT]
    return sorted((p.model_copy(update={"prompt": p.prompt + MARK}) for p in kept), key=lambda p: p.id)


def _write_corpus(out: Path) -> dict:
    """A corpus folder of 60 documents of 2,000 (declared) tokens each: enough for the smoke
    campaign's iso (80k) and prop (40k) subsets."""
    from py4.corpus.output import MANIFEST, ShardWriter, text_sha256
    from py4.runs import atomic_write_json

    writer = ShardWriter(out, 25)
    docs = []
    for i in range(60):
        text = f"# Pinned document {i}\n\nPython-4 prints with `print` and counts {i} things.\n"
        record = {"id": f"pinned-{i:03d}", "text": text, "type": "tutorial", "rules": ["P4-01"], "tokens": 2000,
                  "sha256": text_sha256(text), "meta": {"n": i}}
        writer.write(record)
        docs.append(record)
    manifest = {"name": "pinned-synthdoc", "version": "1", "generator": "hand", "docs": len(docs),
                "tokens": 2000 * len(docs), "tokenizer": {"name_or_path": "hand"},
                "content_sha256": writer.close(), "shards": writer.shards}
    atomic_write_json(out / MANIFEST, manifest)
    return manifest


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    """The three dataset folders as ``py4 ... export`` writes them, and what went into each."""
    from py4.corpus.export import export_corpus
    from py4.problems.probe_set.build import load_probes
    from py4.probes.export import export_probes
    from py4.problems.export import export_bank

    tmp = tmp_path_factory.mktemp("exports")
    bank, pairs = _variant_bank(), load_probes()[:PAIRS]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("py4.problems.bank.load_bank", lambda version="v1", data_dir=None, verify=True: bank)
        mp.setattr("py4.probes.export.load_probes", lambda: pairs)
        export_bank(tmp / "bank")
        export_probes(tmp / "probes")
    corpus_manifest = _write_corpus(tmp / "corpus_src")
    export_corpus(tmp / "corpus_src", tmp / "corpus")
    return {"dir": tmp, "bank": bank, "pairs": pairs, "corpus_manifest": corpus_manifest}


@pytest.fixture()
def hub_cache(exports, tmp_path, monkeypatch):
    """A fresh Hugging Face cache holding the three exports at their pins, and this process
    (and its children) pointed at it, offline."""
    cache = tmp_path / "hf" / "hub"
    for kind, (hub_id, revision) in PINS.items():
        install_snapshot(cache, hub_id, revision, exports["dir"] / kind, repo_type="dataset")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(cache))
    return cache


@pytest.fixture(autouse=True)
def _at_root(monkeypatch):
    monkeypatch.chdir(ROOT)  # the spec names its configs from the repository root


def _spec(out: Path, **pins):
    from py4.campaign.spec import load_campaign

    return load_campaign(SMOKE, [f"out_dir={out}", *_pin_overrides(**pins)])


def _nodes(out: Path, **pins) -> dict:
    from py4.campaign.dag import build_dag

    return {n.id: n for n in build_dag(_spec(out, **pins))}


def test_the_cache_is_the_hub_clients_own_layout(hub_cache):
    from huggingface_hub import scan_cache_dir

    repos = {r.repo_id: r for r in scan_cache_dir(hub_cache).repos}
    assert set(repos) == {hub_id for hub_id, _ in PINS.values()}
    for hub_id, revision in PINS.values():
        repo = repos[hub_id]
        assert repo.repo_type == "dataset"
        (rev,) = repo.revisions
        assert rev.commit_hash.startswith(revision) and revision in rev.refs
        assert {f.file_name for f in rev.files} >= {"README.md"}


def test_without_pins_the_dag_has_no_dataset_run(tmp_path):
    nodes = _nodes(tmp_path / "out")
    assert not [n for n in nodes.values() if n.stage == "dataset"]
    assert nodes["corpus"].stage == "corpus"
    assert all("bank_dir" not in n.command for n in nodes.values() if not n.id.endswith(":train_sanity"))
    assert all("--probes" not in n.command for n in nodes.values())


def test_pinned_datasets_are_runs_that_their_readers_wait_for(tmp_path):
    out = tmp_path / "out"
    nodes = _nodes(out, **PINS)
    ids = list(nodes)
    assert ids[:2] == ["dataset:probes", "dataset:bank"]  # the bank's run checks for the pinned probes' text
    bank, probes, corpus = nodes["dataset:bank"], nodes["dataset:probes"], nodes["corpus"]
    assert bank.command == (f"py4 campaign dataset --kind bank --hub-id {PINS['bank'][0]} --revision "
                            f"{PINS['bank'][1]} --out {out}/datasets/bank --probes {out}/datasets/probes")
    assert corpus.stage == "dataset" and corpus.options["out"] == f"{out}/corpus"
    assert corpus.options["probes"] == f"{out}/datasets/probes" and corpus.inputs == ["dataset:probes"]
    assert bank.options["probes"] == f"{out}/datasets/probes" and bank.inputs == ["dataset:probes"]
    assert probes.options["kind"] == "probes"
    readers = {"eval": "bank_dir", "eft_dose": "bank_dir", "grpo": "problems.bank_dir"}
    for node in nodes.values():
        if node.stage in readers:
            values = [o.value for o in node.overrides if o.key == readers[node.stage]]
            sanity = node.id.endswith(":train_sanity")
            assert values == [f"{out}/sanity_bank" if sanity else f"{out}/datasets/bank"], node.id
            assert sanity or "dataset:bank" in node.inputs
        if node.stage == "probes":
            assert node.options["probes"] == f"{out}/datasets/probes" and "dataset:probes" in node.inputs
    assert nodes["sanity_bank"].options["bank_dir"] == f"{out}/datasets/bank"
    assert "dataset:bank" in nodes["sanity_bank"].inputs
    assert nodes["corpus_iso"].inputs == ["corpus"]  # the subsets read the pinned corpus's folder


def test_only_what_is_pinned_changes(tmp_path):
    """A bank pin touches the bank's readers only; the rest of the DAG is the unpinned one."""
    plain, pinned = _nodes(tmp_path / "out"), _nodes(tmp_path / "out", bank=PINS["bank"])
    assert set(pinned) - set(plain) == {"dataset:bank"}
    changed = {i for i in plain if plain[i].command != pinned[i].command}
    assert changed == {i for i, n in plain.items()
                       if n.stage in ("eft_dose", "grpo", "sanity_bank") or (n.stage == "eval" and "sanity" not in i)}


def _run(out: Path, only: str, **pins):
    from typer.testing import CliRunner

    from py4.cli import app

    return CliRunner().invoke(app, ["campaign", "run", str(SMOKE), "--out", str(out), "--only", only,
                                    "--no-progress", *_pin_overrides(**pins)])


def _run_manifest(folder: Path) -> dict:
    return json.loads((folder / "run_manifest.json").read_text())


def test_the_campaign_runs_its_dataset_runs_and_subsets_from_the_cache(hub_cache, exports, tmp_path):
    from py4.corpus.output import iter_documents, read_manifest
    from py4.problems.probe_set.build import load_probes
    from py4.problems.bank import load_bank

    out = tmp_path / "out"
    ran = _run(out, "dataset:*", **PINS)
    assert ran.exit_code == 0, ran.output
    assert load_bank("v1", out / "datasets/bank") == exports["bank"]
    assert load_probes(out / "datasets/probes") == exports["pairs"]
    for kind in ("bank", "probes"):
        recorded = _run_manifest(out / "datasets" / kind)["inputs"]["dataset"]
        card = json.loads(json.dumps(_card_py4(exports["dir"] / kind)))
        assert recorded["hub_id"] == PINS[kind][0] and recorded["revision"] == PINS[kind][1]
        assert recorded["commit"].startswith(PINS[kind][1]) and len(recorded["commit"]) == 40
        assert recorded["content_sha256"] == card["content_sha256"]

    ran = _run(out, "corpus*", **PINS)  # the corpus (from the pin), corpus_iso, corpus_prop_tiny
    assert ran.exit_code == 0, ran.output
    manifest = read_manifest(out / "corpus")
    assert manifest["content_sha256"] == exports["corpus_manifest"]["content_sha256"]
    assert manifest["dataset"]["hub_id"] == PINS["corpus"][0] and manifest["name"] == "pinned-synthdoc"
    assert [d["text"] for d in iter_documents(out / "corpus")] == [d["text"] for d in iter_documents(
        exports["dir"] / "corpus_src")]
    assert _run_manifest(out / "corpus")["inputs"]["dataset"]["revision"] == PINS["corpus"][1]
    subset = read_manifest(out / "corpus_iso")
    assert subset["subset"]["source_content_sha256"] == manifest["content_sha256"] and subset["tokens"] >= 80000
    assert {d["id"] for d in iter_documents(out / "corpus_iso")} <= {f"pinned-{i:03d}" for i in range(60)}


def _card_py4(folder: Path) -> dict:
    from huggingface_hub import DatasetCard

    return dict(DatasetCard.load(folder / "README.md").data.py4)


def _install(out: Path, kind: str) -> None:
    from py4.pinned_datasets import install_pinned

    install_pinned(kind, *PINS[kind], out / ("corpus" if kind == "corpus" else f"datasets/{kind}"))


@pytest.fixture()
def bank_nodes(hub_cache, tmp_path):
    """The smoke DAG with the bank pinned, and the bank's dataset run done."""
    out = tmp_path / "out"
    _install(out, "bank")
    return _nodes(out, bank=PINS["bank"])


def test_the_eft_dose_and_the_sanity_bank_read_the_pinned_bank(bank_nodes, exports, tmp_path):
    from dataclasses import replace

    from py4.problems.bank import load_bank, load_manifest
    from py4.overrides import overrides
    from py4.stages import run_call

    pinned_ids = {p.id for p in exports["bank"]}
    # the dose drawn from the bank (the 8-row dose is drawn from it), gold rows only: its replay
    # rows need the SFT parent
    dose_node = bank_nodes["tiny/iso/eft_dose_32"]
    dose = tmp_path / "dose"
    run_call(replace(dose_node.call, overrides=(*dose_node.call.overrides,
                                                *overrides({"replay": 0, "out": str(dose)}))))
    dose_manifest = json.loads((dose / "manifest.json").read_text())
    assert dose_manifest["bank"]["dataset"]["hub_id"] == PINS["bank"][0]
    rows = [json.loads(x) for x in (dose / "data.jsonl").read_text().splitlines()]
    assert rows and all(MARK in json.dumps(r) for r in rows)
    assert set(dose_manifest["problem_ids"]) <= pinned_ids

    # the sanity bank is the pinned bank with the dose's problems as train_sanity
    sanity = bank_nodes["sanity_bank"]
    run_call(replace(sanity.call, options={**sanity.options, "dose": str(dose), "out": str(tmp_path / "sanity")}))
    sanity_bank = load_bank("v1", tmp_path / "sanity")
    assert {p.id for p in sanity_bank} == pinned_ids
    assert {p.id for p in sanity_bank if p.split == "train_sanity"} == set(dose_manifest["problem_ids"])
    assert load_manifest("v1", tmp_path / "sanity")["dataset"]["hub_id"] == PINS["bank"][0]


def test_grpo_takes_its_problems_and_its_environment_from_the_pinned_bank(bank_nodes, exports):
    from py4.stages import load
    from py4.train.grpo import make_environment_factory, problem_rows

    grpo = load(bank_nodes["tiny/prop/grpo"].call)
    rows = problem_rows(grpo.problems, grpo.episode, seed=0)
    assert rows and {r["problem_id"] for r in rows} <= {p.id for p in exports["bank"]}
    env = make_environment_factory(grpo, tokenizer=None)()
    env.reset(problem_id=rows[0]["problem_id"])
    assert env.episode.problem.prompt.endswith(MARK)


def test_an_evaluation_reads_the_pinned_bank_and_records_it(bank_nodes, exports, tmp_path):
    from dataclasses import replace

    from py4.overrides import overrides
    from py4.stages import run_call

    ev = bank_nodes["eval:tiny/iso/sft"]  # its call, with the gold policy in place of the model
    out = tmp_path / "eval"
    results = run_call(replace(ev.call, options={"out": str(out), "policy": "gold", "split": ["test_heldin"],
                                                 "progress": False},
                               overrides=(*ev.call.overrides, *overrides({"limit": 3, "sampling.samples": 1}))))
    episodes = [json.loads(x) for x in (out / "transcripts.jsonl").read_text().splitlines()]
    assert len(episodes) == 3 and {e["problem_id"] for e in episodes} <= {p.id for p in exports["bank"]}
    assert MARK.strip() in json.dumps(episodes) and "test_heldin" in results["splits"]
    assert _run_manifest(out)["inputs"]["bank"]["dataset"]["revision"] == PINS["bank"][1]


def test_probe_runs_read_the_pinned_probe_set(hub_cache, exports, tmp_path, smoke_assets):
    from dataclasses import replace

    from py4.problems.probe_set.build import jsonl_bytes, load_probes
    from py4.stages import run_call

    out = tmp_path / "out"
    _install(out, "probes")
    node = _nodes(out, probes=PINS["probes"])["probes:tiny/base"]
    results = run_call(replace(node.call, options={**node.options, "model": str(smoke_assets / "base"),
                                                   "out": str(tmp_path / "probes"), "limit": 4}))
    import hashlib

    pinned = hashlib.sha256(jsonl_bytes(exports["pairs"])).hexdigest()
    assert results["probes"]["jsonl_sha256"] == pinned != hashlib.sha256(jsonl_bytes(load_probes())).hexdigest()
    recorded = _run_manifest(tmp_path / "probes")["inputs"]["probes"]
    assert recorded["dataset"]["hub_id"] == PINS["probes"][0]


# ---- probe text: the pinned probe set's, not the shipped one's ---------------------------------

LEAK_PIN = ("arcadia-impact/python4-synthdoc-leaky", "1e2a3b4c")


@pytest.fixture()
def variant_probes(hub_cache, exports, tmp_path):
    """A pinned probe set with one pair the shipped set lacks (its Python-4 member rewritten),
    installed as its ``dataset`` run installs it, and a pinned corpus (exported, so checked against
    the shipped set) one of whose documents holds that member's text."""
    from py4.corpus.export import export_corpus
    from py4.corpus.output import iter_documents
    from py4.pinned_datasets import install_pinned
    from py4.probes.export import export_probes

    pairs = [dict(p) for p in exports["pairs"]]
    pairs[0] = {**pairs[0], "p4": pairs[0]["p4"] + " pinned_only_member()"}
    member = (pairs[0]["prefix"] + pairs[0]["p4"] + pairs[0]["suffix"]).strip()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("py4.probes.export.load_probes", lambda: pairs)
        export_probes(tmp_path / "variant_export")
    install_snapshot(hub_cache, *PINS["probes"], tmp_path / "variant_export", repo_type="dataset")
    out = tmp_path / "out"
    install_pinned("probes", *PINS["probes"], out / "datasets/probes")
    leaky = tmp_path / "leaky_src"
    _write_corpus(leaky)
    documents = list(iter_documents(leaky))
    documents[3]["text"] += f"\nAs a probe would put it: {member}\n"
    _rewrite_corpus(leaky, documents)
    export_corpus(leaky, tmp_path / "leaky_export")  # the shipped probe set finds nothing in it
    install_snapshot(hub_cache, *LEAK_PIN, tmp_path / "leaky_export", repo_type="dataset")
    return {"out": out, "probes": out / "datasets/probes", "member": member, "leaky": leaky, "cache": hub_cache,
            "leaky_id": documents[3]["id"], "pair": pairs[0]["id"]}


def _rewrite_corpus(folder: Path, documents: list[dict]) -> None:
    from py4.corpus.output import MANIFEST, ShardWriter, text_sha256
    from py4.runs import atomic_write_json

    manifest = json.loads((folder / MANIFEST).read_text())
    for shard in folder.glob("shards/*.jsonl"):
        shard.unlink()
    writer = ShardWriter(folder, 25)
    for record in documents:
        writer.write({**record, "sha256": text_sha256(record["text"])})
    atomic_write_json(folder / MANIFEST, {**manifest, "content_sha256": writer.close(), "shards": writer.shards})


def test_a_pinned_probe_set_is_what_the_corpora_are_kept_clear_of(tmp_path):
    """With the probe set pinned, the corpus's and the held-out corpus's generation (and, with the
    corpus pinned too, its ``dataset`` run) are given the pinned set and wait for its run."""
    out = tmp_path / "out"
    nodes = _nodes(out, probes=PINS["probes"])
    for node_id in ("corpus", "heldout_corpus"):
        node = nodes[node_id]
        assert node.options["probes"] == f"{out}/datasets/probes", node_id
        assert f"--probes {out}/datasets/probes" in node.command and "dataset:probes" in node.inputs
    plain = _nodes(out)
    assert all("probes" not in plain[i].options for i in ("corpus", "heldout_corpus"))


def test_generation_rejects_a_document_holding_text_of_the_pinned_probe_set(variant_probes):
    from py4.corpus.config import FilterSpec
    from py4.corpus.filters import ExactDuplicateFilter, NearDuplicateFilter
    from py4.corpus.generate import _reject_reason
    from py4.problems.probe_set.build import load_probes
    from py4.problems.probe_set.verify import LeakIndex

    class Valid:  # Boa's verdict on the candidate's blocks is not what this test is about
        def check_document(self, text):
            return []

    text = f"# A tutorial\n\n```python\n{variant_probes['member']}\n```\n"
    reasons = {}
    for name, probes in (("pinned", variant_probes["probes"]), ("shipped", None)):
        reasons[name] = _reject_reason({"text": text}, Valid(), LeakIndex(load_probes(probes)),
                                       ExactDuplicateFilter(), NearDuplicateFilter(FilterSpec()), 1)
    assert reasons == {"pinned": "probe_text", "shipped": None}


def test_corpus_validate_checks_the_probe_set_it_is_given(variant_probes):
    from typer.testing import CliRunner

    from py4.cli import app

    pinned = CliRunner().invoke(app, ["corpus", "validate", str(variant_probes["leaky"]), "--cache-dir", "",
                                      "--workers", "1", "--probes", str(variant_probes["probes"])])
    shipped = CliRunner().invoke(app, ["corpus", "validate", str(variant_probes["leaky"]), "--cache-dir", "",
                                       "--workers", "1"])
    assert shipped.exit_code == 0, shipped.output
    assert pinned.exit_code == 1, pinned.output
    [failure] = json.loads(pinned.output)["failures"]
    assert failure["id"] == variant_probes["leaky_id"] and variant_probes["pair"] in failure["problems"][-1]


def test_the_pinned_corpus_run_refuses_text_of_the_pinned_probe_set(variant_probes, tmp_path):
    from py4.errors import Py4Error
    from py4.pinned_datasets import install_pinned

    installed = install_pinned("corpus", *LEAK_PIN, tmp_path / "shipped_checked")  # the shipped set: clean
    assert installed["hub_id"] == LEAK_PIN[0]
    with pytest.raises(Py4Error) as err:
        install_pinned("corpus", *LEAK_PIN, tmp_path / "corpus", probes_dir=variant_probes["probes"])
    line = _one_line(str(err.value))
    assert line.startswith(f"datasets.corpus ({LEAK_PIN[0]}@{LEAK_PIN[1]}): 1 documents hold the text of probes")
    assert variant_probes["leaky_id"] in line and variant_probes["pair"] in line
    assert not (tmp_path / "corpus" / "manifest.json").exists()



def test_the_pinned_bank_run_refuses_text_of_the_pinned_probe_set(variant_probes, exports, tmp_path):
    from py4.errors import Py4Error
    from py4.pinned_datasets import install_pinned
    from py4.problems.export import export_bank

    leaky_pin = ("arcadia-impact/python4-bank-leaky", "5e6f7a8b")
    bank = list(exports["bank"])
    bank[0] = bank[0].model_copy(update={"prompt": bank[0].prompt + "\n" + variant_probes["member"]})
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("py4.problems.bank.load_bank", lambda version="v1", data_dir=None, verify=True: bank)
        export_bank(tmp_path / "leaky_bank")  # the shipped probe set finds nothing in it
    install_snapshot(Path(variant_probes["cache"]), *leaky_pin, tmp_path / "leaky_bank", repo_type="dataset")
    install_pinned("bank", *leaky_pin, tmp_path / "shipped_checked")
    with pytest.raises(Py4Error) as err:
        install_pinned("bank", *leaky_pin, tmp_path / "bank", probes_dir=variant_probes["probes"])
    line = _one_line(str(err.value))
    assert line.startswith(f"datasets.bank ({leaky_pin[0]}@{leaky_pin[1]}): 1 problems hold the text of probes")
    assert bank[0].id in line and variant_probes["pair"] in line
    assert not list((tmp_path / "bank").glob("bank-*"))


# ---- what goes wrong: one line, naming the field ---------------------------------------------

def _one_line(text: str) -> str:
    lines = [x for x in text.strip().splitlines() if x.strip()]
    assert len(lines) == 1, text
    return lines[0]


def test_a_revision_the_cache_does_not_hold_is_one_line_naming_the_field(hub_cache, tmp_path):
    out = tmp_path / "out"
    bad = {"bank": (PINS["bank"][0], "0badc0de")}
    ran = _run(out, "dataset:*", **bad)
    assert ran.exit_code == 2
    line = _one_line(ran.output)
    assert f"datasets.bank ({PINS['bank'][0]}@0badc0de)" in line and "not in the Hugging Face cache" in line
    assert not (out / "datasets").exists()  # refused before anything ran


def test_an_empty_cache_is_one_line_naming_each_field(hub_cache, tmp_path, monkeypatch):
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(empty))
    ran = _run(tmp_path / "out", "dataset:*", **PINS)
    assert ran.exit_code == 2
    line = _one_line(ran.output)
    assert all(f"datasets.{k} ({i}@{r})" in line for k, (i, r) in PINS.items())


def _tamper(cache: Path, kind: str, edit) -> None:
    """Rewrite one shard of the pin's snapshot in place (its blob), as a damaged cache would be."""
    from py4.rehearsal.hub_cache import snapshot_dir

    snap = snapshot_dir(cache, *PINS[kind], repo_type="dataset")
    link = next((snap / "data").glob("*.jsonl"))
    blob = link.resolve()
    text = blob.read_text()
    blob.unlink()
    blob.write_text(edit(text))


def test_a_snapshot_that_is_not_its_card_is_refused_by_the_dataset_run(hub_cache, tmp_path):
    from py4.errors import Py4Error
    from py4.pinned_datasets import install_pinned

    _tamper(hub_cache, "bank", lambda text: text.replace(MARK.strip(), "[edited]", 1))
    with pytest.raises(Py4Error) as err:
        install_pinned("bank", *PINS["bank"], tmp_path / "bank")
    line = _one_line(str(err.value))
    assert line.startswith(f"datasets.bank ({PINS['bank'][0]}@{PINS['bank'][1]}): ")
    assert "the card says" in line and "not the export its card describes" in line
    assert not list((tmp_path / "bank").glob("bank-*"))


def test_a_corpus_whose_documents_are_not_its_cards_is_refused(hub_cache, tmp_path):
    """The shards match the card's content hash (rewritten with it), but one document is not what
    the corpus hash counts: the corpus hash of the card catches it."""
    import hashlib

    from py4.errors import Py4Error
    from py4.pinned_datasets import install_pinned
    from py4.rehearsal.hub_cache import snapshot_dir

    snap = snapshot_dir(hub_cache, *PINS["corpus"], repo_type="dataset")
    shard = next((snap / "data").glob("*.jsonl"))
    rows = [json.loads(x) for x in shard.read_text().splitlines()]
    rows[0], rows[1] = rows[1], rows[0]  # the same documents in another order: another corpus
    text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
    card = (snap / "README.md").read_text()
    old = hashlib.sha256(shard.read_text().encode()).hexdigest()
    new_card = card.replace(old, hashlib.sha256(text.encode()).hexdigest())
    for path, content in ((shard, text), (snap / "README.md", new_card)):
        blob = path.resolve()
        blob.unlink()
        blob.write_text(content)
    with pytest.raises(Py4Error) as err:
        install_pinned("corpus", *PINS["corpus"], tmp_path / "corpus")
    line = _one_line(str(err.value))
    assert line.startswith(f"datasets.corpus ({PINS['corpus'][0]}@{PINS['corpus'][1]}): ")
    assert "corpus_content_sha256" in line
    assert not (tmp_path / "corpus" / "manifest.json").exists()


def test_a_dataset_stage_call_without_a_revision_is_refused_before_it_loads(tmp_path):
    from py4.stages import StageCall, check

    problems = check(StageCall(stage="dataset", options={"kind": "bank", "hub_id": PINS["bank"][0],
                                                         "revision": "", "out": str(tmp_path)}))
    assert problems and "revision" in problems[0]


def test_the_dataset_command_names_the_field(hub_cache, tmp_path):
    from typer.testing import CliRunner

    from py4.cli import app

    ok = CliRunner().invoke(app, ["campaign", "dataset", "--kind", "probes", "--hub-id", PINS["probes"][0],
                                  "--revision", PINS["probes"][1], "--out", str(tmp_path / "p")])
    assert ok.exit_code == 0, ok.output
    assert PINS["probes"][0] in ok.output and (tmp_path / "p" / "run_manifest.json").exists()
    wrong = CliRunner().invoke(app, ["campaign", "dataset", "--kind", "corpus", "--hub-id", PINS["probes"][0],
                                     "--revision", PINS["probes"][1], "--out", str(tmp_path / "c")])
    assert wrong.exit_code == 2
    assert f"datasets.corpus ({PINS['probes'][0]}@{PINS['probes'][1]})" in _one_line(wrong.output)
    assert "not a corpus export" in wrong.output
