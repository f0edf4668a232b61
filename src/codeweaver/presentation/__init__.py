"""What every door shows of a run: the numbered sources, the steps in words, clean text.

The CLI, the web page, the Gradio app, the OpenAI-compatible API, MCP and the API's JSON
all present one view of a result; each door only formats it. Everything in that view
that came from outside (titles, URLs, licences, model text) has passed `clean` first.
"""
