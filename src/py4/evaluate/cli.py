"""`py4 eval`: evaluate a policy on bank splits (docs/evaluation.md).

    py4 eval --split test_heldin --policy gold --out runs/eval-gold
    py4 eval --split test_heldin,test_heldout --model runs/grpo/final --samples 8 --temperature 0.7 --out runs/eval
    py4 eval --split test_heldout --endpoint http://127.0.0.1:8000/v1 --model py4-31b --samples 8 --out runs/eval-31b
    py4 eval --config configs/eval/smoke.yaml --out runs/eval episode.diagnostics=verbatim

Its options are declared once, on `EvalOptions` (py4.cli_options builds the command, py4.stages
writes an eval run's command line from it).
"""

from __future__ import annotations

import importlib.util
from typing import Annotated

import typer
from pydantic import Field

from py4.cli_options import Cli, options_command
from py4.config import StrictModel
from py4.errors import Py4Error, cli_errors
from py4.evaluate.policies import POLICY_NAMES


class EvalOptions(StrictModel):
    """``py4 eval`` (the eval stage). Fields from ``policy`` to ``limit`` set fields of the config
    (`py4.evaluate.config.flag_overrides`: flags win over the file, ``key=value`` overrides over flags)."""

    out: str = Field(description="run folder (results.json, results.md, transcripts.jsonl)")
    policy: str | None = Field(None, description=f"one of {', '.join(POLICY_NAMES)} "
                               "(default: endpoint with --endpoint, local with --model)")
    endpoint: str | None = Field(None, description="OpenAI-compatible base URL (…/v1)")
    model: str | None = Field(None, description="local: model folder; endpoint: served model name")
    split: Annotated[list[str] | None, Cli(joined=True)] = Field(
        None, description="split(s), repeatable or comma-separated (default: test_heldin, test_heldout)")
    samples: int | None = Field(None, description="K episodes per problem (default 1)")
    temperature: float | None = Field(None, description="sampling temperature (default 0.7)")
    limit: int | None = Field(None, description="a seeded sample of N problems per split (default: every problem)")
    progress: bool = Field(True, description="no progress bar")
    config: str | None = Field(None, description="eval YAML (EvalConfig)")
    inspect_log: str | None = Field(None, description="also write the transcripts as an Inspect log in this folder "
                                    "(inspect view); needs py4[inspect]")


@cli_errors  # a user's error (a config, the bank, a model folder, the server): one line, exit 2
@options_command(EvalOptions, overrides="key=value overrides (episode.token_budget=4096)")
def app(options: EvalOptions, overrides: list[str]) -> None:
    """Run episodes of a policy on bank splits and write metrics and transcripts."""
    from py4.endpoint_client import EndpointError
    from py4.evaluate.config import flag_overrides, load_eval_config
    from py4.evaluate.harness import run
    from py4.evaluate.metrics import split_summaries

    o = options
    cfg = load_eval_config(o.config, [*flag_overrides(o.split, o.policy, o.model, o.endpoint, o.samples,
                                                      o.temperature, o.limit), *overrides])
    if o.inspect_log is not None and importlib.util.find_spec("inspect_ai") is None:
        raise Py4Error("--inspect-log needs inspect-ai, which is not installed: pip install -e '.[inspect]'")
    try:
        results = run(cfg, o.out, progress=o.progress, inspect_log=o.inspect_log)
    except EndpointError as exc:  # the server refused or kept failing: what to fix is in the message
        raise Py4Error(str(exc)) from None
    except OSError as exc:  # a model folder transformers cannot read, an output folder we cannot write
        raise Py4Error(str(exc)) from None
    for line in split_summaries(results):
        typer.echo(line)
    typer.echo(f"-> {options.out}")


# `py4 eval probes …` scores rule probes (docs/probes.md); any other arguments run the command above.
from py4.probes.cli import eval_group  # noqa: E402

app = eval_group(app)
