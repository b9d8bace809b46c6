"""Compare our compiled a2a.proto with the official one, field by field.

Usage: compare_descriptor.py <FileDescriptorSet.bin> [package]

The official descriptor is the one the official Python SDK ships:
`a2a.types.a2a_pb2.DESCRIPTOR` (a2a-sdk 1.x, package `lf.a2a.v1`, the
default) or, with package `a2a.v1`, `a2a.grpc.a2a_pb2.DESCRIPTOR` (a2a-sdk
0.3.x, run it with interop/.venv03's python). For the file of that package
in our set, every message (nested ones and map entries included), every field (name,
number, type, label, type_name, oneof, proto3 optional, json_name), every enum
value and every service method (input, output, streaming) must be equal.
Options (google.api.http, field_behavior) are not compared: they do not
change the wire. Prints one line per difference and exits 1 if there is any;
prints "descriptor: N messages, M fields, K enums, S methods match" otherwise.
"""

import sys

from google.protobuf import descriptor_pb2

PACKAGE = sys.argv[2] if len(sys.argv) > 2 else "lf.a2a.v1"

if PACKAGE == "a2a.v1":
    import a2a.grpc.a2a_pb2 as official
else:
    import a2a.types.a2a_pb2 as official


def load_ours(path):
    fds = descriptor_pb2.FileDescriptorSet()
    with open(path, "rb") as f:
        fds.ParseFromString(f.read())
    for fd in fds.file:
        if fd.package == PACKAGE:
            return fd
    sys.exit("no file with package " + PACKAGE + " in " + path)


def load_official():
    fd = descriptor_pb2.FileDescriptorProto()
    official.DESCRIPTOR.CopyToProto(fd)
    return fd


def field_key(m, f):
    oneof = m.oneof_decl[f.oneof_index].name if f.HasField("oneof_index") else None
    return {
        "number": f.number,
        "type": descriptor_pb2.FieldDescriptorProto.Type.Name(f.type),
        "label": descriptor_pb2.FieldDescriptorProto.Label.Name(f.label),
        "type_name": f.type_name,
        "oneof": oneof,
        "proto3_optional": f.proto3_optional,
        # protoc fills json_name in; compare the effective one.
        "json_name": f.json_name or None,
    }


def messages(fd):
    out = {}

    def walk(prefix, msgs):
        for m in msgs:
            name = prefix + m.name
            out[name] = m
            walk(name + ".", m.nested_type)

    walk("", fd.message_type)
    return out


def enums(fd):
    out = {}
    for e in fd.enum_type:
        out[e.name] = e
    for name, m in messages(fd).items():
        for e in m.enum_type:
            out[name + "." + e.name] = e
    return out


def main():
    ours, theirs = load_ours(sys.argv[1]), load_official()
    diffs = []
    if ours.package != theirs.package:
        diffs.append(f"package: ours {ours.package!r}, official {theirs.package!r}")
    om, tm = messages(ours), messages(theirs)
    for name in sorted(set(om) | set(tm)):
        if name not in om:
            diffs.append(f"message {name}: missing in ours")
            continue
        if name not in tm:
            diffs.append(f"message {name}: not in the official proto")
            continue
        a, b = om[name], tm[name]
        if a.options.map_entry != b.options.map_entry:
            diffs.append(f"message {name}: map_entry differs")
        af = {f.name: field_key(a, f) for f in a.field}
        bf = {f.name: field_key(b, f) for f in b.field}
        for fname in sorted(set(af) | set(bf)):
            if fname not in af:
                diffs.append(f"field {name}.{fname}: missing in ours")
            elif fname not in bf:
                diffs.append(f"field {name}.{fname}: not in the official proto")
            else:
                for k in af[fname]:
                    # json_name: ours may be unset when the compiler leaves it to default.
                    if k == "json_name" and af[fname][k] is None:
                        continue
                    if af[fname][k] != bf[fname][k]:
                        diffs.append(
                            f"field {name}.{fname}: {k} ours {af[fname][k]!r}, official {bf[fname][k]!r}"
                        )
        ao = [o.name for o in a.oneof_decl]
        bo = [o.name for o in b.oneof_decl]
        if sorted(ao) != sorted(bo):
            diffs.append(f"message {name}: oneofs ours {ao}, official {bo}")
    oe, te = enums(ours), enums(theirs)
    for name in sorted(set(oe) | set(te)):
        if name not in oe or name not in te:
            diffs.append(f"enum {name}: only in {'official' if name in te else 'ours'}")
            continue
        av = {v.name: v.number for v in oe[name].value}
        bv = {v.name: v.number for v in te[name].value}
        if av != bv:
            diffs.append(f"enum {name}: values ours {av}, official {bv}")
    os_ = {s.name: s for s in ours.service}
    ts = {s.name: s for s in theirs.service}
    methods = 0
    for sname in sorted(set(os_) | set(ts)):
        if sname not in os_ or sname not in ts:
            diffs.append(f"service {sname}: only in {'official' if sname in ts else 'ours'}")
            continue
        am = {m.name: m for m in os_[sname].method}
        bm = {m.name: m for m in ts[sname].method}
        for mname in sorted(set(am) | set(bm)):
            if mname not in am or mname not in bm:
                diffs.append(f"method {sname}.{mname}: only in {'official' if mname in bm else 'ours'}")
                continue
            methods += 1
            x, y = am[mname], bm[mname]
            for k in ("input_type", "output_type", "client_streaming", "server_streaming"):
                if getattr(x, k) != getattr(y, k):
                    diffs.append(
                        f"method {sname}.{mname}: {k} ours {getattr(x, k)!r}, official {getattr(y, k)!r}"
                    )
    for d in diffs:
        print(d)
    if diffs:
        print(f"descriptor: {len(diffs)} differences")
        sys.exit(1)
    nfields = sum(len(m.field) for m in om.values())
    print(
        f"descriptor: {len(om)} messages, {nfields} fields, {len(oe)} enums, {methods} methods match"
    )


if __name__ == "__main__":
    main()
