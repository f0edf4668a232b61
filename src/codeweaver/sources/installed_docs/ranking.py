"""Hybrid ranking of doc entries: BM25, dense vectors and exact names, fused by reciprocal rank.

For a question, three ranked lists are made over all entries:
  * BM25 (`indexer.LoadedIndex.scores`), times the entry's package prior;
  * cosine similarity of the question's vector to each entry's vector (`vectors`), times the
    same prior (skipped while the vectors are missing);
  * entries whose leaf name is an identifier the question spells (`exact.query_names`),
    and the language page of a keyword used as one ("for loop"): a dotted name's full match
    first, strong names before weak ones, builtins first, then by BM25.
Reciprocal rank fusion adds `weight / (RRF_K + rank)` over the lists. The package prior
favours what the question is about: entries of a package it names (`pandas`), then the
standard library, then other installed packages; deep internal names (`pandas.core.x.y.z`)
count a little less, and names the installed code rarely calls too (`popularity`).

The top fused candidates get a score in [0, 1]: a logistic model (`Candidate.features`) over
the fused score, the BM25 score, the cosine, the exact-name strength, the package prior, the
fused score relative to the best, and what the entry is: a builtin, a class, a method, how
often installed code calls its leaf name (`popularity`), whether the question spells its leaf
name (`exact.leaf_named`), and how often reference answers use it (`usage`). The model is
fitted on CoNaLa questions (even `question_id`s, the part `usage` is counted on) with "the
entry documents an API the reference answer uses" as the label (a second model, fitted the
same way without vectors, serves while they are missing). It re-sorts the candidates: an API
answers often use (`re.sub`, `str.join`) rises above one the words merely resemble. That
estimate (`Candidate.order`: 0.5 means about one such entry in two) is what the pipeline's
bar reads (`passes`): at least `ORDER_BAR`, with a relevance (`Candidate.score`, the same
fit without the answer-usage feature) above `RELEVANCE_FLOOR`. The relevance alone was the
bar until it proved to tell right pages from wrong ones barely better than chance: on
CoNaLa's even half the first page was right 27 % of the time below 0.01 and 31 % between
0.1 and 0.13, so a bar on it threw right pages away without making what it kept more often
right (see `docs/sources.md`). A builtin type's own page (`builtins.dict`) scores 0 unless
the question spells the type as code: it documents the constructor, not the task. A
function, method or property the question spells as code with its class or module
(`TextIOBase readline`, `re.sub`), and the page of a keyword used as one ("for loop"), pass
whatever the estimate (`Candidate.asked`; relevance at least `SCORE_THRESHOLD`): the
question asks for that page. A caller that judges relevance itself (an agent over MCP)
gets the ranked list without the bar (`HybridRanker.search(bar=False)`). Among entries of
one package sharing a leaf name (`str.join`, `bytes.join`) only the best is kept, so the
results name different APIs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from codeweaver.sources.installed_docs.exact import (
    STRONG,
    leaf_named,
    mentioned_packages,
    query_names,
    question_words,
)
from codeweaver.sources.installed_docs.indexer import LoadedIndex
from codeweaver.sources.installed_docs.model import DocEntry
from codeweaver.sources.installed_docs.popularity import popularity_weights
from codeweaver.sources.installed_docs.tokenizer import query_tokens
from codeweaver.sources.installed_docs.usage import usage_features

RRF_K = 30.0
LIST_DEPTH = 100
CANDIDATES = 30
WEIGHT_BM25 = 1.0
WEIGHT_DENSE = 1.5
WEIGHT_EXACT = 1.0
PRIOR_NAMED = 1.0  # a package the question names
PRIOR_STDLIB = 0.7  # the standard library (1.0 when the question names no package)
PRIOR_OTHER = 0.25  # any other installed package
PRIOR_MISSING = 0.5  # extra factor when the question names a package that is not installed
PRIOR_POWER = 0.5  # the prior also scales the fused score (beyond ordering each list)
DEPTH_DECAY = 0.85  # per name component beyond `module.Class.method`
POPULARITY_BETA = 0.25  # exponent of the call-count prior (`popularity`)
#: Logistic models of the score: intercept, then one weight per `Candidate.features()`;
#: the second serves while the vectors are missing (its cosine weight is unused).
SCORE_MODEL = (
    -9.427, 2.875, -1.319, 6.865, 0.642, 0.429, 2.456, -0.285, -0.112, -0.557, -0.932, 0.325,
    5.526,
)  # fmt: skip
SCORE_MODEL_NO_VECTORS = (
    -7.72, 9.398, 2.477, 0.0, 0.907, 1.466, 1.153, -0.52, -0.632, -0.29, -1.401, 1.02, 5.665,
)  # fmt: skip
#: The relevance: the same fit without the answer-usage feature (the last one). How often
#: answers use an API is a fair prior, not evidence that a page is about this question:
#: with it, `re.findall` scored 0.67 for "Find array item in a string".
RELEVANCE_MODEL = (
    -10.233, 15.499, -0.877, 5.535, 0.012, 1.248, 2.047, 1.22, 0.141, -0.928, 1.855, 0.466,
)  # fmt: skip
RELEVANCE_MODEL_NO_VECTORS = (
    -8.982, 18.109, 3.091, 0.0, 0.47, 1.798, 1.207, 1.478, -0.149, -0.731, 1.526, 0.993,
)  # fmt: skip
SCORE_THRESHOLD = 0.13  # the relevance of a page asked for by name; the bar until ORDER_BAR
#: The bar (`passes`), chosen on CoNaLa's even half: the highest recall@5 at which no
#: precision figure (questions given pages but no right one, right pages among those
#: returned, right first pages) falls below those of the relevance bar at 0.13.
ORDER_BAR = 0.09
RELEVANCE_FLOOR = 0.01

TOPIC_WEIGHT = 0.6  # language-reference pages: long, they match many questions loosely
NICHE_WEIGHT = 0.5  # GUI and tooling modules that rarely answer a programming question
_NICHE = frozenset({"tkinter", "idlelib", "turtle", "turtledemo", "lib2to3", "pydoc_data",
                    "ensurepip", "msilib", "curses", "tabnanny", "pdb", "bdb"})  # fmt: skip
_NICHE_CLASSES = ("collections.UserString.", "collections.UserList.", "collections.UserDict.")
_INTERNAL = (".core.", ".internals.", ".compat.", ".tests.", ".testing.", "._", ".vendored.")
SHALLOW_DOTS = 1
# Builtin value types, whose pages document their constructor (`zip`, `map`, `reversed`,
# also classes, are the calls answers make and are not in this list).
_VALUE_TYPES = frozenset(
    f"builtins.{name}"
    for name in ("dict", "list", "set", "frozenset", "tuple", "str", "bytes", "bytearray",
                 "int", "float", "complex", "bool", "object", "type")
)  # fmt: skip
_COUNTED = frozenset({"function", "method", "class", "property"})


@dataclass(frozen=True)
class RankingOptions:
    """Which parts of the ranking run (all by default; `codeweaver eval retrieval` switches
    them off)."""

    dense: bool = True
    exact: bool = True
    packages: bool = True
    threshold: bool = True


@dataclass(frozen=True)
class Candidate:
    index: int
    entry: DocEntry
    fused: float  # reciprocal-rank fusion score, times the prior
    bm25: float  # normalised BM25 score in [0, 1)
    cosine: float  # 0 without vectors
    exact: int  # 0, WEAK or STRONG
    prior: float
    relative: float = 1.0  # fused score over the question's best fused score
    calls: float = 0.0  # popularity of the leaf name in installed code, in (0, 1]
    named: float = 0.0  # `exact.leaf_named`: the question spells the leaf name
    usage: float = 0.0  # `usage.usage_features`: how often answers use the entry
    score: float = 0.0  # relevance: `RELEVANCE_MODEL`, without the answer-usage prior
    order: float = 0.0  # `SCORE_MODEL`: the ranking's estimate, answer usage included
    asked: bool = False  # the question asks for this page by name (it passes the bar)

    def features(self) -> tuple[float, ...]:
        kind = self.entry.kind
        return (
            self.fused, self.bm25, max(self.cosine, 0.0), self.exact / STRONG, self.prior,
            self.relative, float(self.entry.name.startswith("builtins.")),
            float(kind == "class"), float(kind == "method"), self.calls, self.named,
            self.usage,
        )  # fmt: skip


def logistic(features: tuple[float, ...], model: tuple[float, ...] = SCORE_MODEL) -> float:
    z = model[0] + sum(w * x for w, x in zip(model[1:], features, strict=True))
    return 1.0 / (1.0 + math.exp(-max(min(z, 40.0), -40.0)))


class HybridRanker:
    """Ranks the entries of one loaded index; `vectors` rows align with its entries."""

    def __init__(
        self,
        index: LoadedIndex,
        vectors: NDArray[np.float32] | None = None,
        embed_query: Callable[[str], NDArray[np.float32]] | None = None,
        options: RankingOptions | None = None,
    ) -> None:
        self.index = index
        self.vectors = vectors
        self.embed_query = embed_query
        self.options = options or RankingOptions()
        entries = index.entries
        self.tops = [e.name.partition(".")[0] if e.kind != "topic" else "" for e in entries]
        self.stdlib = np.array([e.package == "python" for e in entries], dtype=bool)
        self.top_set = frozenset(t for t in self.tops if t)
        grouped: dict[str, list[int]] = {}
        for i, top in enumerate(self.tops):
            grouped.setdefault(top, []).append(i)
        self.by_top = {top: np.array(rows, dtype=np.int64) for top, rows in grouped.items()}
        self.leaves: dict[str, list[int]] = {}
        self.full: dict[str, int] = {}
        for i, entry in enumerate(entries):
            if entry.kind in _COUNTED:
                self.leaves.setdefault(entry.name.rpartition(".")[2], []).append(i)
                for name in (entry.name, *entry.aliases):
                    self.full.setdefault(name, i)
        self.builtin = np.array([e.name.startswith("builtins.") for e in entries], dtype=float)
        self.topics = {e.name: i for i, e in enumerate(entries) if e.kind == "topic"}
        self.leaf_set = frozenset(self.leaves)
        self.folded = {leaf.lower(): leaf for leaf in sorted(self.leaves, reverse=True)}
        popular = popularity_weights(entries, index.popularity, POPULARITY_BETA)
        # Modules and topics are never the API an answer calls: no call count.
        self.calls = [
            w if e.kind in _COUNTED else 0.0
            for e, w in zip(
                entries, popularity_weights(entries, index.popularity, 1.0), strict=True
            )
        ]
        self.usage = usage_features(entries)
        self.depth = np.array(
            [_depth_weight(e) * p for e, p in zip(entries, popular, strict=True)], dtype=np.float64
        )
        # `read` in "read a file" is `os.read` or `builtins.open`, not `zipfile.ZipFile.read`.
        self.shallow = np.array(
            [
                e.package == "python"
                and (e.name.startswith("builtins.") or e.name.count(".") <= SHALLOW_DOTS)
                for e in entries
            ],
            dtype=bool,
        )

    def with_vectors(self, vectors: NDArray[np.float32] | None) -> HybridRanker:
        clone = replace_ranker(self)
        clone.vectors = vectors
        return clone

    def prior(self, query: str) -> tuple[NDArray[np.float64], frozenset[str]]:
        """Per-entry prior weights, and the top-level modules the question names."""
        keywords = [self.topics[t[1:]] for t in query_tokens(query) if t[1:] in self.topics]
        if not self.options.packages:
            return np.ones(len(self.tops)), frozenset()
        named, missing = mentioned_packages(query, self.top_set)
        stdlib = PRIOR_STDLIB if named else 1.0
        out = np.where(self.stdlib, stdlib, PRIOR_OTHER)
        for top in named:
            out[self.by_top[top]] = PRIOR_NAMED
        if missing:
            out = out * PRIOR_MISSING
        weights: NDArray[np.float64] = out * self.depth
        # "for loop", "with statement": the keyword's own page is not a loose topic match.
        weights[keywords] = out[keywords]
        return weights, named

    def rank(self, query: str) -> list[Candidate]:
        """The `CANDIDATES` best fused entries with their features, by score (best first)."""
        n = len(self.index.entries)
        if not n or not query.strip():
            return []
        prior, named = self.prior(query)
        raw, half = self.index.scores(query)
        bm25 = raw / (raw + max(half, 1e-9))
        fused = np.zeros(n)
        _add_list(fused, raw * prior, WEIGHT_BM25)
        cosine = np.zeros(n)
        model, relevance_model = SCORE_MODEL_NO_VECTORS, RELEVANCE_MODEL_NO_VECTORS
        if self.options.dense and self.vectors is not None and self.embed_query is not None:
            model, relevance_model = SCORE_MODEL, RELEVANCE_MODEL
            cosine = (self.vectors @ self.embed_query(query)).astype(np.float64)
            _add_list(fused, np.maximum(cosine, 0.0) * prior, WEIGHT_DENSE)
        exact = np.zeros(n, dtype=np.int64)
        if self.options.exact:
            named_order = self._exact(query, prior, named, raw, exact)
            for rank, i in enumerate(named_order, 1):
                fused[i] += WEIGHT_EXACT / (RRF_K + rank)
        fused *= prior**PRIOR_POWER
        k = min(CANDIDATES, n)
        top = np.argpartition(-fused, k - 1)[:k]
        top = top[np.argsort(-fused[top], kind="stable")]
        out: list[Candidate] = []
        best = float(fused[top[0]]) if len(top) else 0.0
        words = question_words(query)
        for i in top:
            if fused[i] <= 0:
                break
            entry = self.index.entries[i]
            candidate = Candidate(
                int(i), entry, float(fused[i]), float(bm25[i]), float(cosine[i]),
                int(exact[i]), float(prior[i]), float(fused[i]) / best, self.calls[i],
                leaf_named(entry.name.rpartition(".")[2], words), float(self.usage[i]),
            )  # fmt: skip
            features = candidate.features()
            order = logistic(features, model)
            score = logistic(features[:-1], relevance_model)
            asked = exact[i] >= STRONG and (
                entry.kind == "topic" or (entry.kind != "class" and _parent(entry) in words)
            )
            if asked:
                # The question spells this API as code, its class or module too ("TextIOBase
                # readline"): it asks for this page. CoNaLa questions rarely do, so the
                # fitted model cannot learn it. Not a class named with its module ("a pandas
                # DataFrame"): that is what the question works on, and on CoNaLa's even
                # half such class pages were right once in 16.
                score = max(score, SCORE_THRESHOLD)
            if entry.name in _VALUE_TYPES and exact[i] < STRONG:
                # The page of a builtin type documents its constructor: a question naming
                # "dictionary" in words asks how to do something with one (`update`), and
                # given `dict()`'s page the model answered with the constructor.
                score = 0.0
            out.append(replace(candidate, score=score, order=order, asked=asked))
        return _one_per_api(sorted(out, key=lambda c: -c.order))

    def _exact(
        self,
        query: str,
        prior: NDArray[np.float64],
        named: frozenset[str],
        raw: NDArray[np.float64],
        exact: NDArray[np.int64],
    ) -> list[int]:
        """Entries named by the question's identifiers, best first (fills `exact`)."""
        keyed: dict[int, tuple[int, float]] = {}
        for token in query_tokens(query):
            topic = self.topics.get(token[1:]) if token.startswith("@") else None
            if topic is not None:
                keyed[topic] = (STRONG, 1.0 + raw[topic])
        names = query_names(query, self.leaf_set, folded=self.folded, packages=self.top_set)
        for name in names:
            full = self.full.get(name.qualified) if name.qualified else None
            if full is not None:
                keyed[full] = (3, 1.0 + raw[full])
            for i in self.leaves.get(name.leaf, ()):
                # Weak (English) names only reach builtins, module-level stdlib names and
                # the packages the question names.
                if name.strength < STRONG and not (self.shallow[i] or self.tops[i] in named):
                    continue
                # Among equal names, the builtin first: `open` is `builtins.open` before
                # `gzip.open` unless the question says otherwise (then BM25 tells).
                key = (name.strength, prior[i] * (1.0 + raw[i]) * (1.0 + self.builtin[i]))
                keyed[i] = max(keyed.get(i, key), key)
        for i, (strength, _) in keyed.items():
            exact[i] = min(strength, STRONG)
        return sorted(keyed, key=lambda i: keyed[i], reverse=True)[:LIST_DEPTH]

    def search(self, query: str, limit: int, *, bar: bool = True) -> list[Candidate]:
        """The `limit` best candidates; with `bar` (the pipeline's search) only those that
        pass it (`passes`), without it the ranked list whatever the scores (for a caller
        that judges relevance itself)."""
        ranked = self.rank(query)
        if bar and self.options.threshold:
            ranked = [c for c in ranked if passes(c)]
        return ranked[:limit]


