"""scripts/cpu_torchvision.py on a small wheel laid out as the registry's torchvision 0.28.0 is.

The synthetic wheel has the real one's patch points verbatim (the two unconditional
``register_fake`` decorators after ``get_meta_lib``, ``extension.py``'s tolerant ``_has_ops``, the
``+cu130`` version line, ``_C.so``/``image.so``/``torchvision.libs/``), so the import check runs the
same registrations against this environment's torch: the registry's layout fails to import (the
defect), the written wheel imports.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("cpu_torchvision", ROOT / "scripts/cpu_torchvision.py")
assert spec is not None and spec.loader is not None
cpu_torchvision = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cpu_torchvision)

META = '''import functools

import torch
import torch._custom_ops
import torch.library

# Ensure that torch.ops.torchvision is visible
import torchvision.extension  # noqa: F401


@functools.lru_cache(None)
def get_meta_lib():
    return torch.library.Library("torchvision", "IMPL", "Meta")


def register_meta(op_name, overload_name="default"):
    def wrapper(fn):
        if torchvision.extension._has_ops():
            get_meta_lib().impl(getattr(getattr(torch.ops.torchvision, op_name), overload_name), fn)
        return fn

    return wrapper


@register_meta("roi_align")
def meta_roi_align(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned):
    return input


@torch.library.register_fake("torchvision::nms")
def meta_nms(dets, scores, iou_threshold):
    return dets


@torch.library.register_fake("torchvision::qnms")
def meta_qnms(dets, scores, iou_threshold):
    return dets
'''
EXTENSION = '''import torch


def _load_library(lib_name):
    try:
        torch.ops.load_library(__file__.replace("extension.py", lib_name + ".so"))
        return True
    except (ImportError, OSError):
        return False


def _has_ops():
    return False


if _load_library("_C"):

    def _has_ops():  # noqa: F811
        return True
'''
VERSION_PY = "__version__ = '0.28.0+cu130'\ngit_version = 'abc'\n"
INIT = ("from torchvision import extension, _meta_registrations  # noqa: F401\n"
        "from .version import __version__  # noqa: F401\n")
INFO = "torchvision-0.28.0.dist-info/"
WHEEL_NAME = "torchvision-0.28.0-cp311-cp311-manylinux_2_28_x86_64.whl"


def make_wheel(path: Path, meta: str = META, version_py: str = VERSION_PY, drop: tuple[str, ...] = ()) -> Path:
    files = {
        "torchvision/__init__.py": INIT, "torchvision/_C.so": b"\x7fELF not loadable",
        "torchvision/_meta_registrations.py": meta, "torchvision/extension.py": EXTENSION,
        "torchvision/image.so": b"\x7fELF", "torchvision/version.py": version_py,
        "torchvision/transforms/__init__.py": "", "torchvision.libs/": b"",
        "torchvision.libs/libcudart.faf08d9a.so.13": b"\x7fELF cuda",
        INFO + "METADATA": ("Metadata-Version: 2.1\nName: torchvision\nVersion: 0.28.0\n"
                            "Requires-Dist: torch (==2.13.0)\n"),
        INFO + "WHEEL": "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp311-cp311-manylinux_2_28_x86_64\n",
        INFO + "RECORD": "stale,,\n",
    }
    path.mkdir(parents=True, exist_ok=True)
    wheel = path / WHEEL_NAME
    with zipfile.ZipFile(wheel, "w") as z:
        for name, data in files.items():
            if name not in drop:
                z.writestr(zipfile.ZipInfo(name, date_time=(2026, 1, 2, 3, 4, 6)), data)
    return wheel


def import_check(site: Path) -> subprocess.CompletedProcess:
    code = "import torchvision, torchvision.extension as e; print(torchvision.__version__, e._has_ops())"
    return subprocess.run([sys.executable, "-c", code], cwd=site, capture_output=True, text=True, timeout=300)


def test_the_written_wheel_imports_without_its_ops_and_its_record_is_exact(tmp_path):
    source = make_wheel(tmp_path / "in")
    original = tmp_path / "original"
    zipfile.ZipFile(source).extractall(original)
    refused = import_check(original)
    assert refused.returncode != 0 and "torchvision::nms" in refused.stderr  # the registry's layout

    out = cpu_torchvision.build(source, tmp_path / "out")
    assert out.name == "torchvision-0.28.0+cpu.noops-cp311-cp311-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(out) as z:
        names = z.namelist()
        contents = {n: z.read(n) for n in names}
    assert not [n for n in names if n.endswith(".so") or ".so." in n or n.startswith("torchvision.libs")]
    info = "torchvision-0.28.0+cpu.noops.dist-info/"
    assert not [n for n in names if n.startswith(INFO)]
    assert b"Version: 0.28.0+cpu.noops\n" in contents[info + "METADATA"]
    rows = [line.split(",") for line in contents[info + "RECORD"].decode().splitlines()]
    listed = {row[0]: row for row in rows}
    assert set(listed) == {n for n in names if not n.endswith("/")}
    assert listed[info + "RECORD"] == [info + "RECORD", "", ""]
    for name, digest, size in (row for row in rows if row[0] != info + "RECORD"):
        data = contents[name]
        expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        assert (digest, int(size)) == (f"sha256={expected}", len(data)), name

    site = tmp_path / "site"
    zipfile.ZipFile(out).extractall(site)
    accepted = import_check(site)
    assert accepted.returncode == 0, accepted.stderr
    assert accepted.stdout.split() == ["0.28.0+cpu.noops", "False"]

    again = cpu_torchvision.build(source, tmp_path / "again")
    assert again.read_bytes() == out.read_bytes()  # reproducible


@pytest.mark.parametrize("change, message", [
    (dict(meta=META.replace('@torch.library.register_fake("torchvision::qnms")', "")), "expected exactly"),
    (dict(meta=META + '\n\n@torch.library.register_fake("torchvision::roi_pool")\ndef f(x):\n    return x\n'),
     "expected exactly"),
    (dict(meta=META.replace("def get_meta_lib", "def meta_lib")), "get_meta_lib"),
    (dict(version_py="__version__ = '0.29.0+cu130'\n"), "not 0.28.0"),
    (dict(drop=("torchvision/image.so",)), "has no torchvision/image.so"),
])
def test_another_torchvision_is_refused_with_the_reason(tmp_path, change, message):
    source = make_wheel(tmp_path / "in", **change)
    with pytest.raises(cpu_torchvision.PatchError, match=message):
        cpu_torchvision.build(source, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_main_reports_a_refusal_as_one_line_and_exit_1(tmp_path, capsys):
    source = make_wheel(tmp_path / "in", drop=("torchvision/_C.so",))
    assert cpu_torchvision.main([str(tmp_path / "out"), "--wheel", str(source)]) == 1
    assert capsys.readouterr().err.strip() == f"cpu_torchvision: {WHEEL_NAME} has no torchvision/_C.so"
