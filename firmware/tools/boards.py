"""The boards of firmware/boards/boards.json, for the Python tools and benches.

  import boards
  boards.load()["mps2-an386"].core          # "cortex-m4"
  boards.run_targets()                      # the boards of `tightfit run --target`, in its order
"""
import collections
import json
import os

TABLE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "boards", "boards.json")

# A board's facts, with its architecture's toolchain file (in cmake/), QEMU program and flags.
Board = collections.namedtuple("Board", "name core architecture qemu_machine fast_kernels run_target "
                                        "toolchain qemu qemu_flags")


def load():
    """Every board of the table, by name, in the table's order."""
    with open(TABLE) as f:
        table = json.load(f)
    result = {}
    for b in table["boards"]:
        arch = table["architectures"][b["architecture"]]
        result[b["name"]] = Board(b["name"], b["core"], b["architecture"], b["qemu_machine"], b["fast_kernels"],
                                  b.get("run_target"), arch["toolchain"], arch["qemu"], list(arch["qemu_flags"]))
    return result


def run_targets():
    """The boards `tightfit run --target` takes, by name, in its order."""
    return {name: b for name, b in load().items() if b.run_target}


def qemu_flags(qemu):
    """The QEMU flags of the architecture whose QEMU program is `qemu` (a name or a path)."""
    with open(TABLE) as f:
        table = json.load(f)
    for arch in table["architectures"].values():
        if arch["qemu"] == os.path.basename(qemu):
            return list(arch["qemu_flags"])
    raise ValueError(f"{qemu}: not the QEMU program of any architecture in {TABLE}")
