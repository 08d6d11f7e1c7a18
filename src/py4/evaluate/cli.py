"""`py4 eval`: evaluate a policy on bank splits (docs/evaluation.md).

    py4 eval --split test_heldin --policy gold --out runs/eval-gold
    py4 eval --split test_heldin,test_heldout --model runs/grpo/final --samples 8 --temperature 0.7 --out runs/eval
    py4 eval --split test_heldout --endpoint http://127.0.0.1:8000/v1 --model py4-31b --samples 8 --out runs/eval-31b
    py4 eval --config configs/eval/smoke.yaml --out runs/eval episode.diagnostics=verbatim
"""

from __future__ import annotations

import importlib.util
from typing import Optional

import typer

from py4.errors import Py4Error, cli_errors
from py4.evaluate.policies import POLICY_NAMES


@cli_errors  # a user's error (a config, the bank, a model folder, the server): one line, exit 2
def app(
    out: str = typer.Option(..., "--out", help="run folder (results.json, results.md, transcripts.jsonl)"),
    split: Optional[list[str]] = typer.Option(None, "--split", help="split(s), repeatable or comma-separated "
                                              "(default: test_heldin, test_heldout)"),
    policy: Optional[str] = typer.Option(None, "--policy", help=f"one of {', '.join(POLICY_NAMES)} "
                                         "(default: endpoint with --endpoint, local with --model)"),
    model: Optional[str] = typer.Option(None, "--model", help="local: model folder; endpoint: served model name"),
    endpoint: Optional[str] = typer.Option(None, "--endpoint", help="OpenAI-compatible base URL (…/v1)"),
    samples: Optional[int] = typer.Option(None, "--samples", help="K episodes per problem (default 1)"),
    temperature: Optional[float] = typer.Option(None, "--temperature", help="sampling temperature (default 0.7)"),
    limit: Optional[int] = typer.Option(None, "--limit", help="a seeded sample of N problems per split "
                                         "(default: every problem)"),
    config: Optional[str] = typer.Option(None, "--config", help="eval YAML (EvalConfig)"),
    no_progress: bool = typer.Option(False, "--no-progress", help="no progress bar"),
    inspect_log: Optional[str] = typer.Option(None, "--inspect-log", help="also write the transcripts as an "
                                              "Inspect log in this folder (inspect view); needs py4[inspect]"),
    overrides: Optional[list[str]] = typer.Argument(None, help="key=value overrides (episode.token_budget=4096)"),
) -> None:
    """Run episodes of a policy on bank splits and write metrics and transcripts."""
    from py4.endpoint_client import EndpointError
    from py4.evaluate.config import flag_overrides, load_eval_config
    from py4.evaluate.harness import run
    from py4.evaluate.metrics import split_summaries

    cfg = load_eval_config(config, [*flag_overrides(split, policy, model, endpoint, samples, temperature, limit),
                                    *(overrides or [])])
    if inspect_log is not None and importlib.util.find_spec("inspect_ai") is None:
        raise Py4Error("--inspect-log needs inspect-ai, which is not installed: pip install -e '.[inspect]'")
    try:
        results = run(cfg, out, progress=not no_progress, inspect_log=inspect_log)
    except EndpointError as exc:  # the server refused or kept failing: what to fix is in the message
        raise Py4Error(str(exc)) from None
    except OSError as exc:  # a model folder transformers cannot read, an output folder we cannot write
        raise Py4Error(str(exc)) from None
    for line in split_summaries(results):
        typer.echo(line)
    typer.echo(f"-> {out}")


# `py4 eval probes …` scores rule probes (docs/probes.md); any other arguments run the command above.
from py4.probes.cli import eval_group  # noqa: E402

app = eval_group(app)
