"""The web page at `/` in a real headless Chromium against the in-process API.

The API wants a bearer token, so the page first asks for it. One scripted question is
then watched while it streams (progress lines in the status line, then the answer text
growing token by token) and checked when done: the steps in words, code block with a copy
button, cited sources listed and the uncited one collapsed, two chunks of one page told
apart, citation links, feedback, hostile strings rendered as text, and axe-core finding
nothing in the light and the dark scheme. Then reload and reopen, a follow-up pasted with
a code fence, citations that stay within their own answer, the language toggle, a
phone-width viewport, an HTTP error, an `error` event with its retry button, and deleting a
conversation.

Needs Debian's Chromium at /usr/bin/chromium (`apt-get install chromium`); Playwright's
own browser download is not used.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGenerationChunk
from playwright.sync_api import ConsoleMessage, Dialog, Page, expect, sync_playwright
from pydantic import SecretStr

from codeweaver.agent.state import SearchResult
from codeweaver.agent.user_text import say
from codeweaver.api.app import create_app
from codeweaver.llm.scripted import ScriptedChatModel
from tests.e2e.axe import axe_violations, describe
from tests.fakes import FakeSource, doc, make_deps
from tests.servers import running_app

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOT = Path(__file__).resolve().parents[2] / "artifacts" / "web-ui.png"
TOKEN = "e2e-secret-token"

QUESTION = "How do I read a file line by line in Python?"
FOLLOW_UP = (
    "How do I write rows to a CSV file in Python? I tried <img src=x onerror=alert(3)>:\n\n"
    "```python\nwriter.writerow(row)  # *not* a list?\n```\n\nAnd what does `newline=''` do?"
)
HOSTILE_IMG = "<img src=x onerror=alert(1)>"
HOSTILE_SCRIPT = "<script>window.__xss = 1</script>"
# A title with a terminal colour, a terminal-title escape, a bell, markup and a right-to-left
# override: the server drops the controls, the page shows the rest as text.
HOSTILE_TITLE = "\x1b[31mRed\x1b[0m \x1b]0;pwned\x07<img src=y onerror=alert(2)> \u202etxt.exe\x07"
SHOWN_TITLE = "Red <img src=y onerror=alert(2)> txt.exe"
LONG_LINE = "print('" + "a_very_long_identifier_" * 8 + "')"
CODE = f"with open(path) as f:\n    for line in f:\n        print(line)\n{LONG_LINE}"
ANSWER = (
    f"Use `open()` and iterate over the file object [1].\n\n```python\n{CODE}\n```\n\n"
    f"Each line keeps its newline [2]. Iterate over the lines of a file with a for loop [3]. "
    f"Quoted from a page: {HOSTILE_IMG} and {HOSTILE_SCRIPT}"
)
# The last progress line: the three cited claims were checked against their sources.
CHECKED = say("progress_checked", "en", supported=3, claims=3)
SCRIPT: dict[str, Any] = {
    "analyze_question": json.dumps(
        {"question_type": "new_topic", "should_cache": True, "canonical_question": QUESTION}
    ),
    "classify_intent": '{"intent": "learning"}',
    "generate_answer": ANSWER,
}

# Records, from inside the page, what the answer looked like while it was streaming.
WATCH_JS = """() => {
  window.__watch = {streamTexts: [], tokenMutations: 0, linesWhileStreaming: 0,
                    statusTexts: [], rawStepsShown: 0};
  const seen = new Set();
  new MutationObserver((records) => {
    const live = document.querySelector('.answer[data-state="streaming"]');
    if (!live) return;
    for (const r of records) {
      if (r.target.closest && r.target.closest('.answer-stream')) window.__watch.tokenMutations++;
    }
    const text = live.querySelector('.answer-stream').textContent;
    if (text && !seen.has(text)) { seen.add(text); window.__watch.streamTexts.push(text); }
    const status = live.querySelector('.answer-status').textContent;
    const said = window.__watch.statusTexts;
    if (status && said[said.length - 1] !== status) said.push(status);
    window.__watch.linesWhileStreaming = live.querySelectorAll('.progress-line').length;
    const shown = [...live.querySelectorAll('.step')].filter((s) => s.checkVisibility());
    window.__watch.rawStepsShown = Math.max(window.__watch.rawStepsShown, shown.length);
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


def search_results() -> list[SearchResult]:
    """Two chunks of one page (same title), a hostile title, and a page nobody cites."""
    second_chunk = doc(1, score=0.85)
    second_chunk["url"] = "https://docs.example/1#line-40"
    second_chunk["reference"] = "python:doc1@3.11#L40"
    hostile = doc(2, score=0.88)
    hostile["title"] = HOSTILE_TITLE
    uncited = doc(3, score=0.8)
    uncited["title"] = "doc 3, never cited"
    return [doc(1, score=0.9), hostile, second_chunk, uncited]


def test_web_ui_streams_cites_and_stays_safe(tmp_path: Path) -> None:
    assert CHROMIUM.is_file(), (
        f"{CHROMIUM} is missing: install Debian's Chromium (apt-get install -y chromium)"
    )
    deps, _ = make_deps(
        tmp_path, script=SCRIPT, sources=[FakeSource(results=search_results(), delay=0.3)]
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
    with running_app(app) as base_url, sync_playwright() as p:
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
            check_accessibility(page)
            save_screenshot(page, SCREENSHOT)
            session_id = page.url.rsplit("#session=", 1)[-1]
            assert len(session_id) == 32, page.url

            check_reload_and_reopen(page)
            check_follow_up_with_code_and_scoped_citations(page, dialogs)
            check_language_toggle(page)
            check_phone_width(page)

            page.set_viewport_size({"width": 1280, "height": 900})
            check_http_error_is_shown(page)
            check_error_event_and_retry(page, base_url)
            check_delete_asks_first(page, base_url, session_id)

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

    # While the run is in progress (the answer is still marked streaming): the status line
    # says what is happening in words, then the answer text appears and grows.
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
    assert watch["linesWhileStreaming"] >= 4, watch
    # The status line went through the run in words: the progress lines as they came
    # (the last of which the finished answer keeps), never node names; and the raw steps
    # were never on screen.
    statuses = watch["statusTexts"]
    assert statuses[0] == "Starting…", statuses
    shown = [s for s in statuses[1:] if s != "Writing the answer…"]  # tokens before a line
    final = answer.locator(".progress-line").all_text_contents()
    remaining = iter(final)
    assert all(line in remaining for line in shown), (statuses, final)  # in order
    assert shown[0] == final[0] == say("progress_understanding", "en"), statuses
    assert shown[-1] == final[-1] == CHECKED, statuses
    assert len(shown) >= 3, statuses
    assert not any("_" in s for s in statuses), statuses  # no `search_official_docs`
    assert watch["rawStepsShown"] == 0, watch
    # Each snapshot extends the previous one: the text was appended, not replaced.
    for before, after in zip(watch["streamTexts"], watch["streamTexts"][1:], strict=False):
        assert after.startswith(before)
    # While streaming, the hostile strings were text, never markup.
    assert HOSTILE_IMG in watch["streamTexts"][-1]


def check_finished_answer(page: Page) -> None:
    answer = page.locator(".answer").last
    expect(answer.locator(".answer-status")).to_have_text("")

    # The steps in words, closed once done; the raw steps only inside them, closed too.
    steps = answer.locator("details.steps")
    expect(steps).not_to_have_attribute("open", "")
    lines = answer.locator(".progress-line")
    expect(lines.first).to_have_text(say("progress_understanding", "en"))
    expect(lines.nth(1)).to_have_text(say("progress_searching", "en", names="installed docs"))
    expect(lines.filter(has_text="installed docs 4")).to_have_count(1)  # what was found
    expect(lines.last).to_have_text(CHECKED)
    assert 4 <= lines.count() <= 12
    expect(answer.locator(".steps-summary")).to_have_text(f"Steps ({lines.count()})")
    expect(answer.locator(".step").first).to_be_hidden()
    answer.locator(".steps-summary").click()
    expect(lines.first).to_be_visible()
    expect(answer.locator(".step").first).to_be_hidden()
    answer.locator(".raw-summary").click()
    expect(answer.locator(".step-act").first).to_be_visible()
    expect(answer.locator(".raw-summary")).to_contain_text("Raw steps, for debugging")
    answer.locator(".steps-summary").click()  # closed again for what follows

    code = answer.locator(".code-block pre > code")
    expect(code).to_have_count(1)
    expect(code).to_contain_text("for line in f:")
    copy = answer.locator(".code-block .code-copy")
    expect(copy).to_be_visible()
    copy.click()
    expect(copy).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == code.text_content()

    # The three cited sources are listed; the fourth is collapsed under a summary.
    cited = answer.locator(".sources > .source-list > li")
    expect(cited).to_have_count(3)
    expect(cited.locator(".source-n")).to_have_text(["[1]", "[2]", "[3]"])
    more = answer.locator("details.sources-more")
    expect(more.locator("summary")).to_have_text("1 more retrieved, not cited")
    expect(more.locator("li .source-title")).to_have_text("doc 3, never cited")
    expect(more.locator("li")).to_be_hidden()
    more.locator("summary").click()
    expect(more.locator("li")).to_be_visible()
    expect(more.locator("li .source-n")).to_have_text("[4]")

    first = answer.locator('.source-list > li[data-n="1"]')
    expect(first.locator("a.source-title")).to_have_attribute("href", "https://docs.example/1")
    expect(first.locator("a.source-title")).to_have_attribute("rel", "noopener noreferrer")
    expect(first.locator(".source-name")).to_have_text("installed docs")
    # The two chunks of "doc 1" are both there, told apart by where each points.
    twins = answer.locator(".source-list > li").filter(has=page.get_by_text("doc 1", exact=True))
    expect(twins).to_have_count(2)
    expect(twins.locator(".source-ref")).to_have_text(["python:doc1@3.11", "python:doc1@3.11#L40"])
    expect(answer.locator('.source-list > li[data-n="2"] .source-ref')).to_have_count(0)
    expect(answer.locator('.source-list > li[data-n="2"] .source-title')).to_have_text(SHOWN_TITLE)

    answer.locator('a.cite[data-n="2"]').click()
    second = answer.locator('.source-list > li[data-n="2"]')
    expect(second).to_have_class("source highlight")
    expect(second).to_have_attribute("aria-current", "true")
    expect(second).to_be_focused()
    expect(first).not_to_have_class("source highlight")
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
    # No control or direction character reached the page, and titles are isolated.
    text = page.evaluate("document.body.textContent")
    assert not any(c in text for c in "\x1b\x07\u202e"), repr(text)
    title = answer.locator('.source-list > li[data-n="2"] .source-title')
    assert title.evaluate("e => getComputedStyle(e).unicodeBidi") == "isolate"
    session_title = page.locator("#session-list .session-title").first
    assert session_title.evaluate("e => getComputedStyle(e).unicodeBidi") == "isolate"
    assert dialogs == []


def check_accessibility(page: Page) -> None:
    """axe-core finds nothing on the answered page, in either colour scheme."""
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        # Colours fade between schemes (the highlight's transition): judge the end state.
        page.wait_for_function("() => document.getAnimations().length === 0")
        violations = axe_violations(page)
        assert violations == [], f"{scheme}:\n{describe(violations)}"
    page.emulate_media(color_scheme="light")


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
    expect(answer.locator(".sources > .source-list > li")).to_have_count(3)
    expect(answer.locator(".sources-more li")).to_have_count(1)
    expect(answer.locator(".code-copy")).to_have_count(1)
    assert "#session=" in page.url
    assert page.locator("#messages img, #messages script").count() == 0


def check_follow_up_with_code_and_scoped_citations(page: Page, dialogs: list[str]) -> None:
    """A pasted code fence shows as code (as text, markup and all); two answers on the page:
    a citation highlights a source of its own answer only."""
    page.fill("#question", FOLLOW_UP)
    page.click("#send")
    answers = page.locator(".answer")
    expect(answers).to_have_count(2)
    expect(answers.nth(1)).to_have_attribute("data-state", "done", timeout=30_000)

    asked = page.locator(".question-text").nth(1)
    expect(asked.locator("pre > code")).to_have_text("writer.writerow(row)  # *not* a list?")
    expect(asked.locator("pre > code")).to_have_class("language-python")
    expect(asked.locator("p > code")).to_have_text("newline=''")
    expect(asked.locator("p").first).to_have_text(
        "How do I write rows to a CSV file in Python? I tried <img src=x onerror=alert(3)>:"
    )
    assert "```" not in (asked.text_content() or "")
    assert page.locator("#messages img").count() == 0 and dialogs == []
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
    expect(answer.locator(".source-list > li")).to_have_count(4)
    cached = say("progress_cache_hit", "en")
    expect(answer.locator(".progress-line").filter(has_text=cached)).to_have_count(1)


def check_delete_asks_first(page: Page, base_url: str, session_id: str) -> None:
    """Delete is a small icon button; it asks first, and nothing is lost by a double
    click, Enter twice or Escape: only the explicit Delete deletes."""

    def stored() -> list[str]:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        return [s["id"] for s in httpx.get(base_url + "/api/sessions", headers=headers).json()]

    item = page.locator(f'#session-list li[data-session-id="{session_id}"]')
    trash = item.locator(".session-delete")
    expect(trash).to_have_attribute("aria-label", f"Delete the conversation “{QUESTION}”")
    # The list may still be laying out after the viewport change: measure once it shows.
    expect(trash).to_be_visible()
    box = trash.bounding_box()
    assert box is not None and box["height"] <= 40 and box["width"] <= 40, box
    before = stored()
    assert session_id in before

    trash.dblclick()
    confirm = item.locator(".session-confirm")
    expect(confirm).to_be_visible()
    expect(confirm).to_contain_text("Delete this conversation?")
    expect(confirm.locator(".session-title")).to_have_text(QUESTION)
    expect(confirm.locator(".session-confirm-no")).to_be_focused()
    page.keyboard.press("Enter")  # on Cancel
    expect(confirm).to_have_count(0)
    expect(trash).to_be_focused()
    trash.click()
    expect(confirm).to_be_visible()
    page.keyboard.press("Escape")
    expect(confirm).to_have_count(0)
    assert stored() == before

    trash.click()
    confirm.locator(".session-confirm-yes").click()
    expect(item).to_have_count(0)
    assert stored() == [s for s in before if s != session_id]


def check_language_toggle(page: Page) -> None:
    page.click("#lang-toggle")
    expect(page.locator("#send")).to_have_text("보내기")
    expect(page.locator("#new-session")).to_have_text("새 대화")
    expect(page.locator(".answer .sources-title").first).to_have_text("출처")
    assert page.evaluate("document.documentElement.lang") == "ko"
    page.click("#lang-toggle")
    expect(page.locator("#send")).to_have_text("Send")


def check_phone_width(page: Page) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    sidebar = page.locator("#sidebar")
    expect(sidebar).to_be_hidden()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    # The question box's placeholder fits on its first line.
    spare = page.locator("#question").evaluate(
        """(box) => {
             const style = getComputedStyle(box);
             const ctx = document.createElement('canvas').getContext('2d');
             ctx.font = style.font;
             const room = box.clientWidth - parseFloat(style.paddingLeft)
                          - parseFloat(style.paddingRight);
             return room - ctx.measureText(box.placeholder).width;
           }"""
    )
    assert spare >= 0, spare
    page.click("#sidebar-toggle")
    expect(sidebar).to_be_visible()
    expect(page.locator("#sidebar-toggle")).to_have_attribute("aria-expanded", "true")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.click("#sidebar-toggle")
    expect(sidebar).to_be_hidden()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    # The long code line scrolls inside its block instead of widening the page.
    assert page.evaluate("document.body.scrollWidth") <= 390
    save_screenshot(page, SCREENSHOT.with_name("web-ui-390.png"))


def save_screenshot(page: Page, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    page.screenshot(path=str(path))
    assert path.is_file()
    assert path.stat().st_size > 0
