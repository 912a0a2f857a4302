#!/usr/bin/env python3
"""Gives a clone's unchanged files back the modification times they had
when this clone path was last built, so cargo reuses what it built.

    source-mtimes.py <state-file>

cargo decides whether a workspace crate is fresh by comparing its sources'
modification times with its last build's; a new clone stamps every file
"now", so every workspace crate (and the wasm shells) recompiles although
nothing changed. Here a file's time is restored only when its content is
exactly the content recorded for it, under this clone's path, by the
previous run (git's blob id of the committed file): the time restored is
when that content appeared here, so any build output newer than it was
built from this content, and anything older is rebuilt as before. A file
whose content changed keeps its new time and is recorded with it.

For fresh clones only (conformance/test.sh runs it when CI=true): a
checkout someone edits and builds between runs could hold a build newer
than a restored time but made from other content. A working tree with
local edits is never touched; symlinks are skipped. The state keeps the
last few clone paths.
"""

import json
import os
import subprocess
import sys

KEEP_PATHS = 8


def git(*args: str) -> bytes:
    return subprocess.run(["git", *args], check=True, capture_output=True).stdout


def committed_files() -> dict[str, str]:
    """path -> blob id of every tracked regular file."""
    files = {}
    for entry in git("ls-files", "-s", "-z").split(b"\0"):
        if not entry:
            continue
        meta, path = entry.split(b"\t", 1)
        mode, blob, _stage = meta.split()
        if mode in (b"100644", b"100755"):
            files[path.decode()] = blob.decode()
    return files


def main() -> int:
    state_file = sys.argv[1]
    root = os.path.realpath(git("rev-parse", "--show-toplevel").decode().strip())
    os.chdir(root)
    if git("status", "--porcelain", "--untracked-files=no").strip():
        print("source-mtimes: local edits, times left as they are", file=sys.stderr)
        return 0
    try:
        with open(state_file) as f:
            state = json.load(f)
    except (OSError, ValueError):
        state = {}
    seen = state.get(root, {})
    now, restored = {}, 0
    for path, blob in committed_files().items():
        before = seen.get(path)
        if before and before[0] == blob:
            st = os.stat(path)
            os.utime(path, ns=(st.st_atime_ns, before[1]))
            now[path] = before
            restored += 1
        else:
            now[path] = [blob, os.stat(path).st_mtime_ns]
    state.pop(root, None)
    state[root] = now
    state = dict(list(state.items())[-KEEP_PATHS:])
    os.makedirs(os.path.dirname(os.path.abspath(state_file)), exist_ok=True)
    tmp = f"{state_file}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump(state, f)
    os.replace(tmp, state_file)
    changed = len(now) - restored
    print(f"source-mtimes: {restored} files as last built, {changed} new or changed", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
