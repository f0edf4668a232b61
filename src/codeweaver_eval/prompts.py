"""The prompts only measurement sends: the bare model, the answer judge and the intent
classifier (the pipeline decides intent by rules). Untrusted text is delimited as in
`codeweaver.agent.prompts`."""

from __future__ import annotations

from langchain_core.messages import BaseMessage, HumanMessage

from codeweaver.agent.prompts import ALONE_ANSWER, UNTRUSTED, data_block, defuse, system_message

# The baseline every pipeline step must beat: the same model, the one plain system prompt
# the pipeline itself answers with when it has no source.
BARE_ANSWER = ALONE_ANSWER

JUDGE_ANSWER = """You grade an answer to a Stack Overflow question against the accepted \
answer, which is known to be correct.
{untrusted}
Score the candidate answer:
- 3: correct and as useful as the accepted answer, or more;
- 2: correct and useful, though less complete than the accepted answer;
- 1: partly useful but with a mistake, or missing what the accepted answer says matters;
- 0: wrong, off topic, or no answer.
Reply with JSON only: {{"score": 0}}"""

CLASSIFY_INTENT = """You classify a developer's question.
{untrusted}
Reply with JSON only: {{"intent": "..."}}
- "debugging": an error, exception, crash, wrong output or something not working.
- "code_review": asks to review, improve or critique given code.
- "learning": how to do something, what something is, or which approach is better."""


def bare_messages(question: str) -> list[BaseMessage]:
    """The question as a user would paste it to the model alone."""
    return [system_message("bare_answer", BARE_ANSWER), HumanMessage(defuse(question))]


def judge_answer_messages(question: str, reference: str, answer: str) -> list[BaseMessage]:
    return [
        system_message("judge_answer", JUDGE_ANSWER.format(untrusted=UNTRUSTED)),
        HumanMessage(
            f"{data_block('message', question)}\n{data_block('source', reference)}\n"
            f"{data_block('previous_answer', answer)}\n"
            "<message> is the question, <source> the accepted answer, <previous_answer> "
            "the candidate answer to score."
        ),
    ]


def intent_messages(question: str) -> list[BaseMessage]:
    return [
        system_message("classify_intent", CLASSIFY_INTENT.format(untrusted=UNTRUSTED)),
        HumanMessage(data_block("message", question)),
    ]
