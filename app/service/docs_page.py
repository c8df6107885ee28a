"""The API reference at /docs: one self-contained HTML page written from the app's own OpenAPI document.

FastAPI's default /docs loads Swagger UI from a CDN, so offline (and this project runs offline) it was a
blank page. This page needs nothing beyond itself: no script, no remote asset (its CSP forbids both); the
machine-readable document stays at /openapi.json.
"""

from __future__ import annotations

from html import escape
from typing import Any

CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
METHODS = ("get", "post", "put", "patch", "delete")
CONSTRAINTS = {"minLength": "min length", "maxLength": "max length", "minimum": "≥", "maximum": "≤",
               "exclusiveMinimum": ">", "exclusiveMaximum": "<", "minItems": "min items", "maxItems": "max items"}
STYLE = """
body{font:15px/1.5 system-ui,sans-serif;max-width:62rem;margin:2rem auto;padding:0 1rem;color:#222}
h2{margin-top:2.5rem;border-bottom:1px solid #ccc}
section{border:1px solid #ddd;border-radius:6px;padding:.6rem 1rem;margin:1rem 0}
code,pre{font:13px/1.4 ui-monospace,monospace;background:#f5f5f5;padding:.1rem .3rem;border-radius:3px}
pre{white-space:pre-wrap;padding:.5rem}
.m{font-weight:bold;text-transform:uppercase;margin-right:.5rem}
.get{color:#0a6}.post{color:#06c}.put,.patch{color:#a60}.delete{color:#c22}
table{border-collapse:collapse;width:100%;margin:.4rem 0}
td,th{border-top:1px solid #eee;padding:.25rem .5rem;text-align:left;vertical-align:top}
"""


def type_of(schema: dict[str, Any]) -> str:
    """A schema's type in words, with links to named schemas (HTML)."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f'<a href="#schema-{escape(name)}">{escape(name)}</a>'
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            return " | ".join(type_of(s) for s in schema[key])
    if "enum" in schema:
        return " | ".join(f"<code>{escape(repr(v))}</code>" for v in schema["enum"])
    if "const" in schema:
        return f"<code>{escape(repr(schema['const']))}</code>"
    kind = schema.get("type", "any")
    if kind == "array":
        return f"list of {type_of(schema.get('items', {}))}"
    if kind == "object" and "additionalProperties" in schema and isinstance(schema["additionalProperties"], dict):
        return f"object of {type_of(schema['additionalProperties'])}"
    return escape(str(kind)) + (f" ({escape(str(schema['format']))})" if "format" in schema else "")


def limits_of(schema: dict[str, Any]) -> str:
    parts = [f"{label} {schema[key]}" for key, label in CONSTRAINTS.items() if key in schema]
    for sub in schema.get("anyOf", []):
        parts += [f"{label} {sub[key]}" for key, label in CONSTRAINTS.items() if key in sub]
    if "default" in schema:
        parts.append(f"default {schema['default']!r}")
    return escape(", ".join(parts))


def fields_table(schema: dict[str, Any]) -> str:
    props = schema.get("properties") or {}
    if not props:
        return f"<p>{type_of(schema)}</p>"
    required = set(schema.get("required", []))
    rows = "".join(
        f"<tr><td><code>{escape(name)}</code>{' *' if name in required else ''}</td><td>{type_of(sub)}</td>"
        f"<td>{limits_of(sub)}</td><td>{escape(sub.get('description', ''))}</td></tr>"
        for name, sub in props.items())
    return f"<table><tr><th>field (* required)</th><th>type</th><th>limits</th><th>meaning</th></tr>{rows}</table>"


def operation_html(method: str, path: str, op: dict[str, Any]) -> str:
    out = [f'<section id="{escape(method + path)}"><div><span class="m {method}">{method}</span>'
           f"<code>{escape(path)}</code> {escape(op.get('summary', ''))}</div>"]
    if op.get("description"):
        out.append(f"<pre>{escape(op['description'])}</pre>")
    if op.get("security"):
        out.append("<p>needs <code>Authorization: Bearer …</code> when the server has a token</p>")
    params = op.get("parameters") or []
    if params:
        rows = "".join(
            f"<tr><td><code>{escape(p['name'])}</code>{' *' if p.get('required') else ''}</td>"
            f"<td>{escape(p.get('in', ''))}</td><td>{type_of(p.get('schema', {}))}</td>"
            f"<td>{limits_of(p.get('schema', {}))}</td><td>{escape(p.get('description', ''))}</td></tr>"
            for p in params)
        out.append(f"<table><tr><th>parameter</th><th>in</th><th>type</th><th>limits</th><th>meaning</th></tr>"
                   f"{rows}</table>")
    body = ((op.get("requestBody") or {}).get("content") or {}).get("application/json")
    if body:
        out.append(f"<p>body (JSON): {type_of(body.get('schema', {}))}</p>")
    answers = []
    for code, response in (op.get("responses") or {}).items():
        kinds = ", ".join(escape(k) for k in (response.get("content") or {}))
        schema = ((response.get("content") or {}).get("application/json") or {}).get("schema")
        answers.append(f"<li><code>{escape(code)}</code> {escape(response.get('description', ''))}"
                       f"{' — ' + type_of(schema) if schema else ''}{' (' + kinds + ')' if kinds else ''}</li>")
    out.append(f"<ul>{''.join(answers)}</ul></section>")
    return "".join(out)


def docs_html(openapi: dict[str, Any]) -> str:
    """The reference page for an OpenAPI document (escaped throughout: descriptions are plain text)."""
    info = openapi.get("info", {})
    title = f"{info.get('title', 'API')} {info.get('version', '')}".strip()
    ops = [operation_html(method, path, op) for path, item in (openapi.get("paths") or {}).items()
           for method, op in item.items() if method in METHODS]
    schemas = (openapi.get("components") or {}).get("schemas") or {}
    described = "".join(f'<section id="schema-{escape(name)}"><h3>{escape(name)}</h3>'
                        f"<p>{escape(schema.get('description', ''))}</p>{fields_table(schema)}</section>"
                        for name, schema in schemas.items())
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{escape(title)}</title>"
            f'<meta name=viewport content="width=device-width,initial-scale=1"><style>{STYLE}</style></head><body>'
            f"<h1>{escape(title)}</h1><p>{escape(info.get('description', ''))}</p>"
            '<p>Every error is <code>{"detail": "one line"}</code>. The machine-readable document: '
            '<a href="openapi.json">openapi.json</a>.</p>'
            f"<h2>Endpoints</h2>{''.join(ops)}<h2>Schemas</h2>{described}</body></html>")
