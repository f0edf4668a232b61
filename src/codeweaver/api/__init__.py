"""The HTTP service: FastAPI routes, streaming, sessions, safety, and the web page."""
