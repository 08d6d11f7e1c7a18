"""Compare two campaign output folders (e.g. `py4 demo --out` before and after a change) run by run.

usage: python scripts/compare_campaigns.py BEFORE AFTER
  every run done in both campaign folders (its record in _campaign/runs/<id>/run_manifest.json says
  done): its record and its run folder, then report/ and calibration/ when both have them; exit 1 on a
  difference.
usage: python scripts/compare_campaigns.py --folders BEFORE AFTER [ROOT_BEFORE ROOT_AFTER]
  two folders (the roots, default the folders themselves, are the campaign folders whose paths are replaced)

What is compared and what is left out: py4.campaign.compare (the Slurm tests compare by the same rules).
"""

from __future__ import annotations

import sys

from py4.campaign.compare import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
