"""Installing the module as a Python user does (docs/python.md), checked from a clean interpreter.

Each install reuses the CMake build directory of the module under test (PYTHONPATH=BUILD/python):
setup.py runs `cmake --build BUILD --target doppler_python`, a no-op there, so each test costs
seconds. Everything is installed under pytest's tmp_path (a throwaway HOME for the user installs);
the imports run with the working directory there, without PYTHONPATH.
"""
import importlib.machinery
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import SOURCE

# What an installed module must do: say where it came from, generate a graph, place and simulate,
# and place with a learned method (its learned part, doppler._doppler_learn, installed beside it).
CHECK = """
import json, sys
import doppler
g = doppler.generate("random-dag", devices=2, ops=40, seed=5)
problem = doppler.Problem(g, 2)
p = doppler.place(problem, "heft")
learned = doppler.place(problem, "doppler:samples=2", seed=1)
out = {"file": doppler.__file__, "module": doppler._doppler.__file__,
       "version": doppler.__version__, "ops": g.num_ops,
       "makespan": problem.simulate(p.assignment), "placed": p.makespan,
       "learned": learned.makespan, "learned_from": doppler._doppler_learn.__file__,
       "torch_imported": "torch" in sys.modules}
try:
    import importlib.metadata
    out["dist_version"] = importlib.metadata.version("doppler")
except importlib.metadata.PackageNotFoundError:
    out["dist_version"] = None
print(json.dumps(out))
"""


def project_version():
    text = (SOURCE / "CMakeLists.txt").read_text()
    return re.search(r"project\(\s*doppler\b[^)]*?\bVERSION\s+([0-9][0-9A-Za-z.]*)", text).group(1)


@pytest.fixture(scope="module")
def build_dir(doppler):
    """The CMake build directory that made the module under test."""
    d = Path(doppler.__file__).resolve().parents[2]
    if not (d / "CMakeCache.txt").exists():
        pytest.skip(f"the module under test is not in a CMake build directory ({d})")
    return d


def require(*modules):
    """Skips unless the modules are installed (found, not imported: importing setuptools here,
    after pytest imported distutils, trips setuptools' distutils check)."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"needs {', '.join(missing)} (Debian: python3-{', python3-'.join(missing)})")


def clean_env(**extra):
    """The environment without Python's and pip's variables; pip offline and without a cache."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PIP_"))}
    env.update(PIP_NO_INDEX="1", PIP_NO_CACHE_DIR="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
               PIP_NO_INPUT="1", PYTHONDONTWRITEBYTECODE="1")
    env.update(extra)
    return env


def run(cmd, cwd, env):
    r = subprocess.run(list(map(str, cmd)), cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=900)
    command = " ".join(map(str, cmd))
    assert r.returncode == 0, f"{command} exited {r.returncode}:\n{r.stdout}\n{r.stderr}"
    return r


def scratch_files(build_dir):
    """setuptools' usual droppings: egg-info and dist/ in the tree, lib.*/bdist.* in build/."""
    return sorted([p.name for p in SOURCE.glob("*.egg-info")]
                  + [p.name for p in SOURCE.glob("dist")]
                  + [p.name for pat in ("lib.*", "bdist.*", "temp.*") for p in build_dir.glob(pat)])


def check_installed(doppler, cwd, env, where, isolated_path=None):
    """Runs CHECK in a fresh interpreter; the module must come from `where` and work. With
    isolated_path, the interpreter runs with -I (no user site, no PYTHON* variables) and that
    path first on sys.path."""
    cmd = [sys.executable, "-c", CHECK]
    if isolated_path is not None:
        prelude = f"import sys; sys.path.insert(0, {str(isolated_path)!r})\n"
        cmd = [sys.executable, "-I", "-c", prelude + CHECK]
    out = json.loads(run(cmd, cwd, env).stdout)
    assert Path(out["file"]).resolve().is_relative_to(where.resolve()), out["file"]
    assert Path(out["module"]).resolve().is_relative_to(where.resolve()), out["module"]
    assert out["version"] == project_version()
    assert not out["torch_imported"]
    # The same graph and placement as the module under test.
    g = doppler.generate("random-dag", devices=2, ops=40, seed=5)
    problem = doppler.Problem(g, 2)
    want = doppler.place(problem, "heft").makespan
    assert out["ops"] == g.num_ops
    assert out["makespan"] == out["placed"] == want
    assert Path(out["learned_from"]).resolve().is_relative_to(where.resolve()), out["learned_from"]
    assert out["learned"] == doppler.place(problem, "doppler:samples=2", seed=1).makespan
    return out


def test_pip_user_install_is_found_by_debians_python(doppler, build_dir, tmp_path):
    """The documented command, into a throwaway HOME's ~/.local."""
    require("pip", "setuptools", "wheel")
    before = scratch_files(build_dir)
    home = tmp_path / "home"
    home.mkdir()
    env = clean_env(HOME=str(home), DOPPLER_BUILD_DIR=str(build_dir))
    run([sys.executable, "-m", "pip", "install", "--user", "--break-system-packages",
         "--no-build-isolation", SOURCE], tmp_path, env)
    site = home / ".local" / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    out = check_installed(doppler, tmp_path, env, site / "site-packages")
    assert out["dist_version"] == project_version()
    assert scratch_files(build_dir) == before


def test_cmake_install_to_the_user_prefix_is_found_by_debians_python(doppler, build_dir, tmp_path):
    """cmake --install BUILD --component python --prefix ~/.local, in a throwaway HOME."""
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.skip("cmake not found")
    home = tmp_path / "home"
    run([cmake, "--install", build_dir, "--component", "python", "--prefix", home / ".local"],
        tmp_path, clean_env())
    site = home / ".local" / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    check_installed(doppler, tmp_path, clean_env(HOME=str(home)), site / "site-packages")


def test_python_build_makes_a_platform_wheel_of_the_cmake_build(doppler, build_dir, tmp_path):
    """python3 -m build --no-isolation --wheel: the package's files, the module, the version."""
    require("pip", "setuptools", "wheel", "build")
    before = scratch_files(build_dir)
    dist = tmp_path / "dist"
    run([sys.executable, "-m", "build", "--no-isolation", "--wheel", "--outdir", dist, SOURCE],
        tmp_path, clean_env(DOPPLER_BUILD_DIR=str(build_dir)))
    (wheel,) = dist.glob("*.whl")
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    assert wheel.name.startswith(f"doppler-{project_version()}-{tag}-{tag}-linux_"), wheel.name
    names = set(zipfile.ZipFile(wheel).namelist())
    package = {n for n in names if n.startswith("doppler/")}
    want = {f"doppler/{p.name}" for p in (SOURCE / "python" / "doppler").glob("*.py")}
    for module in ("_doppler", "_doppler_learn"):  # the binding and its learned part
        want.add(f"doppler/{module}" + importlib.machinery.EXTENSION_SUFFIXES[0])
    assert package == want
    assert scratch_files(build_dir) == before
    # The wheel installs and works from a folder of its own.
    target = tmp_path / "site"
    run([sys.executable, "-m", "pip", "install", "--no-deps", "--target", target, wheel], tmp_path,
        clean_env())
    out = check_installed(doppler, tmp_path, clean_env(), target, isolated_path=target)
    assert out["dist_version"] == project_version()
