"""``harness plan --power``: the detectable difference printed beside the cost of the planned experiment."""

from __future__ import annotations

from click.testing import CliRunner

from harness.cli import cli
from harness.power import binomial_sd, detectable_difference, seeds_needed
from tests.support.paths import REPO
from tests.support.report_runs import make_main_run

MAIN = REPO / "tasks" / "experiments" / "tracebench-main.yaml"


def plan(*args: str) -> str:
    result = CliRunner().invoke(cli, ["plan", "--experiment", str(MAIN), "--no-episodes", *args],
                                terminal_width=250)
    assert result.exit_code == 0, result.output
    return result.output


def power_rows(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.strip().startswith("tracebench ")]


def test_tracebench_main_power_beside_the_cost():
    out = plan("--power")
    total = next(line for line in out.splitlines() if line.startswith("total:"))
    cost = total.split("expected $")[1].split()[0]
    # 4 agents x 3 simulators x 2 noise x 2 submissions x 5 seeds: per submission 15 clusters of 2 episodes
    expected = f"{100 * detectable_difference(15, binomial_sd(10, 2)):.1f} points"
    rows = power_rows(out)
    assert len(rows) == 2 and all(expected in r and cost in r for r in rows), out
    assert any("submission=direct" in r for r in rows) and any("submission=programmatic" in r for r in rows)
    assert "binomial model" in out and "α = 0.05" in out


def test_detect_prints_the_seeds_needed_and_their_cost():
    out = plan("--detect", "0.10", "--alpha", "0.05", "--power-level", "0.9")
    seeds = seeds_needed(0.10, binomial_sd(10, 2), 3, 0.05, 0.9)
    total = next(line for line in out.splitlines() if line.startswith("total:"))
    cost = float(total.split("expected $")[1].split()[0].replace(",", ""))
    rows = power_rows(out)
    # the seeds needed and the plan's cost scaled from its 5 seeds to that many
    assert rows and all(f" {seeds} " in r for r in rows), out
    assert all(abs(float(r.split()[-1].replace(",", "")) - cost * seeds / 5) <= 0.01 * seeds for r in rows)


def test_a_pilot_run_gives_the_variance(tmp_path):
    pilot = make_main_run(tmp_path, with_ablation=False)
    out = plan("--power", "--pilot", str(pilot))
    assert "SD of an episode's accuracy from the pilot run" in out and "binomial model" not in out


def test_the_summary_comes_first_and_the_episodes_only_when_asked():
    short = CliRunner().invoke(cli, ["plan", "--experiment", str(MAIN)], terminal_width=250)
    assert short.exit_code == 0, short.output
    lines = short.output.splitlines()
    assert lines[0].strip() == "tracebench-main: 240 episodes, plan for runs/tracebench-main"
    assert "balldrop-low-direct-seed0-" not in short.output  # no episode key listed
    assert lines[-2:] == ["(--episodes lists every episode)",
                          next(line for line in lines if line.startswith("total: 240 episode(s)"))]
    assert len(lines) < 20
    full = CliRunner().invoke(cli, ["plan", "--experiment", str(MAIN), "--episodes"], terminal_width=250)
    assert full.exit_code == 0, full.output
    out = full.output.splitlines()
    assert out[0] == lines[0]  # the same summary first, then the 240 episodes
    listing = next(i for i, line in enumerate(out) if line.strip() == "tracebench-main: 240 episodes")
    assert listing > 3 and sum("balldrop-" in line and "-seed" in line for line in out[listing:]) == 80
    assert any(line.strip().startswith("balldrop-low-direct-seed0-") for line in out[listing:])
    assert out[-1].startswith("total: 240 episode(s)") and "(--episodes lists every episode)" not in full.output
