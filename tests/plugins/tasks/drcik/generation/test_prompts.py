"""The shipped prompts are Appendix L's text: equal after the documented normalisation, every placeholder kept
and filled at render time."""

from __future__ import annotations

import re

import pytest

from tests.support.paths import TESTS
from tsagent_plugins.tasks.drcik.generation import prompts

#: Appendix L.1-L.4 as extracted from the paper's PDF (one prompt per paragraph: "Title ⬇ text").
PAPER = (TESTS / "fixtures" / "drcik" / "paper_appendix_L_prompts.txt").read_text(encoding="utf-8")


def paper_prompts() -> dict[str, str]:
    out = {}
    for paragraph in PAPER.splitlines():
        if "⬇" in paragraph:
            title, body = paragraph.split("⬇", 1)
            out[title.strip()] = body
    return out


def test_the_paper_has_exactly_the_shipped_prompts():
    assert sorted(paper_prompts()) == sorted([*prompts.TITLES.values(), *prompts.INSTRUCTIONS.values()])


@pytest.mark.parametrize("name", sorted([*prompts.TITLES, *prompts.INSTRUCTIONS]))
def test_each_prompt_equals_the_paper_text_after_normalisation(name):
    paper = paper_prompts()[{**prompts.TITLES, **prompts.INSTRUCTIONS}[name]]
    shipped = prompts.load(name)
    assert prompts.normalise(shipped.text) == prompts.normalise(paper)
    assert prompts.PLACEHOLDER.findall(shipped.text) == prompts.PLACEHOLDER.findall(paper)  # same, same order


@pytest.mark.parametrize("name", sorted([*prompts.TITLES, *prompts.HARNESS]))
def test_render_fills_every_placeholder_and_refuses_a_missing_one(name):
    prompt = prompts.load(name)
    assert prompt.placeholders, "every Appendix L prompt takes inputs"
    values = {p: f"<<{p.upper()}>>" for p in prompt.placeholders}
    text = prompt.render(**values)
    assert not set(prompts.PLACEHOLDER.findall(text)) & set(prompt.placeholders)
    assert all(v in text for v in values.values())
    assert text.count("<<") == len(prompts.PLACEHOLDER.findall(prompt.text))
    with pytest.raises(ValueError, match=f"missing value.*{prompt.placeholders[0]}"):
        prompt.render(**{k: v for k, v in values.items() if k != prompt.placeholders[0]})
    with pytest.raises(ValueError, match="no placeholder for bogus"):
        prompt.render(**values, bogus=1)


def test_normalisation_maps_the_extractions_marks():
    text = "A ⬇ “‘{x}“‘ use ‘id‘ don’t\n\n  end"
    assert prompts.normalise(text) == "A ``` {x} ``` use `id` don't end"


def test_the_hash_is_of_the_file_bytes():
    import hashlib

    p = prompts.load("judge_entity")
    assert p.sha256 == hashlib.sha256((prompts.FOLDER / "judge_entity.txt").read_bytes()).hexdigest()
    assert re.fullmatch(r"[0-9a-f]{64}", p.sha256)


@pytest.mark.parametrize("name", sorted(prompts.INSTRUCTIONS))
def test_instruction_prompts_take_no_placeholder_and_get_their_input_appended(name):
    prompt = prompts.load(name)
    assert prompt.placeholders == []
    text = prompt.with_input('{"steps": []}')
    assert text.startswith(prompt.text.rstrip("\n")) and text.endswith(prompts.INPUT_HEADER + '{"steps": []}')
