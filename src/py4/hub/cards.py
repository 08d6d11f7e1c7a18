"""Cards: a README.md with YAML front matter (the Hub's metadata) and a Markdown body.

The Hub reads the block between the leading `---` lines (`huggingface_hub`'s card parser
does the same); everything the toolkit knows about an artefact goes there or in the body.
"""

from __future__ import annotations

from typing import Any

import yaml

CARD_NAME = "README.md"


def render_card(metadata: dict[str, Any], body: str) -> str:
    """A card's text: metadata as YAML front matter, then the body."""
    front = yaml.safe_dump(metadata, sort_keys=False, allow_unicode=True, width=100)
    return f"---\n{front}---\n\n{body.strip()}\n"


def bullet_list(items: dict[str, Any]) -> str:
    """`- key: value` lines, values that are None left out."""
    return "\n".join(f"- {key}: {value}" for key, value in items.items() if value is not None)
