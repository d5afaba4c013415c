"""The viewer's only writes (folder pages with ``posts``) over plain HTTP: a POST needs the viewer's own Origin and
the per-launch token of the page, a refusal writes nothing, writes exist on loopback only, a bundle never holds a
writable page nor what it reads."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import cli
from harness.view import pages as view_pages
from harness.view.bundle import export_bundle
from harness.view.folders import TOKEN_HEADER, Folder, split_folders
from harness.view.html import Markup
from harness.view.pages import FolderPage, Panel
from harness.view.server import make_app
from harness.view.site import Site

from tests.support.view import served


def _notes(folder: Path) -> Path:
    return folder / "notes.jsonl"


def _render(folder: Path) -> list[Panel]:
    lines = _notes(folder).read_text().splitlines() if _notes(folder).is_file() else []
    items = "".join(f"<li>{json.loads(line)['text']}</li>" for line in lines)
    form = "<form data-post='add'><input name='text'><button name='kind' value='note'>add</button></form>"
    return [Panel("notes", Markup(f"<ul class='notes'>{items}</ul>{form}"))]


def _add(folder: Path, body: dict) -> dict:
    if not body.get("text"):
        raise ValueError("text: missing")
    with open(_notes(folder), "a") as fh:
        fh.write(json.dumps({"text": body["text"]}) + "\n")
    return {"written": body["text"]}


WRITABLE = FolderPage(kind="notes", title="Notes", recognise=lambda p: (p / "NOTES").is_file(), render=_render,
                      posts={"add": _add})
READ_ONLY = FolderPage(kind="readme", title="Readme", recognise=lambda p: (p / "README").is_file(),
                       render=lambda p: [Panel("readme", Markup("<p>read only</p>"))])


@pytest.fixture
def notes(tmp_path):
    folder = tmp_path / "book"
    folder.mkdir()
    (folder / "NOTES").write_text("")
    return folder


def post(url: str, body, headers: dict[str, str]) -> tuple[int, str]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method="POST",
                                     headers={"Content-Type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def page_token(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as answer:
        found = re.search(r'<meta name="harness-token" content="([^"]+)">', answer.read().decode())
    assert found, "the writable page carries no token"
    return found.group(1)


def test_a_post_needs_the_own_origin_and_the_token(notes):
    site = Site([], folders=[Folder("book", notes, WRITABLE)])
    with served(site) as (base, port):
        url = base + "folders/book/add"
        token = page_token(base + "folders/book/index.html")
        assert token == site.token and len(token) >= 40
        own = base.rstrip("/")
        wrong = token[:-1] + ("A" if token[-1] != "A" else "B")
        refused = [post(url, {"text": "x"}, {"Origin": "http://evil.example", TOKEN_HEADER: token}),
                   post(url, {"text": "x"}, {TOKEN_HEADER: token}),  # no Origin
                   post(url, {"text": "x"}, {"Origin": f"http://localhost:{port}", TOKEN_HEADER: token}),
                   post(url, {"text": "x"}, {"Origin": "null", TOKEN_HEADER: token}),
                   post(url, {"text": "x"}, {"Origin": own, TOKEN_HEADER: wrong}),
                   post(url, {"text": "x"}, {"Origin": own})]  # no token
        assert [status for status, _ in refused] == [403] * 6
        assert "Origin" in refused[1][1] and "token" in refused[5][1]
        assert not _notes(notes).exists()
        assert post(url, {"text": ""}, {"Origin": own, TOKEN_HEADER: token})[0] == 400
        assert post(url, b"[1, 2]", {"Origin": own, TOKEN_HEADER: token})[0] == 400
        assert post(base + "folders/book/delete", {"text": "x"}, {"Origin": own, TOKEN_HEADER: token})[0] == 404
        assert not _notes(notes).exists()
        status, answer = post(url, {"text": "first"}, {"Origin": own, TOKEN_HEADER: token})
        assert (status, json.loads(answer)) == (200, {"written": "first"})
        assert _notes(notes).read_text() == '{"text": "first"}\n'
        with urllib.request.urlopen(base + "folders/book/index.html", timeout=10) as answer:
            assert "<li>first</li>" in answer.read().decode()


def test_a_new_launch_has_a_new_token_and_a_read_only_page_none(notes, tmp_path):
    first, second = (Site([], folders=[Folder("book", notes, WRITABLE)]) for _ in range(2))
    assert first.token != second.token
    other = tmp_path / "other"
    other.mkdir()
    site = Site([], folders=[Folder("other", other, READ_ONLY)])
    assert b"harness-token" not in site.render("folders/other/index.html")[0] and not site.writable


def test_writes_are_routed_on_loopback_only(notes):
    site = Site([], folders=[Folder("book", notes, WRITABLE)])
    methods = lambda app: {r.method for r in app.router.routes()}  # noqa: E731
    assert "POST" in methods(make_app(site, "127.0.0.1", 8000))
    assert "POST" not in methods(make_app(site, "0.0.0.0", 8000))
    assert "POST" not in methods(make_app(Site([]), "127.0.0.1", 8000))


def test_view_refuses_a_writable_folder_off_loopback(notes, monkeypatch):
    monkeypatch.setattr(view_pages, "registered_folder_pages", lambda: [WRITABLE])
    result = CliRunner().invoke(cli, ["view", str(notes), "--host", "0.0.0.0"])
    assert result.exit_code == 2 and "served on a loopback address only" in result.output


def test_a_bundle_never_holds_a_writable_page_nor_its_file(notes, tmp_path, monkeypatch):
    _add(notes, {"text": "secret-note"})
    other = tmp_path / "other"
    other.mkdir()
    (other / "README").write_text("")
    assert split_folders([notes, other], [WRITABLE, READ_ONLY])[1] == [Folder("book", notes, WRITABLE),
                                                                       Folder("other", other, READ_ONLY)]
    monkeypatch.setattr(view_pages, "registered_folder_pages", lambda: [WRITABLE, READ_ONLY])
    out = tmp_path / "bundle"
    result = CliRunner().invoke(cli, ["view", str(notes), str(other), "--bundle", str(out)])
    assert result.exit_code == 0, result.output
    assert "left out" in result.output and "Notes" in result.output
    files = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert "folders/other/index.html" in files and not any(f.startswith("folders/book") for f in files)
    for path in out.rglob("*"):
        if path.is_file():
            text = path.read_bytes()
            assert b"secret-note" not in text and b"harness-token\" content" not in text and b"folders/book" not in text
    site = Site([], bundle=True, folders=[Folder("book", notes, WRITABLE)])
    assert site.render("folders/book/index.html") is None and site.post("folders/book/add", {"text": "y"}) is None
    assert export_bundle([], tmp_path / "b2", folders=[Folder("book", notes, WRITABLE)])[1] == 3
    assert _notes(notes).read_text().count("\n") == 1
