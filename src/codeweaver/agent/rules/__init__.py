"""The rule-based decisions: route, guard, intent, language, queries, input check."""
