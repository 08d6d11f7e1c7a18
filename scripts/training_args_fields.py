"""Write the field names of a transformers release's ``TrainingArguments`` as a JSON fixture.

The trainer environment (vLLM's side) pins another transformers than ``.venv``; the fast tests
check the keywords py4 passes against that release's fields without installing it. The names
are read from the release's own source, with ``ast`` (nothing of it is imported):

    pip download transformers==5.17.0 --no-deps -d /tmp/tf
    python scripts/training_args_fields.py /tmp/tf/transformers-5.17.0-py3-none-any.whl \
        > tests/train/fixtures/training_args_fields_5.17.0.json

The argument is a wheel or a ``training_args.py``; the version is read from the wheel's
``METADATA`` (or given with ``--version`` for a bare file).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import sys
import zipfile
from pathlib import Path

MODULE = "transformers/training_args.py"


def dataclass_fields(source: str, class_name: str = "TrainingArguments") -> list[str]:
    """The annotated class-level names of ``class_name`` in ``source`` (its dataclass fields), in order."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            return [stmt.target.id for stmt in node.body
                    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
                    and not (isinstance(stmt.annotation, ast.Subscript)
                             and getattr(stmt.annotation.value, "id", "") == "ClassVar")]
    raise SystemExit(f"no class {class_name} in the source")


def read_release(path: Path) -> tuple[str, str, str]:
    """(source of training_args.py, version, where it came from)."""
    if path.suffix == ".whl":
        with zipfile.ZipFile(path) as wheel:
            source = wheel.read(MODULE).decode("utf-8")
            metadata = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
            version = next(line.split(":", 1)[1].strip() for line in wheel.read(metadata).decode().splitlines()
                           if line.startswith("Version:"))
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        return source, version, f"{path.name} (sha256 {digest}), {MODULE}"
    return path.read_text(encoding="utf-8"), "", str(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="a transformers wheel or its training_args.py")
    parser.add_argument("--version", default=None, help="the release's version (read from a wheel)")
    args = parser.parse_args(argv)
    source, version, origin = read_release(args.source)
    version = args.version or version
    if not version:
        parser.error("--version is needed for a bare training_args.py")
    json.dump({"transformers": version, "source": origin, "generator": "scripts/training_args_fields.py",
               "fields": sorted(dataclass_fields(source))}, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
