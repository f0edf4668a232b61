"""Builders of the test fixtures from the public data sets, each run as
`python -m codeweaver_eval.builders.<name>`."""
