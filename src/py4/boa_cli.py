"""The `boa` console script: Boa's commands, and `boa certify` reading the problem bank's files.

It lives above both Boa and the bank (``py4.boa`` must not import ``py4.problems``): Boa
certifies anything shaped like a problem (``py4.boa.certify.CertifiableProblem``), and
this module hands it the bank's reader, so that a problem file is valid exactly when
``py4.problems.schema.Problem`` accepts it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from py4.boa.cli import make_app

if TYPE_CHECKING:
    from py4.boa.certify import CertifiableProblem


def read_problem(raw: bytes) -> CertifiableProblem:
    """A problem file's bytes as a bank problem; raises ValueError (pydantic's) when invalid."""
    from py4.problems.schema import Problem  # here: pydantic loads only for `boa certify`

    return Problem.model_validate_json(raw)


app = make_app(read_problem)


def main() -> None:  # pragma: no cover - console-script entry point
    app()
