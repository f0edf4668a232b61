"""Build a grounding set of answers with one cited fact changed, from StackEval, without a model.

For each listed question the accepted answer is the only source, and two cases are written:

- supported (`kind: "supported"`): the way a model answer looks, from sentences of the
  accepted answer restated lightly (a lead-in, a code span bolded or unwrapped, Markdown
  stripped, contractions made or expanded, a filler word dropped; `edits` says which),
  each cited [1], in bullets, a numbered list or paragraphs, with a short code block of
  the source and maybe an uncited sentence of general knowledge;
- changed (`supported: false`): the same answer with ONE fact of ONE cited sentence
  changed so it contradicts the source. `kind` is `number` (3 → 2), `version` (Python
  3.7 → 3.9, C++11 → C++14, v2 → v3), `name` (a function, flag, option, annotation or
  command swapped for another real one, such as `crontab -l` → `crontab -e`) or
  `negation` (inserted or removed: "is" → "is not", "cannot" → "can").

The facts (`FACTS`) were picked by hand from the accepted answers: sentences that hold
such a fact, and a change that clearly makes them false given the rest of the source (a
mechanical swap gives implausible names). They were chosen without reading the grounding
check, so none is tuned on it. Everything else follows from `--seed`: the order, which
other sentences and code block are kept, how each sentence is restated, the layout; the
same input gives the same file.

Which questions: only those at an EVEN position of `stack-eval.jsonl` (0-based line index
% 2 == 0, i.e. odd `stackeval_line`), none of the questions of the other sets
(`stackeval50.jsonl`, `stackeval_heldout.jsonl`, compared by StackEval id). The grounding
check is developed on odd positions, so its examples and this set never share a question.
The build fails if a listed question breaks either rule.

Run from the repository (the default `--stackeval` is the shared copy beside it):

    python -m codeweaver_eval.builders.build_grounding_changed \
        --out tests/fixtures/grounding/stackeval_changed.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codeweaver_eval.builders.build_grounding_heldout import MAX_CHARS, source_text, usable

STACKEVAL = Path("../shared/data/intent/stackeval/stack-eval.jsonl")
GROUNDING = Path("tests/fixtures/grounding")
EXCLUDE = (GROUNDING / "stackeval50.jsonl", GROUNDING / "stackeval_heldout.jsonl")
KINDS = ("number", "version", "name", "negation")


@dataclass(frozen=True)
class Fact:
    question_id: str  # StackEval `questionId`
    kind: str  # one of KINDS
    sentence: str  # as in the accepted answer, spacing aside
    old: str  # the fact as the sentence states it
    new: str  # what the changed copy says instead


def _facts(kind: str, rows: Iterable[tuple[str, str, str, str]]) -> list[Fact]:
    return [Fact(qid, kind, sentence, old, new) for qid, sentence, old, new in rows]


# The comment before each row is the 1-based `stackeval_line` (always odd).
FACTS: tuple[Fact, ...] = (
    *_facts("version", [
        # 159
        ("692879107cc34fc6985e237785e94b4e", "You can solve this by using `@types/react` and "
         "`@types/react-dom` version 16 until you're ready to upgrade to React 18.",
         "version 16", "version 17"),
        # 353
        ("8b4f09b87e77497e9c54751e6d1e1170", "Update latest version of @nestjs/platform-express, "
         "@nestjs/common,@nestjs/core (8.0.0) solve my problem.", "(8.0.0)", "(7.0.0)"),
        # 411
        ("58fb0a4162b3413fa7d2800959da6196",
         "You need to upgrade `scikit-learn` to version 0.23.1.", "0.23.1", "0.22.1"),
        # 435
        ("3b780c8f0eea4e48937b1c787d0d07fd", "For Python 3.7 and `lightgbm==2.3.1`, I found that "
         "the previous answers were insufficient to correctly save and load a model.",
         "lightgbm==2.3.1", "lightgbm==3.2.1"),
        # 473
        ("7e98773c2f6a44f78ecd096f84439a00", "If it's bash, run `export EDITOR=\"subl -w\"`, in "
         "fish run `set -gx EDITOR subl -w` (or `\"subl -w\"` if you use fish < 3.0).",
         "fish < 3.0", "fish < 2.0"),
        # 669
        ("711975bee26e45c48ab5cb4fbfa714d0", "Your code will run on Python3.10 but as of 3.11 it "
         "will be an error to call `asyncio.get_event_loop` when there is no running loop in the "
         "current thread.", "as of 3.11", "as of 3.12"),
        # 695
        ("4a4412995f194c038fb360b1117f3c97", "Since *dplyr 0.8* `group_by` gained the `.drop` "
         "argument that does just what you asked for:", "dplyr 0.8", "dplyr 1.0"),
        # 737
        ("0d0f6694040546128319511be8fce91d", "It looks like at least on my Ubuntu 16.04, pip is "
         "shared for all Python versions in `/usr/lib/python3/dist-packages/pip`.",
         "Ubuntu 16.04", "Ubuntu 18.04"),
        # 739
        ("0771e387c92c4e93aadee80f271ecad2", "For anyone else that comes across this error, I also "
         "experienced it after upgrading to PHP 8.1.", "PHP 8.1", "PHP 8.2"),
        # 793
        ("3d8103fd421c44aeb12cb758bc4009c5", "Switching back to `attrs==19.1.0` fixes the problem.",
         "attrs==19.1.0", "attrs==19.3.0"),
        # 849
        ("83a97dfd52c941ea99e6921093bdcd30", "An excellent workaround for this that was "
         "introduced in TypeScript 2.1 is `keyof`.", "TypeScript 2.1", "TypeScript 3.1"),
        # 139
        ("0e4749cf73834c2a884832bc4cca9571", "As of Rust 1.43, you can write this:",
         "Rust 1.43", "Rust 1.53"),
        # 283
        ("1ace0e8808f148b381ef16185838e6be", "Since Python 3.7, the `datetime` class has a method "
         "`fromisoformat`.", "Python 3.7", "Python 3.9"),
        # 399
        ("e43ae14b8a164ef3bd599a6b6df47063", "Since jq 1.6 you can do this:", "jq 1.6", "jq 1.5"),
        # 675
        ("f76c15097b0f4ee7995579913580c997", "On MacOS, it seems that you must explicitly enable "
         "move-sematics with `-std=c++11` (or later standards)¹.", "c++11", "c++14"),
        # 913
        ("eb7c4637d67845d59ea7d71553f329a8", "in ES2017 you can use:", "ES2017", "ES2019"),
        # 671
        ("ed9046e260754b47aa63df08f1f2591f", "I had this problem last night while migrating to "
         "Yarn v2 and using PnP.", "Yarn v2", "Yarn v3"),
        # 791
        ("3fe3b93b355c4fc791fa0fa25cfbce60",
         "`TRIM` is introduced in SQL Server (starting with 2017).", "2017", "2019"),
    ]),
    *_facts("number", [
        # 125
        ("d2b7800a506d4c2fb8e8dfb169784c89", "For small files (ie, less than 10 MB or so) all "
         "these are less than 1 second and the 'caveman' approach is *2 ms*.", "*2 ms*",
         "*20 ms*"),
        # 129
        ("974d6aa2d3ca4cf89153ef42d6ca34b4", "Seems like my issue was loading the 3 projects into "
         "my workspace before installing the Lombok plugin.", "the 3 projects", "the 2 projects"),
        # 207
        ("e36e115a88f8451fafca3c48c3251392", "Note that you won't get a value like `41.45`, but "
         "instead `41.4500`.", "41.4500", "41.450"),
        # 347
        ("cea37a4eddac4ca7a778d9ad6a971278", "This is the reason, why the last three hex digits of "
         "the address is the same.", "three", "four"),
        # 367
        ("16f3afd78ed14be4bcec6b67fc26dc65", "These 512-bit registers are only available in 64 bit "
         "mode and only on processors with AVX512.", "512-bit", "256-bit"),
        # 387
        ("492bc6844dc041ffb8faae4732343012", "`gpu_id` is only effective when more than one GPU is "
         "detected, you only seem to have one GPU, so it throws an error since you tell the "
         "function to get GPU 2 (since we count from 0).", "GPU 2", "GPU 3"),
        # 465
        ("ec5a23e42fda4ccc91071642817a2716", "As pointed out by @aschipfl, for whole values "
         "`np.round` will round to the nearest even, which will lead to unexpected results, e.g. "
         "`my_ceil(11)` will return 12.", "return 12", "return 10"),
        # 497
        ("0a07570c102d4cc9a6cd00acb551f113", "Any Android apps targeting API 30 are now no longer "
         "allowed to ask for BACKGROUND\\_PERMISSION at the same time as regular location "
         "permission.", "API 30", "API 28"),
        # 599
        ("8a1c2f492c5b425b9ab4044c94ff3714", "It's truncated back into a `uint8_t` giving "
         "`0xfa == 250`.", "250", "251"),
        # 661
        ("5e9d93e70b6948e6b23c760b572cb251", "Newer programming languages still use 0 for False, "
         "but 1 for True.", "1 for True", "-1 for True"),
        # 731
        ("395e18264ae04464971000347270f213", "`grep` defines success as matching 1 or more lines.",
         "1 or more", "2 or more"),
        # 211
        ("460f6bae7c774aea9ef0636bc7cba7b2", "Then, python is expecting a 2-length iterable, and "
         "try to unpack it, but as it says: it 'cannot unpack non-iterable int object'...",
         "2-length", "3-length"),
        # 441
        ("a7ac24ff698e4b4f8d031d35bad7b06a", "The requested number must be at least N+1, this is "
         "why we increment.", "N+1", "N+2"),
        # 349
        ("ea904a81f2bc41f28e48d7c6648a4cbc", "`+` means to match 1 or more of the preceeding "
         "token.", "1 or more", "0 or more"),
        # 451
        ("e697a14b24e34a69baf0a6b69470077e", "For generic parameters you need at least two here.",
         "at least two", "at least three"),
        # 717
        ("727aa47bfb0645dbafdea7995c1df5b1", "If you were to call `next` a third time, you would "
         "get a `StopIteration` exception.", "a third time", "a second time"),
        # 919
        ("562a30191a004d6db252d1d9e581e5db", "So, in the function where you set your variables, "
         "everything gets the value 10 (you can see this in the debugger if you put a "
         "breakpoint).", "value 10", "value 20"),
        # 619
        ("290fa7b6897945adb90f51ac0d0e4e13", "To summarize the different answers listed on this "
         "question, there are good four options as of writing this: `trunc/1`, `round/1`, "
         "`floor/1`, and `ceil/1`.", "four options", "three options"),
    ]),
    *_facts("name", [
        # 115
        ("6c6a37eb7bc947eab295fcd9b441249b", "The *only* system call that creates a new process is "
         "`fork`.", "`fork`", "`execve`"),
        # 121
        ("658d7830422b44c492abd1aeeef3814e", "That is `sizeof( 'A' )` is equal to `sizeof( int )`.",
         "sizeof( int )", "sizeof( char )"),
        # 147
        ("34a65e4fa31141f487af3cb6dbfef4e4", "Just override `PersonRepository` 's `findAll()` and "
         "use `@EntityGraph` to configure the graph.", "@EntityGraph", "@BatchSize"),
        # 187
        ("aaecdd7aeb474bb6ae8fa44d132a58df", "On Android you do this with `addValueEventListener`, "
         "which you should try to use whenever possible.", "addValueEventListener",
         "addListenerForSingleValueEvent"),
        # 195
        ("a6121db85f1e4d6cac438cf210eb6304", "Instead, it might be better to fix the compinit "
         "problem, by using `compinit -i`.", "compinit -i", "compinit -u"),
        # 227
        ("6cc796d562754240a4c2c18cfaf149d8", "If you want all of the matches then you probably "
         "want to use `find_iter()`, which gives you an iterator over all of the matches.",
         "find_iter()", "find()"),
        # 703
        ("01d0370326ab4b0a89ca975418c5ee8f", "Using `<T: Any>` will restrict `T` to non-nullable "
         "types.", "<T: Any>", "<T: Any?>"),
        # 729
        ("02e238f91a3f401aa1f8068a8d397d9b", "Use `crontab -l` to list your configured jobs.",
         "crontab -l", "crontab -e"),
        # 763
        ("bf954e7fd28f4076b69967e1614c9f6b", "`RUN cd /` does absolutely nothing.", "RUN cd /",
         "WORKDIR /"),
        # 777
        ("ee1fb44e9b404c0db870cde6a27c7872", "Just replace `#[test]` with `#[tokio::test]` before "
         "any test function.", "#[tokio::test]", "#[tokio::main]"),
        # 797
        ("0212c3bebe524463ab360ffd041619eb", "The Type returned from `http.get()` and "
         "`getProducts()` should be `Observable<Product[]>`", "Observable<Product[]>",
         "Promise<Product[]>"),
        # 799
        ("28f2e7cb1d954fb8b4da34daedcc8e76", "To fix the error, you should pass `null` as an "
         "initial value to the `useRef` hook.", "`null`", "`undefined`"),
        # 805
        ("566a2787de6c4327b5f7c7cc6b411475", "What your looking for is - `enabledBorder` property "
         "of `InputDecoration`.", "enabledBorder", "focusedBorder"),
        # 827
        ("62f5682986314c42aec1bf60401f13d0", "You can use `setupFiles` to add a file that gets run "
         "in process with each test file.", "setupFiles", "globalSetup"),
        # 851
        ("ad2145ac574d420a8060d88261c73f58", "You can get the key and value using "
         "`Object.entries`:", "Object.entries", "Object.keys"),
        # 881
        ("9ab37c4570dc4993a8a13153b3bda152", "You could pass the inverse tuples to the "
         "constructor, using `Array.from` and `Array#reverse`:", "Array#reverse", "Array#sort"),
        # 665
        ("444cc65dfa1849e39457a4823f1e9fc8", "Use `@JvmField` annotation to restrict compiler not "
         "to auto-generate getters/setters and implement one yourself", "@JvmField",
         "@JvmStatic"),
        # 753
        ("c9bee6652e684a1c97381d7f7091c0c9", "Please add "
         "`'@typescript-eslint/no-non-null-assertion': 'off'` to your config file like below.",
         "no-non-null-assertion", "no-explicit-any"),
        # 809
        ("17d677754879445486fc10ca36d3c1f0", "By using `resolutions` we are specifying strict "
         "restrictions for dependencies of dependencies.", "`resolutions`", "`peerDependencies`"),
        # 93
        ("057401e5a453453d8bb7c56106952517", "Well most built in concrete exception classes are "
         "for specific use cases, and this one does not really fit in any but `RuntimeError`.",
         "RuntimeError", "ValueError"),
        # 89
        ("6e4c439a3bb743d684eb0dec5ce6cbe7", "This will be used when "
         "`spark.sql.hive.convertMetastoreParquet` is set to `false`.", "convertMetastoreParquet",
         "metastorePartitionPruning"),
    ]),
    *_facts("negation", [
        # 127
        ("c3256415d7d74c46b52cfb46106a9eab", "`StatefulWidget` is necessary for when the widget "
         "itself is maintaining its own state.", "is necessary", "is not necessary"),
        # 171
        ("901f88f0539b42a0a84f31dbd324bdcd", "There is no way to tell `cargo check` or `cargo fix` "
         "to ignore certain lint rules through the command line tool.", "There is no way",
         "There is a way"),
        # 179
        ("df31508ddb234084b50737920b3b70a0", "`subscribe` is not an rxjs equivalent of `then`.",
         "is not an", "is an"),
        # 219
        ("68ffa98af9f143b3ab4290cfc672027c", "You cannot reconstitute the information after you "
         "mapped the `Person` to a plain name `String`.", "You cannot", "You can"),
        # 673
        ("3494394f9b4e424f874c7901d9451b3e", "`const val`s cannot be in a class.", "cannot", "can"),
        # 683
        ("97c176edbc4e42dca4c8e8cb378ba2da", "The `onClick` parameter doesn't accept a composable "
         "function.", "doesn't accept", "accepts"),
        # 735
        ("82e5a3a10ecb422aa6a78faf1ddee320", "Compilers do assume that a valid C++ program does "
         "not contain UB.", "do assume", "do not assume"),
        # 765
        ("3dfbd8d94985431996a59a6dfc92d77d", "This means that the caller will not wait for "
         "everything in your method to finish before it proceeds.", "will not wait", "will wait"),
        # 769
        ("2a2469b5a5ca40f892ef0fef5eea49b7", "Since all Eloquent models `extends Model` it can not "
         "extend another class.", "can not extend", "can extend"),
        # 787
        ("8752cce043de45e6b2505e9f8fcea1b0", "This is needed because every shell on `macOS` by "
         "default is a login shell.", "is a login shell", "is not a login shell"),
        # 825
        ("e71ead5029474d55ac2d901643cedab5", "Most of the time, it's better to throw an error.",
         "better to throw", "better not to throw"),
        # 857
        ("ac0663a2384247df8e38679e4da9f529", "`useRef` does not return the value in the ref - "
         "typing the return value as `HTMLElement | null` is inaccurate.", "does not return",
         "returns"),
        # 607
        ("335de58a24224091b666ed6c2dd81d7e", "`virtual ~A() = default;` is a user declared "
         "destructor.", "is a user", "is not a user"),
        # 305
        ("dcadc803eae64931a6a9faab285c9738", "In C++ you may not ignore the terminating zero "
         "character `'\\0'` of a string literal used as an initializer.", "may not ignore",
         "may ignore"),
        # 169
        ("515f8b574cb449868d5a44dcc7fec760", "Dart static method invocations are resolved at "
         "compile-time, so it's not possible to call them on type variables which only have a "
         "value at run-time.", "it's not possible", "it's possible"),
        # 255
        ("c71c4a7aba844103950ddb33e1337cb9", "It is not guaranteed that the elements are "
         "initialized in the order of their indices.", "is not guaranteed", "is guaranteed"),
        # 295
        ("7b0fb98fbc404a53a36dfbdbe514afdd", "Since String implements the Drop trait, your struct "
         "can not implement the Copy trait.", "can not implement", "can implement"),
        # 301
        ("42fde842cc7a4215ad7fcaf2739654b4", "`apt` is meant to be used interactively.",
         "is meant", "is not meant"),
        # 309
        ("851775c861ed474c827687806c6876be", "Unfortunately, you cannot use reflection/mirrors in "
         "flutter.", "Unfortunately, you cannot use", "You can use"),
        # 105
        ("50ffe419b09b4d65878aa3787dd73f78", "In the unix world, the shell is expected to perform "
         "wildcard expansion.", "is expected", "is not expected"),
        # 515
        ("e3794f0d30fc41a3a16e7994916173fb", "Instance method (*show*) need an instance and must "
         "use *self* as the first parameter.", "must use", "must not use"),
    ]),
)  # fmt: skip

_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(\"'])")
_LIST_MARKER = re.compile(r"^(?:[-*+]|\d+[.)])\s+")
_NOT_PROSE = re.compile(r"^(?:>|#|\||---|```)")
# A quote, a rule or a list run into the sentence, a link, a cut-off end ("i.e.", " -").
_JUNK = re.compile(r" > |---|\s\d+\)\s|https?://|\[\d+\]|\b(?:i\.e|e\.g)\.$|\s-$")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_FENCE = re.compile(r"```.*?```", re.DOTALL)
_EMPHASIS = re.compile(r"(\*\*|__|\*)(?=\S)(.+?)(?<=\S)\1")
# A code span that reads as a word once unwrapped, between spaces or punctuation.
_UNWRAPPABLE = re.compile(r"(?<!\w)`([@#]?[A-Za-z_][\w.#/-]*(?:\(\))?)`(?!\w)")
_NEGATION = re.compile(r"\b(not|no|never|cannot)\b|n't\b", re.IGNORECASE)
_CONTRACT = [
    ("does not", "doesn't"), ("do not", "don't"), ("is not", "isn't"), ("are not", "aren't"),
    ("cannot", "can't"), ("can not", "can't"), ("will not", "won't"), ("it is", "it's"),
]  # fmt: skip
_EXPAND = [
    ("doesn't", "does not"), ("don't", "do not"), ("isn't", "is not"), ("aren't", "are not"),
    ("can't", "cannot"), ("won't", "will not"), ("it's", "it is"), ("you're", "you are"),
    ("you'll", "you will"), ("wouldn't", "would not"), ("didn't", "did not"),
]  # fmt: skip
_FILLERS = re.compile(
    r"^(?:Just|Simply|Well|Basically|Currently|Then|So|Instead|Firstly|Please|"
    r"I (?:think|guess)(?: that)?|Seems like|It seems that|It looks like),?\s+"
)
LEAD_INS = ("In short, ", "Note that ", "Basically, ", "Keep in mind that ", "In practice, ")
# Names that keep their capital after a lead-in ("Note that Dart …", not "the …").
_PROPER = frozenset(
    "I Android Anaconda Angular C Composer Dart Docker Eloquent Elixir Firebase Flutter Hive "
    "Java JavaScript Jest Kotlin Laravel Linux MacOS Node PHP PostgreSQL Python React Rust "
    "Spark SQL TypeScript Ubuntu Unix Windows Xcode Yarn".split()
)
# Sentences that open with one of these already have a lead-in, or read wrong after one
# (an instruction: "Note that use …").
_OPENERS = frozenset(
    "but however so and or also then instead well just note basically edit update yes no "
    "first firstly finally add call change check create install make pass put remove "
    "replace run see set switch try use".split()
)
STYLES = (
    "verbatim",
    "lead-in added",
    "code spans unwrapped",
    "markdown stripped",
    "contractions",
    "contractions expanded",
    "filler dropped",
    "code span bolded",
)
INTROS = (
    "Here is what is going on.",
    "A few things matter here:",
    "This comes down to the following.",
    "Short version:",
)
# Uncited general knowledge, by StackEval tag (true, and said by no accepted answer here).
GENERAL: dict[str, tuple[str, ...]] = {
    "python": (
        "A virtual environment keeps a project's packages apart from the system Python.",
        'You can see which interpreter runs your code with `python -c "import sys; '
        'print(sys.executable)"`.',
    ),
    "javascript": (
        "Keeping the lock file in version control makes installs reproducible across machines.",
        "The browser's developer tools show such errors in the console with a stack trace.",
    ),
    "typescript": (
        "TypeScript's types are erased when it compiles to JavaScript, so they do not exist at "
        "run time.",
        "Running `tsc --noEmit` type-checks a project without writing any output.",
    ),
    "c": (
        "Compiling with warnings enabled, for example `-Wall -Wextra`, catches many mistakes of "
        "this kind early.",
        "Undefined behaviour means the program may seem to work with one compiler and fail with "
        "another.",
    ),
    "bash/shell": (
        'Quoting variables, as in `"$var"`, protects them from word splitting and globbing.',
        "The `man` page of a command is the quickest reference for its options.",
    ),
    "java": ("Rebuilding the project often clears errors the IDE kept from an earlier build.",),
    "kotlin": ("Kotlin compiles to JVM bytecode, so Kotlin and Java code can call each other.",),
    "rust": (
        "`cargo doc --open` builds and opens the documentation of your crate and its dependencies.",
    ),
    "sql": (
        "Trying such a change inside a transaction lets you roll it back if the result is "
        "not what you expected.",
    ),
    "dart": ("Flutter's hot reload shows most such changes without restarting the app.",),
    "php": ("Composer records each package's version in `composer.lock`.",),
    "": (
        "A minimal reproducible example makes this kind of problem much easier to pin down.",
        "Checking the documentation of the exact version you use avoids surprises, since "
        "defaults change between releases.",
    ),
}
_TAG_FAMILY = {"c++": "c", "scala": "java"}
_FENCE_LANGUAGE = {
    "python": "python", "javascript": "javascript", "typescript": "typescript", "c": "c",
    "c++": "cpp", "bash/shell": "bash", "java": "java", "kotlin": "kotlin", "rust": "rust",
    "sql": "sql", "dart": "dart", "r": "r", "php": "php", "scala": "scala", "elixir": "elixir",
}  # fmt: skip


class BuildError(ValueError):
    """A listed fact does not fit its question or the rules of the set."""


def locate(text: str, sentence: str) -> tuple[int, int] | None:
    """Where `sentence` is in `text`, whatever the spacing between its words."""
    pattern = r"\s+".join(re.escape(word) for word in sentence.split())
    match = re.search(pattern, text)
    return match.span() if match else None


def source_sentences(source: str) -> list[tuple[int, str]]:
    """The prose sentences of the source that state something, with where each starts:
    paragraphs and list items, never a quote, a heading, a table or code."""
    prose = _FENCE.sub(lambda m: "\n" * (m.group(0).count("\n") + 2), source)
    units: list[str] = []
    paragraph: list[str] = []
    for line in [*prose.splitlines(), ""]:
        stripped = line.strip()
        item = _LIST_MARKER.match(stripped)
        if not stripped or _NOT_PROSE.match(stripped) or item:
            units.append(" ".join(paragraph))
            paragraph = []
            if item:
                units.append(stripped[item.end() :])
            continue
        paragraph.append(stripped)
    found: list[tuple[int, str]] = []
    for unit in units:
        for part in _SPLIT.split(unit):
            part = part.strip()
            whole = part.endswith((".", "!", ":")) and not _JUNK.search(part)
            where = locate(source, part) if whole and usable(part) else None
            if where:
                found.append((where[0], part))
    return found


def _outside_code(text: str, change: Callable[[str], str]) -> str:
    """`change` applied to the text between code spans only."""
    parts = re.split(r"(`[^`\n]+`)", text)
    return "".join(part if part.startswith("`") else change(part) for part in parts)


def _replace_words(text: str, pairs: list[tuple[str, str]]) -> str:
    def one(part: str) -> str:
        for old, new in pairs:
            part = re.sub(rf"\b{re.escape(old)}\b", new, part)
            part = re.sub(rf"\b{re.escape(old.capitalize())}\b", new.capitalize(), part)
        return part

    return _outside_code(text, one)


def _lead_in(text: str, turn: int) -> str:
    first = re.split(r"[^\w']", text, maxsplit=1)[0]
    if first.lower() in _OPENERS or _FILLERS.match(text) or text.startswith("For example"):
        return text
    if first not in _PROPER and (first[1:].islower() or first == "A"):
        text = text[:1].lower() + text[1:]
    return LEAD_INS[turn % len(LEAD_INS)] + text


def _drop_filler(text: str) -> str:
    rest = _FILLERS.sub("", text, count=1)
    return rest[:1].upper() + rest[1:] if rest != text else text


def _bold_first_span(text: str) -> str:
    return _CODE_SPAN.sub(lambda m: f"**{m.group(0)}**", text, count=1)


def restyle(text: str, style: str, turn: int = 0) -> str:
    """`text` restated the way `style` says; facts (numbers, names, negations) are kept."""
    if style == "lead-in added":
        return _lead_in(text, turn)
    if style == "code spans unwrapped":  # not the first word: it would gain a capital
        return _UNWRAPPABLE.sub(lambda m: m.group(1) if m.start() else m.group(0), text)
    if style == "markdown stripped":
        return _EMPHASIS.sub(r"\2", text).replace("\\_", "_")
    if style == "contractions":
        return _replace_words(text, _CONTRACT)
    if style == "contractions expanded":
        return _replace_words(text, _EXPAND)
    if style == "filler dropped":
        return _drop_filler(text)
    if style == "code span bolded":
        return _bold_first_span(text)
    return text


def restate(text: str, rng: random.Random, turn: int) -> tuple[str, str]:
    """A style drawn by `rng` among those that change `text` (or "verbatim"), and the
    text restated that way."""
    usable_styles = [s for s in STYLES if s == "verbatim" or restyle(text, s, turn) != text]
    style = rng.choice(usable_styles)
    return style, restyle(text, style, turn)


def cite(text: str, before_code: bool) -> str:
    """`text` citing source 1 at its end: "… [1]." (or "… [1]:" before its code block)."""
    text = text[:1].upper() + text[1:]
    body = text.rstrip().rstrip(".:;!")
    return f"{body} [1]{':' if before_code and text.rstrip().endswith(':') else '.'}"


def change_fact(sentence: str, fact: Fact) -> str:
    """The sentence with the fact changed (its first occurrence)."""
    if fact.old not in sentence:
        raise BuildError(f"{fact.question_id}: {fact.old!r} is not in {sentence!r}")
    return sentence.replace(fact.old, fact.new, 1)


def negation_direction(fact: Fact) -> str:
    """ "inserted" when the change adds a negation, "removed" when it takes one away."""
    return (
        "inserted"
        if len(_NEGATION.findall(fact.new)) > len(_NEGATION.findall(fact.old))
        else "removed"
    )


@dataclass(frozen=True)
class _Item:
    position: int  # in the source: the answer keeps the source's order
    text: str  # a cited sentence as restated, or a code block
    code: bool = False
    target: bool = False  # the sentence whose fact the changed copy alters


def _code_blocks(source: str) -> list[tuple[int, str]]:
    """The source's short code blocks (at most 15 lines) and where they start."""
    return [
        (m.start(), m.group(0)) for m in _FENCE.finditer(source) if m.group(0).count("\n") <= 15
    ]


