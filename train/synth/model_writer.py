"""The policy model as the writer of a fact's question, under a grammar: the alternative to the templates that
`scripts/synth_writer_probe.py` measures against them (the templates won: docs/training.md, "Synthesized questions").

The model sees the fact's document title, its unit and its answer, after two worked examples, and writes a JSON
object whose `question` must start with a question word and end with "?" (the schema's pattern, enforced by the
embedded engine's grammar). Nothing else is checked here: the filters (filters.py) judge its questions as they judge
the templates'.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .facts import Fact

if TYPE_CHECKING:
    from deepresearch.agent.model.base import ChatModel

SCHEMA = {
    "type": "object",
    "properties": {"question": {
        "type": "string",
        "pattern": "^(What|Who|When|Where|Which|How many|How much|In what year) [^\"?]{5,140}\\?$",
    }},
    "required": ["question"],
}
SYSTEM = ("You turn a sentence and its answer into one short quiz question about the topic. The answer must be "
          "exactly the given answer. Do not copy the sentence and do not put the answer in the question. "
          "Reply in JSON.")
SHOTS = (
    ("Aphra Behn", "Aphra Behn died on 16 April 1689 and was buried in Westminster Abbey.", "16 April 1689",
     "When did Aphra Behn die?"),
    ("Numb", "\"Numb\" is a song by American rock band Linkin Park.", "Linkin Park",
     "Which band recorded the song Numb?"),
)


def messages(fact: Fact) -> list[dict[str, str]]:
    out = [{"role": "system", "content": SYSTEM}]
    for title, sentence, answer, question in SHOTS:
        out += [{"role": "user", "content": f"Topic: {title}\nSentence: {sentence}\nAnswer: {answer}"},
                {"role": "assistant", "content": f'{{"question": "{question}"}}'}]
    out.append({"role": "user", "content": f"Topic: {fact.title}\nSentence: {fact.unit}\nAnswer: {fact.answer}"})
    return out


async def model_questions(model: ChatModel, facts: list[Fact], adapter: str | None = "",
                          temperature: float = 0.0, seed: int = 0) -> list[str | None]:
    """The model's question for each fact (None where it wrote none). `adapter` "" is the base model."""
    from deepresearch.agent.model.types import ChatRequest, Message, Sampling

    requests = [ChatRequest(messages=[Message(**m) for m in messages(f)], json_schema=SCHEMA, adapter=adapter,
                            sampling=Sampling(temperature=temperature, max_tokens=60, seed=seed + i))
                for i, f in enumerate(facts)]
    out: list[str | None] = []
    for completion in await model.chat_many(requests):
        parsed = completion.parsed if isinstance(completion.parsed, dict) else {}
        question = parsed.get("question")
        out.append(question.strip() if isinstance(question, str) and question.strip() else None)
    return out
