#!/usr/bin/python3
"""Seed corpora of the fuzz targets, into OUT/<target>/ (fuzz/run calls it; files already there,
such as inputs a previous run found, stay).

  import   the models of models/ (up to 64 KiB) and the import tests' good and bad models
  planner  problems encoded as fuzz/planner.cpp decodes them, from the activations of those
           models (size and live interval of each, in node order) and a few seeded random ones
  parse    sizes, compile command lines and planner CSV files
  memory   --memory descriptions, valid and broken
  names    hostile names (newlines, "*/", quotes, control bytes, invalid UTF-8, keywords, 10 kB)

and, for every target, the inputs in fuzz/regressions/<target>/: those that found a bug, kept so
that every run replays them first.
"""
import hashlib
import os
import random
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def put(folder, data):
    os.makedirs(folder, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def model_files():
    folders = [os.path.join(ROOT, "models"), os.path.join(ROOT, "tests/import/good"),
               os.path.join(ROOT, "tests/import/bad")]
    for folder in folders:
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name)
            if name.endswith(".onnx") and 0 < os.path.getsize(path) <= 65536:
                yield path


def planner_problem(buffers, regions=1, tiny=False):
    """buffers: (size, first_step, width, log2 alignment, pin byte) as planner.cpp reads them."""
    head = (regions - 1) | (0x80 if tiny else 0)
    data = bytes([head]) + b"".join(struct.pack("<H", 0xFFFF) for _ in range(regions))
    for size, first, width, align_log2, pin in buffers:
        data += struct.pack("<HBBBB", size, first, width, align_log2, pin)
    return data


def activations(path):
    """(bytes, first step, last step) of each node output of a model, in node order."""
    import onnx
    m = onnx.load(path, load_external_data=False)
    inferred = onnx.shape_inference.infer_shapes(m)
    sizes = {}
    for v in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output):
        dims = [d.dim_value if d.dim_value > 0 else 1 for d in v.type.tensor_type.shape.dim]
        n = 1
        for d in dims:
            n *= d
        sizes[v.name] = n
    first, last = {}, {}
    for step, node in enumerate(m.graph.node):
        for out in node.output:
            first.setdefault(out, step)
            last[out] = step
        for inp in node.input:
            if inp in first:
                last[inp] = step
    return [(sizes.get(t, 1), first[t], last[t]) for t in first]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build-fuzz", "corpus")
    rng = random.Random(7)

    regressions = os.path.join(ROOT, "fuzz", "regressions")
    for target in ("import", "planner", "parse", "memory", "names"):
        folder = os.path.join(regressions, target)
        for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
            with open(os.path.join(folder, name), "rb") as f:
                put(os.path.join(out, target), f.read())

    for path in model_files():
        with open(path, "rb") as f:
            put(os.path.join(out, "import"), f.read())

    planner = os.path.join(out, "planner")
    try:
        import onnx  # noqa: F401
        for path in model_files():
            if "/models/" not in path:
                continue
            acts = activations(path)[:40]
            steps_from = min((a[1] for a in acts), default=0)
            encoded = [(min(size, 0xFFFF) % 8192, (first - steps_from) % 32, min(last - first, 11), 2, 0)
                       for size, first, last in acts]
            put(planner, planner_problem(encoded))
    except ImportError:
        pass
    for _ in range(48):
        tiny = rng.random() < 0.5
        n = rng.randint(1, 5 if tiny else 40)
        bufs = [(rng.randint(1, 11 if tiny else 8191), rng.randint(0, 31), rng.randint(0, 11), rng.randint(0, 5),
                 rng.choice([0, 0, 0, 0x80 | rng.randint(0, 127)])) for _ in range(n)]
        put(planner, planner_problem(bufs, regions=rng.randint(1, 3), tiny=tiny))

    parse = os.path.join(out, "parse")
    for size in ["65536", "64K", "64KiB", "64KB", "1M", "1MiB", "2G", "0", "12b", "18446744073709551615",
                 "18446744073709551616", "17179869184G", "64k ", " 64K", "-1", "1.5M"]:
        put(parse, b"\0" + size.encode())
    for line in [["m.onnx", "-o", "out"],
                 ["m.onnx", "--max-ram", "64K", "-o", "out", "--name", "net"],
                 ["m.onnx", "-o", "out", "--pin", "x=arena:0", "--pin", "y=DTCM:1K"],
                 ["m.onnx", "-o", "out", "--time-limit", "0.5", "--alignment", "16", "--io-outside"],
                 ["m.onnx", "-o", "out", "--memory", "regions.json", "--weights-section", ".flash"],
                 ["m.onnx", "-o", "out", "--arena-section", ".dtcm", "--pin-batch", "--time-limit", "1e-3"]]:
        put(parse, b"\1" + "\0".join(line).encode())
    for csv in ["id,lower,upper,size\n0,0,2,64\n1,1,3,32\n2,2,4,128\n",
                "size,upper,lower,id\n16,5,0,a\n16,9,4,b\n",
                "id,lower,upper,size\n\n0,0,1,0\n 1 , 0 , 2 , 8 \r\n"]:
        put(parse, b"\2" + csv.encode())

    memory = os.path.join(out, "memory")
    for doc in ['{"regions": [{"name": "DTCM", "size": "128K", "section": ".dtcm"}, {"name": "SRAM", "size": 1048576}]}',
                '{"regions": [{"name": "fast", "size": "1K"}, {"name": "slow", "size": "1M"}],'
                ' "pins": [{"tensor": "xq", "region": "fast", "offset": 0}]}',
                '{"regions": [{"name": "arena", "size": "64K"}], "pins": [{"tensor": "act_out", "region": "arena"}]}',
                '{"regions": [{"name": "tiny", "size": 16}]}',
                '{"regions": []}', '[]', '{"regions": [{"name": 3, "size": "1K"}]}']:
        put(memory, doc.encode())

    # names: a model byte, then names separated by NUL (fuzz/names.cpp)
    names = os.path.join(out, "names")
    nasty = [b"node */ evil \n", b"x\nstatic int hook = (write_flash(), 0);//", b'"', b"\\", b"\\\n", b"??/",
             b"??=", b"/*", b"*/", b"\r", b"\t", b"\x1b[31m", b"\x7f", b"\x01\x1f", b"\xe2\x80\xae", b"\xef\xbf\xbe",
             b"\xff\xfe", b"\xc0\xaf", b"\xed\xa0\x80", b"\xc2\x85", b"<script>alert(1)</script>", b"]]>", b"&amp;",
             b"int", b"class", b"namespace", b"tightfit", b"a-b", b"a_b", b"a.b", b"\xc3\xa9"]
    for model in range(3):
        for k in range(24):
            # up to the ~80 names a model takes (nodes, their doc strings, tensors, graph, metadata)
            picked = [rng.choice(nasty) + rng.choice(nasty) for _ in range(rng.randint(1, 80))]
            put(names, bytes([model]) + b"\0".join(picked))
        put(names, bytes([model]) + b"\0".join(nasty))
        piece = rng.choice([b"n", b"\n", b"*/"])
        put(names, bytes([model]) + piece * (10240 // len(piece)))


if __name__ == "__main__":
    main()