def _layout(items: list[_Item], layout: str, intro: str, general: str, early: bool) -> str:
    """The answer: an optional intro, the cited sentences as `layout` says (bullets, a
    numbered list or prose), the code block where it was in the source, and the uncited
    sentence first (`early`, after the intro) or at the end."""
    blocks: list[str] = [intro] if intro else []
    group: list[str] = []
    numbered = 0  # a numbered list goes on after a code block

    def flush() -> None:
        nonlocal numbered
        if layout == "bullets":
            blocks.append("\n".join(f"- {line}" for line in group))
        elif layout == "numbered":
            blocks.append("\n".join(f"{numbered + n}. {s}" for n, s in enumerate(group, 1)))
            numbered += len(group)
        else:
            blocks.append(" ".join(group))
        group.clear()

    for item in items:
        if item.code:
            if group:
                flush()
            blocks.append(item.text)
        else:
            group.append(item.text)
    if group:
        flush()
    if general and early:  # as an opener, after the intro
        blocks.insert(1 if intro else 0, general)
    elif general:
        blocks.append(general)
    return "\n\n".join(blocks)


def _fenced(block: str, tag: str, rng: random.Random) -> str:
    """The code block, half the time with the language named after its fence."""
    language = _FENCE_LANGUAGE.get(tag, "")
    if language and block.startswith("```\n") and rng.random() < 0.5:
        return f"```{language}\n{block[4:]}"
    return block


