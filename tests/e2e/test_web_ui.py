"""The web page at `/` in a real headless Chromium against the in-process API.

The API wants a bearer token, so the page first asks for it. One scripted question is
then watched while it streams (steps, then the answer text growing token by token) and
checked when done: code block with a copy button, numbered sources, citation links,
feedback, hostile strings rendered as text. Then reload and reopen, a follow-up whose
citations stay within their own answer, the language toggle, a phone-width viewport, an
HTTP error and an `error` event with its retry button.

Needs Debian's Chromium at /usr/bin/chromium (`apt-get install chromium`); Playwright's
own browser download is not used.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGenerationChunk
from playwright.sync_api import ConsoleMessage, Dialog, Page, expect, sync_playwright
from pydantic import SecretStr

from codeweaver.api.app import create_app
from codeweaver.api.background import serve_in_thread
from codeweaver.llm.scripted import ScriptedChatModel
from tests.fakes import FakeSource, doc, make_deps

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOT = Path(__file__).resolve().parents[2] / "artifacts" / "web-ui.png"
TOKEN = "e2e-secret-token"

QUESTION = "How do I read a file line by line in Python?"
FOLLOW_UP = "How do I write rows to a CSV file in Python?"
HOSTILE_IMG = "<img src=x onerror=alert(1)>"
HOSTILE_SCRIPT = "<script>window.__xss = 1</script>"
HOSTILE_TITLE = "<img src=y onerror=alert(2)>"
LONG_LINE = "print('" + "a_very_long_identifier_" * 8 + "')"
CODE = f"with open(path) as f:\n    for line in f:\n        print(line)\n{LONG_LINE}"
ANSWER = (
    f"Use `open()` and iterate over the file object [1].\n\n```python\n{CODE}\n```\n\n"
    f"Each line keeps its newline [2]. Quoted from a page: {HOSTILE_IMG} and {HOSTILE_SCRIPT}"
)
SCRIPT: dict[str, Any] = {
    "analyze_question": json.dumps(
        {"question_type": "new_topic", "should_cache": True, "canonical_question": QUESTION}
    ),
    "classify_intent": '{"intent": "learning"}',
    "generate_answer": ANSWER,
}

# Records, from inside the page, what the answer looked like while it was streaming.
WATCH_JS = """() => {
  window.__watch = {streamTexts: [], tokenMutations: 0, stepsWhileStreaming: 0};
  const seen = new Set();
  new MutationObserver((records) => {
    const live = document.querySelector('.answer[data-state="streaming"]');
    if (!live) return;
    for (const r of records) {
      if (r.target.closest && r.target.closest('.answer-stream')) window.__watch.tokenMutations++;
    }
    const text = live.querySelector('.answer-stream').textContent;
    if (text && !seen.has(text)) { seen.add(text); window.__watch.streamTexts.push(text); }
    window.__watch.stepsWhileStreaming = live.querySelectorAll('.step').length;
  }).observe(document.getElementById('messages'),
             {childList: true, subtree: true, characterData: true});
}"""


class PacedChatModel(ScriptedChatModel):
    """The scripted model with a pause between tokens, as a real model streams, so the
    test can watch the answer grow instead of receiving it in one network chunk."""

    pause: float = 0.04

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for chunk in super()._stream(messages, stop, run_manager, **kwargs):
            yield chunk
            time.sleep(self.pause)  # runs in an executor thread, not on the event loop


def test_web_ui_streams_cites_and_stays_safe(tmp_path: Path) -> None:
    assert CHROMIUM.is_file(), (
        f"{CHROMIUM} is missing: install Debian's Chromium (apt-get install -y chromium)"
    )
    hostile = doc(2)
    hostile["title"] = HOSTILE_TITLE
    deps, _ = make_deps(
        tmp_path, script=SCRIPT, sources=[FakeSource(results=[doc(1), hostile], delay=0.3)]
    )
    deps.llm = PacedChatModel(script=SCRIPT)
    # The API asks for a bearer token, so the page's token form is exercised too.
    settings = deps.settings.model_copy(update={"api_token": SecretStr(TOKEN)})

    dialogs: list[str] = []
    page_errors: list[str] = []
    csp_violations: list[str] = []

    def on_dialog(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    def on_console(message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text:
            csp_violations.append(message.text)

    # Keep-alive comments every 0.1 s interleave with the events; the page must skip them.
    app = create_app(settings, deps=deps, ping_seconds=0.1)
    with serve_in_thread(app) as base_url, sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
            context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base_url)
            page = context.new_page()
            page.set_default_timeout(15_000)
            page.on("dialog", on_dialog)
            page.on("pageerror", lambda error: page_errors.append(str(error)))
            page.on("console", on_console)
            page.goto(base_url + "/")

            # 401 from the session list: the page asks for the token and keeps it.
            expect(page.locator("#token-form")).to_be_visible()
            page.fill("#token-input", TOKEN)
            page.click("#token-form button[type=submit]")
            expect(page.locator("#token-form")).to_be_hidden()
            expect(page.locator("#session-status")).to_have_text("No conversations yet.")
            stored = page.evaluate("localStorage.getItem('codeweaver.token')")
            assert stored == TOKEN

            ask_and_watch(page)
            check_finished_answer(page)
            check_no_injection(page, dialogs)
            save_screenshot(page, SCREENSHOT)
            session_id = page.url.rsplit("#session=", 1)[-1]
            assert len(session_id) == 32, page.url

            check_reload_and_reopen(page)
            check_follow_up_citations_are_scoped(page)
            check_language_toggle(page)
            check_phone_width(page)

            page.set_viewport_size({"width": 1280, "height": 900})
            check_http_error_is_shown(page)
            check_error_event_and_retry(page, base_url)

            assert dialogs == []
            assert page_errors == []
            assert csp_violations == []
        finally:
            browser.close()


def ask_and_watch(page: Page) -> None:
    page.evaluate(WATCH_JS)
    page.fill("#question", "first line")
    page.press("#question", "Shift+Enter")  # a new line, not a send
    assert page.input_value("#question") == "first line\n"
    expect(page.locator("#messages > *")).to_have_count(0)
    page.fill("#question", QUESTION)
    page.press("#question", "Enter")  # Enter sends
    expect(page.locator("#question")).to_have_value("")

    # While the run is in progress (the answer is still marked streaming): steps show up,
    # then the answer text appears and grows.
    streaming = page.locator('.answer[data-state="streaming"]')
    expect(streaming.locator(".step").first).to_be_visible()
    expect(streaming.locator(".step-think").first).to_be_visible()
    expect(streaming.locator(".step-act").first).to_be_visible()
    expect(streaming.locator(".step-observe").first).to_be_visible()
    page.wait_for_function(
        """() => document.querySelector('.answer[data-state="streaming"] .answer-stream')
                   ?.textContent.length > 0"""
    )
    first = page.locator('.answer[data-state="streaming"] .answer-stream').text_content()
    page.wait_for_function(
        """(first) => {
             const s = document.querySelector('.answer[data-state="streaming"] .answer-stream');
             return s !== null && s.textContent.length > first.length;
           }""",
        arg=first,
    )

    answer = page.locator(".answer").last
    expect(answer).to_have_attribute("data-state", "done", timeout=30_000)
    watch = page.evaluate("window.__watch")
    assert watch["tokenMutations"] >= 10, watch
    assert len(watch["streamTexts"]) >= 3, watch
    assert watch["stepsWhileStreaming"] >= 5, watch
    # Each snapshot extends the previous one: the text was appended, not replaced.
    for before, after in zip(watch["streamTexts"], watch["streamTexts"][1:], strict=False):
        assert after.startswith(before)
    # While streaming, the hostile strings were text, never markup.
    assert HOSTILE_IMG in watch["streamTexts"][-1]


def check_finished_answer(page: Page) -> None:
    answer = page.locator(".answer").last
    code = answer.locator(".code-block pre > code")
    expect(code).to_have_count(1)
    expect(code).to_contain_text("for line in f:")
    copy = answer.locator(".code-block .code-copy")
    expect(copy).to_be_visible()
    copy.click()
    expect(copy).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == code.text_content()

    sources = answer.locator(".source-list > li")
    expect(sources).to_have_count(2)
    expect(sources.nth(0).locator("a.source-title")).to_have_attribute(
        "href", "https://docs.example/1"
    )
    expect(sources.nth(0).locator("a.source-title")).to_have_attribute("rel", "noopener noreferrer")
    expect(sources.nth(1).locator(".source-title")).to_have_text(HOSTILE_TITLE)
    expect(answer.locator(".source-name").first).to_have_text("installed_docs")

    answer.locator('a.cite[data-n="2"]').click()
    second = answer.locator('.source-list > li[data-n="2"]')
    expect(second).to_have_class("source highlight")
    expect(second).to_have_attribute("aria-current", "true")
    expect(second).to_be_focused()
    expect(answer.locator('.source-list > li[data-n="1"]')).not_to_have_class("source highlight")
    assert "#source-" not in page.url  # the click was handled, not followed

    # Thumbs up reaches the API.
    answer.locator(".feedback-up").click()
    expect(answer.locator(".feedback-note")).to_have_text("Thanks for the feedback.")
    expect(answer.locator(".feedback-up")).to_have_attribute("aria-pressed", "true")

    # The list was refreshed after the answer and marks this conversation.
    item = page.locator("#session-list .session-open")
    expect(item).to_have_count(1)
    expect(item).to_contain_text(QUESTION)
    expect(item).to_have_attribute("aria-current", "true")


def check_no_injection(page: Page, dialogs: list[str]) -> None:
    answer = page.locator(".answer").last
    body = answer.locator(".answer-body")
    expect(body).to_contain_text(HOSTILE_IMG)
    expect(body).to_contain_text(HOSTILE_SCRIPT)
    assert answer.locator("img, script, iframe, object").count() == 0
    assert page.locator("#messages img, #messages script").count() == 0
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert dialogs == []


def check_reload_and_reopen(page: Page) -> None:
    page.reload()
    # The hash in the URL reopens the conversation, and the list shows it.
    expect(page.locator(".question-text")).to_have_text(QUESTION)
    expect(page.locator("#session-list .session-open")).to_contain_text(QUESTION)

    page.click("#new-session")
    expect(page.locator("#messages > *")).to_have_count(0)
    assert "#session=" not in page.url

    page.locator("#session-list .session-open").first.click()
    expect(page.locator(".question-text")).to_have_text(QUESTION)
    answer = page.locator(".answer").last
    expect(answer).to_have_attribute("data-state", "done")
    expect(answer.locator(".answer-body")).to_contain_text("Each line keeps its newline")
    expect(answer.locator(".source-list > li")).to_have_count(2)
    expect(answer.locator(".code-copy")).to_have_count(1)
    assert "#session=" in page.url
    assert page.locator("#messages img, #messages script").count() == 0


def check_follow_up_citations_are_scoped(page: Page) -> None:
    """Two answers on the page: a citation highlights a source of its own answer only."""
    page.fill("#question", FOLLOW_UP)
    page.click("#send")
    answers = page.locator(".answer")
    expect(answers).to_have_count(2)
    expect(answers.nth(1)).to_have_attribute("data-state", "done", timeout=30_000)
    expect(page.locator(".question-text")).to_have_text([QUESTION, FOLLOW_UP])
    # The follow-up continued the same conversation.
    expect(page.locator("#session-list .session-open")).to_have_count(1)
    expect(page.locator("#session-list .session-meta")).to_contain_text("4 messages")

    first, second = answers.nth(0), answers.nth(1)
    second.locator('a.cite[data-n="2"]').click()
    expect(second.locator(".source-list > li.highlight")).to_have_attribute("data-n", "2")
    expect(first.locator(".source-list > li.highlight")).to_have_count(0)
    first.locator('a.cite[data-n="1"]').click()
    expect(first.locator(".source-list > li.highlight")).to_have_attribute("data-n", "1")
    expect(first.locator('.source-list > li[data-n="1"]')).to_be_focused()
    expect(second.locator(".source-list > li.highlight")).to_have_attribute("data-n", "2")


def check_http_error_is_shown(page: Page) -> None:
    """An HTTP error before the stream (413: question too long) reaches the user."""
    page.click("#new-session")
    page.fill("#question", "x" * 8001)
    page.press("#question", "Enter")
    error = page.locator(".answer-error")
    expect(error).to_be_visible()
    expect(error).to_contain_text("(413)")
    expect(error).to_contain_text("the limit is 8,000")
    expect(error.locator(".retry")).to_have_count(0)  # resending the same would fail


def check_error_event_and_retry(page: Page, base_url: str) -> None:
    """An `error` event (faked once, CRLF line ends and a ping as the server writes them)
    shows its message as text and a retry button that asks again for real."""
    fake = (
        ": ping\r\n\r\n"
        'id: 1\r\nevent: queue\r\ndata: {"position": 2}\r\n\r\n'
        'id: 2\r\nevent: error\r\ndata: {"message": "<b>overloaded</b>", "retryable": true}'
        "\r\n\r\n"
    )
    page.route(
        base_url + "/api/chat/stream",
        lambda route: route.fulfill(
            status=200, headers={"Content-Type": "text/event-stream"}, body=fake
        ),
        times=1,
    )
    page.click("#new-session")
    page.fill("#question", QUESTION)
    page.press("#question", "Enter")
    error = page.locator(".answer-error")
    expect(error.locator(".error-text")).to_have_text("<b>overloaded</b>")
    assert error.locator("b").count() == 0
    error.locator(".retry").click()
    # The failed attempt is replaced by the real answer (from the answer cache now).
    answer = page.locator(".answer")
    expect(answer).to_have_count(1)
    expect(answer).to_have_attribute("data-state", "done", timeout=30_000)
    expect(page.locator(".question-text")).to_have_text([QUESTION])
    expect(answer.locator(".source-list > li")).to_have_count(2)


def check_language_toggle(page: Page) -> None:
    page.click("#lang-toggle")
    expect(page.locator("#send")).to_have_text("보내기")
    expect(page.locator("#new-session")).to_have_text("새 대화")
    expect(page.locator(".answer .sources-title").first).to_have_text("출처")
    assert page.evaluate("document.documentElement.lang") == "ko"
    page.click("#lang-toggle")
    expect(page.locator("#send")).to_have_text("Send")


def check_phone_width(page: Page) -> None:
    page.set_viewport_size({"width": 375, "height": 800})
    sidebar = page.locator("#sidebar")
    expect(sidebar).to_be_hidden()
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    page.click("#sidebar-toggle")
    expect(sidebar).to_be_visible()
    expect(page.locator("#sidebar-toggle")).to_have_attribute("aria-expanded", "true")
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    page.click("#sidebar-toggle")
    expect(sidebar).to_be_hidden()
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    # The long code line scrolls inside its block instead of widening the page.
    assert page.evaluate("document.body.scrollWidth") <= 375
    save_screenshot(page, SCREENSHOT.with_name("web-ui-375.png"))


def save_screenshot(page: Page, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    page.screenshot(path=str(path))
    assert path.is_file()
    assert path.stat().st_size > 0
