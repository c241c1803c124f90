"""`import doppler` does not load libtorch: the learned part of the module (doppler._doppler_learn)
is loaded by the first place() of a learned method or by doppler.Policy, and then gives the
CLI's results; a package without it still places with every other method and says what is
missing. Each check runs in a fresh interpreter (what is loaded is per process)."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import cli_json

# Prints, as JSON, whether libtorch is mapped after each step of `steps` (Python statements run in
# order, `doppler`, `problem` and `out` in scope).
PROBE = """
import json, sys
def torch_mapped():
    with open("/proc/self/maps") as f:
        return any("libtorch" in line for line in f)
out = {}
import doppler
out["import"] = torch_mapped()
problem = doppler.Problem(doppler.load_graph(sys.argv[1]), 4)
for i, step in enumerate(json.loads(sys.argv[2])):
    exec(step)
    out[f"step{i}"] = torch_mapped()
print(json.dumps(out))
"""


def probe(dag_json, steps, path=None):
    env = dict(os.environ)
    if path is not None:
        env["PYTHONPATH"] = str(path)
    r = subprocess.run([sys.executable, "-c", PROBE, str(dag_json), json.dumps(steps)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_import_and_heuristics_do_not_load_libtorch_a_learned_method_does(dag_json):
    want = cli_json("place", dag_json, "-d", 4, "--method", "doppler:samples=3", "--seed", 2)
    out = probe(dag_json, [
        "out['learned'] = sorted(m['name'] for m in doppler.methods() if m['learned'])",
        "out['heft'] = doppler.place(problem, 'heft').makespan",
        "out['doppler'] = doppler.place(problem, 'doppler:samples=3', seed=2).makespan",
    ])
    assert out["import"] is False and out["step0"] is False and out["step1"] is False
    assert out["step2"] is True
    assert {"doppler", "doppler-il", "doppler-search", "placeto", "gdp"} <= set(out["learned"])
    assert out["doppler"] == want["makespan"]  # the CLI loads the same policy and samples alike
    assert out["heft"] == cli_json("place", dag_json, "-d", 4, "--method", "heft")["makespan"]


def test_policy_loads_the_learned_part(dag_json):
    want = cli_json("place", dag_json, "-d", 4, "--method", "doppler:samples=2", "--seed", 5)
    out = probe(dag_json, [
        "out['class'] = doppler.Policy.__name__",
        "out['sample'] = doppler.Policy.load().sample(problem, samples=2, seed=5).makespan",
        "out['place'] = doppler.place(problem, 'doppler:samples=2', seed=5).makespan",
    ])
    assert out["import"] is False and out["step0"] is True
    assert out["class"] == "Policy"
    assert out["sample"] == out["place"] == want["makespan"]


def test_without_the_learned_part_other_methods_still_place(doppler, dag_json, tmp_path):
    package = tmp_path / "doppler"
    package.mkdir()
    built = Path(doppler.__file__).parent
    for f in built.iterdir():
        if f.suffix == ".py" or f.name.startswith("_doppler."):
            shutil.copy(f, package / f.name)
    out = probe(dag_json, [
        "out['heft'] = doppler.place(problem, 'heft').makespan",
        "try:\n doppler.place(problem, 'doppler')\nexcept RuntimeError as e:\n out['place'] = str(e)",
        "try:\n doppler.Policy\nexcept ImportError as e:\n out['policy'] = str(e)",
        "out['methods'] = len([m for m in doppler.methods() if m['learned']])",
    ], path=tmp_path)
    assert out["heft"] == cli_json("place", dag_json, "-d", 4, "--method", "heft")["makespan"]
    for error in (out["place"], out["policy"]):  # one line naming what is missing
        assert error.startswith("cannot load the learned methods: ") and "\n" not in error
        assert error.endswith("No module named 'doppler._doppler_learn'")
    assert out["methods"] >= 10  # still listed, as the CLI lists them without its plug-in
    assert not any(out[k] for k in ("import", "step0", "step1", "step2"))
