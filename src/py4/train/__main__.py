"""`python -m py4.train STAGE --config FILE [key=value ...]` (the form accelerate launches):
`py4 train`, whose stages come from the stage registry (py4.stage_cli, a command-line module)."""

from py4.stage_cli import main

if __name__ == "__main__":
    main()
