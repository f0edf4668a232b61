"""The `eval` command group: each command is defined in its own module and registered
here, so no command module imports another."""

from __future__ import annotations

import typer

from codeweaver_eval.cli.answers import eval_answers
from codeweaver_eval.cli.cache import eval_cache
from codeweaver_eval.cli.code import eval_code
from codeweaver_eval.cli.grounding import eval_grounding, eval_grounding_set
from codeweaver_eval.cli.intent import eval_intent
from codeweaver_eval.cli.judging import eval_blind, eval_rubric, eval_unblind
from codeweaver_eval.cli.retrieval import eval_retrieval
from codeweaver_eval.cli.split import eval_split

HELP = "Measure intent classification and question splitting."

eval_app = typer.Typer(help=HELP, no_args_is_help=True)

eval_app.command("intent")(eval_intent)
eval_app.command("cache")(eval_cache)
eval_app.command("grounding")(eval_grounding)
eval_app.command("grounding-set")(eval_grounding_set)
eval_app.command("code")(eval_code)
eval_app.command("retrieval")(eval_retrieval)
eval_app.command("split")(eval_split)
eval_app.command("answers")(eval_answers)
eval_app.command("blind")(eval_blind)
eval_app.command("unblind")(eval_unblind)
eval_app.command("rubric")(eval_rubric)
