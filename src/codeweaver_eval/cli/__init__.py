"""The `codeweaver eval …` commands; the product's command line loads `cli.app` only
when `eval` is invoked."""
