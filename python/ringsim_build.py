"""PEP 517 build backend for `pip install --no-build-isolation .` (docs/python.md).

Standard library only, so it installs ringsim into whichever Python runs pip, a venv,
pyenv, conda or the system one, offline: a packaged backend (setuptools with wheel)
is not importable from an interpreter that cannot see Debian's site-packages.

The wheel holds python/ringsim/__init__.py and the `_ringsim` extension of the CMake
build for this interpreter: the one in $RINGSIM_BUILD_DIR (default build/) when its
file name carries this interpreter's extension suffix, else one built for it by CMake
in build/python-<suffix>/ (minutes: it compiles the libraries the module links).
"""

import base64
import hashlib
import os
import re
import subprocess
import sys
import sysconfig
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = "ringsim"


def _version():
    """The project's version, as CMakeLists.txt gives it to `ringsim -V`."""
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        match = re.search(r"project\(ringsim VERSION ([0-9.]+)", f.read())
    if not match:
        raise RuntimeError("CMakeLists.txt: no `project(ringsim VERSION x.y.z ...)`")
    return match.group(1)


def _tag():
    """This interpreter's wheel tag: cp311-cp311-linux_x86_64."""
    py = "cp%d%d" % sys.version_info[:2]
    abi = py + getattr(sys, "abiflags", "")
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return "%s-%s-%s" % (py, abi, plat)


def _extension():
    """The path of `_ringsim` built for this interpreter, building it if needed."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    build = os.environ.get("RINGSIM_BUILD_DIR", os.path.join(ROOT, "build"))
    found = os.path.join(build, "python", NAME, "_ringsim" + suffix)
    if os.path.isfile(found):
        return found
    own = os.path.join(ROOT, "build", "python-" + suffix.strip(".").replace(".so", ""))
    sys.stderr.write("ringsim: no %s; building _ringsim for %s in %s\n" % (found, sys.executable, own))
    subprocess.check_call(["cmake", "-S", ROOT, "-B", own, "-DPython3_EXECUTABLE=" + sys.executable,
                           "-DCMAKE_BUILD_TYPE=Release"])
    subprocess.check_call(["cmake", "--build", own, "--target", "_ringsim",
                           "-j", str(os.cpu_count() or 1)])
    return os.path.join(own, "python", NAME, "_ringsim" + suffix)


def _metadata():
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n"
            "Summary: How ring attention (context parallelism) behaves on a cluster\n"
            "Requires-Python: >=3.9\n" % (NAME, _version()))


def _dist_info():
    return "%s-%s.dist-info" % (NAME, _version())


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    path = os.path.join(metadata_directory, _dist_info())
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata())
    return _dist_info()


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (name, digest, len(data))


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    ext = _extension()
    files = {
        NAME + "/__init__.py": os.path.join(ROOT, "python", NAME, "__init__.py"),
        NAME + "/" + os.path.basename(ext): ext,
    }
    info = _dist_info()
    wheel = "Wheel-Version: 1.0\nGenerator: ringsim_build\nRoot-Is-Purelib: false\nTag: %s\n" % _tag()
    name = "%s-%s-%s.whl" % (NAME, _version(), _tag())
    records = []
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for arc, src in sorted(files.items()):
            with open(src, "rb") as f:
                data = f.read()
            z.writestr(arc, data)
            records.append(_record_line(arc, data))
        for arc, text in ((info + "/METADATA", _metadata()), (info + "/WHEEL", wheel)):
            z.writestr(arc, text)
            records.append(_record_line(arc, text.encode()))
        records.append(info + "/RECORD,,")
        z.writestr(info + "/RECORD", "\n".join(records) + "\n")
    return name
