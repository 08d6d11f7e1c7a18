import sys
from pathlib import Path

# The helper modules of this directory (doctest_corpus, differential, behaviour_util).
sys.path.insert(0, str(Path(__file__).parent))
