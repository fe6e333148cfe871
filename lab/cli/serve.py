"""`python -m lab serve` and `python -m lab loadtest`: a model behind an OpenAI-compatible HTTP server, and a
bounded load test for any such server (chapter 14).

    python -m lab serve --model M [--host 127.0.0.1] [--port 8000] [--api-key K] [--max-concurrent N]
                        [--max-queue Q] [--batching {off,static,continuous}] [--no-batching] [--no-cache]
    python -m lab loadtest --url URL --concurrency N --requests R [--max-tokens K] [--api-key K] [--rate R]
                           [--goodput ttft:1000 itl:100] [--json]
    python -m lab loadtest --in-process M --concurrency N --requests R [--max-tokens K] [--json]
    python -m lab loadtest --serve M [--batching B | --no-batching] [--no-cache] --concurrency N --requests R [--json]

--serve starts `lab serve` for M on a free loopback port, measures it and stops it (the serving page's way);
--mixed asks for the page's mixed output lengths (K, K/4, K/2, 3K/4 in turn) instead of K each.

See lab/serving/server.py (the API and its errors), lab/serving/engine.py (batching, the cache)
and lab/serving/loadtest.py.
"""

from __future__ import annotations

import sys

from lab.cli import CliError, print_json, print_table
from lab.cli.args import add_model_argument, load_model_arg


