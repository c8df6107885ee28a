"""`deepresearch serve` as a client uses it: a real server process, a real HTTP client, Server-Sent Events.

The graph logic runs on the loopback fake OpenAI server (fake_openai.py) so that a run takes seconds;
one test answers the README's question with the real embedded 135M model.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from deepresearch.agent.graph.events import CitationsChecked, PlanEdited, PlanMade, RunEvent, read_events
from deepresearch.agent.trace.store import TraceStore
from deepresearch.app.service.config import BindError, check_bind
from deepresearch.app.service.events import ApprovalRequested, RunFinished, decode
from pydantic import SecretStr

from .fake_openai import fake_openai_server
from .helpers import clean_env, cli, one_error_line
from .servers import server_process, sse_events

QUESTION = "Who designed the Analytical Engine?"


def fake_env(tmp: Path, base_url: str, **extra: str) -> dict[str, str]:
    return clean_env(tmp, DEEPRESEARCH_MODEL__BACKEND="openai", DEEPRESEARCH_MODEL__NAME="fake",
                     DEEPRESEARCH_MODEL__BASE_URL=base_url, DEEPRESEARCH_AGENT__BUDGET__MAX_ROUNDS="1",
                     DEEPRESEARCH_AGENT__BUDGET__MAX_PLAN_STEPS="1", **extra)


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[httpx.Client, Path]]:
    tmp = tmp_path_factory.mktemp("serve")
    with (fake_openai_server() as fake, server_process("serve", "--port", "0", env=fake_env(tmp, fake.base_url)) as url,
          httpx.Client(base_url=url, timeout=120) as client):
        yield client, tmp / "data"


@pytest.fixture(scope="module")
def ended_run(api: tuple[httpx.Client, Path]) -> str:
    client, _ = api
    run_id = client.post("/runs", json={"question": QUESTION, "offline": True}).json()["id"]
    stream(client, run_id)
    return run_id


def stream(client: httpx.Client, run_id: str, *, until: str = "RunFinished", headers: dict | None = None
           ) -> list[tuple[str, str, object]]:
    """The run's events, typed, up to and including the first `until`."""
    events = []
    with client.stream("GET", f"/runs/{run_id}/events", headers=headers) as response:
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
        for event_id, name, data in sse_events(response):
            events.append((event_id, name, decode(name, data)))
            if name == until:
                break
    return events


def test_a_run_streams_its_typed_events_in_order_then_serves_its_report(api):
    client, data_dir = api
    started = client.post("/runs", json={"question": QUESTION, "offline": True})
    assert started.status_code == 202, started.text
    run_id = started.json()["id"]
    assert started.json()["events_url"] == f"/runs/{run_id}/events"

    events = stream(client, run_id)
    ids, names, typed = zip(*events, strict=True)
    assert list(ids) == [str(i) for i in range(len(ids))]  # every event, once, in order
    assert isinstance(typed[0], PlanMade) and typed[0].steps[0]["query"] == QUESTION
    assert all(isinstance(e, RunEvent) for e in typed[:-1])  # the graph's own event types
    assert names.index("CitationsChecked") < names.index("RunFinished") == len(names) - 1
    assert {"ActionStarted", "FindingMade", "UsageReported"} <= set(names)
    finished = typed[-1]
    assert isinstance(finished, RunFinished) and finished.run_id == run_id and finished.status in ("finished",
                                                                                                    "budget_stop")
    checked = next(e for e in typed if isinstance(e, CitationsChecked))
    assert checked.verified == sum(1 for c in finished.citations if c["verified"])

    # A later subscriber gets the same stream; Last-Event-ID resumes after the event it names.
    assert [n for _, n, _ in stream(client, run_id)] == list(names)
    assert [i for i, _, _ in stream(client, run_id, headers={"Last-Event-ID": "2"})] == list(ids[3:])

    md = client.get(f"/runs/{run_id}/report")
    assert md.status_code == 200 and md.headers["content-type"].startswith("text/markdown")
    assert md.text == finished.report
    html = client.get(f"/runs/{run_id}/report", params={"format": "html"})
    assert html.headers["content-type"].startswith("text/html") and QUESTION in html.text
    pdf = client.get(f"/runs/{run_id}/report", params={"format": "pdf"})  # printed by the installed Chromium
    assert pdf.headers["content-type"] == "application/pdf" and pdf.content.startswith(b"%PDF-")
    as_json = client.get(f"/runs/{run_id}/report", params={"format": "json"}).json()
    assert as_json["answer"] == finished.answer and as_json["run_id"] == run_id

    assert run_id in [r["id"] for r in client.get("/runs").json()]
    rated = client.post(f"/runs/{run_id}/feedback", json={"score": 1, "comment": "right"})
    assert rated.status_code == 200 and rated.json()["feedback"][0]["score"] == 1
    store = TraceStore(data_dir / "traces.db")
    assert store.get_run(run_id).feedback[0]["comment"] == "right"  # where `train --from-runs` reads it
    store.close()


def test_a_plan_is_edited_over_http_and_a_bad_edit_leaves_the_run_waiting(api):
    client, data_dir = api
    run_id = client.post("/runs", json={"question": QUESTION, "offline": True, "approve": True}).json()["id"]
    events = stream(client, run_id, until="ApprovalRequested")
    assert isinstance(events[-1][2], ApprovalRequested) and events[-1][2].steps
    waiting = client.get(f"/runs/{run_id}").json()
    assert waiting["status"] == "awaiting_approval" and waiting["pending_plan"] == events[-1][2].steps

    bad = client.post(f"/runs/{run_id}/plan", json={"action": "edit", "steps": [{"query": "x", "tool": "telepathy"}]})
    assert bad.status_code == 422 and "unknown tool 'telepathy'" in bad.json()["detail"]
    assert client.get(f"/runs/{run_id}").json()["status"] == "awaiting_approval"

    edited = client.post(f"/runs/{run_id}/plan", json={"action": "edit", "steps": [{"query": "Charles Babbage"}]})
    assert edited.status_code == 200, edited.text
    finished = stream(client, run_id)[-1][2]
    assert isinstance(finished, RunFinished) and finished.report
    store = TraceStore(data_dir / "traces.db")
    [plan] = read_events(store, run_id, PlanEdited)
    store.close()
    assert [s["query"] for s in plan.steps] == ["Charles Babbage"]
    again = client.post(f"/runs/{run_id}/plan", json={"action": "accept"})
    assert again.status_code == 409, again.text


