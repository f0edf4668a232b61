"""`python -m codeweaver` runs the CLI."""

from codeweaver.cli.app import main

main()
