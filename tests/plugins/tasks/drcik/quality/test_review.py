"""The calibration review page (Appendix D.2), a ``harness view`` folder page, in Chromium: mark a unit, reload, the
record persists in the calibration file; a POST from a foreign origin or without an Origin is refused and writes
nothing; a bundle holds neither the page nor the file; ``harness dr-review`` is an alias of ``harness view``."""

from __future__ import annotations

import http.server
import threading
from contextlib import contextmanager

import pytest
from click.testing import CliRunner

from harness.cli import cli
from harness.view.folders import TOKEN_HEADER, split_folders
from harness.view.pages import registered_folder_pages
from harness.view.site import Site
from tests.support.view import browser, chromium_missing, served
from tsagent_plugins.tasks.drcik.quality import calibration as cal, cli as qc_cli, review

from .test_cli_report import gen_dir

BROWSER = chromium_missing()
needs_browser = pytest.mark.skipif(BROWSER is not None, reason=BROWSER or "")


@pytest.fixture
def viewer(tmp_path):
    out = gen_dir(tmp_path)
    runs, folders = split_folders([out], registered_folder_pages())
    assert runs == [] and [(f.slug, f.page.kind) for f in folders] == [("gen", "drcik-generation")]
    with served(Site([], live=True, folders=folders)) as (base, _):
        yield out, base + "folders/gen/index.html"


def test_the_page_shows_each_judged_unit_and_a_form(viewer):
    out, _ = viewer
    html = "".join(p.html for p in review.render(out))
    assert "id='evidence--t1'" in html and "CTX-t1" in html and "data-post='review'" in html
    assert html.count("<li>") == 3  # the fixture's three records
    assert review.PAGE.writable and review.PAGE.recognise(out) and not review.PAGE.recognise(out / "tasks")


@contextmanager
def foreign_site():
    """A page on another origin (another port of localhost) to post from."""
    class Quiet(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(b"<!doctype html><p>elsewhere</p>")

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://localhost:{server.server_address[1]}/"
    finally:
        server.shutdown()


RECORD = {"task": "t1", "stage": "evidence", "unit": "t1", "reviewer": "mallory", "verdict": "acceptable"}
POST = """async ([url, token, body]) => {
  try {
    const r = await fetch(url, {method: "POST", body: JSON.stringify(body),
                                headers: {"Content-Type": "application/json", "X-Harness-Token": token}});
    return r.status;
  } catch (e) { return "blocked"; }
}"""
FORM = """([url, token]) => {
  const form = Object.assign(document.createElement("form"), {method: "POST", action: url, enctype: "text/plain"});
  const field = Object.assign(document.createElement("input"), {name: "reviewer", value: token});
  form.appendChild(field);
  document.body.appendChild(form);
  form.submit();
}"""


@needs_browser
def test_mark_a_unit_reload_and_the_record_persists(viewer):
    out, url = viewer
    with browser() as page:
        page.goto(url)
        form = page.locator("section#evidence--t1 form")
        form.locator("input[name=reviewer]").fill("r9")
        form.locator("input[name=note]").fill("E2 is missing")
        with page.expect_navigation():
            form.locator("button[value=not_acceptable]").click()
        page.reload()
        assert "r9: not_acceptable E2 is missing" in page.locator("section#evidence--t1 ul.records").inner_text()
    last = cal.read_reviews(out / cal.REVIEWS)[-1]
    assert (last.task, last.stage, last.unit, last.reviewer, last.verdict, last.note, last.entry) == (
        "t1", "evidence", "t1", "r9", "not_acceptable", "E2 is missing", None)
    assert (out / cal.REVIEWS).read_text().count("\n") == 4


@needs_browser
def test_a_foreign_origin_or_no_origin_is_refused_and_writes_nothing(viewer):
    out, url = viewer
    before = (out / cal.REVIEWS).read_bytes()
    action = url.replace("index.html", "review")
    with browser() as page, foreign_site() as elsewhere:
        page.goto(url)
        token = page.locator('meta[name="harness-token"]').get_attribute("content")
        page.goto(elsewhere)
        # a fetch carrying the token from another origin is stopped (its preflight finds no CORS answer) ...
        assert page.evaluate(POST, [action, token, RECORD]) == "blocked"
        # ... and a plain form POST from there reaches the viewer with the foreign Origin: 403
        with page.expect_navigation() as sent:
            page.evaluate(FORM, [action, token])
        assert sent.value.status == 403 and "Origin" in page.inner_text("body")
        assert sent.value.request.headers.get("origin") == elsewhere.rstrip("/")

        # a POST without any Origin (a browser always sends one; Playwright's HTTP client, beside it, does not)
        answer = page.request.post(action, data=RECORD, headers={TOKEN_HEADER: token})
        assert answer.status == 403 and "Origin" in answer.text()
    assert (out / cal.REVIEWS).read_bytes() == before


def test_a_bundle_holds_neither_the_page_nor_the_calibration_file(tmp_path):
    out = gen_dir(tmp_path)
    records = (out / cal.REVIEWS).read_text()
    bundle = tmp_path / "bundle"
    result = CliRunner().invoke(cli, ["view", str(out), "--bundle", str(bundle)])
    assert result.exit_code == 0, result.output
    assert "left out" in result.output and "calibration review" in result.output
    files = [p for p in bundle.rglob("*") if p.is_file()]
    assert {p.relative_to(bundle).as_posix() for p in files} == {"index.html", "static/view.css", "static/view.js"}
    assert not any("reviews" in p.name for p in files)
    assert all(b"reviewer" not in p.read_bytes() and b"CTX-t1" not in p.read_bytes() for p in files)
    assert (out / cal.REVIEWS).read_text() == records


def test_dr_review_is_an_alias_of_view(tmp_path, monkeypatch):
    out = gen_dir(tmp_path)
    seen = {}
    import harness.view.server as server

    def serve(site, host, port, ready=None):
        seen.update(site=site, host=host, port=port)
        ready(f"http://{host}:{port}/")

    monkeypatch.setattr(server, "serve", serve)
    result = CliRunner().invoke(cli, ["dr-review", str(out), "--port", "0"])
    assert result.exit_code == 0, result.output
    assert seen["host"] == "127.0.0.1" and seen["port"] == 0 and list(seen["site"].folders) == ["gen"]
    assert "Dr-CiK calibration review: http://127.0.0.1:0/folders/gen/index.html" in result.output
    assert qc_cli.dr_review.name == "dr-review"
    result = CliRunner().invoke(cli, ["dr-review", str(out / "tasks")])
    assert result.exit_code == 1 and "not a dr-generate output" in result.output
