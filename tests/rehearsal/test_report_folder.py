"""The rehearsal report of a narrower invocation in a folder an earlier one filled keeps the
earlier nodes: each with its status from the records, marked as earlier, and stale when its
command changed since (the runner would redo it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

from py4.campaign.dag import Node
from py4.campaign.runner import run_campaign
from py4.rehearsal.report import build_report, write_report


@dataclass
class _Executor:
    """What build_report reads of the rehearsal's ChildExecutor; runs a node by writing its folder."""

    root: Path
    seconds: dict = field(default_factory=dict)
    drills: dict = field(default_factory=dict)

    def __call__(self, node):
        Path(node.run_dir).mkdir(parents=True, exist_ok=True)
        self.seconds[node.id] = 0.5

    def command(self, node):
        return [str(self.root / ".venv/bin/python"), "-m", "py4", *node.argv]

    def log_path(self, node):
        return self.root / "logs" / f"{node.id}.log"


def _nodes(out: Path, **corpus_options) -> list[Node]:
    corpus = Node(id="corpus", stage="corpus", run_dir=str(out / "corpus"),
                  options={"out": str(out / "corpus"), **corpus_options})
    return [corpus,
            Node(id="tiny/iso/mix", stage="mix", run_dir=str(out / "mix"), inputs=["corpus"],
                 options={"out": str(out / "mix")}),
            Node(id="tiny/control/mix", stage="mix", run_dir=str(out / "mix_control"),
                 options={"out": str(out / "mix_control")})]


def _invoke(out: Path, nodes: list[Node], selected: set[str]) -> dict:
    executor = _Executor(out)
    summary = run_campaign(nodes, out / "campaign", {"corpus": executor, "mix": executor}, selected,
                           progress=False, log=lambda s: None)
    layout = SimpleNamespace(campaign=out / "campaign", root=out, standins=out / "standins")
    report = build_report(nodes, selected, layout, executor, summary, SimpleNamespace(boundaries={}),
                          "c.yaml", 1.0)
    write_report(report, out)
    return report


def test_a_narrower_invocation_keeps_the_earlier_nodes_in_the_report(tmp_path):
    nodes = _nodes(tmp_path)
    _invoke(tmp_path, nodes, {n.id for n in nodes})
    report = _invoke(tmp_path, nodes, {"tiny/control/mix"})
    rows = {row["id"]: row for row in report["nodes"]}
    assert set(rows) == {"corpus", "tiny/iso/mix", "tiny/control/mix"}
    assert rows["corpus"]["earlier"] and not rows["corpus"]["stale"] and rows["corpus"]["status"] == "done"
    assert not rows["tiny/control/mix"].get("earlier") and rows["tiny/control/mix"]["skipped_as_done"]
    assert report["counts"] == {"done": 1} and report["folder_counts"] == {"done": 3}
    text = (tmp_path / "REHEARSAL_REPORT.md").read_text()
    assert "| corpus | corpus | done (earlier invocation) |" in text
    assert "this invocation: 1.0 s, done 1; the folder's records (earlier invocations included): done 3" in text


def test_an_earlier_node_whose_command_changed_is_marked_stale(tmp_path):
    _invoke(tmp_path, _nodes(tmp_path), {"corpus", "tiny/iso/mix", "tiny/control/mix"})
    report = _invoke(tmp_path, _nodes(tmp_path, progress=False), {"tiny/control/mix"})
    rows = {row["id"]: row for row in report["nodes"]}
    assert rows["corpus"]["stale"] and rows["tiny/iso/mix"]["stale"]  # its input changed
    assert report["folder_counts"] == {"done": 1, "stale": 2}
    assert "| tiny/iso/mix | mix | done (earlier invocation; its command or an input changed since) |" in \
        (tmp_path / "REHEARSAL_REPORT.md").read_text()
