"""Packaging of the Python module `doppler` for pip and `python3 -m build` (setuptools backend).

The module is built by the project's own CMake build, never by setuptools: this file configures a
CMake build directory when there is none (Release, Ninja, as `make` does), runs
`cmake --build DIR --target doppler_python`, and packages what CMake put in DIR/python/doppler
(the extension module and the package's .py files). Offline, with Debian's python3-setuptools,
python3-wheel, pybind11-dev and cmake (docs/python.md):

    /usr/bin/python3 -m pip install --user --break-system-packages --no-build-isolation .

Environment:
  DOPPLER_BUILD_DIR  the CMake build directory (relative paths from this source tree); default
                     `build`, the Makefile's, reused when it exists (then the build is
                     incremental: seconds when the module is up to date)
  CMAKE_ARGS         extra arguments for the configure step of a new build directory
  CMAKE_BUILD_PARALLEL_LEVEL  jobs of the build (cmake's own variable; default: Ninja's)

setuptools' scratch directories (its `build/` and the egg-info) go to a temporary directory,
removed at exit: `build/` here is CMake's.
"""
import atexit
import importlib.machinery
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build import build
from setuptools.command.build_ext import build_ext
from setuptools.command.egg_info import egg_info
from setuptools.errors import SetupError

SOURCE = Path(__file__).resolve().parent
PACKAGE_SOURCE = SOURCE / "python" / "doppler"
# The extension modules: the binding, and its learned part (libtorch), which it loads on first use.
EXTENSION_MODULES = ("_doppler", "_doppler_learn")


def project_version():
    """The version of CMakeLists.txt's project(... VERSION x.y.z ...): the single source."""
    text = (SOURCE / "CMakeLists.txt").read_text()
    m = re.search(r"project\(\s*doppler\b[^)]*?\bVERSION\s+([0-9][0-9A-Za-z.]*)", text)
    if not m:
        raise SetupError("setup.py: no project(doppler VERSION ...) in CMakeLists.txt")
    return m.group(1)


_scratch = []


def scratch_dir():
    """One temporary directory per run for setuptools' own files, removed at exit."""
    if not _scratch:
        d = tempfile.mkdtemp(prefix="doppler-setuptools-")
        atexit.register(shutil.rmtree, d, ignore_errors=True)
        _scratch.append(d)
    return _scratch[0]


def cmake_build_dir():
    d = Path(os.environ.get("DOPPLER_BUILD_DIR") or "build").expanduser()
    return (d if d.is_absolute() else SOURCE / d).resolve()


def cache_value(cache, key):
    m = re.search(rf"^{re.escape(key)}:[A-Z]+=(.*)$", cache, re.MULTILINE)
    return m.group(1) if m else None


def run(cmd):
    print("setup.py: " + shlex.join(map(str, cmd)), flush=True)
    subprocess.run(list(map(str, cmd)), check=True)


def cmake_build():
    """Configures DIR when it has no CMake cache and builds doppler_python; returns
    DIR/python/doppler and the extension modules in it for this interpreter."""
    cmake = shutil.which("cmake")
    if cmake is None:
        raise SetupError("setup.py: cmake not found (Debian: apt-get install cmake ninja-build; "
                         "or run scripts/install-deps.sh)")
    d = cmake_build_dir()
    cache_file = d / "CMakeCache.txt"
    if not cache_file.exists():
        # The Makefile's configure rule, for the interpreter that runs this build.
        run([cmake, "-S", SOURCE, "-B", d, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
             "-DDOPPLER_WERROR=ON", f"-DPython_EXECUTABLE={sys.executable}",
             *shlex.split(os.environ.get("CMAKE_ARGS", ""))])
    else:
        home = cache_value(cache_file.read_text(errors="replace"), "CMAKE_HOME_DIRECTORY")
        if home is not None and Path(home).resolve() != SOURCE:
            raise SetupError(f"setup.py: the build directory {d} was configured for the sources "
                             f"in {home}, not {SOURCE}; set DOPPLER_BUILD_DIR to another one")
    run([cmake, "--build", d, "--target", "doppler_python"])  # builds _doppler_learn too
    built = d / "python" / "doppler"
    return built, [extension_module(built, name) for name in EXTENSION_MODULES]


def extension_module(built, name):
    """The extension module `name` in `built` for this interpreter."""
    modules = sorted(built.glob(name + ".*.so"))
    suffixes = importlib.machinery.EXTENSION_SUFFIXES
    fitting = [m for m in modules if any(m.name == name + s for s in suffixes)]
    if not fitting:
        found = ", ".join(m.name for m in modules) or "none"
        raise SetupError(f"setup.py: {built} has no extension module for this interpreter "
                         f"({sys.executable}, wants {name}{suffixes[0]}; found {found}); "
                         "configure the build with -DPython_EXECUTABLE=... or set "
                         "DOPPLER_BUILD_DIR to a new directory")
    return fitting[0]


class CMakeBuildExt(build_ext):
    """Builds the module with CMake and copies DIR/python/doppler into the wheel's tree."""

    def run(self):
        if self.inplace:
            raise SetupError("setup.py: editable installs are not supported; for a development "
                             "tree use PYTHONPATH=build/python after `make python`")
        built, modules = cmake_build()
        out = Path(self.build_lib) / "doppler"
        out.mkdir(parents=True, exist_ok=True)
        # The package's files are the source's .py files (as CMake copied them) and the modules; a
        # stale copy of a .py file since removed from the source is left out.
        for f in [built / p.name for p in sorted(PACKAGE_SOURCE.glob("*.py"))] + modules:
            if not f.exists():
                raise SetupError(f"setup.py: {f} is missing after the CMake build")
            self.copy_file(str(f), str(out / f.name))

    def get_outputs(self):
        out = Path(self.build_lib) / "doppler"
        suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
        return [str(out / p.name) for p in sorted(PACKAGE_SOURCE.glob("*.py"))] + [
            str(out / (name + suffix)) for name in EXTENSION_MODULES]


class ScratchBuild(build):
    """setuptools' build_base defaults to build/, which is CMake's build directory here."""

    def initialize_options(self):
        super().initialize_options()
        self.build_base = os.path.join(scratch_dir(), "build")


class ScratchEggInfo(egg_info):
    """The egg-info goes to the scratch directory too, except for an sdist, which packs it."""

    def initialize_options(self):
        super().initialize_options()
        if "sdist" not in self.distribution.commands:
            self.egg_base = scratch_dir()


setup(
    version=project_version(),
    packages=[],
    py_modules=[],
    ext_modules=[Extension("doppler." + name, sources=[]) for name in EXTENSION_MODULES],
    cmdclass={"build": ScratchBuild, "build_ext": CMakeBuildExt, "egg_info": ScratchEggInfo},
    zip_safe=False,
)
