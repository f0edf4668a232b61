"""The pipeline graph's nodes and routers, `(state, deps)` each; `agent/graph.py` wires them."""
