"""Every file name can be shown: a workspace image named with a byte that is not UTF-8 (``bad\\xff.png``) is
shown escaped on the episode page, live and in ``--bundle``, linked percent-encoded and served; the page
never fails as a whole because of one file."""

from __future__ import annotations

import json
import os
import urllib.request
from pathlib import Path

import pytest

from harness.store import RunStore, write_json
from harness.untrusted import shown_name, url_name
from harness.view.bundle import export_bundle
from harness.view.data import load_runs
from harness.view.site import Site
from tests.support.view import served, trajectory

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")
BAD = os.fsdecode(b"bad\xff.png")  # how Python reads the name from the file system (a lone surrogate)


@pytest.fixture
def odd_run(tmp_path) -> Path:
    store = RunStore.create(tmp_path / "odd")
    paths = store.episode("ep-1").create()
    write_json(paths.row, {"run_id": store.run_id, "episode": "ep-1", "task": "t", "template": "other",
                           "profile": "p", "status": "ok"})
    (paths.workspace / BAD).write_bytes(PNG)
    (paths.workspace / "fig.png").write_bytes(PNG)
    (paths.root / "trajectory.json").write_text(json.dumps(trajectory(3, plot="fig.png")))
    store.write_results()
    return store.root


def test_the_episode_page_shows_the_name_escaped(odd_run):
    site = Site(load_runs([odd_run]))
    page = site.render("runs/odd/ep-1/index.html")[0].decode("utf-8")  # valid UTF-8 throughout
    assert "cannot be shown" not in page
    assert '<img loading="lazy" src="ws/bad%FF.png" alt="bad\\xff.png">' in page
    assert "<figcaption>bad\\xff.png · " in page
    assert site.render("runs/odd/ep-1/ws/bad%FF.png") == (PNG, "image/png")  # the link the page gives
    assert site.render("runs/odd/ep-1/ws/fig.png") == (PNG, "image/png")


def test_the_live_viewer_serves_the_escaped_link(odd_run):
    with served(Site(load_runs([odd_run]))) as (url, _):
        with urllib.request.urlopen(url + "runs/odd/ep-1/index.html", timeout=30) as response:
            assert "bad\\xff.png" in response.read().decode("utf-8")
        with urllib.request.urlopen(url + "runs/odd/ep-1/ws/bad%FF.png", timeout=30) as response:
            assert response.read() == PNG


def test_the_bundle_shows_the_name_escaped_and_holds_the_image(odd_run, tmp_path):
    out, _ = export_bundle(load_runs([odd_run]), tmp_path / "bundle")
    page = (out / "runs/odd/ep-1/index.html").read_bytes().decode("utf-8")
    assert "cannot be shown" not in page and 'src="ws/bad%FF.png"' in page and "bad\\xff.png" in page
    # over file:// a browser decodes %FF to the byte 0xFF: the file has the raw name
    assert (out / "runs/odd/ep-1/ws" / BAD).read_bytes() == PNG


def test_shown_and_url_names():
    assert shown_name(BAD) == "bad\\xff.png" and url_name(BAD) == "bad%FF.png"
    assert shown_name("plain/é.png") == "plain/é.png" and url_name("a b/é.png") == "a%20b/%C3%A9.png"
