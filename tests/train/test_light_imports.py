"""Light paths stay light: loading stage configs (the registry, config checks, reports)
imports the training modules' shared parts, which must not load transformers (~14 s cold)."""

import subprocess
import sys


def test_train_common_does_not_import_transformers():
    probe = "import sys, py4.train.common; print('transformers' in sys.modules, 'torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"], out
