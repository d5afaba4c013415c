"""``harness plan`` prices every episode that calls a model, in-harness ones included (a forecaster declaring
``needs_model`` is priced at the profile's prices from earlier runs' usage, never planned at $0)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from harness.cli import cli
from harness.experiment import Unit
from harness.plan import plan_costs
from harness.profiles import resolve_profile
from harness.run import load_task
from tests.support.paths import REPO

SPEC = REPO / "tasks" / "drcik" / "sample-statistical.yaml"


def history(folder, profile="gpt-5.5", task="sample-statistical"):
    """Two earlier llm-dp episodes: prompt 60k and 80k (10k cached), 2k completion each."""
    for i, prompt in enumerate((60_000, 80_000)):
        (folder / "episodes" / f"e{i}").mkdir(parents=True)
        (folder / "episodes" / f"e{i}" / "row.json").write_text(json.dumps(
            {"profile": profile, "task": task, "status": "ok", "forecaster": "llm-dp", "prompt_tokens": prompt,
             "cached_tokens": 10_000, "completion_tokens": 2_000}))
    return folder


def units(forecasters, agent="gpt-5.5"):
    task = load_task(SPEC, {"forecasters": forecasters})
    return [Unit(task, resolve_profile(agent) if agent else None, None)]


def test_a_model_backed_forecaster_is_priced_from_history_at_the_profiles_prices(tmp_path):
    episodes, profiles = plan_costs(units(["llm-dp", "naive"]), tmp_path / "run", [history(tmp_path / "old")])
    llm = [e for e in episodes if e.key.startswith("llm-dp")]
    naive = [e for e in episodes if e.key.startswith("naive")]
    assert len(llm) == 6 and len(naive) == 6  # 3 tasks × 2 contexts each
    # mean usage 70k prompt (10k cached) + 2k completion at $5 / $0.5 / $30 per 1M tokens
    assert {e.tokens for e in llm} == {72_000}
    assert {round(e.cost_usd, 9) for e in llm} == {round((60_000 * 5 + 10_000 * 0.5 + 2_000 * 30) / 1e6, 9)}
    assert {e.source for e in llm} == {"earlier runs"} and {e.profile for e in llm} == {"gpt-5.5"}
    assert {(e.source, e.cost_usd, e.profile) for e in naive} == {("no model", 0.0, None)}
    assert round(profiles["gpt-5.5"].cost_usd, 9) == round(6 * 0.365, 9) and profiles["gpt-5.5"].unknown == 0


def test_without_history_or_estimate_a_model_backed_forecaster_is_unknown_not_free(tmp_path):
    episodes, profiles = plan_costs(units(["llm-dp"]), tmp_path / "run")
    assert {(e.tokens, e.cost_usd, e.source) for e in episodes} == {(None, None, "unknown")}
    assert profiles["gpt-5.5"].unknown == 6 and profiles["gpt-5.5"].cost_usd == 0.0


def test_a_model_backed_forecaster_without_any_profile_is_unknown(tmp_path):
    episodes, profiles = plan_costs(units(["llm-dp"], agent=None), tmp_path / "run")
    assert {(e.cost_usd, e.source) for e in episodes} == {(None, "unknown (no profile for its model)")}
    assert profiles[None].unknown == 6


def test_plan_cli_prices_llm_dp_from_history(tmp_path):
    old = history(tmp_path / "old")
    result = CliRunner().invoke(cli, ["plan", "--task", str(SPEC), "--set", "forecasters=[llm-dp]", "--agent",
                                      "gpt-5.5", "--history", str(old), "--out", str(tmp_path / "run"),
                                      "--episodes"],
                                terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "no model" not in result.output
    assert "expected $2.19" in result.output  # 6 episodes × $0.365
    assert "72,000" in result.output


def test_plan_cli_never_totals_unknown_episodes_as_free(tmp_path):
    result = CliRunner().invoke(cli, ["plan", "--task", str(SPEC), "--set", "forecasters=[llm-dp]", "--agent",
                                      "gpt-5.5", "--out", str(tmp_path / "run")], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == ("total: 6 episode(s), 0 done, 6 to run, expected $0.00 + 6 episode(s) "
                                              "of unknown cost")


def test_done_episodes_are_those_a_run_would_keep(tmp_path):
    from harness.config import RunSettings

    root = tmp_path / "run"
    episodes, _ = plan_costs(units(["naive"], agent=None), root)
    keys = [e.key for e in episodes]
    for key, row in zip(keys, ({"status": "ok"}, {"status": "failed"}, {"status": "infra_failed"},
                               {"status": "failed", "error_kind": "disk_full"})):
        (root / "episodes" / key).mkdir(parents=True)
        (root / "episodes" / key / "row.json").write_text(json.dumps(row))
    assert [e.done for e in plan_costs(units(["naive"], agent=None), root)[0]] == [True, True, False, False, False,
                                                                                   False]
    retry = plan_costs(units(["naive"], agent=None), root, settings=RunSettings(retry_failed=True))[0]
    assert [e.done for e in retry] == [True, False, False, False, False, False]
