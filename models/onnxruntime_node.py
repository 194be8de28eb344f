"""The npm package the scripts run ONNX Runtime from (node with models/node_modules/onnxruntime-node),
and the one line a script prints when it is missing: node's own error ends with its stack trace, whose
last line is only node's version."""
import os
import sys

PACKAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'node_modules', 'onnxruntime-node')
INSTALL = 'cd models && npm ci --ignore-scripts --no-audit --no-fund'


def require(who):
    """Exits with one line naming the missing package and its install command, unless it is there."""
    if not os.path.isdir(PACKAGE):
        sys.exit(f'{who}: models/node_modules/onnxruntime-node is missing: install it with `{INSTALL}`')
