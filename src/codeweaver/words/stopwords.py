"""Words to drop, one list per purpose.

The lists differ because what is noise depends on the task, and each was tuned and measured
on its own task; they are not merged:

- `STOPWORDS`: function words and request phrasing ("please", "explain"), for overlap
  scoring and for the queries shaped for online services;
- `doc_search_stopwords()`: bm25s' English list for the installed-docs BM25 index, which
  must keep "re" (the module) and drops "python" (every entry is Python);
- `CACHE_CHECK_FILLER`: words that never make two cached questions different, quality
  words ("fastest", "pythonic") included;
- `SUBJECT_VAGUE`: English and Korean words that name no subject of a question (languages,
  "difference", "예제"), for telling whether two questions share one;
- `CODE_SEARCH_VAGUE`: words of a debugging question that say nothing about where in the
  code to look ("error", "crash", "def").
"""

from __future__ import annotations

from codeweaver.words.stemming import KOREAN_SUFFIXES

_STOPWORD_TEXT = """
a an the and or but if then else of to in on at by for with from into onto as is are
was were be been being do does did doing have has had i you he she it we they me my
your our their this that these those what which who whom how why when where can
could should would will shall may might must not no so than too very just also about
over under again there here all any both each few more most other some such only own
same up down out off get got use using used want need please tell show explain way
ways
"""
#: Overlap scoring and the online services' queries.
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def doc_search_stopwords() -> frozenset[str]:
    """The installed-docs BM25 index's stopwords: bm25s' English list minus "re", plus
    "python", "please"... A function, so that the word tools load bm25s (and numpy) only
    for the index, which loads them anyway."""
    from bm25s.stopwords import STOPWORDS_EN_PLUS

    return frozenset(STOPWORDS_EN_PLUS) - {"re"} | {
        "python", "please", "would", "could", "also", "like", "want", "need", "way", "e.g", "i.e",
    }  # fmt: skip


#: The cache verifier: words that carry no subject of their own, so they never make two
#: questions different.
CACHE_CHECK_FILLER = frozenset(
    """a an the of in on at by for with and or is are be to into from as how do does did
    can could should would i you we my our your it its this that these those what which
    way ways best good fastest simplest easiest efficient efficiently pythonic most more
    quickly easily properly correctly simple simply given specific certain particular
    python using use used get getting make making want need possible elegant proper
    correct right there here just only also already exist
    exists existing whether if then than so such very really
    create creating find finding retrieve fetch obtain return variable variables contain
    containing contains associated where ascending order""".split()
)

_SUBJECT_VAGUE_TEXT = """
python javascript java rust go typescript language code program difference differ
    different versus vs work works make best way error errors problem 차이 차이점 뭐야 뭔가요
    어떻게 언제 왜 무엇 사용 방법 에러 오류 문제 해결 그리고 또 써 쓰는 해
example examples sample code snippet 예제 예시 코드 보여줘 설명 좀"""
#: Comparing question subjects: words that name no subject of their own, so sharing them
#: says nothing.
SUBJECT_VAGUE = frozenset(_SUBJECT_VAGUE_TEXT.split())
#: Vague words that still name what a follow-up moves to ("what about in Rust?").
SUBJECT_NAMING = frozenset("python javascript java rust go typescript".split())
#: Particles, endings and openers of a follow-up ("그럼 …는요?", "instead"): no new subject.
FOLLOW_UP_WORDS = frozenset(KOREAN_SUFFIXES) | {
    "에서는요",
    "는요",
    "은요",
    "요",
    "그럼",
    "그러면",
    "근데",
    "그건",
    "그거",
    "instead",
    "case",
}

_CODE_SEARCH_VAGUE_TEXT = """
    error errors exception exceptions problem problems issue issues bug bugs fix fixed
    fixing code function functions method methods file files line lines debug debugging
    review crash crashes crashed fail fails failed failing work works working happen happens
    wrong instead getting call calls called calling return returns def self none true false
    null let var const import thing something anyone help know see look like raise raised
    raises throw throws thrown keep keeps still even one"""
#: The local code scan: words of a debugging question that say nothing about where in the
#: code to look.
CODE_SEARCH_VAGUE = frozenset(_CODE_SEARCH_VAGUE_TEXT.split())
