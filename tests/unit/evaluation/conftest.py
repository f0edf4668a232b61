"""Five real StackEval rows served by a loopback Stack Exchange API.

Questions and accepted answers: Stack Overflow content via ProsusAI/stack-eval, CC BY-SA 4.0.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codeweaver.evaluation.stackexchange_corpus import Corpus
from codeweaver.evaluation.stackexchange_loopback import StackExchangeLoopback, serve_loopback

ROWS: list[dict[str, Any]] = [
    {
        "questionId": "032f2981d80f4ca7bf068fd024246cd1",
        "question": (
            "How do I print an integer in binary with leading zeros?\n"
            "I'm doing some bit twiddling and I'd like to print all the bits in my "
            "u16.\n"
            "\n"
            "\n"
            "\n"
            "```\n"
            "let flags = 0b0000000000101100u16;\n"
            'println!("flags: {:#b}", flags);\n'
            "\n"
            "```\n"
            "\n"
            "This prints `flags: 0b101100`.\n"
            "\n"
            "\n"
            "How do I make it print `flags: 0b0000000000101100`?\n"
            "\n"
            "\n"
        ),
        "questionMetadata": {"tag": "rust"},
        "answer": (
            "I have come to prefer these patterns:\n"
            "\n"
            "\n"
            "\n"
            "```\n"
            'println!("{:08b}", 1i8);\n'
            'println!("{:016b}", 12000u16);\n'
            'println!("{:032b}", 624485u32);\n'
            "\n"
            "```\n"
            "\n"
            "it will print:\n"
            "\n"
            "\n"
            "\n"
            "```\n"
            "00000001\n"
            "0010111011100000\n"
            "00000000000010011000011101100101\n"
            "\n"
            "```\n"
            "\n"
        ),
    },
    {
        "questionId": "aef1e1fd1b17450a92c935f9b543a21c",
        "question": (
            "implicit declaration of function ‘atoi’?\n"
            "Why am I getting an error when using the `atoi()` function?\n"
            "\n"
            "\n"
            "\n"
            "```\n"
            "#include <stdio.h>\n"
            "#include <string.h>\n"
            "int main()\n"
            "{\n"
            "    char s1[10], s2[10];\n"
            "    int x=5, y=6, z;\n"
            '    sprintf(s1, "%d", x);\n'
            '    sprintf(s2, "%d", y);\n'
            "    strcat(s1, s2);\n"
            "    z = atoi(s1);\n"
            '    printf("%d, %s", z, s1);\n'
            "    return 0;\n"
            "}\n"
            "\n"
            "```\n"
            "\n"
        ),
        "questionMetadata": {"tag": "c"},
        "answer": ("\n```\n#include <stdlib.h>\n\n```\n\nWill fix it.\n\n\n"),
    },
    {
        "questionId": "aa29f59a0a734540840e65fa81abfce8",
        "question": (
            "Python range to list\n"
            "I am trying to convert a range to list.\n"
            "\n"
            "\n"
            "\n"
            "```\n"
            "nums = []\n"
            "for x in range (9000, 9004):\n"
            "    nums.append(x)\n"
            "    print nums\n"
            "\n"
            "```\n"
            "\n"
            "output\n"
            "\n"
            "\n"
            "\n"
            "```\n"
            "[9000]\n"
            "[9000, 9001]\n"
            "[9000, 9001, 9002]\n"
            "[9000, 9001, 9002, 9003]\n"
            "\n"
            "```\n"
            "\n"
            "I just need something like \n"
            "\n"
            "\n"
            "\n"
            "```\n"
            " [9000, 9001, 9002, 9003]\n"
            "\n"
            "```\n"
            "\n"
            "How do I get just the requred list ? \n"
            "\n"
            "\n"
        ),
        "questionMetadata": {"tag": "python"},
        "answer": (
            "Since you are taking the print statement under the for loop, so just "
            "placed the print statement out of the loop.\n"
            "\n"
            "\n"
            "\n"
            "```\n"
            "nums = []\n"
            "for x in range (9000, 9004):\n"
            "    nums.append(x)\n"
            "print (nums)\n"
            "\n"
            "```\n"
            "\n"
        ),
    },
    {
        "questionId": "8ec73f8669cc46b790ba7b812a64bcc2",
        "question": (
            "Is there a pytorch method to check the number of cpus?\n"
            "I can use this `torch.cuda.device_count()` to check the number of "
            "GPUs. I was wondering if there was something equivalent to check the "
            "number of CPUs.\n"
            "\n"
            "\n"
        ),
        "questionMetadata": {"tag": "python"},
        "answer": ("just use this :\n\n\n\n```\nos.cpu_count()\n\n```\n\n"),
    },
    {
        "questionId": "ce70991777b44853872caf25455d8804",
        "question": (
            "How to Set port in next.js\n"
            "one application is running on port 3000 and I want to run another "
            "application on a different port of the default port. How I change "
            "this in React Next.js.\n"
            "My **package.js** script is \n"
            "\n"
            "\n"
            "\n"
            "```\n"
            '"scripts": {\n'
            '    "test": "echo \\"Error: no test specified\\" && exit 1",\n'
            '    "dev": "next",\n'
            '    "build": "next build",\n'
            '    "start": "next start"\n'
            "  },\n"
            "\n"
            "```\n"
            "\n"
            "and start script command is\n"
            "`npm run dev`\n"
            "\n"
            "\n"
        ),
        "questionMetadata": {"tag": "javascript"},
        "answer": (
            "This work for me\n"
            "\n"
            "\n"
            "\n"
            "```\n"
            ' "scripts": { \n'
            '       "dev": "next dev -p 8080",\n'
            '       "start": "next start -p 8080",\n'
            "},\n"
            "\n"
            "```\n"
            "\n"
        ),
    },
]

RUST_BINARY, C_ATOI, PYTHON_RANGE, PYTORCH_CPUS, NEXT_PORT = (r["questionId"] for r in ROWS)


@pytest.fixture
def stackeval_file(tmp_path: Path) -> Path:
    path = tmp_path / "stack-eval.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    return path


@pytest.fixture
def corpus(stackeval_file: Path) -> Corpus:
    return Corpus.load(stackeval_file)


@pytest.fixture
def loopback(corpus: Corpus) -> StackExchangeLoopback:
    return StackExchangeLoopback(corpus)


@pytest.fixture
def base_url(loopback: StackExchangeLoopback) -> Iterator[str]:
    with serve_loopback(loopback) as url:
        yield url
