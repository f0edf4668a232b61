"""Screenshots of the web page and the Gradio app, each answering one question.

Starts CodeWeaver in this process with the scripted model and fake sources (as the tests
build it: no model, index or network), mounts Gradio at /gradio, and drives Debian's
Chromium with Playwright: one question asked on the page (desktop, dark scheme, phone)
and in Gradio. The PNGs go to `docs/screenshots/`.

    .venv/bin/python scripts/screenshots.py            # write the PNGs
    .venv/bin/python scripts/screenshots.py --serve    # only serve the demo, until Ctrl+C

Needs `/usr/bin/chromium` (`apt-get install -y chromium`) and the gradio extra.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the fakes the tests use live in tests/

from tests.fakes import FakeSource, make_deps  # noqa: E402

from codeweaver.agent.state import SearchResult  # noqa: E402
from codeweaver.api.app import create_app  # noqa: E402
from codeweaver.ui.gradio_app import mount_gradio  # noqa: E402
from codeweaver_eval.serving import serve_in_thread  # noqa: E402

CHROMIUM = Path("/usr/bin/chromium")
OUT = ROOT / "docs" / "screenshots"
MAX_BYTES = 300_000

QUESTION = (
    "How do I read a large log file line by line without loading it all?\n\n"
    "```python\ndata = open('app.log').read()\nfor line in data.splitlines():\n"
    "    handle(line)\n```"
)
ANSWER = (
    "`read()` loads the whole file into memory. A file object is an iterator over its "
    "lines, so loop over it directly [1]; each line keeps its trailing newline [2].\n\n"
    "```python\nwith open('app.log', encoding='utf-8') as f:\n    for line in f:\n"
    "        handle(line.rstrip('\\n'))\n```\n\n"
    "The `with` block closes the file even when `handle` raises [1]."
)
GRADIO_QUESTION = (
    "How can I process a big log file one line at a time?\n\n"
    "```python\nlines = open('app.log').readlines()\n```"
)
EARLIER = ["What does the with statement do?", "How do I parse JSON lines in Python?"]
SCRIPT: dict[str, Any] = {
    "analyze_question": json.dumps(
        {
            "question_type": "new_topic",
            "should_cache": True,
            "canonical_question": "read a large file line by line in python",
        }
    ),
    "classify_intent": '{"intent": "learning"}',
    "generate_answer": ANSWER,
}
SNIPPET = (
    "Iterate over the file object to read a file line by line; each line keeps its "
    "newline character. The with statement closes the file when the block ends."
)


def _result(title: str, url: str, source: str, reference: str) -> SearchResult:
    return {
        "title": title,
        "url": url,
        "snippet": SNIPPET,
        "source": source,
        "score": 0.8,
        "reference": reference,
    }


# Two chunks of one page (same title), a page the answer does not cite, and a note from
# the knowledge base: the list shows the cited ones and collapses the rest.
DOCS = [
    _result(
        "io — Core tools for working with streams",
        "https://docs.python.org/3/library/io.html#io.IOBase",
        "installed_docs",
        "python:library/io#io.IOBase",
    ),
    _result(
        "io — Core tools for working with streams",
        "https://docs.python.org/3/library/io.html#io.IOBase.readline",
        "installed_docs",
        "python:library/io#io.IOBase.readline",
    ),
    _result(
        "The with statement",
        "https://docs.python.org/3/reference/compound_stmts.html#the-with-statement",
        "installed_docs",
        "python:reference/compound_stmts#with",
    ),
]
NOTES = [
    _result(
        "Team notes: log processing",
        "",
        "knowledge_base",
        "notes/logs.md:12",
    )
]


@contextmanager
def demo_server(data_dir: Path) -> Iterator[str]:
    """The API, the page and Gradio over the scripted model; yields the base URL."""
    deps, _ = make_deps(
        data_dir,
        SCRIPT,
        [FakeSource(results=DOCS, delay=0.2), FakeSource("knowledge_base", results=NOTES)],
    )
    with serve_in_thread(mount_gradio(create_app(deps.settings, deps=deps))) as url:
        for question in EARLIER:  # a conversation list with more than today's question
            httpx.post(url + "/api/chat", json={"message": question}, timeout=60).raise_for_status()
        yield url


def save_png(png: bytes, path: Path) -> int:
    """`png` written to `path` as a palette PNG when that keeps it small; its size."""
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    # A UI has few colours: 256 of them keep text crisp at a fraction of the size.
    small = image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    buffer = io.BytesIO()
    small.save(buffer, format="PNG", optimize=True)
    data = buffer.getvalue() if len(buffer.getvalue()) < len(png) else png
    path.write_bytes(data)
    return len(data)


def ask_on_page(page: Any, base: str) -> str:
    """Ask QUESTION on the page with its steps opened, the question in view; the session."""
    page.goto(base + "/")
    page.fill("#question", QUESTION)
    page.press("#question", "Enter")
    page.wait_for_selector('.answer[data-state="done"]', timeout=60_000)
    page.locator(".answer .steps-summary").last.click()
    page.wait_for_timeout(300)  # the session list refreshes after the answer
    page.locator("#conversation").evaluate("(box) => { box.scrollTop = 0; }")
    return str(page.url.rsplit("#", 1)[-1])


def reopen_on_page(page: Any, base: str, session: str, open_more: bool) -> None:
    """The same conversation reopened from its link (its uncited sources opened)."""
    page.goto(f"{base}/#{session}")
    page.wait_for_selector('.answer[data-state="done"]')
    if open_more:
        page.locator(".answer .sources-more-summary").last.click()
    page.wait_for_timeout(300)


def ask_in_gradio(page: Any, base: str) -> None:
    page.goto(base + "/gradio/")
    page.get_by_label("Your question").fill(GRADIO_QUESTION)
    page.get_by_role("button", name="Ask", exact=True).click()
    page.locator('[data-testid="bot"]').last.get_by_text("Also retrieved").wait_for(timeout=60_000)
    page.wait_for_timeout(800)  # the session list refreshes after the answer
    page.mouse.move(0, 0)  # no hover state on the button just clicked


def take(base: str, out: Path) -> list[tuple[Path, int]]:
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    saved: list[tuple[Path, int]] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"],
        )

        def shot(name: str, width: int, height: int, scheme: str, action: Any) -> None:
            context = browser.new_context(
                viewport={"width": width, "height": height},
                color_scheme=scheme,
                locale="en-US",
                timezone_id="UTC",
            )
            page = context.new_page()
            page.set_default_timeout(30_000)
            action(page)
            path = out / name
            saved.append((path, save_png(page.screenshot(), path)))
            context.close()

        try:
            session: list[str] = []
            shot(
                "page-desktop.png",
                1280,
                800,
                "light",
                lambda p: session.append(ask_on_page(p, base)),
            )
            shot(
                "page-dark.png",
                1280,
                800,
                "dark",
                lambda p: reopen_on_page(p, base, session[0], True),
            )
            shot(
                "page-phone.png",
                390,
                844,
                "light",
                lambda p: reopen_on_page(p, base, session[0], False),
            )
            shot("gradio-desktop.png", 1280, 800, "light", lambda p: ask_in_gradio(p, base))
        finally:
            browser.close()
    return saved


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help="where the PNGs go")
    parser.add_argument("--serve", action="store_true", help="only serve the demo")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    if not CHROMIUM.is_file():
        sys.stderr.write(f"{CHROMIUM} is missing: apt-get install -y chromium\n")
        return 2
    with tempfile.TemporaryDirectory() as tmp, demo_server(Path(tmp)) as base:
        if args.serve:
            sys.stdout.write(f"serving {base}/ and {base}/gradio/ (Ctrl+C stops)\n")
            sys.stdout.flush()
            try:
                while True:
                    time.sleep(1)
            except KeyboardInterrupt:
                return 0
        for path, size in take(base, args.out):
            sys.stdout.write(f"{path.relative_to(ROOT)}  {size // 1000} KB\n")
            if size > MAX_BYTES:
                sys.stderr.write(f"{path.name} is over {MAX_BYTES // 1000} KB\n")
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
