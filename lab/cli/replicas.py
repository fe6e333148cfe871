"""`python -m lab replicas --replicas N --port P [--hosted] [--json]`: N app processes behind a real HAProxy with
cookie affinity (lab/replicas.py), until SIGINT or SIGTERM stops them all.

With --json it prints {"proxy": URL, "replicas": [{"port": ..., "pid": ...}]} once every replica answers.
"""

from __future__ import annotations

import signal
import sys
import threading

from lab.cli import print_json


def register(sub) -> None:
    """Add the `replicas` command."""
    p = sub.add_parser("replicas", help="N app replicas behind HAProxy with sticky sessions (a class of hundreds)")
    p.add_argument("--replicas", type=int, default=2, metavar="N", help="app processes (default 2)")
    p.add_argument("--port", type=int, default=8501, metavar="P", help="the proxy's port (default 8501)")
    p.add_argument("--host", default="127.0.0.1", help="the proxy's address (0.0.0.0 for a classroom network)")
    p.add_argument("--hosted", action="store_true", help="run the replicas as the hosted demo (LAB_HOSTED=1)")
    p.add_argument("--json", action="store_true", help="print the proxy and replicas as JSON once all answer")
    p.set_defaults(run=run)


def run(args) -> int:
    """Start the class, say where it is, wait for SIGINT/SIGTERM, stop everything."""
    from lab.replicas import Class

    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    with Class(args.replicas, args.port, hosted=args.hosted, host=args.host) as c:
        if args.json:
            print_json(c.description())
        else:
            print(f"{c.n} replicas behind HAProxy: open {c.proxy} (Ctrl+C stops them all)")
            for r in c.replicas:
                print(f"  {r['name']}: port {r['port']}, pid {r['pid']}")
        sys.stdout.flush()
        while not stop.wait(0.5):
            pass
    return 0
