"""`python -m py4.train STAGE --config FILE [key=value ...]` (the form accelerate launches)."""

from py4.train.cli import main

if __name__ == "__main__":
    main()
