"""Writing an answer and checking it: citations, grounding, restatement, versions."""
