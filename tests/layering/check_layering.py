#!/usr/bin/python3
"""The module rule of the developers' brief, checked on every #include of the tree.

Each module may include only the modules listed for it below (the picture in the brief, read
bottom-up: util < graph < hardware, workloads < sim < heuristics, report, engine < policy,
validate < train; onnx beside workloads; apps and python on top). Torch may be included only by
the learned modules (src/policy/nn, src/train) and their tests; and the learned modules'
sources, which all compile with torch's precompiled header, include neither fmt nor spdlog,
directly or through the project's headers: a libtorch built elsewhere (a pip wheel's, on the GPU
machine) ships its own fmt, which clashes with the Debian fmt that spdlog is built against
(they log and format through doppler/util/log.hpp and number_text.hpp). Exit 1 with one line per
breach ("file:line: module A includes module B"), 0 when the tree keeps the rule.
"""
import pathlib
import re
import sys

ALLOWED = {
    "util": set(),
    "graph": {"util"},
    "hardware": {"graph", "util"},
    "workloads": {"graph", "util"},
    "onnx": {"graph", "workloads", "util"},
    "sim": {"graph", "hardware", "util"},
    "report": {"graph", "hardware", "sim", "util"},
    "heuristics": {"graph", "hardware", "sim", "util"},
    "engine": {"graph", "hardware", "sim", "workloads", "util"},
    "policy": {"graph", "hardware", "sim", "heuristics", "util"},
    "validate": {"graph", "hardware", "sim", "heuristics", "engine", "workloads", "report", "util"},
    "train": {"graph", "hardware", "sim", "heuristics", "engine", "workloads", "report", "policy",
              "util"},
    "learn_registration": {"train"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]doppler/([a-z_]+)/')
TORCH = re.compile(r'^\s*#\s*include\s*<(torch|ATen|c10)/')
TORCH_OK = ("src/policy/nn/", "src/train/", "tests/policy/", "tests/train/", "bench/", "fuzz/",
            "python/")
TORCH_UNITS = ("src/policy/nn/", "src/train/")  # compiled with torch's precompiled header
FMT = re.compile(r'^\s*#\s*include\s*<(fmt|spdlog)/')
PROJECT = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def module_of(rel: str):
    """The module a source or header belongs to, or None outside the library."""
    parts = rel.split("/")
    if parts[0] == "src" and len(parts) > 2:
        return parts[1]
    if parts[:2] == ["include", "doppler"] and len(parts) > 3:
        return parts[2]
    return None


def breaches(root: pathlib.Path):
    """Yields one line per include that breaks the rule."""
    for path in sorted(root.rglob("*")):
        if path.suffix not in (".cpp", ".hpp", ".cu", ".cuh", ".h") or "build" in path.parts[0]:
            continue
        rel = path.relative_to(root).as_posix()
        if rel.split("/")[0] not in ("src", "include", "apps", "tests", "bench", "python", "fuzz"):
            continue
        mod = module_of(rel)
        if mod is not None and mod not in ALLOWED:
            yield f"{rel}:1: module {mod} is not in the layering table (tests/layering)"
            continue
        for no, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if m and mod is not None and m.group(1) != mod and m.group(1) not in ALLOWED[mod]:
                yield f"{rel}:{no}: module {mod} includes module {m.group(1)}, which is above it"
            if TORCH.match(line) and not rel.startswith(TORCH_OK):
                yield f"{rel}:{no}: includes torch outside the learned modules"


def resolve(root: pathlib.Path, rel: str, name: str):
    """The project file `#include "name"` in `rel` reads (its folder, src/, include/), or None."""
    for base in (pathlib.PurePosixPath(rel).parent, pathlib.PurePosixPath("src"),
                 pathlib.PurePosixPath("include")):
        cand = (base / name).as_posix()
        if (root / cand).is_file():
            return cand
    return None


def fmt_chain(root: pathlib.Path, rel: str, seen: set):
    """(line, chain) of the first fmt or spdlog include reached from `rel` through project
    headers (chain: the headers on the way, ending at the one that includes it), or None."""
    seen.add(rel)
    for no, line in enumerate((root / rel).read_text(errors="replace").splitlines(), 1):
        if FMT.match(line):
            return no, [rel]
        m = PROJECT.match(line)
        dep = resolve(root, rel, m.group(1)) if m else None
        if dep and dep not in seen:
            found = fmt_chain(root, dep, seen)
            if found:
                return no, [rel] + found[1]
    return None


def fmt_breaches(root: pathlib.Path):
    """Yields one line per torch translation unit that reaches fmt or spdlog."""
    for unit in TORCH_UNITS:
        for path in sorted((root / unit).rglob("*.cpp")):
            rel = path.relative_to(root).as_posix()
            found = fmt_chain(root, rel, set())
            if found:
                via = " through " + " -> ".join(found[1][1:]) if len(found[1]) > 1 else ""
                yield (f"{rel}:{found[0]}: a torch translation unit includes fmt or spdlog{via} "
                       "(use doppler/util/log.hpp, number_text.hpp)")


def self_test() -> int:
    """The checker flags a planted breach of each kind and passes a clean file."""
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        root = pathlib.Path(d)
        files = {
            "src/policy/a.cpp": '#include "doppler/train/trainer.hpp"\n',
            "src/sim/b.cpp": '#include "doppler/heuristics/problem.hpp"\n',
            "src/graph/c.cpp": "#include <torch/torch.h>\n",
            "src/train/ok.cpp": '#include "doppler/policy/doppler_policy.hpp"\n#include <torch/torch.h>\n',
            "include/doppler/policy/doppler_policy.hpp": "#include <string>\n",
            "src/train/direct.cpp": "#include <string>\n#include <spdlog/spdlog.h>\n",
            "src/train/nested.cpp": '#include "train/helper.hpp"\n',
            "src/train/helper.hpp": '#include "doppler/util/text.hpp"\n',
            "include/doppler/util/text.hpp": "#include <fmt/format.h>\n",
            "src/sim/d.cpp": "#include <fmt/format.h>\n",
        }
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)
        want = ["src/graph/c.cpp:1: includes torch outside the learned modules",
                "src/policy/a.cpp:1: module policy includes module train, which is above it",
                "src/sim/b.cpp:1: module sim includes module heuristics, which is above it",
                "src/train/direct.cpp:2: a torch translation unit includes fmt or spdlog "
                "(use doppler/util/log.hpp, number_text.hpp)",
                "src/train/nested.cpp:1: a torch translation unit includes fmt or spdlog through "
                "src/train/helper.hpp -> include/doppler/util/text.hpp (use doppler/util/log.hpp, "
                "number_text.hpp)"]
        got = list(breaches(root)) + list(fmt_breaches(root))
        if got != want:
            print("self-test failed:", got)
            return 1
    return 0


def main() -> int:
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    found = list(breaches(root)) + list(fmt_breaches(root))
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
