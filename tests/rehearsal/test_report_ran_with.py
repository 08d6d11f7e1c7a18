"""The rehearsal report says per node which environment ran it and which server answered it."""

from py4.rehearsal.report import ran_with, write_report


def test_ran_with_names_the_environment_and_the_server():
    command = ["/repo/.venv/bin/python", "-c", "from py4.cli import main; main()", "eval"]
    assert ran_with(command, None) == ".venv"
    transformers = {"command": "/repo/.venv/bin/python -m transformers.cli.transformers serve /w --host 127.0.0.1"}
    assert ran_with(command, transformers) == ".venv; transformers serve (.venv)"
    vllm = {"command": "/repo/.venv-vllm/bin/vllm serve /w --served-model-name x --enable-lora"}
    assert ran_with(["/repo/.venv-vllm/bin/python", "-m", "py4"], vllm) == ".venv-vllm; vllm serve (.venv-vllm)"


def test_report_table_has_the_ran_with_column(tmp_path):
    row = {"id": "gemma4_12b/eval", "stage": "eval", "status": "done", "seconds": 3, "skipped_as_done": False,
           "facts": {}, "ran_with": ".venv; vllm serve (.venv-vllm)"}
    report = {"campaign": "c.yaml", "out": str(tmp_path), "seconds": 3, "counts": {"done": 1}, "boundaries": {},
              "nodes": [row], "not_proven": {}}
    _, md = write_report(report, tmp_path)
    text = md.read_text()
    assert "| node | stage | status | s | ran with | key facts / error |" in text
    assert "| gemma4_12b/eval | eval | done | 3 | .venv; vllm serve (.venv-vllm) |" in text
