"""Knowledge in the campaign report: probes.json, the finding sentence computed
from the numbers, knowledge beside use, the heatmap and the arm comparison (matplotlib objects)."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib
import pytest
import report_fixtures as rf
from matplotlib.container import ErrorbarContainer

from py4.lang.rules import DEFAULT_HELD_OUT

matplotlib.use("Agg")

HELD_OUT = {r: 0.5 for r in DEFAULT_HELD_OUT}
# The Python-4 arms learned the syntax rules; semantic rules stay at chance for every model.
LEARNED = {"syntax": 0.9, "semantic": 0.5}
UNTRAINED = {"syntax": 0.2, "semantic": 0.5}
MIDTRAINED = {"tiny/control/midtrain", "tiny/iso/midtrain", "tiny/prop/midtrain"}


def _campaign(tmp: Path, rates: dict[str, dict], losses: dict[str, float], only: set[str] | None = None):
    spec = rf.smoke_spec(tmp / "out")
    nodes = rf.campaign_nodes(spec)
    rf.write_evaluations(spec, {"tiny/iso/sft": 2})
    rf.write_grpo_rewards(spec)
    rf.write_calibration(spec)
    rf.write_probes(nodes, rates, only)
    rf.write_losses(nodes, losses)
    return spec, nodes


def _rates(iso: dict, control: dict) -> dict[str, dict]:
    return {**{f"tiny/iso/{k}": iso for k in ("midtrain", "sft", "graft")},
            **{f"tiny/prop/{k}": iso for k in ("midtrain", "sft", "graft")},
            **{f"tiny/control/{k}": control for k in ("midtrain", "sft", "graft")}}


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """iso learned the syntax rules (held-in and held-out), control did not; rendered once."""

    tmp = tmp_path_factory.mktemp("probes")
    spec, nodes = _campaign(tmp, _rates(LEARNED, UNTRAINED), {"base": 9.0, "control": 7.0, "iso": 5.0, "prop": 6.0})
    paths, saved = rf.write_results_capturing_figures(spec, tmp / "report", nodes=nodes)
    report = tmp / "report"
    return {"spec": spec, "nodes": nodes, "paths": paths, "figures": saved, "md": (report / "results.md").read_text(),
            "data": json.loads((report / "results.json").read_text()),
            "probes": json.loads((report / "probes.json").read_text())}


def test_results_json_says_which_code_and_command_wrote_it(rendered):
    from py4.runs import code_version

    data = rendered["data"]
    assert data["provenance"]["code"] == code_version() and data["provenance"]["command"]
    assert data["libraries"]["py4"]


def test_probes_json_has_one_entry_per_evaluated_model(rendered):
    from py4.report.layout import PROBE_STAGE

    probes = rendered["probes"]
    expected = [n.meta.model_node for n in rendered["nodes"] if n.stage == PROBE_STAGE]
    assert [e["model"] for e in probes] == expected
    group = {"accuracy", "ci_low", "ci_high", "pairs"}
    for e in probes:
        assert e["arm"] in (None, "control", "iso", "prop")
        assert e["kind"] in ("base", "midtrain", "sft", "graft", "eft", "grpo")
        assert "dose" in e
        for g in (e["heldin"], e["heldout"], e["by_kind"]["syntax"], e["by_kind"]["semantic"]):
            assert group <= set(g) and g["ci_low"] <= g["accuracy"] <= g["ci_high"] and g["pairs"] > 0
        assert len(e["per_rule"]) == 30
        assert e["per_rule"]["P4-15"]["kind"] == "semantic" and e["per_rule"]["P4-09"]["held_out"] is True
    kinds = {e["model"]: e["kind"] for e in probes}
    assert kinds["tiny/base"] == "base" and kinds["tiny/iso/midtrain"] == "midtrain" and kinds["tiny/iso/sft"] == "sft"
    assert {e["arm"] for e in probes if e["kind"] == "midtrain"} == {"control", "iso", "prop"}


def test_finding_is_computed_from_the_probe_numbers(rendered):
    data = rendered["data"]
    iso = next(e for e in data["probes"] if e["model"] == "tiny/iso/midtrain")
    control = next(e for e in data["probes"] if e["model"] == "tiny/control/midtrain")
    assert iso["heldin"]["ci_low"] > control["heldin"]["ci_high"]  # the fixture separates them
    sentence = data["finding"]
    # The fixture's iso run scored the paired difference against control: that interval decides.
    assert ("iso-token arm's per-token probe accuracy is above the control arm's (the paired difference's 95% interval "
            "excludes 0) on held-in") in sentence
    assert (f"{iso['heldin']['accuracy']:.3f} "
            f"[{iso['heldin']['ci_low']:.3f}, {iso['heldin']['ci_high']:.3f}]") in sentence
    assert f"{control['heldout']['accuracy']:.3f}" in sentence
    assert "loss on held-out Python-4 documents (5.000) is lower by 2.000 nats/token than the control arm's " \
        "(7.000; no interval)" in sentence
    d = iso["minus_control"]["heldin"]
    assert f"paired difference on the same pairs {d['difference']:+.3f} [{d['ci_low']:+.3f}, {d['ci_high']:+.3f}]" \
        in sentence
    assert f"**Finding.** {sentence}" in rendered["md"]


def test_finding_follows_the_numbers_when_they_change(tmp_path):
    from py4.report.results import collect

    # Held-out rules at chance for both arms: held-in separates, held-out does not.
    spec, nodes = _campaign(tmp_path, _rates({**LEARNED, **HELD_OUT}, {**UNTRAINED, **HELD_OUT}),
                            {"base": 9.0, "control": 5.0, "iso": 6.0, "prop": 6.0}, MIDTRAINED)
    sentence = collect(spec, nodes)["finding"]
    assert "above the control arm's (the paired difference's 95% interval excludes 0) on held-in rules" in sentence
    assert ("not distinguishable from the control arm's (the paired difference's 95% interval contains 0) "
            "on held-out rules") in sentence
    assert "is higher by 1.000 nats/token than the control arm's (5.000; no interval)" in sentence
    # Swapped: control knows the syntax, iso does not.
    spec2, nodes2 = _campaign(tmp_path / "b", _rates(UNTRAINED, LEARNED), {"base": 9.0, "control": 5.0, "iso": 6.0,
                                                                          "prop": 6.0}, MIDTRAINED)
    assert "below the control arm's (the paired difference's 95% interval excludes 0) on held-in" \
        in collect(spec2, nodes2)["finding"]


def test_finding_without_probes_says_what_is_missing(tmp_path):
    from py4.report.results import collect

    spec = rf.smoke_spec(tmp_path / "out")
    rf.write_evaluations(spec)
    sentence = collect(spec, rf.campaign_nodes(spec))["finding"]
    assert sentence.startswith("No arm comparison yet") and "probe results found: none" in sentence


def test_knowledge_beside_use(rendered):
    rows = {r["model"]: r for r in rendered["data"]["knowledge_and_use"]}
    iso = rows["tiny/iso/sft"]
    assert iso["certified"]["test_heldin"]["certified"] == 2 and iso["certified"]["test_heldin"]["episodes"] == 6
    assert iso["heldin"]["accuracy"] == next(e for e in rendered["probes"]
                                             if e["model"] == "tiny/iso/sft")["heldin"]["accuracy"]
    assert rows["tiny/base"]["certified"] == {}  # the base is probed, never evaluated
    line = next(x for x in rendered["md"].splitlines() if x.startswith("| `tiny/iso/sft` |"))
    assert "0.333 [0.097, 0.700] (2/6)" in line and f"(n={iso['heldin']['pairs']})" in line


def test_arm_table_has_the_base_paired_differences_and_loss(rendered):
    md = rendered["md"]
    assert "## The arms side by side (midtrain models; the base is the floor)" in md
    base = next(x for x in md.splitlines() if x.startswith("| base | `tiny/base` |"))
    assert "9.000" in base
    iso = next(x for x in md.splitlines() if x.startswith("| iso | `tiny/iso/midtrain` |"))
    mc = next(e for e in rendered["probes"] if e["model"] == "tiny/iso/midtrain")["minus_control"]
    assert f"{mc['heldin']['difference']:+.3f} [{mc['heldin']['ci_low']:+.3f}, {mc['heldin']['ci_high']:+.3f}]" in iso
    assert "5.000 (held-in rules 4.900, held-out rules 5.200) n=4,090 tokens" in iso
    assert "| P4-09 | syntax | yes |" in md


def test_heatmap_is_model_by_rule_on_a_fixed_scale_grouped_by_pairs_per_rule(rendered):
    from matplotlib.image import AxesImage

    fig = rendered["figures"]["probe_heatmap.png"]
    probes = rendered["probes"]
    panels = [ax for ax in fig.axes if any(isinstance(c, AxesImage) for c in ax.get_children())]
    # full-set models (14 pairs per rule in the fixture) and none other: one panel, titled with it
    assert [ax.get_title(loc="left") for ax in panels] == [f"{len(probes)} models scored on 14 pairs per rule"]
    ax = panels[0]
    image = next(c for c in ax.get_children() if isinstance(c, AxesImage))
    assert image.get_clim() == (0.0, 1.0)
    assert image.get_array().shape == (len(probes), 30)
    assert [t.get_text() for t in ax.get_yticklabels()] == [e["model"] for e in probes]
    labels = [t.get_text() for t in panels[-1].get_xticklabels()]
    assert labels[0] == "P4-01" and labels[8] == "P4-09*"  # * held-out
    iso = probes.index(next(e for e in probes if e["model"] == "tiny/iso/midtrain"))
    assert image.get_array()[iso, 14] == pytest.approx(probes[iso]["per_rule"]["P4-15"]["accuracy_per_token"])


def test_arm_comparison_has_both_scores_intervals_base_loss_and_a_labelled_half_line(rendered):
    fig = rendered["figures"]["arm_comparison.png"]
    per_token, summed, loss = fig.axes[:3]
    assert "per-token" in per_token.get_title() and "summed" in summed.get_title()
    for acc in (per_token, summed):
        bars = [c for c in acc.containers if isinstance(c, ErrorbarContainer)]
        assert len(bars) == 4  # the base and three arms
        assert acc.get_ylim()[0] <= 0.0 and acc.get_ylim()[1] >= 1.0
        assert [t.get_text().split("\n")[0] for t in acc.get_xticklabels()] == ["held-in", "held-out", "syntax",
                                                                                "semantic"]
        assert "0.5 = no preference" in [t.get_text() for t in acc.get_legend().get_texts()]
    heights = [p.get_height() for p in loss.patches]
    assert heights == [9.0, 7.0, 5.0, 6.0]  # base, control, iso, prop
    assert loss.get_ylim()[0] == 0.0
    assert "n = 4,090 tokens" in loss.get_title()


def test_report_names_the_file_and_field_of_bad_probe_results(tmp_path):
    from py4.report.probes_report import ReportInputError, probe_entries

    spec = rf.smoke_spec(tmp_path / "out")
    nodes = rf.campaign_nodes(spec)
    node = next(n for n in nodes if n.stage == "probes")
    Path(node.run_dir).mkdir(parents=True)
    (Path(node.run_dir) / "results.json").write_text(json.dumps({"summary": {"all": {"accuracy": 0.5}}}))
    with pytest.raises(ReportInputError, match=r"results\.json: summary\.all needs accuracy, ci_low, ci_high, pairs"):
        probe_entries(nodes)


def test_identical_arms_are_called_out(tmp_path):
    from py4.report.results import collect, render_markdown

    same = {"syntax": 0.3, "semantic": 0.5}
    spec, nodes = _campaign(tmp_path, {}, {"base": 9.0, "control": 8.0, "iso": 8.0, "prop": 8.0}, MIDTRAINED)
    # Same seed for every arm: the arms are one model (a midtraining that learned nothing).
    for node in nodes:
        if node.stage == "probes" and node.meta.model_node in MIDTRAINED:
            res = rf.probe_results(same, seed=7)
            res.pop("_probes")
            Path(node.run_dir, "results.json").write_text(json.dumps(res))
    md = render_markdown(collect(spec, nodes))
    assert "**The arms are indistinguishable:** control, iso, prop have identical probe results" in md


def test_cli_reports_bad_probe_results_as_one_error_line(tmp_path):
    from typer.testing import CliRunner

    from py4.campaign.dag import build_dag
    from py4.cli import app

    nodes = [n for n in build_dag(rf.smoke_spec(tmp_path / "out")) if n.stage == "probes"]
    if not nodes:
        pytest.skip("the smoke campaign's DAG has no probe runs")
    node = nodes[0]
    Path(node.run_dir).mkdir(parents=True)
    (Path(node.run_dir) / "results.json").write_text("{\"summary\": ")
    result = CliRunner().invoke(app, ["report", "results", str(rf.ROOT / "configs/campaign/smoke.yaml"),
                                      "--no-calibration", "--no-figures", f"out_dir={tmp_path / 'out'}"])
    assert result.exit_code == 2, result.output
    assert f"{node.run_dir}/results.json:1: invalid JSON" in result.output


def _heatmap_entry(model: str, pairs: int, rules: int = 1, discriminates: bool = True) -> dict:
    g = {"accuracy": 0.5, "accuracy_per_token": 0.25, "ci_low": 0.3, "ci_high": 0.7, "pairs": pairs}
    return {"model": model, "per_rule": {f"P4-{r + 1:02d}": {**g, "kind": "syntax", "held_out": False,
                                                               "discriminates": discriminates}
                                         for r in range(rules)}}


def test_heatmap_groups_models_by_pairs_per_rule_in_labelled_panels():
    from matplotlib.image import AxesImage

    from py4.report import figures

    fig = figures.probe_heatmap([_heatmap_entry("tiny/iso/midtrain", 42), _heatmap_entry("tiny/iso/eft_8", 4),
                                 _heatmap_entry("tiny/base", 42)])
    panels = [ax for ax in fig.axes if any(isinstance(c, AxesImage) for c in ax.get_children())]
    assert [ax.get_title(loc="left") for ax in panels] == ["2 models scored on 42 pairs per rule",
                                                          "1 models scored on 4 pairs per rule"]
    assert [t.get_text() for t in panels[0].get_yticklabels()] == ["tiny/iso/midtrain", "tiny/base"]


def test_heatmap_writes_cell_numbers_only_where_they_can_be_read():
    from py4.report import figures

    def texts(fig):
        return [t for ax in fig.axes for t in ax.texts]

    few = figures.probe_heatmap([_heatmap_entry(f"m{i}", 42, rules=30) for i in range(3)])
    assert len(texts(few)) == 90 and min(t.get_fontsize() for t in texts(few)) >= 7
    many = figures.probe_heatmap([_heatmap_entry(f"m{i}", 42, rules=120) for i in range(3)])
    assert texts(many) == []  # 120 columns: a number per cell would not be legible


def test_heatmap_marks_rules_that_cannot_discriminate():
    from py4.report import figures

    fig = figures.probe_heatmap([_heatmap_entry("tiny/base", 42, discriminates=False)])
    assert fig.axes[0].get_xticklabels()[0].get_text() == "P4-01 †"
    assert "† cannot discriminate" in fig._suptitle.get_text()


def test_runs_without_results_are_listed_not_invented(tmp_path):
    from py4.report.results import collect, render_markdown

    spec, nodes = _campaign(tmp_path, _rates(LEARNED, UNTRAINED), {"base": 9.0, "control": 7.0, "iso": 5.0,
                                                                   "prop": 6.0}, MIDTRAINED)
    data = collect(spec, nodes)
    assert "probes:tiny/base" in data["missing_probes"] and "probes:tiny/iso/midtrain" not in data["missing_probes"]
    assert {e["model"] for e in data["probes"]} == MIDTRAINED
    assert "Not probed yet: `probes:tiny/base`" in render_markdown(data)


def test_cli_reports_a_campaign_folder_given_as_override(tmp_path):
    from typer.testing import CliRunner

    from py4.cli import app

    spec = rf.smoke_spec(tmp_path / "out")
    rf.write_evaluations(spec, {"tiny/iso/sft": 2})
    result = CliRunner().invoke(app, ["report", "results", str(rf.ROOT / "configs/campaign/smoke.yaml"),
                                      "--no-calibration", "--no-figures", f"out_dir={tmp_path / 'out'}"])
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "out/report/results.json").read_text())
    assert any(e["run"] == "tiny/iso/sft" and e["certified"] == 2 for e in data["entries"])
    assert json.loads((tmp_path / "out/report/probes.json").read_text()) == []


def _entry(arm: str, heldin: tuple, heldout: tuple, paired: dict | None = None) -> dict:
    """A probes.json entry of an arm's midtrained model: (accuracy, ci_low, ci_high) per split."""
    group = lambda a: dict(zip(("accuracy", "ci_low", "ci_high"), a, strict=True), pairs=378)
    return {"model": f"tiny/{arm}/midtrain", "model_key": "tiny", "arm": arm, "kind": "midtrain",
            "heldin": group(heldin), "heldout": group(heldout), "per_rule": {},
            "compare": None if arm == "control" else "tiny/control/midtrain", "minus_control": paired}


