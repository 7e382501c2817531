"""The layer table: which of our packages each package may depend on.

One row per package. `deps` are what its library files may include and
depend on. Bazel visibility is derived from this table (visible_to), and
layering_test() checks every include of a package against its row.

The floors, bottom up: 0 the contracts (proto), 1 the ground, 2 the shared
vocabularies, 3 the stages, 4 the top (binaries, the CLI, benchmarks, fuzz
targets, cross-executable tests). A row may name only packages on a lower
floor; the stages are peers, so on floor 3 a row may name only its own
stage's packages on a lower `step` (inside the optimizer: the rewrite engine,
the passes over it, the searches over those, the pipeline and service on
top). Loading this file fails on a row that breaks this (see
layer_table_errors), so an upward or sideways edge cannot be written down.
"""

_VOCABULARY = ["//proto", "//core"]
_TOP = 4

def _row(layer, deps = [], step = 0):
    return struct(layer = layer, deps = deps, step = step)

_OPTIMIZER_BELOW_SEARCHES = ["//optimizer/rewrite", "//optimizer/passes", "//optimizer/search"]

LAYERS = {
    # floor 0: the contracts (generated code every floor may read)
    "proto": _row(0),
    # floor 1: the ground
    "core": _row(1, ["//proto"]),
    "net": _row(1),
    "storage": _row(1),
    "gpu": _row(1),
    # The proved size-3 rule set compiled into the binaries (bytes only).
    "rules": _row(1),
    # floor 2: shared vocabularies
    # A store list is connected here (records/store_shards), with the
    # channels every client makes (net/credentials).
    "records": _row(2, _VOCABULARY + ["//net"]),
    # ONNX models in and out of the IR (the optimizer and the ort backend).
    "onnx_io": _row(2, _VOCABULARY),
    # Signatures, timings, graph cost, the profiler client and backend
    # interfaces: what the profiler and the optimizer both speak.
    "costs": _row(2, _VOCABULARY),
    # IR graphs, rules and graph diffs as Graphviz DOT text (cli renders it).
    "pictures": _row(2, _VOCABULARY),
    "app": _row(2, ["//core"]),
    "models": _row(2, _VOCABULARY),
    "testing": _row(2, _VOCABULARY),
    # floor 3: the stages, peers that never include each other
    "generator": _row(3, _VOCABULARY + ["//records", "//net"]),
    "verifier": _row(3, _VOCABULARY + ["//records", "//net"]),
    # The backends, each over the cost vocabulary; the profiler's core (the
    # cache, CostProfiler, clients, the service) picks one by name.
    "profiler/cpu": _row(3, _VOCABULARY + ["//costs"], step = 0),
    "profiler/cuda": _row(3, _VOCABULARY + ["//costs", "//gpu"], step = 0),
    "profiler/ort": _row(3, _VOCABULARY + ["//costs", "//onnx_io"], step = 0),
    "profiler/analytic": _row(3, _VOCABULARY + ["//costs"], step = 0),
    "profiler": _row(3, _VOCABULARY + ["//storage", "//net", "//costs", "//profiler/cpu", "//profiler/cuda",
                                       "//profiler/ort", "//profiler/analytic"], step = 1),
    "rules_db": _row(3, _VOCABULARY + ["//records", "//storage", "//net"]),
    # The client of a set of store shards, a peer of the stages it talks to
    # only over gRPC: local stores started as processes, the shard fan-out
    # and the union of their rules, job states merged.
    "cluster": _row(3, _VOCABULARY + ["//records", "//net"]),
    "optimizer/rewrite": _row(3, _VOCABULARY, step = 0),
    "optimizer/search": _row(3, [], step = 0),
    "optimizer/passes": _row(3, _VOCABULARY + ["//costs", "//optimizer/rewrite"], step = 1),
    "optimizer/backtrack": _row(3, _VOCABULARY + ["//costs"] + _OPTIMIZER_BELOW_SEARCHES, step = 2),
    "optimizer/eqsat": _row(3, _VOCABULARY + ["//costs"] + _OPTIMIZER_BELOW_SEARCHES, step = 2),
    "optimizer": _row(3, _VOCABULARY + ["//net", "//rules", "//records", "//onnx_io", "//costs"] +
                         _OPTIMIZER_BELOW_SEARCHES + ["//optimizer/backtrack", "//optimizer/eqsat"], step = 3),
    # floor 4: what users run and what tests the whole
    "bin": _row(_TOP, ["//..."]),
    "cli": _row(_TOP, ["//..."]),
    "bench": _row(_TOP, ["//..."]),
    "fuzz": _row(_TOP, ["//..."]),
    "tests": _row(_TOP, ["//..."]),
    "deploy": _row(_TOP, ["//..."]),
}

