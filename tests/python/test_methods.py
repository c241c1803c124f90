"""doppler.methods(): every method's options as structured params, checked against the registry's
source (the factories' take_number / take_integer / take_fraction fallbacks) and against placing
with them."""
import re

import pytest

from conftest import SOURCE

TYPES = {"number": float, "integer": int, "choice": str, "string": str, "path": str}


@pytest.fixture(scope="module")
def methods(doppler):
    return {m["name"]: m for m in doppler.methods()}


def params_of(methods, name):
    return {p["name"]: p for p in methods[name]["params"]}


def test_every_method_has_structured_params(methods):
    assert len(methods) >= 15
    for m in methods.values():
        assert set(m) == {"name", "description", "deterministic", "learned", "params"}
        assert isinstance(m["params"], list)
        assert len({p["name"] for p in m["params"]}) == len(m["params"]), m["name"]
        for p in m["params"]:
            assert set(p) == {"name", "type", "default", "choices", "description"}, m["name"]
            assert p["type"] in TYPES and p["description"], (m["name"], p)
            assert p["default"] is None or type(p["default"]) is TYPES[p["type"]], (m["name"], p)
            assert bool(p["choices"]) == (p["type"] == "choice"), (m["name"], p)
            if p["type"] == "choice" and p["default"] is not None:
                assert p["default"] in p["choices"], (m["name"], p)


def test_known_defaults_and_choices(methods):
    t0 = params_of(methods, "local-search")["t0"]
    assert t0["type"] == "number" and t0["default"] == 0.03
    ties = params_of(methods, "critical-path")["ties"]
    assert ties["choices"] == ["lowest", "random"] and ties["default"] == "lowest"
    assert params_of(methods, "optimal")["nodes"] == {
        "name": "nodes", "type": "integer", "default": -1, "choices": [],
        "description": params_of(methods, "optimal")["nodes"]["description"]}
    assert methods["heft"]["params"] == []


def factory_fallbacks():
    """(method, option, fallback) of every take_number / take_integer / take_fraction call with
    literal method and fallback in the registry's source."""
    text = (SOURCE / "src/heuristics/registry.cpp").read_text()
    call = re.compile(r'take_(?:number|integer|fraction)\(\s*p,\s*"([\w-]+)",\s*"(\w+)",\s*([-0-9.e]+)[,)]')
    return [(m, k, float(v)) for m, k, v in call.findall(text)]


def test_declared_defaults_are_the_factories_fallbacks(methods):
    found = factory_fallbacks()
    assert len(found) >= 10, found
    assert ("local-search", "t0", 0.03) in found
    for method, key, fallback in found:
        assert params_of(methods, method)[key]["default"] == fallback, (method, key)


@pytest.mark.parametrize("method", ["local-search", "multilevel", "m-etf", "dsc", "enumopt", "auto"])
def test_spelling_every_default_places_as_the_bare_name(doppler, dag_json, methods, method):
    problem = doppler.Problem(doppler.load_graph(str(dag_json)), 4)
    given = ",".join(f"{p['name']}={p['default']}" for p in methods[method]["params"]
                     if p["default"] is not None)
    bare = doppler.place(problem, method, budget=500, seed=3, threads=1)
    spelt = doppler.place(problem, f"{method}:{given}", budget=500, seed=3, threads=1)
    assert spelt.makespan == bare.makespan
    assert list(spelt.assignment) == list(bare.assignment)
