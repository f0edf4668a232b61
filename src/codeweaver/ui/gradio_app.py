"""The Gradio app: the web page's chat, live steps and sessions over the same `ChatService`.

`codeweaver serve --gradio` mounts it at `/gradio`. Answers, source titles and step messages
are untrusted (web and model text): they reach Gradio's sanitised Markdown with raw HTML and
images made inert, custom tags stripped and titles escaped. Gradio is imported only here.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from codeweaver.agent.input_check import InvalidQuestionError
from codeweaver.api.auth import DEFAULT_USER, TokenTable
from codeweaver.api.queue import QueueFullError
from codeweaver.api.service import ChatService, SessionNotFoundError, StoreUnavailableError
from codeweaver.presentation.clean import safe_url

if TYPE_CHECKING:
    from fastapi import FastAPI

MISSING = "the Gradio app needs the gradio extra: pip install 'codeweaver[gradio]'"
MAX_STEPS = 200
_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~&$:])")
_CODE = re.compile(r"(```.*?(?:```|$)|`[^`\n]*`)", re.DOTALL)
_URL_SAFE = ":/?#@!$&'*+,;=%~"

Outputs = tuple[list[Any], str, str | None, str]


class GradioMissingError(RuntimeError):
    """`gradio` is not installed."""


def escape_markdown(text: str) -> str:
    """`text` shown literally on one line: every Markdown and HTML character escaped."""
    return _SPECIAL.sub(r"\\\1", " ".join(text.split()))


def inert_markdown(text: str) -> str:
    """Markdown whose raw HTML shows as text and whose images stay links, outside code."""
    parts = _CODE.split(text)
    return "".join(
        part if i % 2 else part.replace("<", "&lt;").replace("![", "!\\[")
        for i, part in enumerate(parts)
    )


def sources_markdown(sources: Sequence[Mapping[str, Any]]) -> str:
    """The numbered sources as a Markdown list of links (http(s) only)."""
    lines = []
    for n, source in enumerate(sources, 1):
        url = safe_url(str(source.get("url", "")))
        title = escape_markdown(str(source.get("title") or url or "untitled"))
        label = f"[{title}]({quote(url.strip(), safe=_URL_SAFE)})" if url else title
        origin = escape_markdown(str(source.get("source", "")))
        lines.append(f"{source.get('n', n)}. {label}" + (f" — {origin}" if origin else ""))
    return "**Sources**\n\n" + "\n".join(lines) if lines else ""


def answer_markdown(answer: str, sources: Sequence[Mapping[str, Any]]) -> str:
    """A finished answer with its numbered sources below."""
    return "\n\n".join(part for part in (inert_markdown(answer), sources_markdown(sources)) if part)


def step_line(kind: str, data: Mapping[str, Any]) -> str:
    """One step of the side panel as a Markdown list item."""
    label = "error" if data.get("error") else kind
    node = escape_markdown(str(data.get("node", "")))
    message = escape_markdown(str(data.get("message", ""))[:300])
    return f"- **{label}** {node}: {message}"


def history_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, str]]:
    """`ChatService.history` messages as Chatbot messages."""
    return [
        {"role": "user", "content": inert_markdown(str(m.get("content", "")))}
        if m.get("role") == "user"
        else {"role": "assistant", "content": answer_markdown(m["content"], m.get("sources", []))}
        for m in messages
    ]


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
        request: gr.Request | None = None,
    ) -> AsyncIterator[Outputs]:
        """Stream one answer: tokens, then the answer with its sources; steps beside."""
        service = await _service(app)
        owner = _owner(request)
        try:
            await service.claim(session, owner)
            question, ticket = await service.reserve(message)
        except (InvalidQuestionError, QueueFullError, StoreUnavailableError) as exc:
            gr.Warning(str(exc))
            yield history, "", session, message
            return
        except SessionNotFoundError:
            gr.Warning("no such session; start a new one")
            yield history, "", session, message
            return
        chat: list[Any] = [*history, {"role": "user", "content": inert_markdown(question)}]
        chat.append({"role": "assistant", "content": "…"})
        steps: list[str] = []
        text = ""
        async with contextlib.aclosing(
            service.stream(question, ticket, session, mode, owner)
        ) as events:
            async for event in events:
                data = event.data
                if event.kind == "token":
                    text += str(data.get("text", ""))
                    chat[-1] = {"role": "assistant", "content": inert_markdown(text)}
                elif event.kind == "queue":
                    waiting = f"waiting in line: position {int(data['position'])}"
                    steps.append(f"- **queue** {waiting}")
                    chat[-1] = {"role": "assistant", "content": f"_{waiting}…_"}
                elif event.kind in ("think", "act", "observe"):
                    steps.append(step_line(event.kind, data))
                elif event.kind == "done":
                    session = str(data["session_id"])
                    content = answer_markdown(str(data["answer"]), data.get("sources", []))
                    chat[-1] = {"role": "assistant", "content": content}
                elif event.kind == "error":
                    problem = str(data.get("message", "the answer failed"))
                    gr.Warning(problem)
                    shown = f"**Error:** {escape_markdown(problem)}"
                    chat[-1] = {"role": "assistant", "content": shown}
                yield chat, "\n".join(steps[-MAX_STEPS:]), session, ""

    async def list_sessions(current: str | None, request: gr.Request | None = None) -> Any:
        """The session choices, most recently updated first."""
        infos = await (await _service(app)).sessions(100, _owner(request))
        choices = [(f"{info.title[:60]} ({info.turns})", info.id) for info in infos]
        return gr.Dropdown(choices=choices, value=current)

    async def load_session(
        session_id: str | None, request: gr.Request | None = None
    ) -> tuple[Any, Any, Any]:
        """A session's history into the chat; it becomes the current session."""
        if not session_id:
            return gr.skip(), gr.skip(), gr.skip()
        try:
            _, messages = await (await _service(app)).history(session_id, _owner(request))
        except (SessionNotFoundError, ValueError):
            gr.Warning(f"no session {session_id[:64]!r}")
            return gr.skip(), gr.skip(), gr.skip()
        return history_messages(messages), "", session_id

    def new_session() -> tuple[list[Any], str, None, None]:
        """An empty chat; the next question starts a new session."""
        return [], "", None, None

    # Gradio passes the logged-in request to a parameter annotated `gr.Request`, found by
    # evaluating the annotations; `gr` is imported here, not at module level, so the
    # string annotation cannot be evaluated and is replaced by the class itself.
    for handler in (ask, list_sessions, load_session):
        handler.__annotations__["request"] = gr.Request

    with gr.Blocks(title="CodeWeaver", analytics_enabled=False) as blocks:
        session = gr.State(None)
        gr.Markdown("## CodeWeaver\nAnswers to programming questions, with numbered sources.")
        with gr.Row():
            with gr.Column(scale=3):
                chatbot = gr.Chatbot(
                    label="Chat",
                    height=560,
                    sanitize_html=True,
                    render_markdown=True,
                    allow_tags=False,
                    latex_delimiters=[],
                    feedback_options=None,
                    buttons=["copy", "copy_all"],
                )
                with gr.Row():
                    box = gr.Textbox(
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
                sessions = gr.Dropdown(
                    label="Sessions", choices=[], allow_custom_value=True, interactive=True
                )
                with gr.Row():
                    refresh = gr.Button("Refresh", size="sm")
                    new = gr.Button("New session", size="sm")
                with gr.Accordion("Steps", open=True):
                    steps = gr.Markdown("", sanitize_html=True)
        gr.on(
            [box.submit, send.click],
            ask,
            [box, chatbot, session, mode],
            [chatbot, steps, session, box],
            api_name="ask",
            concurrency_limit=None,  # the service's own queue bounds the runs
        ).then(
            list_sessions,
            session,
            sessions,
            api_name="sessions_after_ask",
            api_visibility="private",
        )
        gr.on(
            [blocks.load, refresh.click],
            list_sessions,
            session,
            sessions,
            api_name="list_sessions",
            concurrency_limit=None,
        )
        sessions.input(
            load_session,
            sessions,
            [chatbot, steps, session],
            api_name="load_session",
            concurrency_limit=None,
        )
        new.click(new_session, None, [chatbot, steps, session, sessions], api_name="new_session")

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
    )
    return app
