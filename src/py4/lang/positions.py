"""Where a parsed node lies in its source. `ast.AST` declares no position (its concrete classes
do), so code holding nodes typed `ast.AST` reads positions through these typed getters (C-level
attribute reads: the analysis calls them per finding)."""

from __future__ import annotations

import ast
import operator
from typing import Callable

# (line, byte column) where a node starts.
node_start: Callable[[ast.AST], tuple[int, int]] = operator.attrgetter("lineno", "col_offset")
# (line, byte column, end line, end byte column).
node_span: Callable[[ast.AST], tuple[int, int, int, int]] = operator.attrgetter(
    "lineno", "col_offset", "end_lineno", "end_col_offset")