def _diff(d: float, low: float, high: float) -> dict:
    return {"difference": d, "ci_low": low, "ci_high": high, "pairs": 378}


def test_finding_decides_with_the_paired_interval_and_says_so():
    from py4.report.probes_report import finding

    control = _entry("control", (0.30, 0.25, 0.35), (0.48, 0.40, 0.56))
    # Marginal intervals overlap on both splits; on the same pairs held-in's difference excludes 0.
    iso = _entry("iso", (0.34, 0.29, 0.39), (0.49, 0.41, 0.57),
                 {"heldin": _diff(0.04, 0.02, 0.06), "heldout": _diff(0.01, -0.02, 0.04)})
    sentence = finding([control, iso], [])
    assert ("above the control arm's (the paired difference's 95% interval excludes 0) on held-in rules" in sentence)
    assert ("not distinguishable from the control arm's (the paired difference's 95% interval contains 0) "
            "on held-out rules") in sentence
    assert "the 95% intervals overlap" not in sentence
    # Without the paired difference the marginal intervals decide, and the sentence says that.
    alone = finding([control, {**iso, "minus_control": None}], [])
    assert "not distinguishable from the control arm's (the 95% intervals overlap) on held-in rules" in alone
    # A difference against some other model is not a paired test against this control.
    other = finding([control, {**iso, "compare": "tiny/control/sft"}], [])
    assert "paired difference" not in other


