"""The Gradio app at `/gradio/` in a real headless Chromium against the in-process service.

One conversation exists before the page opens (asked through the API): the list shows it
on load, with the time of its last turn in the browser's time zone. One question is then
asked in the page and checked when done: the steps panel shows the progress lines in a
panel of fixed height, each citation links to its source's entry (two chunks of one page
told apart), a hostile title stays text, a thumbs up reaches the service, and axe-core
finds nothing, in the light and the dark theme. Both conversations then reopen from the
list, and a thumbs down on the earlier answer drops it from the answer cache.

Needs Debian's Chromium at /usr/bin/chromium (`apt-get install chromium`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest
from playwright.sync_api import Browser, Dialog, Page, expect, sync_playwright

from codeweaver.agent.deps import Deps
from codeweaver.agent.state import SearchResult
from codeweaver.agent.user_text import say
from codeweaver.api.app import create_app
from codeweaver.api.service import ChatService
from codeweaver.memory.sessions import DEFAULT_OWNER
from codeweaver.ui.gradio_app import mount_gradio
from tests.e2e.axe import axe_violations, describe
from tests.fakes import FakeSource, doc, make_deps
from tests.servers import running_app

# Gradio's queue statistics use pandas options that pandas 3 deprecates (not ours to fix).
pytestmark = pytest.mark.filterwarnings("ignore::Warning:gradio.queueing")

CHROMIUM = Path("/usr/bin/chromium")
ZONE = "Asia/Seoul"
EARLIER = "What does the with statement do in Python?"
QUESTION = (
    "How do I read a large file line by line?\n\n```python\ndata = open('app.log').read()\n```"
)
HOSTILE_TITLE = "<img src=x onerror=alert(1)> notes"
ANSWER = (
    "Iterate over the file object [1].\n\n```python\nwith open(path) as f:\n"
    "    for line in f:\n        print(line)\n```\n\n"
    "Each line keeps its newline [2]. Iterate over the lines of a file with a for loop [3]."
)


SCRIPT: dict[str, Any] = {"classify_intent": '{"intent": "learning"}', "generate_answer": ANSWER}


def search_results() -> list[SearchResult]:
    """Two chunks of one page (same title), a hostile title, and a page nobody cites."""
    second_chunk = doc(1, score=0.85)
    second_chunk["url"] = "https://docs.example/1#line-40"
    second_chunk["reference"] = "python:doc1@3.11#L40"
    hostile = doc(2, score=0.88)
    hostile["title"] = HOSTILE_TITLE
    return [doc(1, score=0.9), hostile, second_chunk, doc(3, score=0.8)]


Rating = tuple[str, int, str, str, bool]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Deps, list[Rating]]]:
    """The API with Gradio mounted, one conversation already asked; the ratings the
    service received are recorded."""
    ratings: list[Rating] = []
    feedback = ChatService.feedback

    async def recorded(
        self: ChatService, session_id: str, turn: int, rating: str, owner: str = DEFAULT_OWNER
    ) -> bool:
        removed = await feedback(self, session_id, turn, rating, owner)
        ratings.append((session_id, turn, rating, owner, removed))
        return removed

    with pytest.MonkeyPatch.context() as patch:
        tmp = tmp_path_factory.mktemp("gradio-ui")
        for name, value in {
            "GRADIO_ANALYTICS_ENABLED": "False",
            "GRADIO_TEMP_DIR": str(tmp / "gradio"),
            "HF_HUB_OFFLINE": "1",
            "HF_HUB_DISABLE_TELEMETRY": "1",
        }.items():
            patch.setenv(name, value)
        patch.setattr(ChatService, "feedback", recorded)
        deps, _ = make_deps(tmp, SCRIPT, [FakeSource(results=search_results(), delay=0.2)])
        app = mount_gradio(create_app(deps.settings, deps=deps))
        with running_app(app) as base:
            earlier = httpx.post(base + "/api/chat", json={"message": EARLIER}, timeout=60)
            assert earlier.status_code == 200, earlier.text
            yield base, deps, ratings


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert CHROMIUM.is_file(), (
        f"{CHROMIUM} is missing: install Debian's Chromium (apt-get install -y chromium)"
    )
    with sync_playwright() as p:
        launched = p.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            yield launched
        finally:
            launched.close()


def wait_until(check: Callable[[], bool], seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def label_of(session: dict[str, Any], title: str) -> str:
    """The list's label of `session`: its question and its last time in ZONE."""
    when = datetime.fromtimestamp(session["updated"], ZoneInfo(ZONE)).strftime("%Y-%m-%d %H:%M")
    return f"{title} · {when}"


