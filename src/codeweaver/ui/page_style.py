"""The Gradio page's look: readable contrast for chat text and code, and a stacked session list."""

from __future__ import annotations

from typing import Any

# Gradio shows chat text at 80 % opacity and colours code below 4.5:1 on its code
# background (axe: colour contrast): the text is shown in full and the code keeps its
# hues, darker in light mode and as Gradio's own dark palette in dark mode. The session
# list stacks and scrolls instead of wrapping into rows of pills.
_TOKENS = {
    "comment, prolog, doctype, cdata, punctuation": ("#4d5560", "#9aa3b0"),
    "property, tag, boolean, number, constant, symbol, deleted": ("#8a004c", "#e06c75"),
    "selector, attr-name, string, char, builtin, inserted": ("#3a6600", "#98c379"),
    "atrule, attr-value, keyword": ("#005f8f", "#c678dd"),
    "function, class-name": ("#a8203f", "#61afef"),
    "regex, important, variable": ("#8f4a00", "#d19a66"),
}


def _token_css(scheme: str, index: int) -> str:
    return "\n".join(
        ", ".join(f"{scheme} .gradio-container .md .token.{t.strip()}" for t in names.split(","))
        + f" {{ color: {colours[index]}; }}"
        for names, colours in _TOKENS.items()
    )


CSS = (
    """
body .gradio-container .message-wrap .prose.chatbot.md { opacity: 1; }
#cw-sessions .wrap { flex-direction: column; flex-wrap: nowrap; max-height: 18rem;
  overflow-y: auto; }
#cw-sessions label { width: 100%; }
#cw-steps ol { margin: 0; padding-left: 1.4rem; }
"""
    + _token_css("body", 0)
    + "\n"
    + _token_css("body.dark", 1)
)


def theme() -> Any:
    """Gradio's default theme with a blue that keeps white text at 4.5:1 or more, and
    subdued text (the footer's) dark enough to read."""
    import gradio as gr

    return gr.themes.Default(primary_hue=gr.themes.colors.blue).set(
        button_primary_background_fill="*primary_700",
        button_primary_background_fill_hover="*primary_800",
        button_primary_text_color="white",
        body_text_color_subdued="*neutral_600",
        body_text_color_subdued_dark="*neutral_400",
    )
