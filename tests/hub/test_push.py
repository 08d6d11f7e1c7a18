"""The upload call against a local stand-in of the Hub's endpoints (hub_standin.py): what
`huggingface_hub` sends is exactly the folder on disk, on the branch asked for."""

from __future__ import annotations


import pytest

from hub_standin import HubStandIn
from py4.hub.push import PushError, push_folder


@pytest.fixture
def hub(monkeypatch):
    with HubStandIn() as standin:
        monkeypatch.setenv("HF_TOKEN", "hf_standin")
        yield standin


def _folder(tmp_path):
    from py4.hub.dataset_folder import DatasetCard, write_dataset

    card = DatasetCard(pretty_name="t", summary="s", license="apache-2.0", how_made={"command": "x"})
    write_dataset(tmp_path / "ds", {"train": [{"x": 1}], "test": [{"x": 2}]}, card)
    return tmp_path / "ds"


def test_a_dataset_folder_arrives_whole_on_main(hub, tmp_path):
    folder = _folder(tmp_path)
    url = push_folder(folder, "org/python4-bank", "dataset", endpoint=hub.endpoint)
    assert url.startswith(hub.endpoint)
    sent = hub.files("dataset", "org/python4-bank")
    on_disk = {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    assert sent == on_disk
    assert hub.repos[("dataset", "org/python4-bank")]["visibility"] == "private"
    assert "/api/validate-yaml" in hub.requests  # the card's metadata was checked before the commit


def test_a_revision_is_a_branch_made_for_the_upload(hub, tmp_path):
    folder = _folder(tmp_path)
    push_folder(folder, "org/bank", "dataset", revision="v1", endpoint=hub.endpoint)
    assert sorted(hub.files("dataset", "org/bank", "v1")) == sorted(
        p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    assert hub.files("dataset", "org/bank", "main") == {}


def test_a_refused_upload_is_one_error_naming_the_repository(hub, tmp_path):
    hub.refuse_commits = True
    with pytest.raises(PushError, match="dataset org/bank: the Hub refused"):
        push_folder(_folder(tmp_path), "org/bank", "dataset", endpoint=hub.endpoint)


def test_bad_input_is_refused_before_any_request(hub, tmp_path):
    with pytest.raises(PushError, match="ORG/NAME"):
        push_folder(_folder(tmp_path), "just-a-name", "dataset", endpoint=hub.endpoint)
    with pytest.raises(PushError, match="no such folder"):
        push_folder(tmp_path / "missing", "org/x", "model", endpoint=hub.endpoint)
    assert hub.requests == []


def _corpus(folder):
    from py4.corpus.output import MANIFEST, ShardWriter, text_sha256
    from py4.runs import atomic_write_json

    writer = ShardWriter(folder, 2)
    for i in range(3):
        text = f"# Document {i}\n\nPython-4 counts {i} things.\n"
        writer.write({"id": f"doc-{i}", "text": text, "type": "tutorial", "rules": ["P4-01"], "tokens": 9,
                      "sha256": text_sha256(text)})
    atomic_write_json(folder / MANIFEST, {"name": "t", "docs": 3, "tokens": 27, "content_sha256": writer.close(),
                                          "shards": writer.shards})
    return folder


@pytest.mark.parametrize("command", [["problems", "export"], ["probes", "export"], ["corpus", "export", "CORPUS"]])
def test_each_export_command_pushes_its_folder_to_the_branch_asked_for(command, hub, tmp_path, monkeypatch):
    """`py4 problems|probes|corpus export --out DIR --push ORG/NAME --revision BRANCH`: the Hub (stand-in)
    receives the folder on disk byte for byte, on that branch; main stays empty."""
    from typer.testing import CliRunner

    from py4.cli import app

    monkeypatch.setattr("huggingface_hub.constants.ENDPOINT", hub.endpoint)
    argv = [str(_corpus(tmp_path / "corpus")) if arg == "CORPUS" else arg for arg in command]
    out = tmp_path / "dataset"
    result = CliRunner().invoke(app, [*argv, "--out", str(out), "--push", f"org/{command[0]}", "--revision", "v1"])
    assert result.exit_code == 0, result.output
    on_disk = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert hub.files("dataset", f"org/{command[0]}", "v1") == on_disk and "README.md" in on_disk
    assert hub.files("dataset", f"org/{command[0]}", "main") == {}
    assert f"pushed to {hub.endpoint}" in result.output
