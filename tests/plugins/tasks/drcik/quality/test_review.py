"""The calibration review page (Appendix D.2) in Chromium: mark a unit, reload, the record persists; a POST with a
foreign Origin, without an Origin or without the page's token is refused and writes nothing."""

from __future__ import annotations

import asyncio
import json
import threading
import urllib.error
import urllib.request

import pytest

from tests.support.view import browser, chromium_missing
from tsagent_plugins.tasks.drcik.quality import calibration as cal, review

from .test_cli_report import gen_dir

BROWSER = chromium_missing()


@pytest.fixture
def server(tmp_path):
    out = gen_dir(tmp_path)
    loop = asyncio.new_event_loop()
    ready, box = threading.Event(), {}

    def run():
        asyncio.set_event_loop(loop)
        box["runner"], box["port"], box["token"] = loop.run_until_complete(review.start(out))
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(10)
    yield out, f"http://127.0.0.1:{box['port']}", box["token"]
    asyncio.run_coroutine_threadsafe(box["runner"].cleanup(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)


def post(base, body, headers):
    request = urllib.request.Request(f"{base}/review", data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status
    except urllib.error.HTTPError as exc:
        return exc.code


RECORD = {"task": "t1", "stage": "evidence", "unit": "t1", "reviewer": "mallory", "verdict": "acceptable"}


def test_writes_need_the_own_origin_and_the_token(server):
    out, base, token = server
    before = (out / cal.REVIEWS).read_bytes()
    assert post(base, RECORD, {"Origin": "http://evil.example", review.TOKEN_HEADER: token}) == 403
    assert post(base, RECORD, {review.TOKEN_HEADER: token}) == 403  # no Origin
    assert post(base, RECORD, {"Origin": base, review.TOKEN_HEADER: "guess"}) == 403
    assert post(base, RECORD, {"Origin": base}) == 403
    assert (out / cal.REVIEWS).read_bytes() == before
    assert post(base, RECORD, {"Origin": base, review.TOKEN_HEADER: token}) == 200
    assert cal.read_reviews(out / cal.REVIEWS)[-1].reviewer == "mallory"


@pytest.mark.skipif(BROWSER is not None, reason=BROWSER or "")
def test_mark_a_unit_in_chromium_and_the_record_persists(server):
    out, base, _ = server
    with browser() as page:
        page.goto(base + "/")
        form = page.locator("section#evidence--t1 form")
        form.locator("input[name=reviewer]").fill("r9")
        form.locator("input[name=note]").fill("E2 is missing")
        with page.expect_navigation():
            form.locator("button[value=not_acceptable]").click()
        page.reload()
        assert "r9: not_acceptable E2 is missing" in page.locator("section#evidence--t1 ul.records").inner_text()
    last = cal.read_reviews(out / cal.REVIEWS)[-1]
    assert (last.reviewer, last.verdict, last.note, last.stage, last.unit) == ("r9", "not_acceptable",
                                                                               "E2 is missing", "evidence", "t1")
