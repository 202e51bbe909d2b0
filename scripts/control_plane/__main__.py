"""The real control plane, by hand.

    python -m scripts.control_plane build      # build the binaries into the cache, or reuse them
    python -m scripts.control_plane versions   # the pinned versions and where they are cached
    python -m scripts.control_plane run        # start it all, print a kubeconfig; Ctrl-C stops

`run --dir DIR` keeps the run's files (logs/, kubeconfigs, certificates, etcd's data) in DIR;
without it they go to a temporary directory, removed at the end.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import sys
import tempfile
import threading
import traceback
from pathlib import Path

from scripts.control_plane import shared
from scripts.control_plane.build import Built, GoMissing, build, cache_root, versions
from scripts.control_plane.plane import ControlPlane
from scripts.control_plane.processes import ControlPlaneError


def _run(arguments: argparse.Namespace) -> int:
    built = Built(Path(arguments.bin).parent) if arguments.bin else build()
    temporary = arguments.dir is None
    directory = Path(arguments.dir or tempfile.mkdtemp(prefix="elastic-quota-control-plane-"))
    stop = threading.Event()

    def interrupt(*_: object) -> None:
        raise KeyboardInterrupt  # while starting: `start` stops what it started

    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, interrupt)
    plane = ControlPlane(directory, built, nodes=arguments.nodes)
    try:
        print(f"starting the control plane in {directory}", file=sys.stderr, flush=True)
        plane.start()
    except (ControlPlaneError, OSError, KeyboardInterrupt) as error:
        if arguments.shared:
            (directory / shared.FAILED).write_text(f"{error!r}\n{traceback.format_exc()}")
        print(repr(error) if isinstance(error, KeyboardInterrupt) else error, file=sys.stderr)
        if temporary:
            shutil.rmtree(directory, ignore_errors=True)
        return 1
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, lambda *_: stop.set())
    try:
        if arguments.shared:
            partial = directory / f"{shared.READY}.partial"
            partial.write_text(
                json.dumps(
                    {
                        "kubeconfig": str(plane.kubeconfig),
                        "server": plane.server,
                        "startup_seconds": round(plane.startup_seconds, 1),
                    }
                )
            )
            partial.rename(directory / shared.READY)
        print(
            f"ready in {plane.startup_seconds:.1f} s: {plane.server}, {plane.nodes} kwok nodes\n"
            f"logs: {plane.logs}\n"
            f"export KUBECONFIG={plane.kubeconfig}\n"
            "Ctrl-C stops it",
            flush=True,
        )
        while not stop.wait(0.5):
            gone = {name: code for name, code in plane.running().items() if code is not None}
            if gone:
                print(f"exited: {gone}\n{plane.report()}", file=sys.stderr)
                return 1
            if arguments.shared and shared.unheld(directory):
                break
        return 0
    finally:
        plane.stop()
        if arguments.shared:
            (directory / shared.STOPPED).touch()
        print("stopped", file=sys.stderr, flush=True)
        if temporary:
            shutil.rmtree(directory, ignore_errors=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m scripts.control_plane", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("build", help="build the binaries into the cache, or reuse them")
    commands.add_parser("versions", help="the pinned versions and the cache")
    run = commands.add_parser("run", help="start the control plane until Ctrl-C")
    run.add_argument("--dir", help="the run's files (default: a temporary directory)")
    run.add_argument("--nodes", type=int, default=4, help="kwok nodes (default 4)")
    run.add_argument("--bin", help=argparse.SUPPRESS)  # the tests' runner: binaries given
    # The tests' runner: stops when no test process holds it (scripts/control_plane/shared.py).
    run.add_argument("--shared", action="store_true", help=argparse.SUPPRESS)
    arguments = parser.parse_args(argv)
    try:
        if arguments.command == "versions":
            pinned = versions()
            print(f"kubernetes {pinned.kubernetes}, etcd {pinned.etcd}, kwok {pinned.kwok}")
            print(f"go {pinned.go} or newer; cache {cache_root() / pinned.key}")
            return 0
        if arguments.command == "build":
            cached = Built(cache_root() / versions().key)  # $ELASTIC_QUOTA_KUBERNETES_MODULE
            if cached.complete():
                record = json.loads((cached.root / "built.json").read_text())
                print(
                    f"control plane: reusing {cached.bin} (built with {record['go']} in "
                    f"{record['total_seconds']:.0f} s)",
                    file=sys.stderr,
                )
            print(build().bin)
            return 0
        return _run(arguments)
    except GoMissing as missing:
        print(missing, file=sys.stderr)
        return 2
    except RuntimeError as failed:  # a go build that failed: what go said
        print(f"control plane: {failed}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
