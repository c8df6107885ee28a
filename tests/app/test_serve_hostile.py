"""`deepresearch serve` against hostile clients (issue 72, item 4): a real server process on loopback, raw
HTTP requests. A web page must not drive a loopback server (DNS rebinding, cross-origin POSTs); no input
may make it work without bound or fail rendering its own error; every error is one JSON line; the API
reference works offline."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from .fake_openai import fake_openai_server
from .servers import server_process
from .test_serve_api import QUESTION, fake_env, stream

JSON = {"content-type": "application/json"}


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    tmp = tmp_path_factory.mktemp("hostile")
    with (fake_openai_server() as fake, server_process("serve", "--port", "0", env=fake_env(tmp, fake.base_url)) as url,
          httpx.Client(base_url=url, timeout=60) as client):
        yield client


def one_line_error(response: httpx.Response) -> str:
    """The response's detail, checked to be the documented `{"detail": "one line"}` and nothing else."""
    assert response.headers["content-type"].startswith("application/json"), response.text[:300]
    body = response.json()
    assert list(body) == ["detail"] and isinstance(body["detail"], str), response.text[:300]
    assert body["detail"] and "\n" not in body["detail"] and "Traceback" not in body["detail"]
    return body["detail"]


@pytest.mark.parametrize("headers", [
    {"Host": "evil.example"},  # DNS rebinding: the page's own name, pointed at 127.0.0.1
    {"Host": "evil.example:8080"},
    {"Host": "127.0.0.1.nip.io"},  # names are never resolved: a rebinding name resolves to loopback too
])
def test_a_request_for_another_host_name_is_refused(api, headers):
    for method, path in (("GET", "/runs"), ("GET", "/health"), ("POST", "/runs")):
        response = api.request(method, path, headers=headers, json={"question": QUESTION, "offline": True})
        assert response.status_code == 421, response.text
        assert "localhost only" in one_line_error(response)
    assert all(r["question"] != QUESTION for r in api.get("/runs").json())  # no run was started


