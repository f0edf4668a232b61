"""Benchmarks, each run as `python -m codeweaver_eval.bench.<name>` from a checkout; the
README's measurements come from them."""
