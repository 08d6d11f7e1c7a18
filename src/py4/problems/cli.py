"""`py4 problems`: build, validate, list, show, stats, import and export the problem bank."""

from __future__ import annotations

import json
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Optional

import typer

from py4.errors import cli_errors, fail

app = typer.Typer(help="The Python-4 problem bank: build, validate, inspect, import.", no_args_is_help=True)

_OUT = typer.Option(None, "--data-dir", help="bank folder (default: the package's data/)")
_VERSION = typer.Option("v1", "--version", help="bank version")


def _load(version: str, data_dir: Optional[Path]):
    from py4.problems.bank import load_bank

    return load_bank(version, data_dir)


def _print_json(data) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False) + "\n")


@app.command()
@cli_errors
def build(config: Optional[Path] = typer.Option(None, "--config", help="YAML BuildConfig"),
          overrides: list[str] = typer.Argument(None, help="key=value overrides, e.g. held_out=[P4-09] seed=7"),
          data_dir: Optional[Path] = _OUT,
          run_dir: Optional[Path] = typer.Option(
              None, "--run-dir", help="also record a run here (resolved config, run_manifest.json)")) -> None:
    """Generate the bank from the families and write it with its manifest and content hash."""
    import contextlib

    from py4.runs import RunRecorder

    from rich.progress import Progress

    from py4.config import load_config
    from py4.problems.build import DATA_DIR, BuildConfig, build_bank, write_bank
    from py4.problems.family import FamilyError, all_families

    cfg = load_config(BuildConfig, config, overrides or [])
    n = len(cfg.families) or len(all_families())
    recorder = RunRecorder(run_dir, cfg, "problems-build") if run_dir else contextlib.nullcontext()
    with recorder as rec:
        with Progress(transient=True) as bar:
            task = bar.add_task("generating families", total=n)
            try:
                result = build_bank(cfg, progress=lambda name: bar.advance(task))
            except FamilyError as exc:
                raise fail(str(exc), exit_code=1) from None
        bank_path, manifest_path = write_bank(result, cfg, data_dir or DATA_DIR)
        if rec is not None:
            rec.add_output("bank", bank_path)
            rec.add_output("bank_manifest", manifest_path)
            rec.timing("build_s", result.seconds)
    manifest = json.loads(manifest_path.read_text())
    typer.echo(f"{manifest['problems']} problems from {manifest['families']} families "
               f"({result.dropped} dropped by the split rules) in {result.seconds:.1f} s")
    typer.echo(f"splits: {manifest['per_split']}")
    typer.echo(f"wrote {bank_path} (sha256 of content {manifest['jsonl_sha256'][:16]}…) and {manifest_path.name}")


