"""The rehearsal report: per node, its status, seconds, key facts and (on failure) the error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# Run-manifest fields that are bulky or the same for every node (kept out of "facts").
_NOT_FACTS = {"kind", "status", "started_at", "finished_at", "inputs", "outputs", "hardware", "libraries", "config",
              "config_sha256", "timings", "node", "fingerprint", "attempt"}


def key_facts(manifest: dict[str, Any] | None) -> dict[str, Any]:
    """Small scalar fields of a stage's run manifest (steps, rows, losses, counts, dtypes ...)."""
    if not manifest:
        return {}
    facts = {}
    for key, value in manifest.items():
        if key in _NOT_FACTS:
            continue
        if isinstance(value, (int, float, str, bool)) and len(str(value)) <= 120:
            facts[key] = value
        elif isinstance(value, dict) and len(json.dumps(value, default=str)) <= 240:
            facts[key] = value
    return facts


def saved_dtypes(run_dir: str | Path) -> dict[str, int] | None:
    """dtype -> tensor count of the safetensors a run saved (its model/ folder, or the folder
    itself for a graft), read from the file headers; None when it saved none."""
    import struct

    for folder in (Path(run_dir) / "model", Path(run_dir)):
        shards = sorted(folder.glob("*.safetensors"))
        if shards:
            counts: dict[str, int] = {}
            for shard in shards:
                with open(shard, "rb") as fh:
                    header = json.loads(fh.read(struct.unpack("<Q", fh.read(8))[0]))
                for name, entry in header.items():
                    if name != "__metadata__":
                        counts[entry["dtype"]] = counts.get(entry["dtype"], 0) + 1
            return counts
    return None


def build_report(nodes, selected: set[str], layout, executor, summary, config, campaign_file, seconds: float) -> dict:
    """The report of one invocation over the whole folder: the nodes it ran or skipped, and each
    node an earlier invocation left a record of (``earlier``; ``stale`` when its command or an input
    changed since), so a narrower rehearsal in the same folder does not hide the rest."""
    from py4.campaign.records import fingerprints, node_status, record_dir
    from py4.rehearsal.logs import last_error
    from py4.runs import provenance_fields, read_manifest

    rows = []
    current = fingerprints(nodes)
    for node in nodes:
        record = read_manifest(record_dir(layout.campaign, node)) or {}
        earlier = node.id not in selected
        if earlier and not record:
            continue
        status = node_status(layout.campaign, node)
        if node.id in summary.blocked:
            status = "blocked"
        row = {"id": node.id, "stage": node.stage, "status": status,
               "seconds": executor.seconds.get(node.id,
                                               round((record.get("timings") or {}).get("total_s") or 0, 1) or None),
               "skipped_as_done": node.id in summary.skipped, "command": executor.command(node),
               "facts": key_facts(read_manifest(node.run_dir))}
        if earlier:
            row["earlier"] = True
            row["stale"] = status == "done" and record.get("fingerprint") != current[node.id]
        if node.id in executor.drills:
            row["resume_drill"] = executor.drills[node.id]
        if record.get("server"):
            row["server_record"] = record["server"]
        row["environment"] = environment_of(row["command"])
        row["server"] = server_of(record.get("server"), read_manifest(node.run_dir), node.stage)
        dtypes = saved_dtypes(node.run_dir) if status == "done" else None
        if dtypes:
            row["facts"] = {"saved_dtypes": dtypes, **row["facts"]}
        if status == "failed":
            # The runner's record holds what stopped the node (a server that never answered fails
            # before the stage's process starts); the stage's log says more when there is one.
            logged = last_error(executor.log_path(node), lines=2)
            row["error"] = logged if record.get("error", "").startswith("RunFailed") or not record.get("error") \
                else _first_and_last_line(record["error"])
            row["log"] = str(executor.log_path(node))
            if (record.get("server") or {}).get("log"):
                row["server_log"] = record["server"]["log"]
        if status == "blocked":
            row["needs"] = [i for i in node.inputs if node_status(layout.campaign, _by_id(nodes, i)) != "done"]
        rows.append(row)
    counts: dict[str, int] = {}
    folder_counts: dict[str, int] = {}
    for row in rows:
        status = "stale" if row.get("stale") else row["status"]
        folder_counts[status] = folder_counts.get(status, 0) + 1
        if not row.get("earlier"):
            counts[row["status"]] = counts.get(row["status"], 0) + 1
    return {"campaign": str(campaign_file), "out": str(layout.root), "seconds": seconds, "counts": counts,
            "folder_counts": folder_counts,
            "boundaries": {k: v.model_dump() for k, v in config.boundaries.items()}, "nodes": rows,
            "not_proven": not_proven(layout.standins), **provenance_fields()}