def test_held_out_loss_without_an_interval_gets_no_verdict():
    from py4.report.probes_report import finding

    control = _entry("control", (0.30, 0.25, 0.35), (0.48, 0.40, 0.56))
    iso = _entry("iso", (0.30, 0.25, 0.35), (0.48, 0.40, 0.56))
    # The old demo's losses: 8.01 vs 8.03, one pass over fixed documents, no interval recorded.
    losses = [{"arm": "control", "loss": 8.03, "ci_low": None, "ci_high": None},
              {"arm": "iso", "loss": 8.01, "ci_low": None, "ci_high": None}]
    sentence = finding([control, iso], losses)
    assert ("loss on held-out Python-4 documents (8.010) is lower by 0.020 nats/token than the control arm's "
            "(8.030; no interval)") in sentence
    assert " is below" not in sentence and "not below" not in sentence
    higher = finding([control, iso], [{**losses[0], "loss": 8.0}, losses[1]])
    assert "is higher by 0.010 nats/token than the control arm's (8.000; no interval)" in higher
    # With intervals on both (none recorded today), they decide.
    with_ci = [{**losses[0], "ci_low": 8.02, "ci_high": 8.04}, {**losses[1], "ci_low": 8.00, "ci_high": 8.025}]
    assert "not distinguishable from the control arm's (8.030; the 95% intervals overlap)" in finding(
        [control, iso], with_ci)