def _general(tag: str, rng: random.Random) -> str:
    pool = GENERAL.get(_TAG_FAMILY.get(tag, tag)) or GENERAL[""]
    return rng.choice(pool) if rng.random() < 0.6 else ""


def _order(item: _Item) -> tuple[int, bool]:
    return item.position, item.code


def _items(
    placed: list[tuple[int, str, bool]],
    code: _Item | None,
    lead: int,
    changed: str,
    seed: float,
    turn: int,
) -> tuple[list[_Item], list[_Item], list[str]]:
    """The supported copy's items, the changed copy's, and each sentence's restatement.

    Both copies restate each sentence the same way; the target's fact is changed before
    it is restated, so the two differ in that fact only. The code block goes right after
    the sentence at `lead` (the last kept one before it in the source).
    """
    drawn = random.Random(seed)
    good: list[_Item] = []
    bad: list[_Item] = []
    edits: list[str] = []
    for n, (position, text, target) in enumerate(placed):
        style, restated = restate(text, drawn, turn + n)
        edits.append(style)
        altered = restyle(changed, style, turn + n) if target else restated
        good.append(_Item(position, cite(restated, position == lead), target=target))
        bad.append(_Item(position, cite(altered, position == lead), target=target))
    if code:
        code = _Item(lead, code.text, code=True)
        good.append(code)
        bad.append(code)
    return sorted(good, key=_order), sorted(bad, key=_order), edits


