"""Local sandbox backends: choosing one, exec semantics, copy-out, spec errors, the mount allowlist."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import pytest
from tests.support.sandbox import get_backend

from harness import plugins as registry
from harness.contracts.sandbox import SandboxBackend, SandboxSpec
from harness.hookspecs import hookimpl
from harness.sandbox import (
    SandboxError,
    SandboxUnavailable,
    SpecError,
    choose_backend,
    mounts,
)
from harness.sandbox.bubblewrap import BubblewrapBackend, filesystem_args
from harness.sandbox.mounts import Mount, base_mounts, minimal_tree, repository_root
from harness.sandbox.process import truncation_marker
from harness.sandbox.unshare import UnshareBackend

ALL = ["bubblewrap", "unshare", "none"]


# -- choosing a backend -------------------------------------------------------
class FakeBackend(SandboxBackend):
    def __init__(self, name, priority, ok, why="ok"):
        self.name, self.priority, self._ok, self._why = name, priority, ok, why

    def available(self):
        return self._ok, self._why

    def create(self, spec):  # pragma: no cover - never created here
        raise AssertionError


@pytest.fixture
def fake_backends():
    def install(*backends):
        class Plugin:
            @hookimpl
            def register_sandbox_backends(self, register):
                for b in backends:
                    register(b)

        p = registry.Plugins(load_entrypoints=False)
        p.add(Plugin(), "fake-sandboxes")
        registry.reset(p)

    saved = registry.reset(None)
    yield install
    registry.reset(saved)


def test_auto_picks_highest_priority_available_and_never_none(fake_backends):
    fake_backends(FakeBackend("none", -1, True), FakeBackend("low", 5, True),
                  FakeBackend("high", 30, False, "tool missing"), FakeBackend("mid", 20, True))
    assert choose_backend("auto").name == "mid"
    assert choose_backend().name == "mid"
    assert choose_backend("none").name == "none"
    assert choose_backend("low").name == "low"


def test_auto_with_only_unavailable_backends_explains_each(fake_backends):
    fake_backends(FakeBackend("none", -1, True), FakeBackend("bwrapish", 20, False, "bwrap is not installed"),
                  FakeBackend("unshareish", 10, False, "user namespaces are disabled"))
    with pytest.raises(SandboxUnavailable) as err:
        choose_backend("auto")
    msg = str(err.value)
    assert "bwrapish: bwrap is not installed" in msg and "unshareish: user namespaces are disabled" in msg
    assert "--sandbox none" in msg


def test_named_backend_unknown_or_unavailable(fake_backends):
    fake_backends(FakeBackend("a", 10, False, "no kernel support"), FakeBackend("b", 5, True))
    with pytest.raises(SandboxUnavailable, match=r"'a' is unavailable: no kernel support"):
        choose_backend("a")
    with pytest.raises(SandboxUnavailable, match=r"unknown sandbox backend 'zz' \(known: a, b\)"):
        choose_backend("zz")


def test_builtin_backends_are_registered_with_their_priorities():
    reg = registry.plugins().registry("sandbox_backend")
    assert {n: reg[n].obj.priority for n in ("bubblewrap", "unshare", "none")} == {
        "bubblewrap": 20, "unshare": 10, "none": -1}
    assert reg["bubblewrap"].plugin == "local-sandboxes"


def test_auto_among_local_backends(fake_backends):
    import tsagent_plugins.sandboxes.local as local_plugin

    fake_backends()
    registry.plugins().add(local_plugin, "local-sandboxes")
    expected = "bubblewrap" if BubblewrapBackend().available()[0] else "unshare"
    assert choose_backend("auto").name == expected


def test_missing_tools_make_backends_unavailable_with_a_reason():
    ok, why = BubblewrapBackend(binary="/nonexistent/bwrap").available()
    assert ok is False and "bwrap" in why and "not installed" in why
    ok, why = UnshareBackend(binary="/nonexistent/unshare").available()
    assert ok is False and "unshare" in why and "not installed" in why


# -- exec semantics ----------------------------------------------------------------
@pytest.fixture
def ws(tmp_path):
    d = tmp_path / "ws"
    d.mkdir()
    return d


@pytest.mark.parametrize("name", ALL)
def test_exec_status_stdin_env_and_cwd(name, ws, tmp_path):
    backend = get_backend(name)
    home = tmp_path / "home"
    home.mkdir()
    spec = SandboxSpec(workspace=ws, home=home, env={"A": "spec", "B": "spec"})
    with backend.create(spec) as sb:
        r = sb.exec(["sh", "-c", 'read line; echo "$line|$A|$B|$HOME|$(pwd)"; echo err >&2; exit 3'],
                    env={"B": "exec"}, stdin="hello\n")
        assert (r.returncode, r.timed_out, r.stderr) == (3, False, "err\n")
        line, a, b, home_var, cwd = r.stdout.strip().split("|")
        assert (line, a, b) == ("hello", "spec", "exec")
        if name == "none":
            assert (home_var, cwd) == (str(home), str(ws))
        else:
            assert (home_var, cwd) == ("/home/agent", "/workspace")
        sig = sb.exec(["sh", "-c", "kill -SEGV $$"])
        assert sig.returncode == 128 + 11
        if name != "none":
            missing = sb.exec(["no-such-command-xyz"])
            assert missing.returncode == 127 and "command not found: no-such-command-xyz" in missing.stderr
        r = sb.exec(["sh", "-c", "echo kept > $HOME/state"])
        assert r.returncode == 0 and (home / "state").read_text() == "kept\n"


def test_none_backend_missing_command_is_an_error(ws):
    with get_backend("none").create(SandboxSpec(workspace=ws)) as sb, pytest.raises(FileNotFoundError):
        sb.exec(["no-such-command-xyz"])


@pytest.mark.parametrize("name", ALL)
def test_output_is_bounded_with_a_marker(name, ws):
    with get_backend(name).create(SandboxSpec(workspace=ws)) as sb:
        sb.max_output = 1000
        r = sb.exec(["python", "-c", "import sys; sys.stdout.write('a' * 5000); sys.stderr.write('b' * 10)"])
    assert r.stdout == "a" * 1000 + truncation_marker(4000)
    assert r.stderr == "b" * 10


@pytest.mark.parametrize("name", ["bubblewrap", "unshare"])
def test_ro_binds_are_readable_not_writable(name, ws, tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "data.txt").write_text("readable")
    with get_backend(name).create(SandboxSpec(workspace=ws, ro_binds=[shared])) as sb:
        r = sb.exec(["sh", "-c", f"cat {shared}/data.txt; echo x > {shared}/new 2>/dev/null || echo denied"])
    assert r.stdout == "readabledenied\n"
    assert not (shared / "new").exists()


@pytest.mark.parametrize("name", ALL)
def test_copy_out_files_folders_and_refuses_links_out(name, ws, tmp_path):
    with get_backend(name).create(SandboxSpec(workspace=ws)) as sb:
        script = ("mkdir -p out/sub && echo 1 > out/a && echo 2 > out/sub/b && "
                  "ln -s /etc/passwd out/link && ln -s /etc/passwd escape && echo r > results.json")
        r = sb.exec(["sh", "-c", script])
        assert r.returncode == 0, r.stderr
        sb.copy_out("/workspace/results.json", tmp_path / "dest" / "results.json")
        sb.copy_out("out", tmp_path / "dest" / "out")
        with pytest.raises(ValueError, match="outside"):
            sb.copy_out("/workspace/escape", tmp_path / "dest" / "escape")
        with pytest.raises(ValueError, match="only paths under"):
            sb.copy_out("/etc/passwd", tmp_path / "dest" / "passwd")
        with pytest.raises(FileNotFoundError):
            sb.copy_out("/workspace/missing", tmp_path / "dest" / "missing")
    dest = tmp_path / "dest"
    assert (dest / "results.json").read_text() == "r\n"
    assert (dest / "out" / "sub" / "b").read_text() == "2\n"
    assert (dest / "out" / "link").is_symlink() and os.readlink(dest / "out" / "link") == "/etc/passwd"
    assert not (dest / "escape").exists()


@pytest.mark.parametrize("name", ALL)
def test_destroy_is_idempotent_and_stops_running_commands(name, ws):
    sb = get_backend(name).create(SandboxSpec(workspace=ws))
    proc = sb.spawn(["sleep", "60"])
    private = sb.private
    sb.destroy()
    assert proc.poll() is not None
    assert not private.exists()
    sb.destroy()
    with pytest.raises(SandboxError, match="destroyed"):
        sb.exec(["true"])


# -- spec errors -------------------------------------------------------------------
@pytest.mark.parametrize("name", ALL)
def test_spec_errors_name_the_field(name, ws, tmp_path):
    backend = get_backend(name)
    plain = tmp_path / "plain"
    plain.write_text("")
    cases = [
        (SandboxSpec(workspace=tmp_path / "missing"), "SandboxSpec.workspace"),
        (SandboxSpec(workspace=ws, home=tmp_path / "nohome"), "SandboxSpec.home"),
        (SandboxSpec(workspace=ws, ro_binds=[Path("relative/dir")]), "SandboxSpec.ro_binds[0]"),
        (SandboxSpec(workspace=ws, proxy_socket=plain), "SandboxSpec.proxy_socket"),
        (SandboxSpec(workspace=ws, env={"BAD NAME": "x"}), "SandboxSpec.env"),
        (SandboxSpec(workspace=ws, proxy_port=70000), "SandboxSpec.proxy_port"),
    ]
    for spec, field in cases:
        with pytest.raises(SpecError, match=field.replace("[", r"\[").replace("]", r"\]")):
            backend.create(spec)
    with backend.create(SandboxSpec(workspace=ws)) as sb, pytest.raises(SpecError, match="exec env"):
        sb.exec(["true"], env={"A=B": "x"})


def test_none_backend_port_in_use_is_reported(ws, tmp_path):
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "p.sock"))
    busy = socket.create_server(("127.0.0.1", 0))
    try:
        spec = SandboxSpec(workspace=ws, proxy_socket=tmp_path / "p.sock", proxy_port=busy.getsockname()[1])
        with pytest.raises(SandboxError, match="proxy_port"):
            get_backend("none").create(spec)
    finally:
        busy.close()
        sock.close()


# -- the allowlist --------------------------------------------------------------------
def test_allowlist_binds_code_but_never_the_repository_root():
    ms = base_mounts()
    dests = {m.dest for m in ms}
    repo = repository_root()
    assert str(repo / "harness") in dests
    assert str(repo) not in dests and "/" not in dests and "/work" not in dests
    assert "/etc/resolv.conf" not in dests and "/etc/shadow" not in dests
    assert all(m.kind in ("ro", "symlink") for m in ms)
    assert any(Path(sys.prefix).resolve() == Path(d) or Path(d) in Path(sys.prefix).resolve().parents for d in dests)


def test_python_inside_a_parent_of_the_repository_is_refused(monkeypatch):
    repo = repository_root()
    monkeypatch.setattr(mounts, "python_paths", lambda: [repo.parent])
    with pytest.raises(SandboxError, match="contains the repository root"):
        base_mounts()


def test_minimal_tree_drops_nested_and_duplicate_paths():
    got = minimal_tree([Path("/a/b"), Path("/a"), Path("/a/b/c"), Path("/ab"), Path("/a")])
    assert got == [Path("/a"), Path("/ab")]


def test_bwrap_creates_missing_parents_world_readable():
    args = filesystem_args([Mount("ro", "/usr", src="/usr"), Mount("ro", "/opt/py/lib", src="/opt/py/lib"),
                            Mount("ro", "/usr/local/x", src="/x")])
    assert args[:3] == ["--ro-bind", "/usr", "/usr"]
    assert args[3:11] == ["--perms", "0755", "--dir", "/opt", "--perms", "0755", "--dir", "/opt/py"]
    assert "/usr/local" not in args  # inside a bound host folder: never created


def test_auto_for_an_image_only_agent_takes_an_image_backend_or_refuses_naming_why(fake_backends):
    """A CLI agent (``needs_image``) under ``auto`` never gets a local backend, where it could only fail."""
    image = FakeBackend("imagey", 5, True)
    image.runs_images = True
    fake_backends(FakeBackend("bwrapish", 20, True), image)
    assert choose_backend("auto").name == "bwrapish"
    assert choose_backend("auto", needs_image=True).name == "imagey"
    down = FakeBackend("imagey", 5, False, "no Docker engine")
    down.runs_images = True
    fake_backends(FakeBackend("bwrapish", 20, True), down)
    with pytest.raises(SandboxUnavailable) as err:
        choose_backend("auto", needs_image=True)
    assert "runs only in the agent runtime image" in str(err.value) and "imagey: no Docker engine" in str(err.value)
    assert "bwrapish" not in str(err.value)