# What every package's unit tests may use besides its row.
TEST_DEPS = ["//testing", "//models"]

# Unit tests that drive a peer's implementation in-process (the optimizer's
# tests with an embedded profiler, as taso_optimizer wires it; the stores'
# tests with the real class check, re-prover and pruner, as taso_rules_db
# wires them). Test files only: a library file including these fails.
EXTRA_TEST_DEPS = {
    "rules_db": ["//generator", "//verifier"],
    "optimizer": ["//profiler", "//profiler/ort"],
    "optimizer/rewrite": ["//profiler", "//costs"],
    "optimizer/passes": ["//profiler"],
    "optimizer/backtrack": ["//profiler"],
    "optimizer/eqsat": ["//profiler"],
}

def _dep_package(dep):
    return dep[2:].split(":")[0]

def _stage(package):
    return package.split("/")[0]

def layer_table_errors(layers):
    """What is wrong with a layer table: a row naming an unknown package, a
    package on its own floor (other than its own stage's lower steps) or
    above, or a cycle. Empty when the table is sound."""
    errors = []
    for package, row in layers.items():
        for dep in row.deps:
            if dep == "//...":
                if row.layer != _TOP:
                    errors.append("%s (floor %d) names //..., which only the top floor may" % (package, row.layer))
                continue
            target = _dep_package(dep)
            if target not in layers:
                errors.append("%s names %s, which has no row" % (package, dep))
                continue
            below = layers[target]
            if below.layer < row.layer:
                continue
            if below.layer == row.layer and _stage(target) == _stage(package) and below.step < row.step:
                continue
            errors.append("%s (floor %d, step %d) names %s (floor %d, step %d): a row may name only a lower floor, " %
                          (package, row.layer, row.step, dep, below.layer, below.step) +
                          "or on its own floor a lower step of its own stage")

    # A cycle: some package reaches itself. Starlark has no recursion, so
    # reachability is relaxed once per package.
    reach = {p: {_dep_package(d): True for d in row.deps if d != "//..." and _dep_package(d) in layers}
             for p, row in layers.items()}
    for _ in layers:
        for p in layers:
            for q in list(reach[p].keys()):
                for r in list(reach[q].keys()):
                    reach[p][r] = True
    for p in layers:
        if p in reach[p]:
            errors.append("%s depends on itself through the table (a cycle)" % p)
    return errors

def _refuse_unsound_table():
    errors = layer_table_errors(LAYERS)
    if errors:
        fail("tools/layers.bzl:\n  " + "\n  ".join(errors))
    return True

_TABLE_IS_SOUND = _refuse_unsound_table()

def _top_packages():
    return [p for p, row in LAYERS.items() if row.layer == _TOP]

def _row_of(package):
    if package in LAYERS:
        return LAYERS[package]
    for top in _top_packages():
        if package.startswith(top + "/"):
            return LAYERS[top]
    fail("package %s has no row in tools/layers.bzl" % package)

def visible_to(package):
    """The visibility list for `package`'s targets: every package whose row
    or tests' extras name it, and the top floor."""
    if package in [d[2:] for d in TEST_DEPS]:
        return ["//visibility:public"]  # testonly or vocabulary: every test may use it
    seen = {}
    for user, row in LAYERS.items():
        for dep in row.deps + EXTRA_TEST_DEPS.get(user, []):
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
    row = _row_of(package)
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
        args = [package] + [",".join(x) or "-" for x in [deps, test_deps, packages]],
    )