def build_pair(
    row: dict[str, Any], line: int, fact: Fact, rng: random.Random, turn: int
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The supported answer and its copy with the fact changed, for one question."""
    source = source_text(row)
    span = locate(source, fact.sentence)
    if span is None:
        raise BuildError(f"{fact.question_id}: the sentence is not in the accepted answer")
    sentence = " ".join(source[span[0] : span[1]].split())
    changed = change_fact(sentence, fact)
    # Other sentences of the answer, cited too: none overlapping the fact's sentence.
    others = [
        (where, text)
        for where, text in source_sentences(source)
        if (where + len(text) <= span[0] or where >= span[1]) and fact.old not in text
    ]
    kept = rng.sample(others, min(len(others), rng.choice((0, 1, 1, 2, 2, 3))))
    placed = sorted([(p, s, False) for p, s in kept] + [(span[0], sentence, True)])
    tag = str(row["questionMetadata"]["tag"])
    # A code block that follows a kept sentence; the one right after "you can write this:".
    codes = [c for c in _code_blocks(source) if c[0] > placed[0][0]]
    after = [c for c in codes if c[0] >= span[1]]
    code: _Item | None = None
    if after and sentence.endswith(":"):
        code = _Item(after[0][0], _fenced(after[0][1], tag, rng), code=True)
    elif codes and rng.random() < 0.6:
        where, block = after[0] if after and rng.random() < 0.7 else codes[0]
        code = _Item(where, _fenced(block, tag, rng), code=True)
    # A sentence that introduces code ("… like this:") stays only before its code block.
    lead = max((p for p, _, _ in placed if code and p < code.position), default=-1)
    placed = [entry for entry in placed if entry[2] or entry[0] == lead or entry[1][-1] != ":"]
    layout = rng.choice(("prose", "prose", "bullets", "numbered"))
    intro = rng.choice(INTROS) if layout != "prose" or rng.random() < 0.3 else ""
    general, early = _general(tag, rng), rng.random() < 0.4
    good_items, bad_items, edits = _items(placed, code, lead, changed, rng.random(), turn)
    original = next(item.text for item in good_items if item.target)
    false_claim = next(item.text for item in bad_items if item.target)
    if false_claim == original:
        raise BuildError(f"{fact.question_id}: restating lost the change")
    question = str(row["question"]).strip()[:MAX_CHARS]
    sources = [{"title": "Accepted answer", "text": source}]
    meta = {"stackeval_line": line, "question_id": fact.question_id}
    good = {"question": question, "sources": sources,
            "answer": _layout(good_items, layout, intro, general, early),
            "supported": True, "kind": "supported", "edits": edits, **meta}  # fmt: skip
    bad = {"question": question, "sources": sources,
           "answer": _layout(bad_items, layout, intro, general, early),
           "supported": False, "kind": fact.kind, "false_claim": false_claim,
           "original": original, "source_sentence": sentence,
           "change": {"from": fact.old, "to": fact.new}, "edits": edits, **meta}  # fmt: skip
    if fact.kind == "negation":
        bad["negation"] = negation_direction(fact)
    return good, bad


def excluded_ids(rows: list[dict[str, Any]], paths: Iterable[Path]) -> set[str]:
    """StackEval ids of the questions of the other sets (by `question_id`, or by the
    question's text for the first set, which has no id)."""
    by_question = {str(r["question"]).strip()[:MAX_CHARS]: str(r["questionId"]) for r in rows}
    found: set[str] = set()
    for path in paths:
        for line in path.read_text("utf-8").splitlines():
            if line.strip():
                case = json.loads(line)
                found.add(case.get("question_id") or by_question[str(case["question"])])
    return found


def build(
    rows: list[dict[str, Any]], excluded: set[str], seed: int, facts: Iterable[Fact] = FACTS
) -> list[dict[str, Any]]:
    """Two cases per fact, supported then changed, in an order drawn from `seed`.

    Raises BuildError when a fact's question is at an odd position, is used by another
    set (`excluded` ids) or by another fact, or when the fact is not in its sentence.
    """
    position = {str(r["questionId"]): i for i, r in enumerate(rows)}
    chosen = list(facts)
    seen: set[str] = set()
    for fact in chosen:
        index = position.get(fact.question_id)
        if index is None:
            raise BuildError(f"{fact.question_id}: not a StackEval question")
        if index % 2:
            raise BuildError(f"{fact.question_id}: at odd position {index}, kept for the checker")
        if fact.question_id in excluded or fact.question_id in seen:
            raise BuildError(f"{fact.question_id}: already used by another set or fact")
        if fact.kind not in KINDS:
            raise BuildError(f"{fact.question_id}: unknown kind {fact.kind!r}")
        seen.add(fact.question_id)
    rng = random.Random(seed)
    rng.shuffle(chosen)
    cases: list[dict[str, Any]] = []
    for turn, fact in enumerate(chosen):
        index = position[fact.question_id]
        cases += build_pair(rows[index], index + 1, fact, rng, turn)
    return cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stackeval", type=Path, default=STACKEVAL)
    parser.add_argument("--exclude", type=Path, action="append", default=None)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    rows = [json.loads(line) for line in args.stackeval.read_text("utf-8").splitlines() if line]
    excluded = excluded_ids(rows, args.exclude if args.exclude is not None else EXCLUDE)
    try:
        cases = build(rows, excluded, args.seed)
    except BuildError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 1
    with args.out.open("w", encoding="utf-8") as sink:
        for case in cases:
            sink.write(json.dumps(case, ensure_ascii=False) + "\n")
    kinds: dict[str, int] = {}
    for case in cases:
        kinds[case["kind"]] = kinds.get(case["kind"], 0) + 1
    sys.stdout.write(f"wrote {len(cases)} cases to {args.out}: {kinds}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