def test_gradio_lists_links_rates_and_passes_axe(
    site: tuple[str, Deps, list[Rating]], browser: Browser
) -> None:
    base, _, ratings = site
    dialogs: list[str] = []

    def on_dialog(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    context = browser.new_context(
        viewport={"width": 1280, "height": 900}, locale="en-US", timezone_id=ZONE
    )
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.on("dialog", on_dialog)
    page.goto(base + "/gradio/")

    # A title for the page, and the conversation list filled on load: question and time.
    expect(page.locator("h1")).to_have_text("CodeWeaver")
    (earlier,) = httpx.get(base + "/api/sessions").json()
    sessions = page.locator("#cw-sessions")
    expect(sessions).to_contain_text("Conversations (1)")
    expect(sessions.get_by_role("radio")).to_have_count(1)
    expect(sessions.get_by_role("radio", name=label_of(earlier, EARLIER))).to_have_count(1)

    page.get_by_label("Your question").fill(QUESTION)
    page.get_by_role("button", name="Ask", exact=True).click()
    answer = page.locator('[data-testid="bot"]').last
    expect(answer).to_contain_text("Also retrieved, not cited: [4] doc 3", timeout=30_000)
    check_steps_panel(page)
    check_citations_and_sources(page, answer, dialogs)

    # The list gained the new conversation, marked as the open one.
    listed = httpx.get(base + "/api/sessions").json()
    asked = next(s for s in listed if s["id"] != earlier["id"])
    expect(sessions).to_contain_text("Conversations (2)")
    mine = sessions.get_by_role(
        "radio", name=label_of(asked, "How do I read a large file line by line?")
    )
    expect(mine).to_be_checked()

    # A thumbs up reaches the service for this answer's turn.
    page.get_by_role("button", name="Like", exact=True).last.click()
    wait_until(lambda: len(ratings) == 1)
    assert ratings == [(asked["id"], 1, "up", DEFAULT_OWNER, False)]

    violations = axe_violations(page)
    assert violations == [], "light:\n" + describe(violations)

    # Dark theme: a fresh page reopens the conversation from the list.
    page.goto(base + "/gradio/?__theme=dark")
    page.locator("#cw-sessions").get_by_role("radio").first.check()
    reopened = page.locator('[data-testid="bot"]').last
    expect(reopened).to_contain_text("Iterate over the file object")
    expect(reopened.locator('a[href="#cw-1-source-1"]')).to_have_count(1)
    expect(page.locator('[data-testid="user"]').first.locator("pre code")).to_contain_text(
        "data = open('app.log').read()"
    )
    violations = axe_violations(page)
    assert violations == [], "dark:\n" + describe(violations)

    # The earlier conversation opens from the list too; a thumbs down on its answer drops
    # it from the answer cache (a question with code in it is never cached).
    page.locator("#cw-sessions").get_by_role("radio").last.check()
    expect(page.locator('[data-testid="user"]').first).to_have_text(EARLIER)
    page.get_by_role("button", name="Dislike").last.click()
    wait_until(lambda: len(ratings) == 2)
    assert ratings[1] == (earlier["id"], 1, "down", DEFAULT_OWNER, True)
    assert dialogs == []
    context.close()


def check_steps_panel(page: Page) -> None:
    """The progress lines, in words, in a panel that scrolls instead of growing."""
    steps = page.locator("#cw-steps")
    expect(steps.locator("li").first).to_have_text(say("progress_understanding", "en"))
    expect(steps.locator("li").last).to_contain_text("Checked the citations")
    assert 4 <= steps.locator("li").count() <= 12
    text = steps.text_content() or ""
    assert "search_" not in text and "observe" not in text
    box = steps.bounding_box()
    assert box is not None and box["height"] <= 260, box
    scrolls = steps.evaluate(
        """(panel) => [panel, ...panel.querySelectorAll('*')].some((e) => {
             const style = getComputedStyle(e);
             return ['auto', 'scroll'].includes(style.overflowY) && style.maxHeight !== 'none';
           })"""
    )
    assert scrolls


def check_citations_and_sources(page: Page, answer: Any, dialogs: list[str]) -> None:
    """Each `[n]` links to entry n under the answer; twins show their reference."""
    cite = answer.locator('a[href="#cw-1-source-2"]')
    expect(cite).to_have_text("[2]")
    expect(answer.locator('[id="cw-1-source-2"]')).to_have_count(1)
    expect(answer.locator('a[href="#cw-1-source-1"]').first).to_have_attribute("title", "doc 1")
    cite.click()
    assert page.url.endswith("#cw-1-source-2"), page.url
    expect(answer).to_contain_text("[1] doc 1 — installed docs (python:doc1@3.11)")
    expect(answer).to_contain_text("[3] doc 1 — installed docs (python:doc1@3.11#L40)")
    expect(answer.locator('a[href="https://docs.example/1#line-40"]')).to_have_text("doc 1")
    # The hostile title is text: shown as written, no image, no script ran.
    expect(answer).to_contain_text(f"[2] {HOSTILE_TITLE} — installed docs")
    assert answer.locator("img").count() == 0 and dialogs == []
