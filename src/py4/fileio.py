"""File I/O of the toolkit: JSON/JSONL readers whose errors name the file, the line and the
field, and atomic writers.

Every reader of the toolkit's JSON artefacts (corpus shards and manifests, data sources,
problem files, instruction rows, a checkpoint's weight index) goes through these functions, so a malformed input is
reported the same way everywhere: ``path:line: what is wrong, what was expected`` as a
:class:`~py4.errors.FileFormatError`, or the caller's own :class:`~py4.errors.Py4Error`
subclass (``error=``) so that a subsystem still catches its own errors.

Writes are atomic (a temporary file in the same folder, then a rename) so an interrupted
run never leaves a half-written file that a resume would trust.
"""

from __future__ import annotations

import gzip
import json
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from py4.errors import FileFormatError, Py4Error, where

__all__ = ["read_json_object", "read_weight_map", "WEIGHT_INDEX_NAME", "iter_jsonl", "parse_json_line", "open_text",
           "temp_file_beside", "atomic_write_text", "atomic_write_json"]


def open_text(path: Path) -> IO[str]:
    """Open a text file for reading, transparently decompressing ``*.gz``."""
    if path.name.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


WEIGHT_INDEX_NAME = "model.safetensors.index.json"
"""The index of a sharded checkpoint: ``weight_map`` gives the shard file of every tensor."""


def read_weight_map(index: str | Path, *, error: type[Py4Error] = FileFormatError) -> dict[str, str]:
    """tensor name -> shard file of a ``model.safetensors.index.json`` (a checkpoint folder's, or
    one in the Hugging Face cache); ``error`` naming the file (and the line of malformed JSON) when
    it is not a JSON object with such a ``weight_map``."""
    weight_map = read_json_object(index, error=error).get("weight_map")
    if not isinstance(weight_map, dict) or not all(isinstance(v, str) for v in weight_map.values()):
        raise error(f"{index}: weight_map: expected a mapping of tensor names to shard files, "
                    f"got {type(weight_map).__name__}")
    return weight_map


def read_json_object(path: str | Path, *, missing: str = "no such file",
                     error: type[Py4Error] = FileFormatError) -> dict[str, Any]:
    """The JSON object stored in ``path``.

    ``missing`` completes the message when the file does not exist (say what the file is
    and which command makes it).
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise error(f"{path}: {missing}") from None
    except json.JSONDecodeError as exc:
        raise error(f"{where(path, exc.lineno)}: invalid JSON: {exc.msg} (column {exc.colno})") from None
    except UnicodeDecodeError as exc:
        raise error(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:  # a folder, no permission: the user's to fix
        raise error(f"{path}: cannot read: {exc.strerror or exc}") from None
    if not isinstance(data, dict):
        raise error(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data


def iter_jsonl(path: str | Path, *, fields: dict[str, type | tuple[type, ...]] | None = None,
               error: type[Py4Error] = FileFormatError) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line of a JSONL (or ``.jsonl.gz``) file.

    Each line must be a JSON object; ``fields`` maps required field names to their types.
    """
    path = Path(path)
    try:
        handle = open_text(path)
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    except OSError as exc:
        raise error(f"{path}: cannot read: {exc.strerror or exc}") from None
    lineno = 0
    with handle:
        try:
            for lineno, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                row = parse_json_line(line, where(path, lineno), error)
                for name, kind in (fields or {}).items():
                    if not isinstance(row.get(name), kind):
                        got = type(row[name]).__name__ if name in row else "nothing"
                        expected = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
                        raise error(f"{where(path, lineno)}: field {name!r}: expected {expected}, got {got}")
                yield lineno, row
        except UnicodeDecodeError as exc:
            raise error(f"{where(path, lineno + 1)}: not UTF-8 text (byte {exc.start} of a block)") from None
        except (OSError, EOFError) as exc:  # a truncated or corrupt .gz, a folder, a read error
            raise error(f"{where(path, lineno + 1)}: cannot read: {exc}") from None


def parse_json_line(line: str, at: str, error: type[Py4Error] = FileFormatError) -> dict[str, Any]:
    """One JSONL line, which must be a JSON object; ``at`` (``path:line``) starts the error's message."""
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise error(f"{at}: invalid JSON: {exc.msg} (column {exc.colno})") from None
    if not isinstance(row, dict):
        raise error(f"{at}: expected a JSON object, got {type(row).__name__}")
    return row


def temp_file_beside(path: str | Path) -> tuple[int, str]:
    """A new, empty temporary file in ``path``'s folder (for write-then-rename); (fd, its path).

    Created with mode 0666 less the umask, as ``open()`` would create ``path`` itself:
    ``tempfile.mkstemp`` makes 0600 files, and renaming one into place would leave the
    output unreadable to colleagues on a shared filesystem.
    """
    path = Path(path)
    for _ in range(100):
        tmp = path.parent / f".{path.name}.{secrets.token_hex(4)}"
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666), str(tmp)
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {path}")


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically (temp file in the same folder, then rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = temp_file_beside(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def atomic_write_json(path: str | Path, data: Any) -> Path:
    return atomic_write_text(path, json.dumps(data, indent=2, sort_keys=False, default=str) + "\n")
