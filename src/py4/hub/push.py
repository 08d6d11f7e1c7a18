"""Uploading a folder to the Hub: `create_repo` and `upload_folder`, nothing else.

Everything before this call is tested for real (the folder is what the Hub receives); the
call itself is tested against a local stand-in of the endpoints it uses. The token comes
from the usual places (`HF_TOKEN`, `huggingface-cli login`); `HF_ENDPOINT` points it at
another Hub.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from py4.errors import Py4Error

RepoType = Literal["model", "dataset"]
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


class PushError(Py4Error, RuntimeError):
    """An upload was refused or failed (the message names the repository and the reason)."""


def check_repo_id(repo_id: str) -> str:
    """`repo_id` if it is ORG/NAME; raises PushError naming what was expected."""
    if not _REPO_ID.match(repo_id):
        raise PushError(f"{repo_id!r}: expected a Hub repository id ORG/NAME")
    return repo_id


def push_folder(folder: str | Path, repo_id: str, repo_type: RepoType, *, revision: str | None = None,
                private: bool = True, message: str | None = None, endpoint: str | None = None,
                token: str | None = None) -> str:
    """Upload `folder` to `repo_id` (created if missing, private by default), on branch
    `revision` (created from main if missing); returns the commit's URL.

    Raises PushError for a missing folder, a bad id, or what the Hub answers with an error.
    """
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError

    folder = Path(folder)
    if not folder.is_dir():
        raise PushError(f"{folder}: no such folder to push")
    check_repo_id(repo_id)
    api = HfApi(endpoint=endpoint, token=token)
    try:
        api.create_repo(repo_id, repo_type=repo_type, private=private, exist_ok=True)
        if revision:
            api.create_branch(repo_id, repo_type=repo_type, branch=revision, exist_ok=True)
        info = api.upload_folder(folder_path=str(folder), repo_id=repo_id, repo_type=repo_type,
                                 revision=revision, commit_message=message or f"py4: upload {folder.name}")
    except HfHubHTTPError as exc:
        raise PushError(f"{repo_type} {repo_id}: the Hub refused the upload ({exc})") from None
    return str(getattr(info, "commit_url", info))


def export_summary(summary: dict, push: str | None, revision: str | None, repo_type: RepoType) -> str:
    """The line an export command prints, after uploading the folder when `push` names a repo."""
    rows = ", ".join(f"{split} {n}" for split, n in summary["rows"].items())
    line = f"wrote {summary['out']} ({rows}; content sha256 {summary['content_sha256'][:12]}…)"
    if push:
        line += f"\npushed to {push_folder(summary['out'], push, repo_type, revision=revision)}"
    return line
