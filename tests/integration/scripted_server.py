"""A CodeWeaver server with a scripted model, run as its own process by the tests.

`python -m tests.integration.scripted_server DATA_DIR` prints `READY <url>` once it
listens. A question containing SLOW makes the answer take a minute, so a test can kill
the process in the middle of it; the model writes `SLOW_MARK` in DATA_DIR when it starts
that answer. DATABASE_URL in the environment selects PostgreSQL.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from tests.fakes import FakeSource, make_deps
from tests.servers import running_app

ANSWER = "Iterate over the file object [1]."
SLOW_MARK = "slow-answer-started"


def answer(messages: list[Any]) -> str:
    if "SLOW" in str(messages[-1].content):
        (Path(sys.argv[1]) / SLOW_MARK).touch()  # the test kills the process from here on
        time.sleep(60)
    return ANSWER


def main() -> None:
    deps, _ = make_deps(
        Path(sys.argv[1]),
        {"classify_intent": '{"intent": "learning"}', "generate_answer": answer},
        sources=[FakeSource()],
    )
    deps.settings = deps.settings.model_copy(update={"cache_enabled": False})
    with running_app(deps) as url:
        print("READY", url, flush=True)
        while True:
            time.sleep(1)


if __name__ == "__main__":
    main()
