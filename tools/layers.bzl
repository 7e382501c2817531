"""The layer table: which of our packages each package may depend on.

One row per package. `deps` are what its library files may include and
depend on; `test_deps` what its unit tests may use besides. A binary's
main.cc may use anything below the top layer (it wires stages together).
Bazel visibility is derived from this table (visible_to), and
layering_test() checks every include of a package against its row, so an
edge that points up or sideways fails the build or the tests.
"""

_VOCABULARY = ["//proto", "//core"]

LAYERS = {
    # layer 0: the contracts
    "proto": struct(layer = 0, deps = []),
    # layer 1: shared vocabulary and plumbing
    "core": struct(layer = 1, deps = ["//proto"]),
    # A store list is connected here (records/store_shards), with the
    # channels every client makes (net/credentials).
    "records": struct(layer = 1, deps = _VOCABULARY + ["//net"]),
    "storage": struct(layer = 1, deps = []),
    "net": struct(layer = 1, deps = []),
    "app": struct(layer = 1, deps = ["//core"]),
    "gpu": struct(layer = 1, deps = []),
    "models": struct(layer = 1, deps = _VOCABULARY),
    "testing": struct(layer = 1, deps = _VOCABULARY),
    # IR graphs, rules and graph diffs as Graphviz DOT text (cli renders it).
    "pictures": struct(layer = 1, deps = _VOCABULARY),
    # The proved size-3 rule set compiled into the binaries (bytes only).
    "rules": struct(layer = 1, deps = []),
    # layer 2: the stages, peers that never include each other; the
    # optimizer calls the profiler only through its client interface.
    "generator": struct(layer = 2, deps = _VOCABULARY + ["//records", "//net"]),
    "verifier": struct(layer = 2, deps = _VOCABULARY + ["//records", "//net"]),
    # The ort backend writes the graphs it times as ONNX (optimizer/onnx's
    # exporter, which itself depends only on proto and core: no cycle).
    "profiler": struct(layer = 2, deps = _VOCABULARY + ["//storage", "//net", "//gpu", "//optimizer/onnx"]),
    "rules_db": struct(layer = 2, deps = _VOCABULARY + ["//records", "//storage", "//net"]),
    "optimizer": struct(layer = 2, deps = _VOCABULARY + [
        "//net",
        "//rules",
        "//optimizer/backtrack",
        "//optimizer/eqsat",
        "//optimizer/onnx",
        "//profiler:client.h",
        "//profiler:graph_cost_model.h",
        "//profiler:signature.h",
    ]),
    "optimizer/backtrack": struct(layer = 2, deps = _VOCABULARY + ["//optimizer", "//profiler:signature.h"]),
    "optimizer/eqsat": struct(layer = 2, deps = _VOCABULARY + ["//optimizer", "//profiler:signature.h"]),
    "optimizer/onnx": struct(layer = 2, deps = _VOCABULARY),
    # layer 3: what users run and what tests the whole
    "cli": struct(layer = 3, deps = ["//..."]),
    "bench": struct(layer = 3, deps = ["//..."]),
    "fuzz": struct(layer = 3, deps = ["//..."]),
    "tests": struct(layer = 3, deps = ["//..."]),
    "deploy": struct(layer = 3, deps = ["//..."]),
}

# What every package's unit tests may use besides its row.
TEST_DEPS = ["//testing", "//models"]

# Unit tests that drive a peer's implementation in-process (the optimizer's
# tests with an embedded profiler; the stores' tests with the real class check,
# re-prover and pruner, as taso_rules_db wires them); library files still may not.
EXTRA_TEST_DEPS = {
    "rules_db": ["//generator", "//verifier"],
    "optimizer": ["//profiler"],
    "optimizer/backtrack": ["//profiler"],
    "optimizer/eqsat": ["//profiler"],
}

# What a stage's binary (its main.cc) wires in besides the stage itself.
MAIN_DEPS = {
    "generator": ["//app"],
    "verifier": ["//app"],
    "profiler": ["//app"],
    "optimizer": ["//app", "//profiler"],
    "rules_db": ["//app", "//generator", "//verifier", "//optimizer/backtrack"],
}

def _top_packages():
    return [p for p, row in LAYERS.items() if row.layer == 3]

def _row(package):
    if package in LAYERS:
        return LAYERS[package]
    for top in _top_packages():
        if package.startswith(top + "/"):
            return LAYERS[top]
    fail("package %s has no row in tools/layers.bzl" % package)

def _dep_package(dep):
    return dep[2:].split(":")[0]

def visible_to(package):
    """The visibility list for `package`'s targets: every package whose row,
    tests' extras or binary wiring names it, and the top layer."""
    if package in [d[2:] for d in TEST_DEPS]:
        return ["//visibility:public"]  # testonly or vocabulary: every test may use it
    seen = {}
    for user, row in LAYERS.items():
        names = row.deps + EXTRA_TEST_DEPS.get(user, []) + MAIN_DEPS.get(user, [])
        for dep in names:
            if dep != "//..." and _dep_package(dep) == package:
                seen["//%s:__pkg__" % user] = True
    for top in _top_packages():
        seen["//%s:__subpackages__" % top] = True
    return sorted(seen.keys())

def layering_test(name = "layering_test"):
    """Checks every include in this package against its row.

    A package without C++ sources gets no test: it would pass having checked
    nothing."""
    package = native.package_name()
    sources = native.glob(["*.cc", "*.h"])
    if not sources:
        return
    row = _row(package)
    top = _top_packages()
    packages = list(LAYERS.keys())
    if "//..." in row.deps:
        deps = packages
    else:
        deps = [d[2:].replace(":", "/") for d in row.deps]
    test_deps = [d[2:] for d in TEST_DEPS + EXTRA_TEST_DEPS.get(package, [])]
    native.sh_test(
        name = name,
        size = "small",
        srcs = ["//tools:layering_test.sh"],
        data = ["//tools:check_includes.py"] + sources,
        # "-" stands for an empty list: Bazel drops empty arguments.
        args = [package] + [",".join(x) or "-" for x in [deps, test_deps, top, packages]],
    )