def _with_base_scores(nodes) -> None:
    """Every probe run's results.json gets the base's scores beside it, as `py4 eval probes --base` writes."""
    runs = {n.meta.model_node: Path(n.run_dir, "results.json") for n in nodes
            if n.stage == "probes" and Path(n.run_dir, "results.json").is_file()}
    base = json.loads(runs["tiny/base"].read_text())
    for model, path in runs.items():
        if model != "tiny/base":
            res = json.loads(path.read_text())
            res["base"] = {"model": "base", "scores": base["scores"]}
            path.write_text(json.dumps(res))


@pytest.fixture(scope="module")
def flagged(tmp_path_factory):
    """P4-01 lost by every model, the base included: its probes cannot discriminate. iso and prop
    learned the syntax rules."""
    from py4.report.results import collect, render_markdown

    tmp = tmp_path_factory.mktemp("flagged")
    rates = {m: {**r, "P4-01": 0.0} for m, r in _rates(LEARNED, UNTRAINED).items()}
    spec, nodes = _campaign(tmp, {**rates, "tiny/base": {**UNTRAINED, "P4-01": 0.0}},
                            {"base": 9.0, "control": 7.0, "iso": 5.0, "prop": 6.0}, MIDTRAINED | {"tiny/base"})
    _with_base_scores(nodes)
    data = collect(spec, nodes)
    return data, render_markdown(data)


