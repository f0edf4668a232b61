"""Read built-in and C-extension stdlib modules (which have no source) with `inspect`."""

from __future__ import annotations

import importlib
import inspect
import logging
import re
import warnings

from codeweaver.sources.installed_docs.model import CollectorOptions, normalise_doc
from codeweaver.sources.installed_docs.names import Definition, Group, is_public

logger = logging.getLogger(__name__)


def _c_signature(name: str, obj: object, doc: str, *, method: bool) -> tuple[str, str]:
    """(signature, doc without a leading signature line)."""
    try:
        sig = inspect.signature(obj)  # type: ignore[arg-type]
        params = list(sig.parameters.values())
        if method and params and params[0].name in ("self", "cls", "type"):
            sig = sig.replace(parameters=params[1:])
        return f"{name}{sig}", doc
    except (TypeError, ValueError):
        pass
    first, _, rest = doc.partition("\n")
    if first.startswith(name + "(") or re.match(r"^[\w.]+\(.*\)", first):
        return first.strip(), rest.strip()
    return "", doc


def inspect_c_module(group: Group, module: str, opts: CollectorOptions) -> None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mod = importlib.import_module(module)
    except Exception as exc:  # an optional C module that fails to load
        logger.debug("cannot import %s: %s", module, exc)
        return

    def add(qualname: str, kind: str, signature: str, doc: str) -> None:
        text = normalise_doc(doc)[: opts.max_doc_chars]
        if text.strip():
            group.defs.append(Definition(module, qualname, kind, signature, text, ""))

    if is_public(module) and isinstance(mod.__doc__, str):
        add("", "module", "", mod.__doc__)
    for name, obj in sorted(vars(mod).items()):
        if name.startswith("__") or (name.startswith("_") and not isinstance(obj, type)):
            continue
        if isinstance(obj, type):
            doc = vars(obj).get("__doc__")
            if isinstance(doc, str):
                signature, doc = _c_signature(name, obj, doc, method=False)
                add(name, "class", signature or f"class {name}", doc)
            for member_name, member in sorted(vars(obj).items()):
                if member_name.startswith("_") or not inspect.isroutine(member):
                    continue
                member_doc = getattr(member, "__doc__", None)
                if isinstance(member_doc, str):
                    signature, member_doc = _c_signature(
                        member_name, member, member_doc, method=True
                    )
                    add(f"{name}.{member_name}", "method", signature, member_doc)
        elif inspect.isroutine(obj) and isinstance(obj.__doc__, str):
            signature, doc = _c_signature(name, obj, obj.__doc__, method=False)
            add(name, "function", signature, doc)
