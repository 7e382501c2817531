"""C++ code for our .proto files from the system protoc, without @com_google_protobuf.

Native proto_library/cc_proto_library would download protobuf's sources, and
this build is offline. So a genrule runs /usr/bin/protoc (3.21, matching the
system libprotobuf the generated code links against) directly.
"""

def taso_cc_proto(name, src, proto_deps = [], cc_deps = [], grpc = False):
    """A cc_library `name` with the C++ code generated from `src`.

    Args:
      name: the cc_library's name.
      src: the .proto file, in this package.
      proto_deps: every .proto file `src` imports, directly or transitively
        (the sandbox only holds declared inputs). Well-known types such as
        google/protobuf/timestamp.proto come with protoc and are not listed.
      cc_deps: the cc_libraries generated from the direct imports.
      grpc: also generate gRPC service code; needed only if `src` has a service.
    """
    base = src[:-len(".proto")]
    outs = [base + ".pb.h", base + ".pb.cc"]
    grpc_flags = ""
    if grpc:
        outs += [base + ".grpc.pb.h", base + ".grpc.pb.cc"]
        grpc_flags = ("--grpc_out=$(GENDIR) " +
                      "--plugin=protoc-gen-grpc=/usr/bin/grpc_cpp_plugin ")

    # -I. makes the execroot the import root, so `import "proto/ir.proto"`
    # resolves and the outputs land in $(GENDIR)/proto/, i.e. exactly the
    # declared outs, included as "proto/x.pb.h".
    native.genrule(
        name = name + "_gen",
        srcs = [src] + proto_deps,
        outs = outs,
        cmd = ("/usr/bin/protoc -I. --cpp_out=$(GENDIR) " + grpc_flags +
               "$(execpath " + src + ")"),
        message = "protoc " + src,
    )

    native.cc_library(
        name = name,
        srcs = [base + ".pb.cc"] + ([base + ".grpc.pb.cc"] if grpc else []),
        hdrs = [base + ".pb.h"] + ([base + ".grpc.pb.h"] if grpc else []),
        deps = cc_deps + ["//third_party:grpc" if grpc else "//third_party:protobuf"],
        visibility = ["//visibility:public"],
    )