def test_rules_that_cannot_discriminate_are_flagged_and_left_out_of_the_summary(flagged):
    data, md = flagged
    iso = next(e for e in data["probes"] if e["model"] == "tiny/iso/midtrain")
    assert iso["excluded_rules"] == ["P4-01"]
    assert iso["per_rule"]["P4-01"]["discriminates"] is False and iso["per_rule"]["P4-02"]["discriminates"] is True
    assert "for the base and all 3 trained models" in iso["per_rule"]["P4-01"]["flag"]
    held_in_pairs = sum(g["pairs"] for r, g in iso["per_rule"].items() if not g["held_out"])
    assert iso["heldin"]["pairs"] == held_in_pairs - iso["per_rule"]["P4-01"]["pairs"]
    assert "1 rule whose probes cannot discriminate" in data["finding"] and "P4-01" in data["finding"]
    assert "| P4-01 | syntax | no | no |" in md and "**1 of 30 rules cannot discriminate**" in md


def test_a_rule_at_zero_prints_an_interval_that_is_not_a_point(flagged):
    data, md = flagged
    g = next(e for e in data["probes"] if e["model"] == "tiny/base")["per_rule"]["P4-01"]
    assert g["accuracy"] == 0.0 and g["ci_method"] == "wilson" and g["ci_high"] > 0.1
    assert "[0.000, 0.000]" not in md


