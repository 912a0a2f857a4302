"""RFC 6962 Merkle roots by pymerkle (PyPI, pinned by pymerkle.sh), an
implementation nobody here wrote, for relay-sealed's witness-log interop
test (host/sealed/tests/interop.rs).

    python merkle_roots.py <leaf hex> [<leaf hex> ...]

Appends each leaf (its bytes) to a SHA-256 tree and prints, as JSON, the
root after each append, hex: the roots of every prefix of the log.
"""

import json
import sys

from pymerkle import InmemoryTree


def main() -> None:
    tree = InmemoryTree(algorithm="sha256")
    roots = []
    for leaf in sys.argv[1:]:
        tree.append_entry(bytes.fromhex(leaf))
        roots.append(tree.get_root().hex())
    print(json.dumps(roots))


if __name__ == "__main__":
    main()