@app.command()
@cli_errors
def validate(as_json: bool = typer.Option(False, "--json"),
             sample: int = typer.Option(0, help="validate a seeded sample of N problems (0 = the whole bank)"),
             family: list[str] = typer.Option(None, "--family", help="only these families"),
             workers: int = typer.Option(0, help="Boa workers (0 = all cores)"),
             strict_coverage: bool = typer.Option(
                 False, help="fail on coverage shortfalls even for a sample/subset (always for the whole bank)"),
             run_dir: Optional[Path] = typer.Option(None, "--run-dir",
                                                    help="record a run here (report.json, run_manifest.json)"),
             probes: Optional[Path] = typer.Option(None, help="probe set folder (`py4 probes build`'s, or a "
                                                   "campaign's pinned one) whose text no problem may hold "
                                                   "(default: the shipped set)"),
             version: str = _VERSION, data_dir: Optional[Path] = _OUT) -> None:
    """Run the bank's gates; exit 1 on any failure."""
    from py4.problems.bank import load_manifest
    from py4.problems.validate import validate_problems

    problems = _load(version, data_dir)
    held_out = load_manifest(version, data_dir)["config"]["held_out"]
    whole = not sample and not family
    if family:
        problems = [p for p in problems if p.family in set(family)]
    if sample:
        problems = sorted(random.Random(0).sample(problems, min(sample, len(problems))), key=lambda p: p.id)
    say = (lambda m: None) if as_json else (lambda m: typer.echo(f"… {m}", err=True))
    report = validate_problems(problems, held_out=held_out, workers=workers or None, check_coverage=whole, progress=say,
                               probes_dir=probes)
    # Coverage (sizes, per-rule counts, families) is a gate for the whole shipped bank; a
    # sample or a family subset cannot meet it, so there it only counts with --strict-coverage.
    failed = bool(report.failures) or ((whole or strict_coverage) and bool(report.coverage_shortfalls))
    if run_dir:
        from py4.problems.bank import bank_paths
        from py4.runs import RunRecorder, atomic_write_json

        with RunRecorder(run_dir, None, "problems-validate") as rec:
            rec.add_input("bank", path=bank_paths(version, data_dir)[0])
            if probes:
                rec.add_input("probes", path=probes)
            atomic_write_json(Path(run_dir) / "report.json", report.to_json())
            rec.add_output("report", Path(run_dir) / "report.json")
            rec.set(problems=report.problems, failures=len(report.failures), passed=not failed,
                    selection={"sample": sample, "families": list(family or [])})
            for key, seconds in report.seconds.items():
                rec.timing(key, seconds)
    if as_json:
        _print_json(report.to_json())
    else:
        counts = Counter(f["gate"] for f in report.failures)
        typer.echo(f"{report.problems} problems, {len(report.failures)} failures {dict(counts)}; "
                   f"{len(report.notes)} notes; migrator {report.migrator}; "
                   f"{report.seconds.get('total', 0):.1f} s on {report.workers} workers")
        for f in report.failures[:20]:
            typer.echo(f"  FAIL {f['gate']} {f['id']} ({f['family']}): {f['detail']}")
        for s in report.coverage_shortfalls:
            typer.echo(f"  coverage shortfall: {s}")
    raise typer.Exit(1 if failed else 0)


@app.command("list")
@cli_errors
def list_(split: Optional[str] = typer.Option(None, "--split"), as_json: bool = typer.Option(False, "--json"),
          version: str = _VERSION, data_dir: Optional[Path] = _OUT) -> None:
    """List problems (all, or one split); --json prints full problem objects."""
    from py4.problems.schema import SPLITS

    if split is not None and split not in SPLITS:
        raise fail(f"unknown split {split!r}; choose from {', '.join(SPLITS)}")
    problems = [p for p in _load(version, data_dir) if split is None or p.split == split]
    if as_json:
        _print_json([p.to_json() for p in problems])
        return
    for p in problems:
        typer.echo(f"{p.id}\t{p.split}\t{p.family}\t{','.join(p.rules)}\t{p.title}")


@app.command()
@cli_errors
def show(problem_id: str, as_json: bool = typer.Option(False, "--json"),
         version: str = _VERSION, data_dir: Optional[Path] = _OUT) -> None:
    """Show one problem by id."""
    from py4.problems.bank import find_problem

    try:
        p = find_problem(_load(version, data_dir), problem_id)
    except KeyError as exc:
        raise fail(exc.args[0]) from None
    if as_json:
        _print_json(p.to_json())
        return
    typer.echo(f"{p.id}  [{p.split}]  family {p.family}  rules {', '.join(p.rules)}  difficulty {p.difficulty}\n")
    typer.echo(p.prompt)
    typer.echo("--- gold (Python-4) ---\n" + p.gold)
    typer.echo("--- reference (Python 3) ---\n" + p.reference_py3)
    typer.echo(f"--- {len(p.tests)} tests ---")
    for t in p.tests:
        typer.echo(f"  {p.entry_point}(*{t.args!r}) == {t.expected!r}")


def bank_stats(problems) -> dict:
    """The `stats --json` object."""
    return {
        "problems": len(problems),
        "families": len({p.family for p in problems}),
        "per_split": dict(sorted(Counter(p.split for p in problems).items())),
        "per_rule": dict(sorted(Counter(r for p in problems for r in p.rules).items())),
        "per_family": dict(sorted(Counter(p.family for p in problems).items())),
    }


