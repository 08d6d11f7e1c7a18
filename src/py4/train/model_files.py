"""The files besides the weights that make a model folder complete: processor, preprocessors, template.

A model's ``save_pretrained`` writes its config and weights, a tokenizer's writes the tokenizer
files and chat template; a multimodal model's processor files (``processor_config.json``, the
image ``preprocessor_config.json``, ``video_preprocessor_config.json``, the audio tokenizer's)
are written by neither. vLLM builds a Gemma-4 model's processor when it starts with the model's
media inputs on (a server or TRL's colocated engine without ``--language-model-only``), and a folder
without them is refused (``OSError: Can't load feature extractor``). :func:`copy_files` is the
one copier of such files: the graft takes them with its other files from the -it model
(``py4.graft.provenance``), and every training stage copies them into its output
(:func:`copy_processor_files`, called by ``py4.train.packed.finish`` for midtraining, SFT, EFT and
GRPO) from the tokenizer's source (the -it model, for an SFT of a base) or else the model it trained.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from py4.runs import file_sha256, temp_file_beside

__all__ = ["PROCESSOR_FILES", "copy_files", "copy_processor_files", "source_folder"]

PROCESSOR_FILES: tuple[str, ...] = (
    "processor_config.json",  # transformers' PROCESSOR_NAME
    "preprocessor_config.json",  # IMAGE_PROCESSOR_NAME / FEATURE_EXTRACTOR_NAME
    "video_preprocessor_config.json",  # VIDEO_PROCESSOR_NAME
    "audio_tokenizer_config.json",  # AUDIO_TOKENIZER_NAME
    "chat_template.jinja",
    "chat_template.json",  # the processor's template in older saves
)


def copy_files(source: Path, dest: Path, names: Iterable[str], *, replace: bool = True,
               label: str | None = None) -> dict[str, dict]:
    """Copy each of ``names`` that ``source`` holds into ``dest``, atomically (a reader never sees half).

    ``replace``: False keeps a file ``dest`` already has (what the save itself wrote). Returns
    ``{name: {"from": label, "source": path, "sha256": ...}}`` for the files copied.
    """
    copied: dict[str, dict] = {}
    for name in names:
        src, dst = source / name, dest / name
        if not src.is_file() or (not replace and dst.exists()):
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = temp_file_beside(dst)  # the umask's mode, not mkstemp's 0600
        os.close(fd)
        try:
            shutil.copyfile(src, tmp)
            os.replace(tmp, dst)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        copied[name] = {**({"from": label} if label else {}), "source": str(src), "sha256": file_sha256(dst)}
    return copied


def source_folder(path: str, revision: str | None, names: Iterable[str] = PROCESSOR_FILES) -> Path | None:
    """A local folder holding what ``path`` has of ``names``: the folder itself, or for a Hub id the
    cache snapshot of those files (fetched when missing and the Hub is reachable). None when the Hub
    cannot be asked (offline, no such repository): the files are then copied from the next source."""
    folder = Path(path).expanduser()
    if folder.is_dir():
        return folder
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(path, revision=revision, allow_patterns=list(names)))
    except Exception:  # noqa: BLE001 — huggingface_hub raises many kinds (offline, 404, auth); each means "none"
        return None


def copy_processor_files(sources: Iterable[tuple[str, str | None]], dest: str | Path) -> dict[str, dict]:
    """Copy the processor files into the saved model ``dest`` from the first of ``sources`` (path,
    revision) holding each; never over a file the save wrote. Returns what was copied, by name."""
    dest = Path(dest)
    copied: dict[str, dict] = {}
    for path, revision in sources:
        missing = [n for n in PROCESSOR_FILES if n not in copied and not (dest / n).exists()]
        folder = source_folder(path, revision, missing) if missing else None
        if folder is not None:
            copied |= copy_files(folder, dest, missing, replace=False, label=path)
    return copied
