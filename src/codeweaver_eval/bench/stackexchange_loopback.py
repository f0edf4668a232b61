"""Serve StackEval posts as a local Stack Exchange API 2.3 until interrupted.

    .venv/bin/python -m codeweaver_eval.bench.stackexchange_loopback \\
        --corpus stack-eval.jsonl --port 8765
    CODEWEAVER_STACKEXCHANGE_URL=<printed URL> CODEWEAVER_SOURCES=... codeweaver ask ...

Each request is printed (path, `q`/`title`, ids returned) so the queries a run sends can
be read as it goes.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from codeweaver_eval.stackexchange.corpus import Corpus
from codeweaver_eval.stackexchange.limits import DEFAULT_QUOTA
from codeweaver_eval.stackexchange.loopback import StackExchangeLoopback, serve_loopback


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", type=Path, required=True, help="StackEval JSONL")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: any free port")
    parser.add_argument("--quota", type=int, default=DEFAULT_QUOTA, help="quota_max")
    args = parser.parse_args()
    corpus = Corpus.load(args.corpus)
    loopback = StackExchangeLoopback(corpus, quota_max=args.quota)
    with serve_loopback(loopback, host=args.host, port=args.port) as base_url:
        print(f"{len(corpus.posts)} posts served; quota {args.quota}")
        print(f"CODEWEAVER_STACKEXCHANGE_URL={base_url}", flush=True)
        shown = 0
        try:
            while True:
                for request in loopback.requests_since(shown):
                    text = request.params.get("q") or request.params.get("title") or ""
                    ids = ",".join(str(i) for i in request.question_ids[:5])
                    print(f"{request.status} {request.path} {text!r} -> [{ids}]", flush=True)
                    shown += 1
                time.sleep(0.5)
        except KeyboardInterrupt:
            print(f"\n{shown} requests served")


if __name__ == "__main__":
    main()