@app.command()
@cli_errors
def stats(as_json: bool = typer.Option(False, "--json"), version: str = _VERSION,
          data_dir: Optional[Path] = _OUT) -> None:
    """Counts per split, rule and family."""
    data = bank_stats(_load(version, data_dir))
    if as_json:
        _print_json(data)
        return
    typer.echo(f"{data['problems']} problems, {data['families']} families")
    for key in ("per_split", "per_rule", "per_family"):
        typer.echo(f"{key}: " + ", ".join(f"{k}={v}" for k, v in data[key].items()))


@app.command()
@cli_errors
def export(out: Path = typer.Option(..., "--out", help="dataset folder to write (data/ shards + README.md card)"),
           version: str = _VERSION,
           push: Optional[str] = typer.Option(None, "--push", help="then upload it to this Hub dataset ORG/NAME"),
           revision: Optional[str] = typer.Option(None, "--revision", help="branch to upload to (made if missing)"),
           force: bool = typer.Option(False, "--force", help="write into a folder that holds other files")) -> None:
    """Write the bank as a Hub dataset folder (one split per bank split, a dataset card); --push uploads it."""
    from py4.hub.push import check_repo_id, export_summary
    from py4.problems.export import export_bank

    if push:
        check_repo_id(push)
    typer.echo(export_summary(export_bank(out, version, force=force), push, revision, "dataset"))


@app.command("import")
@cli_errors
def import_(path: Optional[Path] = typer.Argument(None, help="local JSONL file in the format (omit with --from-hub)"),
            fmt: str = typer.Option(..., "--format", help="mbpp or humaneval"),
            from_hub: bool = typer.Option(False, "--from-hub",
                                          help="read the benchmark from the Hugging Face Hub (campaign scale)"),
            out: Path = typer.Option(Path("imported.jsonl"), "--out", help="where the imported problems go (JSONL)"),
            as_json: bool = typer.Option(False, "--json")) -> None:
    """Migrate Python 3 benchmark problems into Python-4 problems (split `imported`), keeping discriminative ones."""
    from py4.problems.importer import import_file, import_hub

    if (path is None) == (not from_hub):
        raise fail("give either a PATH or --from-hub")
    result = import_hub(fmt, out) if from_hub else import_file(path, fmt, out)
    if as_json:
        _print_json(result)
    else:
        typer.echo(f"read {result['read']}, kept {result['kept']} -> {out}; skipped: {result['skipped_reasons']}")


@app.command("try")
@cli_errors
def try_family(name: str, count: int = typer.Option(20, help="variants to draw"),
               seed: int = typer.Option(20261202), as_json: bool = typer.Option(False, "--json")) -> None:
    """Draw a family's variants and run every per-problem gate on them, without rebuilding the bank.

    For family authors: exits 1 when a variant fails a gate (or the family cannot generate).
    """
    from py4.problems.build import DEFAULT_HELD_OUT
    from py4.problems.family import FamilyError, get_family
    from py4.problems.generate import generate_family
    from py4.problems.validate import validate_problems

    try:
        fam = get_family(name)
        generated = generate_family(fam, seed, count)
    except (KeyError, FamilyError) as exc:
        raise fail(exc.args[0] if isinstance(exc, KeyError) else str(exc), exit_code=1) from None
    problems = [gp.to_problem(f"try/{gp.index:04d}", "eft_large", seed, "try") for gp in generated]
    report = validate_problems(problems, held_out=DEFAULT_HELD_OUT, check_coverage=False)
    if as_json:
        _print_json(report.to_json())
    else:
        typer.echo(f"{name}: {len(problems)} variants, {len(report.failures)} failures, {len(report.notes)} notes")
        for f in report.failures[:20]:
            typer.echo(f"  FAIL {f['gate']} {f['id']}: {f['detail']}")
        for n in report.notes[:10]:
            typer.echo(f"  note {n['id']}: {n['note']} {n.get('detail', '')}")
    raise typer.Exit(1 if report.failures else 0)
