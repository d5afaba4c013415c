"""What ``harness run`` checks before it writes anything: options the run cannot use are refused, naming
the option and why; a refused run leaves no run directory.  And the start line's unenforced limits."""

from __future__ import annotations

from click.testing import CliRunner

from harness.cli import cli
from harness.run import limits_not_enforced
from tests.support.paths import REPO

BALLDROP = REPO / "tasks" / "tracebench" / "balldrop-low-direct.yaml"


def harness_run(*args):
    return CliRunner().invoke(cli, ["run", *map(str, args)])


def test_an_unknown_model_backend_is_refused_listing_the_known_ones(tmp_path):
    result = harness_run("--task", BALLDROP, "--model-backend", "fake", "--out", tmp_path / "run")
    assert result.exit_code != 0 and not (tmp_path / "run").exists()
    message = str(result.exception)
    assert message.startswith("--model-backend: no model backend named 'fake' (known: ")
    assert "scripted" in message.split("known: ")[1]


def test_a_model_backend_or_script_no_agent_uses_is_refused(tmp_path):
    """The default euclidean-1nn agent calls no model: --model-backend and --script would be ignored."""
    result = harness_run("--task", BALLDROP, "--model-backend", "scripted", "--out", tmp_path / "run")
    assert result.exit_code != 0 and not (tmp_path / "run").exists()
    assert str(result.exception).startswith("--model-backend would be ignored: no episode of this run reaches a "
                                            "model through the harness's proxy (its agents (euclidean-1nn) call "
                                            "no model;")
    script = REPO / "examples" / "scripts" / "claude-balldrop.yaml"
    result = harness_run("--task", BALLDROP, "--script", script, "--out", tmp_path / "run")
    assert str(result.exception).startswith("--script would be ignored:")


def test_an_agent_task_without_a_profile_leaves_no_run_directory(tmp_path):
    result = harness_run("--task", REPO / "tasks" / "drcik" / "research-sample.yaml", "--out", tmp_path / "run")
    assert result.exit_code != 0 and not (tmp_path / "run").exists()
    assert "template 'drcik' runs an agent: give an agent profile (--agent" in str(result.exception)


class Backend:
    def __init__(self, text):
        self.text = text

    def describe(self):
        return {"limits_not_enforced": self.text}


def test_limits_not_enforced_keeps_each_backends_sentence_whole():
    """A reason holding ", " and parentheses is not split into pieces and re-sorted."""
    docker = ("tmp_mb for /tmp (the container's writable layer, on disk; its memory is not at risk), "
              "cpus (engine)")
    backends = {"docker": Backend(docker), "none": Backend(""), "bubblewrap": Backend("cpus")}
    assert limits_not_enforced(backends) == {"bubblewrap": "cpus", "docker": docker}


def test_the_start_line_prints_each_backends_limits_whole(tmp_path, monkeypatch):
    import harness.cli.run as run_cli

    docker = "tmp_mb for /tmp (the container's writable layer, on disk; its memory is not at risk)"

    def fake_execute(units, store, settings, on_event, **kwargs):
        on_event("start", {"episodes": 1, "sandbox": "docker", "limits_not_enforced": {"docker": docker}})
        return []

    monkeypatch.setattr(run_cli, "execute", fake_execute)
    result = CliRunner().invoke(cli, ["run", "--task", str(BALLDROP), "--out", str(tmp_path / "run")],
                                env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    assert f"limits not enforced by the docker sandbox: {docker}\n" in result.output


def refusal(capsys, *args):
    """``harness run ARGS`` as the installed command runs it: (exit status, stdout, stderr)."""
    import pytest

    from harness.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["run", *map(str, args)])
    out = capsys.readouterr()
    return exit_.value.code, out.out, out.err