def register(sub) -> None:
    """Add the `serve` and `loadtest` commands."""
    p = sub.add_parser("serve", help="an OpenAI-compatible HTTP server for a decoder (/v1/completions)")
    add_model_argument(p)
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--api-key", metavar="K", help="require 'Authorization: Bearer K' on /v1/ routes")
    p.add_argument("--max-concurrent", type=int, default=8, metavar="N", help="requests decoded at once (default 8)")
    p.add_argument("--max-queue", type=int, default=16, metavar="Q", help="requests waiting beyond N; more: 429")
    p.add_argument("--batching", choices=("off", "static", "continuous"), default=None,
                   help="the scheduler: off (one request at a time), static (default: batches formed when one starts) "
                        "or continuous (join at the next token, leave when done)")
    p.add_argument("--no-batching", action="store_true", help="decode one request at a time (= --batching off)")
    p.add_argument("--no-cache", action="store_true", help="no key-value cache: re-read every sequence each step")
    p.set_defaults(run=run_serve)

    p = sub.add_parser("loadtest", help="time streamed completions against an OpenAI-compatible server")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--url", help="the server's base URL (http://127.0.0.1:8000); loopback only by default")
    src.add_argument("--in-process", metavar="MODEL", help="measure lab.sampling called directly instead")
    src.add_argument("--serve", metavar="MODEL", help="start `lab serve` for MODEL on a free loopback port, measure "
                     "it, stop it (with --batching, --no-batching, --no-cache: the server's flags)")
    p.add_argument("--batching", choices=("off", "static", "continuous"), help="with --serve: the server's scheduler")
    p.add_argument("--no-batching", action="store_true", help="with --serve: the server's --no-batching")
    p.add_argument("--no-cache", action="store_true", help="with --serve: the server's --no-cache")
    p.add_argument("--mixed", action="store_true", help="mixed output lengths, as the serving page asks: K, K/4, "
                   "K/2, 3K/4 in turn")
    p.add_argument("--concurrency", type=int, default=1, metavar="N", help="requests at a time (1-64)")
    p.add_argument("--requests", type=int, default=8, metavar="R", help="requests in all (1-1000)")
    p.add_argument("--max-tokens", type=int, default=32, metavar="K", help="tokens per request (default 32)")
    p.add_argument("--api-key", metavar="K", help="the server's key")
    p.add_argument("--timeout", type=float, default=120, help="seconds per request (default 120)")
    p.add_argument("--deadline", type=float, default=600, help="seconds for the whole test (default 600)")
    p.add_argument("--allow-remote", action="store_true", help="allow a server on another machine")
    p.add_argument("--rate", type=float, metavar="R",
                   help="requests per second arriving as a Poisson process (at most --concurrency in flight)")
    p.add_argument("--goodput", nargs="+", metavar="KEY:MS",
                   help="the SLOs goodput counts, in ms: ttft, itl, tpot, e2el (default ttft:1000 itl:100)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run_loadtest)


def run_serve(args) -> int:
    """Load the model and serve it until interrupted."""
    from lab.models import kind_of
    from lab.serving import server as serve

    if not 0 < args.port < 65536:
        raise CliError(f"--port must be from 1 to 65535, not {args.port}")
    if not 1 <= args.max_concurrent <= 64 or not 0 <= args.max_queue <= 10_000:
        raise CliError("--max-concurrent must be from 1 to 64 and --max-queue from 0 to 10,000")
    loaded = load_model_arg(args.model)
    if kind_of(loaded.model.config) != "decoder":
        raise CliError(f"{loaded.name} is an encoder: it does not write text, so there is nothing to serve")
    if args.host not in serve.LOOPBACK:
        print(f"lab serve: listening on {args.host}, reachable from other machines", file=sys.stderr)
    if args.no_batching and args.batching not in (None, "off"):
        raise CliError(f"--no-batching and --batching {args.batching} contradict each other")
    batching = "off" if args.no_batching else args.batching or "static"
    options = serve.Options(args.api_key, args.max_concurrent, args.max_queue, batching, not args.no_cache, args.host)
    print(f"lab serve: {loaded.name} on http://{args.host}:{args.port}/v1 (batching "
          f"{batching}, cache {'on' if options.cache else 'off'})", file=sys.stderr)
    serve.run(loaded, args.host, args.port, options)
    return 0


def run_loadtest(args) -> int:
    """Run the load test and print its summary."""
    from lab.serving import loadtest

    if not 1 <= args.max_tokens <= 1024:
        raise CliError(f"--max-tokens must be from 1 to 1,024, not {args.max_tokens}")
    try:
        loadtest.check_limits(args.timeout, args.deadline, args.rate)
        r = _measure(args, loadtest.parse_slo(args.goodput))
    except (loadtest.LoadTestError, OSError, RuntimeError) as e:
        raise CliError(str(e)) from None
    if args.json:
        print_json(r)
    else:
        ms = lambda x: None if x is None else 1000 * x  # noqa: E731
        print_table(["concurrency", "requests", "errors", "TTFT p50 ms", "TTFT p95 ms", "ms between tokens",
                     "tokens/s"], [[r["concurrency"], r["requests"], r["errors"], ms(r["ttft_p50"]), ms(r["ttft_p95"]),
                                    ms(r["tbt_mean"]), r["tokens_per_s"]]])
        print_table(["metric", "p50 ms", "p90 ms", "p99 ms"],
                    [[name.upper(), *(ms(r.get(f"{name}_p{q}_s")) for q in (50, 90, 99))]
                     for name in ("ttft", "itl", "tpot", "e2el")])
        if r.get("goodput") is not None:
            slo = ", ".join(f"{k.upper()} <= {1000 * v:g} ms" for k, v in r["slo_s"].items())
            print(f"goodput: {100 * r['goodput']:.0f}% of requests met {slo}")
    return 0


def _measure(args, slo) -> dict:
    """The load test's result for --url, --in-process or --serve (a server of our own, started and stopped)."""
    from lab.serving import loadtest
    from lab.serving.server import Spawned

    flags = [*(["--batching", args.batching] if args.batching else []),
             *(["--no-batching"] if args.no_batching else []), *(["--no-cache"] if args.no_cache else [])]
    if flags and not args.serve:
        raise CliError("--batching, --no-batching and --no-cache are the server's: they go with --serve")
    tokens = loadtest.lengths(args.max_tokens) if args.mixed else args.max_tokens
    if args.in_process:
        loadtest.check("http://127.0.0.1:1", args.concurrency, args.requests)
        return loadtest.in_process(load_model_arg(args.in_process), args.concurrency, args.requests, tokens,
                                   deadline=args.deadline)
    if args.serve:
        loadtest.check("http://127.0.0.1:1", args.concurrency, args.requests)
        load_model_arg(args.serve)  # a bad name: one line now, not a server's stderr later
        with Spawned(args.serve, "--max-concurrent", str(args.concurrency), *flags) as url:
            loadtest.run(url, 1, 1, 2, timeout=args.timeout)  # warmed up, as the page's servers are
            return loadtest.run(url, args.concurrency, args.requests, tokens, timeout=args.timeout,
                                deadline=args.deadline, rate=args.rate, slo=slo)
    return loadtest.run(args.url, args.concurrency, args.requests, tokens, api_key=args.api_key,
                        timeout=args.timeout, deadline=args.deadline, allow_remote=args.allow_remote, rate=args.rate,
                        slo=slo)
