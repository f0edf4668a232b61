"""The Gradio app: the web page's chat, steps in words and sessions over the same `ChatService`.

`codeweaver serve --gradio` mounts it at `/gradio`. Answers, source titles and progress lines
are untrusted (web and model text): they reach Gradio's sanitised Markdown with raw HTML and
images made inert, custom tags stripped and titles escaped. A citation `[n]` links to its
entry in the source list under the answer; thumbs up and down rate the answer as the page's
do. Gradio is imported only in this module and `page_style`, each time it is needed.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from codeweaver.agent.rules.input_check import InvalidQuestionError
from codeweaver.api.auth import DEFAULT_USER, TokenTable
from codeweaver.api.conversations import (
    SessionNotFoundError,
    StoreUnavailableError,
    TurnNotFoundError,
)
from codeweaver.api.queue import QueueFullError
from codeweaver.api.service import ChatService
from codeweaver.presentation.progress import Progress
from codeweaver.ui.chat_markdown import (
    answer_markdown,
    escape_markdown,
    history_messages,
    inert_markdown,
    progress_markdown,
    session_label,
    status_markdown,
    time_zone,
)
from codeweaver.ui.page_style import CSS, theme
from codeweaver.words.language import detect_language

if TYPE_CHECKING:
    from fastapi import FastAPI

MISSING = "the Gradio app needs the gradio extra: pip install 'codeweaver[gradio]'"
# Reads the browser's time zone once, on load, so session times are the reader's own.
_TIME_ZONE_JS = "() => Intl.DateTimeFormat().resolvedOptions().timeZone"

Outputs = tuple[list[Any], str, str | None, str, dict[int, int]]


class GradioMissingError(RuntimeError):
    """`gradio` is not installed."""


async def _service(app: FastAPI) -> ChatService:
    """The service, waiting for it while it starts."""
    starting = getattr(app.state, "starting", None)
    if starting is None:
        import gradio as gr

        raise gr.Error("the service is not running yet; try again in a moment")
    service: ChatService = await starting.service()
    return service


def _password(tokens: TokenTable) -> Callable[[str, str], bool]:
    """A login check: the user's name and their API token as the password
    (`default` for CODEWEAVER_API_TOKEN)."""
    return lambda user, password: tokens.user_for(password) == user


def _owner(request: Any) -> str:
    """The logged-in user; everyone is the default user when no token is configured."""
    name = getattr(request, "username", None)
    return str(name) if name else DEFAULT_USER


def mount_gradio(
    app: FastAPI, path: str = "/gradio", *, tokens: TokenTable | None = None
) -> FastAPI:
    """Mount the Gradio chat on `app` at `path`; with tokens (by default the API's),
    behind a login."""
    try:
        import gradio as gr
    except ImportError:
        raise GradioMissingError(MISSING) from None

    if tokens is None:
        tokens = getattr(app.state, "tokens", None) or TokenTable.from_pairs({})

    async def ask(
        message: str,
        history: list[Any],
        session: str | None,
        mode: str = "pipeline",
        turns: dict[int, int] | None = None,
        request: gr.Request | None = None,
    ) -> AsyncIterator[Outputs]:
        """Stream one answer: the latest progress line, then tokens, then the answer with
        its sources; the progress lines beside."""
        turns = dict(turns or {})
        service = await _service(app)
        owner = _owner(request)
        try:
            # The question is checked before the session is looked up (`admit`).
            question, ticket = await service.admit(message, session, owner)
        except (InvalidQuestionError, QueueFullError, StoreUnavailableError) as exc:
            gr.Warning(str(exc))
            yield history, "", session, message, turns
            return
        except SessionNotFoundError:
            gr.Warning("no such session; start a new one")
            yield history, "", session, message, turns
            return
        chat: list[Any] = [*history, {"role": "user", "content": inert_markdown(question)}]
        chat.append({"role": "assistant", "content": "…"})
        lines: list[dict[str, Any]] = []
        text = ""
        language = detect_language(question)
        async with contextlib.aclosing(
            service.stream(question, ticket, session, mode, owner)
        ) as events:
            async for event in events:
                data = event.data
                if event.kind == "token":
                    text += str(data.get("text", ""))
                    chat[-1] = {"role": "assistant", "content": inert_markdown(text)}
                elif event.kind == "queue":
                    waiting = Progress(language).queue(int(data["position"])).to_dict()
                    chat[-1] = {"role": "assistant", "content": status_markdown(waiting)}
                elif event.kind == "progress":
                    lines.append(data)
                    if not text:  # until the answer streams, its bubble says what is going on
                        chat[-1] = {"role": "assistant", "content": status_markdown(data)}
                elif event.kind == "done":
                    session = str(data["session_id"])
                    turn = int(data.get("turn") or 0)
                    content = answer_markdown(
                        str(data["answer"]), data.get("sources", []), language, turn
                    )
                    chat[-1] = {"role": "assistant", "content": content}
                    if turn:
                        turns[len(chat) - 1] = turn
                elif event.kind == "error":
                    problem = str(data.get("message", "the answer failed"))
                    gr.Warning(problem)
                    shown = f"**Error:** {escape_markdown(problem)}"
                    chat[-1] = {"role": "assistant", "content": shown}
                else:
                    continue  # raw steps: the API keeps them for debugging
                yield chat, progress_markdown(lines), session, "", turns

    async def list_sessions(
        current: str | None, zone: str = "", request: gr.Request | None = None
    ) -> Any:
        """The conversations, most recently updated first: first question and last time."""
        infos = await (await _service(app)).sessions(100, _owner(request))
        where = time_zone(zone)
        choices = [(session_label(info, where), info.id) for info in infos]
        label = f"Conversations ({len(choices)})" if choices else "Conversations (none yet)"
        return gr.Radio(choices=choices, value=current, label=label)

    async def first_list(zone: str, request: gr.Request | None = None) -> tuple[Any, str]:
        """On page load: the conversation list, and the browser's time zone kept for later."""
        return await list_sessions(None, zone, request), zone

    async def load_session(
        session_id: str | None, request: gr.Request | None = None
    ) -> tuple[Any, Any, Any, Any]:
        """A session's history into the chat; it becomes the current session."""
        if not session_id:
            return gr.skip(), gr.skip(), gr.skip(), gr.skip()
        try:
            _, messages = await (await _service(app)).history(session_id, _owner(request))
        except (SessionNotFoundError, ValueError):
            gr.Warning(f"no session {session_id[:64]!r}")
            return gr.skip(), gr.skip(), gr.skip(), gr.skip()
        chat, turns = history_messages(messages)
        return chat, "", session_id, turns

    async def rate(
        session: str | None,
        turns: dict[int, int] | None,
        like: gr.LikeData,
        request: gr.Request | None = None,
    ) -> None:
        """A thumbs up or down on an answer: recorded for its turn; down drops it from the
        answer cache, as on the web page."""
        if like.liked is True:
            rating = "up"
        elif like.liked is False:
            rating = "down"
        else:
            return  # the thumb was clicked off: the rating stays on record
        index = like.index if isinstance(like.index, int) else like.index[0]
        turn = (turns or {}).get(index)
        if session is None or turn is None:
            gr.Warning("only a finished answer can be rated")
            return
        try:
            await (await _service(app)).feedback(session, turn, rating, _owner(request))
        except (SessionNotFoundError, TurnNotFoundError, StoreUnavailableError) as exc:
            gr.Warning(f"the rating was not saved: {exc}")
        # Success needs no toast: the chosen thumb stays highlighted (and Gradio's toast
        # nests a button in a button, which axe reports).

    def new_session() -> tuple[list[Any], str, None, None, dict[int, int]]:
        """An empty chat; the next question starts a new session."""
        return [], "", None, None, {}

    # Gradio passes the logged-in request to a parameter annotated `gr.Request` (and the
    # like's data to one annotated `gr.LikeData`), found by evaluating the annotations;
    # `gr` is imported here, not at module level, so the string annotations cannot be
    # evaluated and are replaced by the classes themselves.
    for handler in (ask, list_sessions, first_list, load_session, rate):
        handler.__annotations__["request"] = gr.Request
    rate.__annotations__["like"] = gr.LikeData

    with gr.Blocks(title="CodeWeaver", analytics_enabled=False) as blocks:
        session = gr.State(None)
        turns = gr.State({})
        zone = gr.State("")
        zone_box = gr.Textbox(visible=False)  # what the load script's time zone goes into
        gr.Markdown("# CodeWeaver\nAnswers to programming questions, with numbered sources.")
        with gr.Row():
            with gr.Column(scale=3):
                chatbot = gr.Chatbot(
                    label="Chat",
                    height=560,
                    sanitize_html=True,
                    render_markdown=True,
                    allow_tags=False,
                    latex_delimiters=[],
                    feedback_options=("Like", "Dislike"),
                    buttons=["copy", "copy_all"],
                )
                with gr.Row():
                    box = gr.Textbox(
                        label="Your question",
                        placeholder="Ask a programming question…",
                        show_label=False,
                        max_lines=8,
                        scale=5,
                    )
                    send = gr.Button("Ask", variant="primary", scale=1)
            with gr.Column(scale=1):
                mode = gr.Radio(
                    [("Pipeline", "pipeline"), ("Librarian (step by step)", "librarian")],
                    value="pipeline",
                    label="Mode",
                )
                with gr.Accordion("Steps", open=True):
                    steps = gr.Markdown("", sanitize_html=True, max_height=220, elem_id="cw-steps")
                sessions = gr.Radio(
                    label="Conversations", choices=[], interactive=True, elem_id="cw-sessions"
                )
                with gr.Row():
                    refresh = gr.Button("Refresh", size="sm")
                    new = gr.Button("New conversation", size="sm")
        gr.on(
            [box.submit, send.click],
            ask,
            [box, chatbot, session, mode, turns],
            [chatbot, steps, session, box, turns],
            api_name="ask",
            concurrency_limit=None,  # the service's own queue bounds the runs
        ).then(
            list_sessions,
            [session, zone],
            sessions,
            api_name="sessions_after_ask",
            api_visibility="private",
        )
        blocks.load(
            first_list,
            zone_box,
            [sessions, zone],
            js=_TIME_ZONE_JS,
            api_name="first_list",
            api_visibility="private",
            concurrency_limit=None,
        )
        refresh.click(
            list_sessions,
            [session, zone],
            sessions,
            api_name="list_sessions",
            concurrency_limit=None,
        )
        sessions.input(
            load_session,
            sessions,
            [chatbot, steps, session, turns],
            api_name="load_session",
            concurrency_limit=None,
            # The raw id: a radio checks a value against the choices it was built with,
            # which an API client (or a list loaded since) does not share; the service
            # checks the id and its owner itself.
            preprocess=False,
        )
        chatbot.like(rate, [session, turns], None, api_name="rate", api_visibility="private")
        new.click(
            new_session, None, [chatbot, steps, session, sessions, turns], api_name="new_session"
        )

    gr.mount_gradio_app(
        app,
        blocks,
        path=path,
        auth=_password(tokens) if tokens.required else None,
        show_error=False,  # unexpected errors show as "Error", never their text or traceback
        ssr_mode=False,
        mcp_server=False,
        run_history=False,
        footer_links=["api"],
        theme=theme(),
        css=CSS,
    )
    return app
