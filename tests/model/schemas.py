"""Twenty small JSON schemas with a prompt each, shaped like the agent's actions and answers."""

from __future__ import annotations

from typing import Any

TOOLS = ["search", "open", "python", "remember", "recall"]


def _obj(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required if required is not None else list(properties),
        "additionalProperties": False,
    }


STRING = {"type": "string"}

CASES: list[tuple[str, dict[str, Any]]] = [
    ("Which tool finds who wrote Hamlet? Give the tool and a search query.",
     _obj({"tool": {"enum": TOOLS}, "query": STRING})),
    ("What is the capital of France? Answer and give your confidence between 0 and 1.",
     _obj({"answer": STRING, "confidence": {"type": "number"}})),
    ("Name a city in Japan and its country.", _obj({"city": STRING, "country": STRING})),
    ("List up to three steps to boil an egg.",
     _obj({"steps": {"type": "array", "items": STRING, "maxItems": 3}})),
    ("Is the sky green? Answer true or false.", _obj({"is_true": {"type": "boolean"}})),
    ("In which year did the Second World War end?", _obj({"year": {"type": "integer"}})),
    ("Invent a person with a name and an age.", _obj({"name": STRING, "age": {"type": "integer"}})),
    ("Have you finished the research about whales? Say if done and why.",
     _obj({"done": {"type": "boolean"}, "reason": STRING})),
    ("Classify the sentiment of: 'I love this film'.",
     _obj({"sentiment": {"enum": ["positive", "negative", "neutral"]}})),
    ("Give a shopping list with at most two items and quantities.",
     _obj({"items": {"type": "array", "maxItems": 2,
                     "items": _obj({"name": STRING, "qty": {"type": "integer"}})}})),
    ("Write a blog post title about gardening and up to three tags.",
     _obj({"title": STRING, "tags": {"type": "array", "items": STRING, "maxItems": 3}})),
    ("Express 'seven times six' as two numbers and an operator.",
     _obj({"a": {"type": "number"}, "b": {"type": "number"}, "op": {"enum": ["+", "-", "*", "/"]}})),
    ("Which web page would you open to read about the Moon? Give its URL.", _obj({"url": STRING})),
    ("Plan research on the history of tea in at most three steps, each with a goal and a tool.",
     _obj({"plan": {"type": "array", "maxItems": 3,
                    "items": _obj({"goal": STRING, "tool": {"enum": TOOLS}})}})),
    ("Pick a color and give its hex code.",
     _obj({"color": {"enum": ["red", "green", "blue"]}, "hex": {"type": "string", "pattern": "^#[0-9a-f]{6}$"}})),
    ("Rate the film Titanic from 1 to 10.", _obj({"score": {"type": "integer", "minimum": 1, "maximum": 10}})),
    ("Ask a question about rivers and answer it.", _obj({"question": STRING, "answer": STRING})),
    ("Write one line of Python that prints hello, and name the language.",
     _obj({"language": STRING, "code": STRING})),
    ("Should we search again for the population of Paris? Decide and give the next query if so.",
     _obj({"decision": {"enum": ["continue", "finish"]}, "next_query": {"type": ["string", "null"]}})),
    ("Summarise: 'Paris is the capital of France [1]. It has 2 million people [2].' Cite sources by number.",
     _obj({"summary": {"type": "string", "maxLength": 200},
           "sources": {"type": "array", "items": {"type": "integer"}, "maxItems": 4}})),
]  # fmt: skip
