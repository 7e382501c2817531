"""Fuzz targets: one entry point, two binaries.

taso_fuzz_target(name, ...) makes
  - `name`: the libFuzzer binary. Built with `--config=fuzz` (clang, libFuzzer,
    ASan and UBSan): `bench/fuzz_run.sh` runs it for a given time.
  - `name_replay_test`: the same entry point over the checked-in corpus (seeds,
    and every crash a fuzzing run found, kept as a regression), in the normal
    build and in CI.
"""

def taso_fuzz_target(name, srcs, deps, corpus):
    native.cc_library(
        name = name + "_lib",
        srcs = srcs,
        deps = deps,
        alwayslink = 1,
    )
    native.cc_test(
        name = name + "_replay_test",
        size = "small",
        deps = [name + "_lib", "//fuzz:replay_main"],
        data = native.glob([corpus + "/**"]),
        args = [native.package_name() + "/" + corpus],
    )
    native.cc_binary(
        name = name,
        deps = [name + "_lib"],
        linkopts = ["-fsanitize=fuzzer"],
        # Only clang links it: bazel build --config=fuzz //fuzz:NAME.
        tags = ["manual"],
    )
