"""Where the report finds a campaign's results: one constant per kind of run it reads.

The runs themselves are nodes of the campaign DAG (py4.campaign.dag); the report finds them by
stage and reads the file their command writes in their run folder.

- evaluations (stage ``eval``): ``py4 eval``'s results.json (docs/evaluation.md);
- probe evaluations (stage ``PROBE_STAGE``): ``py4 probes eval``'s results.json (docs/probes.md);
  the node's meta (`py4.campaign.node_meta.ProbeMeta`) names the evaluated model like an
  evaluation's (`EvalMeta`: ``model_node``, ``model``, ``arm``, ``dose``, ``step``), with its
  ``kind`` where an evaluation has its series (``model_kind``: the chat parent is EFT dose 0);
- held-out Python-4 loss (stage ``LOSS_STAGE``): ``py4 smoke heldout-loss``'s results.json
  (py4.train.heldout_loss: ``all`` / ``heldin`` / ``heldout`` each with ``loss`` per token), one
  run for the base and one per arm's midtrained model;
- GRPO: the training run's manifest ``reward_log``;
- scripted calibration runs: ``CALIBRATION_DIR`` under the campaign's out_dir
  (py4.report.calibration).
"""

from __future__ import annotations

RESULTS_FILE = "results.json"
EVAL_STAGE = "eval"
PROBE_STAGE = "probes"
LOSS_STAGE = "heldout_loss"
CALIBRATION_DIR = "calibration"
SPLIT_ORDER = ("test_heldin", "test_heldout", "train_sanity")


def split_key(split: str) -> tuple[int, str]:
    """Sort key: the campaign's splits in their usual order, others after, by name."""
    return (SPLIT_ORDER.index(split) if split in SPLIT_ORDER else len(SPLIT_ORDER), split)