def test_each_rule_has_its_margin_change_against_the_base(flagged):
    data, md = flagged
    iso = next(e for e in data["probes"] if e["model"] == "tiny/iso/midtrain")
    d = iso["per_rule"]["P4-02"]["vs_base"]  # iso learned syntax (0.9) over the base's 0.2: the margin rose
    assert d["per_token_margin_ci_low"] > 0 and d["per_token_margin_difference"] > 0
    assert "Δ margin iso − base" in md


def test_finding_names_every_arm_on_the_primary_score(flagged):
    data, _ = flagged
    sentence = data["finding"]
    assert "per-token score, the primary metric" in sentence
    assert "the control arm scores" in sentence
    assert "the iso-token arm's per-token probe accuracy is above" in sentence
    assert "the prop-token arm's per-token probe accuracy is above" in sentence
    assert "(summed score, length-biased, minus control: iso-token held-in" in sentence


def test_scale_statement_is_computed_from_the_numbers(tmp_path):
    from py4.report.probes_report import scale_statement

    def ev(run, kind, dose, k):
        return {"run": run, "kind": kind, "dose": dose, "split": "test_heldin", "certified": k, "episodes": 6}

    control = _entry("control", (0.30, 0.25, 0.35), (0.48, 0.40, 0.56))
    iso = _entry("iso", (0.6, 0.5, 0.7), (0.5, 0.4, 0.6), {"heldin": _diff(0.3, 0.2, 0.4),
                                                           "heldout": _diff(0.02, -0.05, 0.09)})
    for e in (control, iso):  # per-token fields as py4.probes.stats writes them
        for g in (e["heldin"], e["heldout"]):
            g.update(accuracy_per_token=g["accuracy"], per_token_ci_low=g["ci_low"], per_token_ci_high=g["ci_high"])
    for d in iso["minus_control"].values():
        d.update(per_token_difference=d["difference"], per_token_ci_low=d["ci_low"], per_token_ci_high=d["ci_high"])
    zero = [ev("tiny/iso/sft", "eft", 0, 0), ev("tiny/iso/eft_8", "eft", 8, 0)]
    gold = [{"policy": "gold", "split": "test_heldin", "certified": 6, "episodes": 6}]
    s = scale_statement([control, iso], zero, gold)
    assert s["shows"] == ["knowledge of the held-in rules (iso minus control, per-token accuracy +0.300 "
                          "[+0.200, +0.400])"]
    assert s["cannot_show"][0].startswith("use: every certified rate on the test splits is 0 (2 models, 0/12")
    assert "the chat parents (EFT dose 0) certify 0 of 6 episodes" in s["cannot_show"][0]
    assert "gold policy certifies 6/6" in s["cannot_show"][0]
    sanity = {**ev("tiny/iso/eft_8", "eft", 8, 3), "split": "train_sanity", "episodes": 3}
    assert "only memorised answers certify (train_sanity, the gold problems an EFT dose trained on: 3/3 episodes " \
        "in the runs that certify any: 1)" in scale_statement([control, iso], [*zero, sanity], gold)["cannot_show"][0]
    # once a model certifies something, use is not called unshowable
    s2 = scale_statement([control, iso], [ev("tiny/iso/sft", "eft", 0, 0), ev("tiny/iso/eft_8", "eft", 8, 2)], gold)
    assert s2["cannot_show"] == [] and "use, measurably: 2/12" in s2["text"]


