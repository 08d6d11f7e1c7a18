"""A campaign run loads the same config in the campaign's process as from its command line.

The DAG gives each stage its overrides as typed values (`py4.stages.load`); a Slurm job or an
accelerate launch gets the ``key=value`` text of the same call (`py4.stages.argv`), which the
stage's command parses back. For every run of the shipped smoke campaign, both give one config.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from py4 import stages
from py4.campaign.dag import build_dag
from py4.campaign.spec import load_campaign
from py4.overrides import overrides

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def smoke_nodes():
    cwd = os.getcwd()
    os.chdir(ROOT)  # the campaign names its config files relative to the checkout
    try:
        yield build_dag(load_campaign("configs/campaign/smoke.yaml"))
    finally:
        os.chdir(cwd)


def test_every_run_loads_the_same_from_its_typed_overrides_and_from_their_text(smoke_nodes, monkeypatch):
    monkeypatch.chdir(ROOT)
    with_overrides = [n for n in smoke_nodes if n.overrides]
    assert with_overrides
    for node in with_overrides:
        texts = node.argv[-len(node.overrides):]  # the command line's last words
        assert texts == node.call.override_texts()
        parsed = replace(node.call, overrides=tuple(overrides(texts)))  # what the stage's command reads
        assert stages.load(parsed) == stages.load(node.call), node.id
