"""``harness runs compact RUN``: the sizes before and after per kind and for the folder, ``--dry-run`` changing
nothing, a second run saying there is nothing to do, an experiment's stages each compacted, a refusal naming
the lock's holder and an error naming the file (exit 2, one line)."""

from __future__ import annotations

import errno
import json
import os
import re

import pytest
from click.testing import CliRunner

from harness import runlock
from harness.cli import cli
from harness.cli.runs import size_text
from harness.compressed_files import compressed_size, read_bytes

LOG = b"".join(b'{"type": "request", "seq": %d, "body": "%s"}\n' % (i, b"hello %d " % i * (2 * i)) for i in range(200))
ROLLOUT = b'{"type": "response_item", "text": "thinking about it"}\n' * 1000


def old_run(folder):
    """A run folder as an older harness left it: a plain proxy log per episode, a plain rollout in a home."""
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps({"episodes": [{"key": "e0"}, {"key": "e1"}]}))
    for key in ("e0", "e1"):
        episode = folder / "episodes" / key
        (episode / "home" / ".cli").mkdir(parents=True)
        (episode / "row.json").write_text(json.dumps({"episode": key, "status": "ok"}))
        (episode / "proxy.jsonl").write_bytes(LOG)
        (episode / "home" / ".cli" / "rollout.jsonl").write_bytes(ROLLOUT)
        (episode / "home" / ".cli" / "config.toml").write_text('model = "m"\n')
    (folder / "episodes" / "e0" / "workspace").mkdir()
    (folder / "episodes" / "e0" / "workspace" / "proxy.jsonl").write_bytes(LOG)  # the agent's: never touched
    return folder


def invoke(*args):
    return CliRunner().invoke(cli, ["runs", "compact", *map(str, args)], env={"COLUMNS": "200"})


def error_of(capsys, *args) -> tuple[int, str]:
    """(exit code, standard error) of ``harness runs compact ARGS`` through the entry point."""
    from harness.cli import main

    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        main(["runs", "compact", *map(str, args)])
    return exit_.value.code, capsys.readouterr().err


def files(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_compact_prints_sizes_per_kind_and_a_second_time_has_nothing_to_do(tmp_path):
    run = old_run(tmp_path / "run")
    result = invoke(run)
    assert result.exit_code == 0, result.output
    stored = files(run)
    assert result.output.startswith(
        f"note: {run}/episodes/e0: inputs left as they are: run.json does not list its params\n"
        f"note: {run}/episodes/e1: inputs left as they are: run.json does not list its params\n"
        f"{run} compacted\n")
    for kind, before, after in (("proxy logs", 2 * len(LOG), stored["episodes/e0/proxy.jsonl.zst"]),
                                ("home logs", 2 * len(ROLLOUT), stored["episodes/e0/home/.cli/rollout.jsonl.zst"])):
        after = 2 * len(after)  # the two episodes' files are alike
        saved = f"{100 * (before - after) / before:.0f}%"
        assert re.search(rf"\n\s+{kind}\s+2\s+{size_text(before)}\s+{size_text(after)}\s+{saved}\s*\n",
                         result.output), result.output
    total_before = sum(len(v) for v in files(old_run(tmp_path / "again").parent / "again").values())
    total_after = sum(len(v) for v in stored.values())
    assert re.search(rf"run folder \(total\)\s+{size_text(total_before)}\s+{size_text(total_after)}\s",
                     result.output), result.output
    assert {k for k in stored if k.endswith(".zst")} == {
        "episodes/e0/proxy.jsonl.zst", "episodes/e1/proxy.jsonl.zst",
        "episodes/e0/home/.cli/rollout.jsonl.zst", "episodes/e1/home/.cli/rollout.jsonl.zst"}
    assert stored["episodes/e0/workspace/proxy.jsonl"] == LOG and "episodes/e0/proxy.jsonl" not in stored
    assert read_bytes(run / "episodes/e1/proxy.jsonl.zst") == (LOG, None)
    again = invoke(run)
    assert again.exit_code == 0 and again.output.splitlines()[-1] == (
        f"{run}: nothing to do, it is compact already ({size_text(sum(len(v) for v in stored.values()))})")
    assert files(run) == stored


def test_a_dry_run_lists_the_files_and_changes_nothing(tmp_path):
    run = old_run(tmp_path / "run")
    before = files(run)
    result = invoke(run, "--dry-run")
    assert result.exit_code == 0, result.output
    log_after, rollout_after = compressed_size(run / "episodes/e0/proxy.jsonl"), compressed_size(
        run / "episodes/e1/home/.cli/rollout.jsonl")
    assert f"would compress {run}/episodes/e0/proxy.jsonl ({size_text(len(LOG))} -> ~{size_text(log_after)})" \
        in result.output
    assert f"would compress {run}/episodes/e1/home/.cli/rollout.jsonl ({size_text(len(ROLLOUT))} -> " \
           f"~{size_text(rollout_after)})" in result.output
    assert "dry run: nothing changed" in result.output and "config.toml" not in result.output
    assert re.search(rf"\n\s+proxy logs\s+2\s+{size_text(2 * len(LOG))}\s+~{size_text(2 * log_after)}\s+~\d+%",
                     result.output), result.output
    assert files(run) == before


def test_every_run_folder_under_the_given_one_is_compacted(tmp_path, capsys):
    stages = [old_run(tmp_path / "experiment" / name) for name in ("research", "forecast")]
    result = invoke(tmp_path / "experiment")
    assert result.exit_code == 0, result.output
    for stage in stages:
        assert str(stage) in result.output and (stage / "episodes" / "e0" / "proxy.jsonl.zst").is_file()
    assert invoke(tmp_path / "nothing-here").exit_code == 2
    (tmp_path / "empty").mkdir()
    assert error_of(capsys, tmp_path / "empty") == (
        2, f"error: {tmp_path / 'empty'}: not a run folder (no run.json in it or below it)\n")


def test_compact_refuses_a_locked_run_and_names_a_file_it_cannot_convert(tmp_path, monkeypatch, capsys):
    run = old_run(tmp_path / "run")
    before = files(run)
    with runlock.hold(run):
        code, err = error_of(capsys, run)
    assert code == 2 and files(run) == before
    assert err.startswith(f"error: {run}: cannot compact it while another process writes it (pid {os.getpid()} ")
    assert err.endswith("wait for it to finish, or pass --wait to compact it when it is done\n")

    replace = os.replace

    def failing(src, dst):
        if str(dst).endswith("e1/proxy.jsonl.zst"):
            raise OSError(errno.ENOSPC, "No space left on device")
        replace(src, dst)

    monkeypatch.setattr(os, "replace", failing)
    code, err = error_of(capsys, run)
    assert code == 2 and err == (f"error: {run}/episodes/e1/proxy.jsonl: No space left on device; the 1 file(s) "
                                 f"converted before it stay converted and the run reads as before: run `harness "
                                 f"runs compact {run}` again to finish\n")
    monkeypatch.setattr(os, "replace", replace)
    assert invoke(run).exit_code == 0 and not (run / "episodes" / "e1" / "proxy.jsonl").exists()