def test_rules_whose_summed_score_length_decides_are_named(tmp_path):
    from py4.report.results import collect, render_markdown

    spec, nodes = _campaign(tmp_path, _rates(LEARNED, UNTRAINED), {"base": 9.0, "control": 7.0, "iso": 5.0,
                                                                   "prop": 6.0}, MIDTRAINED | {"tiny/base"})
    # P4-02's Python-4 span is 3 tokens longer in every pair: summed, it always loses; per token,
    # the fixture's log-probabilities (-1 vs -2 per pair) leave the model's preference visible.
    for node in nodes:
        path = Path(node.run_dir, "results.json")
        if node.stage == "probes" and path.is_file():
            res = json.loads(path.read_text())
            for row in res["scores"]:
                if row["id"].startswith("P4-02/"):
                    row.update(p4_logprob=row["p4_logprob"] * 4, p4_tokens=4)
            path.write_text(json.dumps(res))
    data = collect(spec, nodes)
    iso = next(e for e in data["probes"] if e["model"] == "tiny/iso/midtrain")
    assert "summed accuracy 0 for the base and all 3 trained models" in iso["per_rule"]["P4-02"]["summed_flag"]
    assert iso["per_rule"]["P4-02"]["discriminates"] is True  # per token it can
    assert "**On the summed score, length decides 1 of 30 rules**" in render_markdown(data)