def passes(candidate: Candidate) -> bool:
    """Whether the pipeline may quote this page: the question asks for it by name, or the
    ranking's estimate that an answer uses it reaches `ORDER_BAR` while its relevance
    without the answer-usage prior is above nothing (`RELEVANCE_FLOOR`: a builtin type's
    page, zeroed above, never passes on its popularity alone)."""
    if candidate.asked:
        return True
    return candidate.order >= ORDER_BAR and candidate.score >= RELEVANCE_FLOOR


def _one_per_api(candidates: list[Candidate]) -> list[Candidate]:
    """Keep the best of entries sharing a package and a leaf name (`str.join`,
    `bytes.join`; `DataFrame.groupby`, `Series.groupby`): five results, five APIs."""
    seen: set[tuple[str, str]] = set()
    out: list[Candidate] = []
    for candidate in candidates:
        name = candidate.entry.name
        key = (name.partition(".")[0], name.rpartition(".")[2])
        if candidate.entry.kind in _COUNTED and key in seen:
            continue
        seen.add(key)
        out.append(candidate)
    return out


def replace_ranker(ranker: HybridRanker) -> HybridRanker:
    clone = HybridRanker.__new__(HybridRanker)
    clone.__dict__.update(ranker.__dict__)
    return clone


def _parent(entry: DocEntry) -> str:
    """The lowercased class or module an entry belongs to (`io.TextIOBase.readline` ->
    `textiobase`; `builtins.zip` -> `` : a builtin has none to spell)."""
    parent = entry.name.rpartition(".")[0].rpartition(".")[2].lower()
    return "" if parent == "builtins" else parent


def _depth_weight(entry: DocEntry) -> float:
    if entry.kind == "topic":
        return TOPIC_WEIGHT
    top = entry.name.partition(".")[0]
    if top in _NICHE or entry.name.startswith(_NICHE_CLASSES):
        return NICHE_WEIGHT
    extra = max(0, entry.name.count(".") - 2)
    internal = any(part in f".{entry.name}." for part in _INTERNAL)
    return float(DEPTH_DECAY**extra * (DEPTH_DECAY if internal else 1.0))


def _add_list(fused: NDArray[np.float64], scores: NDArray[np.float64], weight: float) -> None:
    """Add `weight / (RRF_K + rank)` for the `LIST_DEPTH` best positive `scores`."""
    k = min(LIST_DEPTH, len(scores))
    top = np.argpartition(-scores, k - 1)[:k]
    top = top[np.argsort(-scores[top], kind="stable")]
    for rank, i in enumerate(top, 1):
        if scores[i] <= 0:
            break
        fused[i] += weight / (RRF_K + rank)
