"""Write a torchvision wheel that imports against the CPU torch of .venv-vllm: the registry's wheel, without its C ops.

usage: python scripts/cpu_torchvision.py OUT_DIR [--wheel WHEEL]
  prints the path of the wheel written to OUT_DIR; without --wheel, the registry's
  torchvision==0.28.0 wheel is fetched first (``pip download --no-deps`` with this interpreter).

Why it exists: vLLM's multimodal Gemma-4 classes (``gemma4_mm``, ``gemma4_unified``) build
transformers' ``Gemma4Processor``, whose image and video processors import
``torchvision.transforms.v2``. torch 2.13.0's torchvision is 0.28.0 (``Requires-Dist:
torch==2.13.0``), published only as a wheel built for CUDA (``0.28.0+cu130``: ``_C.so`` and
``image.so`` link ``libc10_cuda``, ``libtorch_cuda`` and the bundled ``libcudart``), with no source
distribution to build a CPU one from. Against the CPU torch, ``torchvision/extension.py`` already
tolerates the failed ``_C`` load (``_has_ops()`` is false), but ``torchvision/_meta_registrations.py``
registers fake kernels for ``torchvision::nms`` and ``torchvision::qnms`` unconditionally, so
``import torchvision`` raises ``RuntimeError: operator torchvision::nms does not exist``.

How the written wheel deviates from the registry's, and nothing else:

- ``torchvision/_C.so``, ``torchvision/image.so`` and ``torchvision.libs/`` (the CUDA runtime, nvjpeg,
  libjpeg/png/webp those two link) are left out: the compiled ops (``nms``, ``roi_align``,
  deformable convolution ...) and the C image decoders (``torchvision.io.decode_*``) are absent and
  raise torchvision's own "Couldn't load custom C++ ops" when called. Gemma-4's processors use the
  Python transforms only (``transforms.v2.functional`` resize, pad, normalise on tensors), which
  need none of them.
- The two fake-kernel registrations are made only when the ops exist (``_has_ops()``), as every
  other registration in that file already is.
- Its version is ``0.28.0+cpu.noops`` (a PEP 440 local version: it still satisfies
  ``torchvision==0.28.0``), set in ``METADATA``, ``torchvision/version.py`` and the file name, so
  ``pip list`` and ``torchvision.__version__`` say which build is installed; ``RECORD`` lists every
  file with its sha256 and size.

The patch points are checked, not assumed: another torchvision (a different version, a changed
``_meta_registrations.py``, a missing library) stops the script with the reason (exit 1). The
output is reproducible: the same input wheel gives the same bytes (entries in the input's order,
with its timestamps). ``make vllm-env`` runs it for the CPU variant; a GPU node installs the real
torchvision from its CUDA index (envs/vllm-gpu.txt). Standard library only.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

VERSION = "0.28.0"
"""The torchvision that torch 2.13.0 pins (its wheel's ``Requires-Dist: torch==2.13.0``)."""
LOCAL_VERSION = f"{VERSION}+cpu.noops"
REMOVED_FILES = ("torchvision/_C.so", "torchvision/image.so")
REMOVED_DIRS = ("torchvision.libs/",)
GUARDED_FAKES = ("torchvision::nms", "torchvision::qnms")
META = "torchvision/_meta_registrations.py"
VERSION_PY = "torchvision/version.py"
EXTENSION = "torchvision/extension.py"
GUARD_HELPER = '''

def register_fake_if_ops(op_name):
    """torch.library.register_fake for an op of torchvision's C library, only when that library loaded."""

    def wrapper(fn):
        if torchvision.extension._has_ops():
            return torch.library.register_fake(op_name)(fn)
        return fn

    return wrapper
'''


class PatchError(Exception):
    """The input is not the torchvision this script knows how to patch."""


def record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def patch_meta_registrations(text: str) -> str:
    """Guard the unconditional fake registrations by ``_has_ops()``, through one helper."""
    anchor = "\n\n@functools.lru_cache(None)\ndef get_meta_lib():"
    if text.count(anchor) != 1 or "import torchvision.extension" not in text:
        raise PatchError(f"{META}: no `get_meta_lib` after `import torchvision.extension` to add the guard before")
    found = re.findall(r'^@torch\.library\.register_fake\("([^"]+)"\)$', text, flags=re.M)
    if sorted(found) != sorted(GUARDED_FAKES):
        raise PatchError(f"{META}: unconditional register_fake for {found}, expected exactly {list(GUARDED_FAKES)}")
    for op in GUARDED_FAKES:
        text = text.replace(f'@torch.library.register_fake("{op}")', f'@register_fake_if_ops("{op}")')
    return text.replace(anchor, GUARD_HELPER + anchor, 1)


def patch_version_py(text: str) -> str:
    line = re.search(r"^__version__ = '([^']+)'$", text, flags=re.M)
    if line is None or line.group(1).split("+")[0] != VERSION:
        raise PatchError(f"{VERSION_PY}: __version__ is not {VERSION}: {line.group(1) if line else 'no such line'}")
    return text[:line.start()] + f"__version__ = '{LOCAL_VERSION}'" + text[line.end():]


def patch_metadata(text: str) -> str:
    if not re.search(r"^Name: torchvision$", text, flags=re.M) or not re.search(
            rf"^Version: {re.escape(VERSION)}$", text, flags=re.M):
        raise PatchError(f"METADATA: not torchvision {VERSION}")
    return re.sub(r"^Version: .*$", f"Version: {LOCAL_VERSION}", text, count=1, flags=re.M)


def build(source: Path, out_dir: Path) -> Path:
    """Write the patched wheel of ``source`` into ``out_dir``; return its path."""
    match = re.fullmatch(rf"torchvision-{re.escape(VERSION)}-(.+)\.whl", source.name)
    if match is None:
        raise PatchError(f"{source.name}: not a torchvision {VERSION} wheel")
    old_info, new_info = f"torchvision-{VERSION}.dist-info/", f"torchvision-{LOCAL_VERSION}.dist-info/"
    with zipfile.ZipFile(source) as wheel:
        entries = [(info, wheel.read(info)) for info in wheel.infolist()]
    names = {info.filename for info, _ in entries}
    for required in (*REMOVED_FILES, META, VERSION_PY, EXTENSION, old_info + "METADATA", old_info + "RECORD"):
        if required not in names:
            raise PatchError(f"{source.name} has no {required}")
    extension = next(data for info, data in entries if info.filename == EXTENSION).decode()
    if "def _has_ops():" not in extension or "except (ImportError, OSError)" not in extension:
        raise PatchError(f"{EXTENSION}: no _has_ops() that tolerates a failed load of _C")
    patches = {META: patch_meta_registrations, VERSION_PY: patch_version_py, old_info + "METADATA": patch_metadata}
    kept: list[tuple[zipfile.ZipInfo, bytes]] = []
    for info, data in entries:
        name = info.filename
        if name in REMOVED_FILES or name.startswith(REMOVED_DIRS) or name == old_info + "RECORD":
            continue
        if name in patches:
            data = patches[name](data.decode()).encode()
        if name.startswith(old_info):
            name = new_info + name[len(old_info):]
        copy = zipfile.ZipInfo(name, date_time=info.date_time)
        copy.external_attr, copy.compress_type = info.external_attr, zipfile.ZIP_DEFLATED
        kept.append((copy, data))
    leftover = [info.filename for info, _ in kept if info.filename.endswith(".so") or ".so." in info.filename]
    if leftover:
        raise PatchError(f"compiled libraries left after removing {REMOVED_FILES}: {leftover}")
    record = "".join(f"{info.filename},{record_hash(data)},{len(data)}\n" for info, data in kept
                     if not info.filename.endswith("/"))
    record += f"{new_info}RECORD,,\n"
    old_record = next(info for info, _ in entries if info.filename == old_info + "RECORD")
    record_info = zipfile.ZipInfo(new_info + "RECORD", date_time=old_record.date_time)
    record_info.external_attr, record_info.compress_type = old_record.external_attr, zipfile.ZIP_DEFLATED
    kept.append((record_info, record.encode()))
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"torchvision-{LOCAL_VERSION}-{match.group(1)}.whl"
    partial = target.with_name(target.name + ".partial")
    with zipfile.ZipFile(partial, "w") as wheel:
        for info, data in kept:
            wheel.writestr(info, data)
    partial.replace(target)
    return target


def download(dest: Path) -> Path:
    """The registry's torchvision==VERSION wheel for this interpreter (``pip download --no-deps``)."""
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:",
                    "-d", str(dest), f"torchvision=={VERSION}"], check=True)
    wheels = sorted(dest.glob("torchvision-*.whl"))
    if len(wheels) != 1:
        raise PatchError(f"pip download torchvision=={VERSION} gave {[w.name for w in wheels]}")
    return wheels[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--wheel", type=Path, help="the torchvision wheel to patch (default: pip download it)")
    args = parser.parse_args(argv)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            source = args.wheel or download(Path(tmp))
            print(build(source, args.out_dir))
    except PatchError as error:
        print(f"cpu_torchvision: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