def test_every_pre_run_refusal_is_one_error_line_with_exit_2(tmp_path, capsys):
    """--sandbox/--timeout on an in-harness run and --model-backend/--script no agent uses: the same format,
    ``error: <option> would be ignored: ...`` on one line, no usage text, exit 2, nothing written."""
    statistical = REPO / "tasks" / "drcik" / "sample-statistical.yaml"
    script = REPO / "examples" / "scripts" / "claude-balldrop.yaml"
    cases = [(statistical, "--sandbox", "bubblewrap", "every episode of this run runs in the harness process, "
                                                      "without a sandbox"),
             (statistical, "--timeout", "5", "every episode of this run runs in the harness process"),
             (BALLDROP, "--model-backend", "scripted", "no episode of this run reaches a model"),
             (BALLDROP, "--script", script, "no episode of this run reaches a model")]
    for spec, option, value, why in cases:
        code, out, err = refusal(capsys, "--task", spec, option, value, "--out", tmp_path / "run")
        assert code == 2 and not (tmp_path / "run").exists()
        assert err.startswith(f"error: {option} would be ignored: ") and why in err, err
        assert "Usage:" not in err + out and "Try 'harness" not in err + out


def test_a_task_that_cannot_be_prepared_leaves_no_new_run_directory(tmp_path):
    """The evidence run is read when the task is prepared (it may be an earlier stage's, written later)."""
    spec = REPO / "tasks" / "drcik" / "sample-dr-forecast.yaml"
    args = ("--task", spec, "--set", f"evidence.run={tmp_path / 'missing'}", "--set", "evidence.agent=x",
            "--set", "forecasters=[naive]")
    result = harness_run(*args, "--out", tmp_path / "run")
    assert result.exit_code != 0 and not (tmp_path / "run").exists()
    assert f"cannot prepare the task: params.evidence.run: no such run directory {tmp_path / 'missing'}" in str(
        result.exception)
    (tmp_path / "kept").mkdir()  # a folder that existed before the command is left as it was
    result = harness_run(*args, "--out", tmp_path / "kept")
    assert result.exit_code != 0 and (tmp_path / "kept").is_dir()


def test_removing_a_refused_runs_folders_stops_at_what_existed_or_is_not_empty(tmp_path):
    from harness.cli.run import remove_if_empty

    stage = tmp_path / "runs" / "experiment" / "research"
    stage.mkdir(parents=True)
    remove_if_empty(stage, tmp_path)  # created runs/experiment/research: all three go
    assert not (tmp_path / "runs").exists() and tmp_path.is_dir()
    stage.mkdir(parents=True)
    (tmp_path / "runs" / "other").mkdir()
    remove_if_empty(stage, tmp_path)  # runs/ holds another run: kept
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == ["other"]
    stage.mkdir(parents=True)
    (stage / "run.json").write_text("{}")
    remove_if_empty(stage, tmp_path)  # the run started: nothing removed
    assert (stage / "run.json").is_file()
    new = tmp_path / "runs" / "20260101-000000-abcdef"
    new.mkdir()
    remove_if_empty(new, tmp_path / "runs")  # a new run id under an existing runs/: the id folder only
    assert not new.exists() and (tmp_path / "runs").is_dir()


def test_a_cli_agent_under_auto_without_docker_is_refused_before_the_run_folder(tmp_path, monkeypatch):
    """claude-opus-4.6 runs only in the agent image: ``auto`` must not fall back to bubblewrap (where the
    episode could only fail with "claude is not installed in this sandbox")."""
    from harness.sandbox.docker import DockerBackend

    monkeypatch.setattr(DockerBackend, "available", lambda self: (False, "no Docker engine answers"))
    result = harness_run("--task", BALLDROP, "--agent", "claude-opus-4.6", "--model-backend", "scripted",
                         "--script", REPO / "examples/scripts/claude-balldrop.yaml", "--out", tmp_path / "run")
    assert result.exit_code != 0 and not (tmp_path / "run").exists(), result.output
    message = str(result.exception)  # the entry point prints it as one error: line, exit 2
    assert "runs only in the agent runtime image" in message and "docker: no Docker engine answers" in message
