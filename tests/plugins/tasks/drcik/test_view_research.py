"""The Dr-CiK episode page of a real research episode (``harness run``, scripted model): citations resolved
through the episode's key as the scoring resolves them; the agent profile named on the page and in
the progress line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from harness.sandbox import choose_backend
from harness.view.data import load_runs
from harness.view.site import Site
from tests.support.paths import REPO

PROFILE = "retrieval-bm25-gemini-3-flash"
MADE_UP = "doc_000000000000"  # the scripted agent's last citation: an id no corpus holds


def _local_sandbox() -> str | None:
    try:
        return choose_backend("auto", needs_image=False).name
    except Exception:  # noqa: BLE001
        return None


pytestmark = pytest.mark.skipif(_local_sandbox() not in ("bubblewrap", "unshare"),
                                reason="no isolating local sandbox (bubblewrap or unshare) here")


@pytest.fixture(scope="module")
def episode(tmp_path_factory):
    root = tmp_path_factory.mktemp("drcik-research-view") / "research"
    run = subprocess.run([sys.executable, "-m", "harness", "run", "--task", "tasks/drcik/research-sample.yaml",
                          "--agent", PROFILE, "--model-backend", "scripted",
                          "--script", "examples/scripts/retrieval-drcik.yaml", "--set", "episodes=[task_42]",
                          "--out", str(root)], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert run.returncode == 0, (run.stdout[-2000:], run.stderr[-2000:])
    (folder,) = (root / "episodes").iterdir()
    return root, folder, run.stderr


def _page(root, folder, reveal: bool) -> str:
    return Site(load_runs([root]), reveal=reveal).render(f"runs/research/{folder.name}/index.html")[0].decode()


def test_citations_are_linked_through_the_key(episode):
    root, folder, _ = episode
    details = json.loads((folder / "score.json").read_text())["details"]
    cited, resolved = details[0]["cited"][0], details[0]["resolved"][0]
    assert cited.startswith("doc_") and cited != resolved  # the agent cites the episode's salted id
    assert resolved == "doc_1571"  # the top BM25 hit for task_42 in the bundled sample
    assert details[-1]["dropped"] == [MADE_UP]
    for reveal in (True, False):
        html = _page(root, folder, reveal)
        assert f'<a class="cite" href="#doc-{resolved}">{cited} → {resolved}</a>' in html
        assert f'<li id="doc-{resolved}">' in html  # the link's target is on the page
        assert f'<span class="cite unknown" title="not a document of the corpus">{MADE_UP}</span>' in html
        # every resolved citation is a link, none left unknown but the made-up one
        links = {(c, r) for d in details for c, r in zip([c for c in d["cited"] if c not in d["dropped"]],
                                                         d["resolved"])}
        for c, r in links:
            assert f'href="#doc-{r}">{c} → {r}</a>' in html
        assert html.count('class="cite unknown"') == 1


def test_research_page_and_progress_line_name_the_agent(episode):
    """The folder name (``research_<task>-<id>``) stays as it is, since resuming finds episodes by folder;
    the page's facts and the per-episode progress line name the agent profile."""
    root, folder, stderr = episode
    assert folder.name.startswith("research_task_42-")
    html = _page(root, folder, True)
    assert f"<dt>agent</dt><dd>{PROFILE}</dd>" in html
    # stderr is a pipe, not a terminal: one line per finished episode
    assert f"[1/1] {folder.name} ({PROFILE}) ok · done 1 · " in stderr


def test_a_document_of_another_task_is_marked_cross_task(episode, tmp_path):
    import shutil

    root, folder, _ = episode
    copy = tmp_path / "research"
    shutil.copytree(root, copy)
    key = json.loads((folder / "key" / "research_key.json").read_text())
    other = next(rid for rid, info in sorted(key["documents"].items()) if info["task"] != "task_42")
    salted = next(v for v, r in key["ids"].items() if r == other)
    evidence = copy / "episodes" / folder.name / "workspace" / "evidence.json"
    items = json.loads(evidence.read_text()) + [{"claim": "Off-task.", "cited_document_ids": [f"corpus/{salted}.md"]}]
    evidence.write_text(json.dumps(items))
    owner = key["documents"][other]["task"]
    shown, hidden = (_page(copy, folder, r) for r in (True, False))
    assert (f'<span class="cite cross-task" title="a document of another task ({owner})">corpus/{salted}.md → '
            f'{other}</span>') in shown
    assert (f'<span class="cite cross-task" title="a document of another task">corpus/{salted}.md → '
            f'{other}</span>') in hidden