def test_a_rejected_plan_ends_the_run(api):
    client, _ = api
    run_id = client.post("/runs", json={"question": QUESTION, "offline": True, "approve": True}).json()["id"]
    stream(client, run_id, until="ApprovalRequested")
    assert client.post(f"/runs/{run_id}/plan", json={"action": "reject"}).status_code == 200
    finished = stream(client, run_id)[-1][2]
    assert isinstance(finished, RunFinished) and finished.status == "rejected"
    assert client.get(f"/runs/{run_id}/report").status_code == 409  # no report to fetch


@pytest.mark.parametrize(("method", "path", "body", "status"), [
    ("GET", "/runs/nosuchrun", None, 404),
    ("GET", "/runs/nosuchrun/events", None, 404),
    ("GET", "/runs/nosuchrun/report", None, 404),
    ("POST", "/runs/nosuchrun/plan", {"action": "accept"}, 404),
    ("POST", "/runs/nosuchrun/feedback", {"score": 1}, 404),
    ("POST", "/runs", {}, 422),
    ("POST", "/runs", {"question": "   "}, 422),
    ("POST", "/runs", {"question": "q?", "max_time": 0}, 422),
    ("POST", "/runs", {"question": "q?", "colour": "red"}, 422),
    ("POST", "/runs", {"question": "q?", "index": "nosuchindex"}, 422),
    ("POST", "/runs", {"question": "q" * 100_000}, 422),
    ("POST", "/runs/{run}/plan", {"action": "maybe"}, 422),
    ("POST", "/runs/{run}/plan", {"action": "edit"}, 422),
    ("POST", "/runs/{run}/plan", {"action": "accept", "steps": [{"query": "q"}]}, 422),
    ("POST", "/runs/{run}/plan", {"action": "accept"}, 409),  # it waits for no plan decision
    ("POST", "/runs/{run}/feedback", {"score": 2}, 422),
    ("POST", "/runs/{run}/feedback", {}, 422),
    ("GET", "/runs/{run}/report?format=rtf", None, 422),
    ("GET", "/runs?limit=0", None, 422),
])
def test_bad_ids_and_bodies_are_one_line_404_409_or_422(api, ended_run, method, path, body, status):
    client, _ = api
    response = client.request(method, path.format(run=ended_run), json=body)
    assert response.status_code == status, response.text
    assert list(response.json()) == ["detail"] and isinstance(response.json()["detail"], str)  # one line, not a list
    assert response.json()["detail"] and "\n" not in response.json()["detail"]
    assert client.get("/health").status_code == 200  # and the server is still up


def test_a_token_guards_every_run_endpoint(tmp_path: Path):
    env = clean_env(tmp_path, DEEPRESEARCH_API__TOKEN="s3cret")
    with server_process("serve", "--port", "0", env=env) as url, httpx.Client(base_url=url) as client:
        assert client.get("/runs").status_code == 401
        assert client.get("/runs", headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert client.post("/runs", json={"question": "q?"}).status_code == 401
        assert client.get("/runs", headers={"Authorization": "Bearer s3cret"}).status_code == 200
        assert client.get("/docs").status_code == 200 and client.get("/openapi.json").json()["paths"]["/runs"]


def test_serve_refuses_a_non_loopback_address_without_a_token(tmp_path: Path):
    proc = cli("serve", "--host", "0.0.0.0", "--port", "0", env=clean_env(tmp_path))
    assert proc.returncode == 2
    assert "without a token" in one_error_line(proc)
    assert check_bind("0.0.0.0", SecretStr("t")) == "t" and check_bind("127.0.0.1", None) is None
    assert check_bind("localhost", None) is None and check_bind("::1", None) is None
    with pytest.raises(BindError):
        check_bind("192.168.1.10", SecretStr(""))


def test_serve_on_a_busy_port_is_one_line_exit_2(tmp_path: Path):
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        proc = cli("serve", "--port", str(busy.getsockname()[1]), env=clean_env(tmp_path))
    assert proc.returncode == 2
    assert "cannot listen on 127.0.0.1" in one_error_line(proc)


def test_the_readme_question_over_http_with_the_embedded_model(tmp_path: Path):
    env = clean_env(tmp_path, DEEPRESEARCH_AGENT__BUDGET__MAX_ROUNDS="1",
                    DEEPRESEARCH_AGENT__BUDGET__MAX_PLAN_STEPS="1")
    question = "In what year did the playwright who wrote The City Heiress die?"
    with server_process("serve", "--port", "0", env=env) as url, httpx.Client(base_url=url, timeout=300) as client:
        run_id = client.post("/runs", json={"question": question, "offline": True}).json()["id"]
        events = stream(client, run_id)
        finished = events[-1][2]
        assert isinstance(finished, RunFinished) and finished.status in ("finished", "budget_stop"), finished
        assert finished.answer and finished.verified_citations >= 1, finished.report
        assert "FindingMade" in [n for _, n, _ in events]
        report = client.get(f"/runs/{run_id}/report", params={"format": "json"}).json()
        assert report["answer"] == finished.answer and report["sources"]