@pytest.mark.parametrize("headers", [
    {"Origin": "http://evil.example"},
    {"Origin": "null"},  # a sandboxed frame or a file:// page
    {"Origin": "http://localhost:1"},  # another local web app is another origin
    {"Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "same-site"},
])
def test_a_browser_request_from_another_site_is_refused(api, headers):
    response = api.post("/runs", json={"question": QUESTION, "offline": True}, headers=headers)
    assert response.status_code == 403, response.text
    assert "refused" in one_line_error(response)
    assert all(r["question"] != QUESTION for r in api.get("/runs").json())


def test_this_machines_clients_and_same_origin_pages_are_served(api):
    port = httpx.URL(str(api.base_url)).port
    for headers in ({"Host": f"localhost:{port}"}, {"Host": f"[::1]:{port}"}, {"Host": "127.0.0.2"},
                    {"Origin": str(api.base_url).rstrip("/"), "Sec-Fetch-Site": "same-origin"}, {}):
        assert api.get("/runs", headers=headers).status_code == 200, headers


@pytest.mark.parametrize(("body", "field"), [
    ('{"question": "q?", "max_time": NaN}', "max_time"),
    ('{"question": "q?", "max_time": Infinity}', "max_time"),
    ('{"question": "q?", "max_time": 1e400}', "max_time"),
    ('{"question": "q?", "max_time": 1e12}', "max_time"),
    ('{"question": "q\\ud800?"}', "question"),
    ('{"question": "q?", "index": "\\udfff"}', "index"),
    ('{"question": "q?", "\\ud800": 1}', ""),
    ('{"question": "q?", "offline": "maybe"}', "offline"),
    ('{"question": ' + json.dumps("q" * 1_000_001) + "}", "question"),
    ('{"question": "q?", "index": "' + "i" * 65 + '"}', "index"),
    ('{"question": "q?"', "JSON"),
    ("[" * 100_000 + "]" * 100_000, ""),
    ('"just a string"', ""),
])
def test_a_bad_run_request_is_one_json_line_and_no_run(api, body, field):
    before = len(api.get("/runs", params={"limit": 1000}).json())
    response = api.post("/runs", content=body.encode("utf-8", "surrogatepass"), headers=JSON)
    assert response.status_code in (400, 422), response.text[:300]
    assert field in one_line_error(response)
    assert len(api.get("/runs", params={"limit": 1000}).json()) == before


def test_feedback_numbers_must_be_finite(api):
    run_id = api.post("/runs", json={"question": QUESTION, "offline": True}).json()["id"]
    stream(api, run_id)
    for body in ('{"score": NaN}', '{"score": -Infinity}', '{"score": 1, "comment": "\\ud800"}'):
        response = api.post(f"/runs/{run_id}/feedback", content=body, headers=JSON)
        assert response.status_code == 422, response.text
        one_line_error(response)
    assert api.get(f"/runs/{run_id}").json()["feedback"] == []


def test_a_huge_or_endless_plan_edit_is_refused_at_once_and_the_run_still_waits(api):
    run_id = api.post("/runs", json={"question": QUESTION, "offline": True, "approve": True}).json()["id"]
    stream(api, run_id, until="ApprovalRequested")
    for steps in ([{"query": f"q{i}"} for i in range(20_000)], [{"query": "q" * 20_001}],
                  [{"query": "q", "goal": "g" * 2_001}], [{"query": "q", "tool": "t" * 65}], [{"query": "\ud800"}]):
        began = time.monotonic()
        content = json.dumps({"action": "edit", "steps": steps}).encode()
        response = api.post(f"/runs/{run_id}/plan", content=content, headers=JSON)
        assert response.status_code == 422, response.text[:300]
        assert time.monotonic() - began < 5
        assert "steps" in one_line_error(response)
    assert api.get(f"/runs/{run_id}").json()["status"] == "awaiting_approval"
    assert api.post(f"/runs/{run_id}/plan", json={"action": "reject"}).status_code == 200


def test_a_body_over_the_cap_is_413_whether_its_length_is_declared_or_not(api):
    big = b'{"question": "' + b"q" * (5 * 1024 * 1024) + b'"}'
    declared = api.post("/runs", content=big, headers=JSON)
    chunked = api.post("/runs", content=iter([big[:1024], big[1024:]]), headers=JSON)  # no Content-Length
    for response in (declared, chunked):
        assert response.status_code == 413
        assert "bytes" in one_line_error(response)


@pytest.mark.parametrize(("method", "path", "headers", "status"), [
    ("GET", "/nowhere", {}, 404),
    ("DELETE", "/runs", {}, 405),
    ("GET", "/runs/" + "a" * 65, {}, 422),
    ("GET", "/runs?status=" + "s" * 41, {}, 422),
    ("GET", "/runs?limit=NaN", {}, 422),
    ("GET", "/runs/nosuchrun/events", {"Last-Event-ID": b"\xb2"}, 404),
])
def test_every_other_error_is_one_json_line(api, method, path, headers, status):
    response = api.request(method, path, headers=headers)
    assert response.status_code == status, response.text
    one_line_error(response)


def test_last_event_id_that_is_no_number_replays_from_the_start(api):
    run_id = api.post("/runs", json={"question": QUESTION, "offline": True}).json()["id"]
    full = stream(api, run_id)
    # Header bytes are read as Latin-1: b"\xb2" is "²", and "²".isdigit() is true while int("²") fails.
    for odd in (b"\xb2", b"-1", b"1e3", b"\xbd", b"9" * 40):
        assert [i for i, _, _ in stream(api, run_id, headers={"Last-Event-ID": odd})] == [i for i, _, _ in full]


def test_the_api_reference_works_offline(api, tmp_path: Path):
    page = api.get("/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    csp = page.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src" not in csp  # no script, no remote asset can load
    html = page.text
    assert "<script" not in html and "http://" not in html.replace('href="openapi.json"', "")
    assert "https://" not in html
    for path in ("/runs", "/runs/{run_id}/events", "/runs/{run_id}/plan", "/runs/{run_id}/report",
                 "/runs/{run_id}/feedback"):
        assert f"<code>{path}</code>" in html
    assert "RunRequest" in html and "max length 1000000" in html  # the bounds are documented too
    assert "ErrorDetail" in html and "HTTPValidationError" not in html  # errors as they really are
    assert api.get("/redoc").status_code == 404  # the CDN page is gone, not half there