def not_proven(standins_dir: Path) -> dict[str, dict[str, str]]:
    """{stand-in: {file: what it is made from}} for each file that is not the pinned revision's own
    (``standin.json``'s ``files``): the checks that depend on its exact bytes are not proven here."""
    found: dict[str, dict[str, str]] = {}
    for marker in sorted(Path(standins_dir).glob("*/standin.json")):
        files = json.loads(marker.read_text()).get("files") or {}
        unproven = {name: entry["from"] for name, entry in files.items() if not entry.get("pinned")}
        if unproven:
            found[marker.parent.name] = unproven
    return found


def _venv_of(program: str) -> str:
    """A program's virtual environment (the folder above its bin/), or the program itself."""
    path = Path(program)
    return path.parent.parent.name if path.parent.name == "bin" else str(path)


def environment_of(command: list[str]) -> str:
    """The environment that ran a node: the virtual environment of the interpreter its command starts."""
    return _venv_of(command[0]) if command else "?"


def server_of(server: dict[str, Any] | None, manifest: dict[str, Any] | None, stage: str | None = None) -> str:
    """What generated a node's model outputs, when something did: for an evaluation, the server
    program of the runner's recorded command and its environment (``vllm serve (.venv-vllm)``); for
    GRPO, the rollouts' engine from its run manifest (``vLLM colocate (cpu)``, ``transformers
    generate``); for a probe run, which the campaign scores in its own process (``py4 eval probes
    --model``), that no server ran it; empty otherwise."""
    if server and server.get("command"):
        argv = str(server["command"]).split()
        engine = ("vllm serve" if argv[1:2] == ["serve"] else
                  "transformers serve" if "serve" in argv[:5] else Path(argv[0]).name)
        return f"{engine} ({_venv_of(argv[0])})"
    sampling = (manifest or {}).get("sampling")
    if isinstance(sampling, dict) and sampling.get("engine"):
        vllm = (manifest or {}).get("vllm_generation") or {}
        where = vllm.get("platform") or vllm.get("server")
        return f"rollouts: {sampling['engine']}" + (f" ({where})" if where else "")
    return "none: scored in-process" if stage == "probes" else ""


def _first_and_last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return lines[0] if len(lines) < 2 else f"{lines[0][:300]} ... {lines[-1][:300]}"


def _when(row: dict[str, Any]) -> str:
    if row.get("stale"):
        return " (earlier invocation; its command or an input changed since)"
    if row.get("earlier"):
        return " (earlier invocation)"
    return " (done before)" if row["skipped_as_done"] else ""


def _by_id(nodes, node_id: str):
    return next(n for n in nodes if n.id == node_id)


def write_report(report: dict, root: Path) -> tuple[Path, Path]:
    json_path = root / "rehearsal_report.json"
    json_path.write_text(json.dumps(report, indent=2, default=str) + "\n")
    lines = [f"# Rehearsal of {report['campaign']}", "",
             f"Folder: `{report['out']}`; this invocation: {report['seconds']} s, "
             + ", ".join(f"{k} {v}" for k, v in sorted(report["counts"].items()))
             + ("; the folder's records (earlier invocations included): "
                + ", ".join(f"{k} {v}" for k, v in sorted(report["folder_counts"].items()))
                if report.get("folder_counts", report["counts"]) != report["counts"] else ""), "",
             *([f"Not importable here (pyproject's campaign extra): {', '.join(report['missing_campaign_extras'])}", ""]
               if report.get("missing_campaign_extras") else []),
             "| node | stage | status | s | environment | server | key facts / error |",
             "|---|---|---|---|---|---|---|"]
    for row in report["nodes"]:
        detail = row.get("error") or (("needs " + ", ".join(row["needs"])) if row.get("needs") else
                                      "; ".join(f"{k}={v}" for k, v in list(row["facts"].items())[:6]))
        detail = str(detail).replace("|", "\\|").replace("\n", " ")[:400]
        lines.append(f"| {row['id']} | {row['stage']} | "
                     f"{row['status']}{_when(row)} | "
                     f"{row['seconds'] if row['seconds'] is not None else ''} | {row.get('environment', '')} | "
                     f"{row.get('server', '')} | "
                     f"{detail} |")
    if report["boundaries"]:
        lines += ["", "## Boundaries (settings a CPU cannot run; one named override each)", ""]
        lines += [f"- {name} ({b['stage'] or 'campaign'}): `{' '.join(b['overrides'] + b['campaign_overrides'])}` — "
                  f"{b['why']}"
                  for name, b in report["boundaries"].items()]
    if report.get("not_proven"):
        lines += ["", "## Not proven here: stand-in files that are not the pinned revisions' own", "",
                  "TRL's template recognition, the tool-call parsers on the template's rendering and the graft's "
                  "vocabulary agreement pass for these files only; `py4 campaign preflight` checks the real ones.", ""]
        lines += [f"- {standin} `{name}`: {source}" for standin, files in report["not_proven"].items()
                  for name, source in files.items()]
    md_path = root / "REHEARSAL_REPORT.md"
    md_path.write_text("\n".join(lines) + "\n")
    return json_path, md_path
