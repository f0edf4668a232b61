"""Measurement of CodeWeaver, apart from the product: the evaluations behind
`codeweaver eval`, a Stack Exchange stand-in (`stackexchange`), the benchmarks
(`python -m codeweaver_eval.bench.<name>`) and the fixture builders
(`python -m codeweaver_eval.builders.<name>`). The product never imports it."""
