from typer import Typer
eval_app = Typer(help="Evaluation commands.")
