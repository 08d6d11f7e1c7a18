"""Smoke-scale replay text made locally from the Python standard library.

The campaign's replay corpus is Dolmino, streamed from the Hub. At smoke scale nothing
may touch the network, so the replay text is made from what every machine has: the
standard library's ``.py`` files, read from disk (never imported: importing ``this`` or
``antigravity`` has side effects). For each module, in sorted path order, two kinds of
document are made:

1. a *prose* document: the module's docstring followed by the docstrings of its
   top-level classes and functions, ``pydoc``-like ("Help on module json: ...");
2. a *source* document: the file itself, cut at line boundaries into parts of at most
   ``max_chars_per_doc`` characters.

Test suites, ``site-packages``, ``idlelib``, ``lib2to3`` and ``turtledemo`` are skipped,
as are files that do not parse. The output is deterministic for a given Python build
(the manifest records the version and a content hash).
"""

from __future__ import annotations

import ast
import hashlib
import json
import platform
import sysconfig
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from py4.data.documents import Document
from py4.data.errors import DataError

__all__ = ["stdlib_files", "iter_stdlib_documents", "build_smoke_replay"]

_SKIP_PARTS = {"test", "tests", "site-packages", "dist-packages", "idlelib", "lib2to3", "turtledemo",
               "__pycache__", "ensurepip", "venv"}


def stdlib_files(root: str | Path | None = None) -> list[Path]:
    """The standard library's ``.py`` files (sorted by relative path), skipping tests and vendored parts."""
    root = Path(root or sysconfig.get_paths()["stdlib"])
    files = []
    for path in root.rglob("*.py"):
        rel = path.relative_to(root)
        if any(part in _SKIP_PARTS or part.startswith("test_") for part in rel.parts):
            continue
        files.append(path)
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


def _module_name(rel: Path) -> str:
    parts = list(rel.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts) or rel.stem


def _prose(module: str, tree: ast.Module) -> str | None:
    sections = []
    doc = ast.get_docstring(tree)
    if doc:
        sections.append(f"Help on module {module}:\n\nNAME\n    {module}\n\nDESCRIPTION\n{_indent(doc)}")
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
            node_doc = ast.get_docstring(node)
            if node_doc:
                kind = "class" if isinstance(node, ast.ClassDef) else "function"
                sections.append(f"{module}.{node.name} ({kind})\n{_indent(node_doc)}")
    return "\n\n".join(sections) if sections else None


def _indent(text: str) -> str:
    return "\n".join(("    " + line) if line else "" for line in text.splitlines())


def _split_lines(text: str, max_chars: int) -> list[str]:
    parts, current, size = [], [], 0
    for line in text.splitlines(keepends=True):
        if size + len(line) > max_chars and current:
            parts.append("".join(current))
            current, size = [], 0
        # A single line longer than the limit is cut hard: rare (data tables), still text.
        while len(line) > max_chars:
            parts.append(line[:max_chars])
            line = line[max_chars:]
        current.append(line)
        size += len(line)
    if current:
        parts.append("".join(current))
    return [p for p in parts if p.strip()]


def iter_stdlib_documents(max_chars_per_doc: int = 8000, root: str | Path | None = None) -> Iterator[Document]:
    """Stream the smoke replay documents (prose, then source parts, module by module)."""
    root = Path(root or sysconfig.get_paths()["stdlib"])
    for path in stdlib_files(root):
        rel = path.relative_to(root)
        try:
            source = path.read_text(encoding="utf-8")
            tree = ast.parse(source)
        except (UnicodeDecodeError, SyntaxError, ValueError):
            continue
        module = _module_name(rel)
        prose = _prose(module, tree)
        if prose:
            for i, part in enumerate(_split_lines(prose, max_chars_per_doc)):
                yield Document(id=f"stdlib/{rel.as_posix()}#doc{i}", text=part, source="replay")
        for i, part in enumerate(_split_lines(source, max_chars_per_doc)):
            yield Document(id=f"stdlib/{rel.as_posix()}#src{i}", text=part, source="replay")


def build_smoke_replay(out_dir: str | Path, *, target_tokens: int | None = None, max_docs: int | None = None,
                       tokenizer: Any = None, max_chars_per_doc: int = 8000, docs_per_shard: int = 1000,
                       root: str | Path | None = None) -> dict[str, Any]:
    """Write the stdlib replay as jsonl shards plus ``manifest.json``; return the manifest.

    Stops after ``max_docs`` documents or once ``target_tokens`` tokens (counted with
    ``tokenizer`` as the mix counts them: BOS + text + EOS) are written, whichever comes
    first; with neither, writes every document. Raises ValueError when ``target_tokens``
    is given without a tokenizer, or when the standard library yields too little text.
    """
    from py4.data.tokens import DocumentEncoder
    from py4.runs import atomic_write_json, provenance_fields

    if target_tokens is not None and tokenizer is None:
        raise DataError("target_tokens needs a tokenizer to count with")
    encoder = DocumentEncoder(tokenizer) if tokenizer is not None else None
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    docs = tokens = chars = shard_index = 0
    shard = None
    try:
        for doc in iter_stdlib_documents(max_chars_per_doc, root):
            if (max_docs is not None and docs >= max_docs) or (target_tokens is not None and tokens >= target_tokens):
                break
            if docs % docs_per_shard == 0:
                if shard:
                    shard.close()
                shard = open(out / f"replay-{shard_index:05d}.jsonl", "w", encoding="utf-8")  # noqa: SIM115 - closed when the next shard opens
                shard_index += 1
            line = json.dumps({"id": doc.id, "text": doc.text}, ensure_ascii=False) + "\n"
            shard.write(line)
            digest.update(line.encode())
            docs += 1
            chars += len(doc.text)
            if encoder is not None:
                tokens += encoder.count_batch([doc.text])[0]
    finally:
        if shard:
            shard.close()
    if target_tokens is not None and tokens < target_tokens:
        raise DataError(f"the standard library gave only {tokens} tokens; {target_tokens} were asked for")
    manifest = {
        "kind": "smoke_replay", "source": "python stdlib (sysconfig stdlib path)", "python": platform.python_version(),
        "max_chars_per_doc": max_chars_per_doc, "docs": docs, "chars": chars, "shards": shard_index,
        "tokens": tokens if encoder is not None else None, "content_sha256": digest.hexdigest(),
        **provenance_fields(("py4", "tokenizers", "transformers")),
    }
    atomic_write_json(out / "manifest.json", manifest)
    return manifest
