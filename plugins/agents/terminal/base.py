"""What the four terminal agents share: install pins, the headless command, failures, the trajectory.

TraceBench (Section 4.3, Appendix C) runs each model on its vendor's terminal
agent.  Every agent here runs the real pinned CLI inside the sandbox, headless
and unattended, against the harness model proxy (``AgentContext.model_base_url``)
with the dummy key :data:`harness.proxy.DUMMY_API_KEY`; real keys never enter
the sandbox.

The command is ``sh -c SCRIPT``: the script writes the CLI's configuration
files into the fresh per-episode home (``AgentContext.home``, copied out as the
episode's ``home/`` so the native session logs are kept) and then ``exec``\\s
the CLI, so the CLI is the process the sandbox's wall-clock limit kills
(nothing is started in the background).  The file contents travel as
positional parameters of ``sh``, not as environment variables, so the agent's
own shell commands never see them.

Profile ``options`` understood by every terminal agent (all optional):

``env``
    extra environment variables for the CLI (name -> string);
``args``
    extra command-line arguments (list of strings), added before the prompt;
``config``
    a mapping merged (recursively) into the CLI's generated configuration
    (``config.toml`` for Codex, ``settings.json`` for Gemini CLI and Claude
    Code, the ``opencode.json`` content for OpenCode).

Where the CLI comes from: in the agent image (Docker backend) it is on
``PATH``.  For local sandboxes (bubblewrap, unshare), an npm prefix on the host
holding the pinned package is bound read-only and used when the sandbox has no
such command: ``$HARNESS_AGENT_PREFIX`` when set (then it is used even when
the image has the command), else a prefix that ``harness image build``
downloaded into its cache.  Without either, the command stops with exit 127
and a message saying how to get the CLI.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import untrusted
from harness import Agent, AgentContext, AgentInvocation, ImageRecipe
from harness import ErrorKind, HarnessError
from harness.atif import read_native_text
from harness.wire import DUMMY_API_KEY
from tsagent_plugins.agents.terminal.atif import TrajectoryBuilder
from tsagent_plugins.agents.terminal.proxylog import ProxyCall, first_prompt, read_calls

if TYPE_CHECKING:  # annotations only: registering the agents needs no pydantic
    from harness import AgentProfile

PREFIX_ENV = "HARNESS_AGENT_PREFIX"


class ProfileError(HarnessError):
    """An agent profile does not fit the agent; the message names the profile and the field."""


def merge(base: dict, extra: dict) -> dict:
    """``base`` updated recursively with ``extra`` (new dicts; neither argument is changed)."""
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def profile_options(profile: AgentProfile, agent: str) -> tuple[dict[str, str], list[str], dict[str, Any]]:
    """``(env, args, config)`` from ``profile.options``; :class:`ProfileError` naming the bad field."""
    opts = dict(getattr(profile, "options", None) or {})
    where = f"agent profile {profile.name!r} (agent {agent})"
    unknown = sorted(set(opts) - {"env", "args", "config"})
    if unknown:
        raise ProfileError(f"{where}: options.{unknown[0]} is not understood (known: env, args, config)")
    env = opts.get("env") or {}
    if not isinstance(env, dict) or not all(isinstance(k, str) and re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", k)
                                            and isinstance(v, str) for k, v in env.items()):
        raise ProfileError(f"{where}: options.env must map variable names to strings")
    args = opts.get("args") or []
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ProfileError(f"{where}: options.args must be a list of strings")
    config = opts.get("config") or {}
    if not isinstance(config, dict):
        raise ProfileError(f"{where}: options.config must be a mapping")
    return dict(env), list(args), dict(config)


def installed_version(prefix: Path, package: str) -> str | None:
    """Version of ``package`` installed in the npm ``prefix`` (``lib/node_modules/<package>/package.json``)."""
    try:
        data = json.loads((Path(prefix) / "lib" / "node_modules" / package / "package.json").read_text())
    except (OSError, ValueError):
        return None
    return data.get("version") if isinstance(data, dict) else None


def host_prefix(package: str, version: str, binary: str) -> tuple[Path | None, bool]:
    """``(npm prefix on the host to bind, whether it was named explicitly)``.

    ``$HARNESS_AGENT_PREFIX`` when set; else the first complete npm prefix of
    the image-build cache (``<cache>/npm/*``) holding ``package@version`` and
    ``bin/<binary>``; else ``(None, False)``.
    """
    explicit = os.environ.get(PREFIX_ENV)
    if explicit:
        return Path(explicit).resolve(), True
    from harness.sandboxing import cache_root

    for folder in sorted((cache_root() / "npm").glob("*")):
        if (folder / ".complete").exists() and (folder / "bin" / binary).exists() \
                and installed_version(folder, package) == version:
            return folder.resolve(), False
    return None, False


def launch_script(files: list[str], stdin_null: bool, binary: str = "", prefix: Path | None = None,
                  explicit: bool = False, missing: str = "") -> str:
    """The ``sh`` script: write ``$1..$k`` to ``files``, then ``exec`` the remaining arguments.

    ``prefix``: an npm prefix whose ``bin`` goes first on ``PATH`` (``explicit``)
    or only when ``binary`` is not found otherwise.  ``missing``: the message
    printed (exit 127) when ``binary`` is still not found.  Folders are
    created with mode 0700 and files written with mode 0600.
    """
    lines = ["set -e", "umask 077"]
    if prefix is not None:
        bin_dir = shlex.quote(str(Path(prefix) / "bin"))
        guard = "" if explicit else f"command -v {shlex.quote(binary)} >/dev/null 2>&1 || "
        lines.append(f"{guard}{{ PATH={bin_dir}:\"$PATH\"; export PATH; }}")
    if binary:
        lines.append(f"command -v {shlex.quote(binary)} >/dev/null 2>&1 || "
                     f"{{ echo {shlex.quote(missing or binary + ' not found')} >&2; exit 127; }}")
    # Login shells (Codex runs ``bash -lc``) reset PATH from /etc/profile: keep the CLI's PATH for them.
    lines.append('[ -e "$HOME/.profile" ] || printf "export PATH=\'%s\'\\n" "$PATH" > "$HOME/.profile"')
    for path in files:
        folder = shlex.quote(str(Path(path).parent))
        lines += [f"mkdir -p {folder}", f"printf '%s' \"$1\" > {shlex.quote(path)}", "shift"]
    lines.append('exec "$@"' + (" < /dev/null" if stdin_null else ""))
    return "\n".join(lines)


class TerminalAgent(Agent):
    """Base of the four CLI agents.  Subclasses set the class attributes and implement the hooks.

    ``package``: the npm package (pinned at ``version``).  ``binary``: the
    command it installs.  Subclasses provide :meth:`environment`,
    :meth:`config_files` / :meth:`config_env`, :meth:`cli_argv`,
    :meth:`failure_messages`, :meth:`native_logs` and :meth:`convert`.
    """

    name = "terminal"
    package = ""
    version = "0"
    binary = ""
    needs_model = True
    needs_image = True
    #: Run the CLI with the prompt on standard input (else standard input is /dev/null).
    prompt_on_stdin = False

    # -- image -----------------------------------------------------------------
    def install(self, recipe: ImageRecipe) -> None:
        """Add the pinned npm package (TraceBench Appendix C.3, Table 18)."""
        spec = f"{self.package}@{self.version}"
        if spec not in recipe.npm:
            recipe.npm.append(spec)
        if self.binary and self.binary not in recipe.commands:
            recipe.commands.append(self.binary)

    # -- command -----------------------------------------------------------------
    def command(self, ctx: AgentContext) -> AgentInvocation:
        """``sh -c`` writing the config into ``ctx.home`` then ``exec``-ing the CLI headless.

        Raises :class:`ProfileError` when the profile has no model, or
        :class:`ValueError` when the context has no model URL.
        """
        profile = ctx.profile
        if not getattr(profile, "model", None):
            raise ProfileError(f"agent profile {profile.name!r}: 'model' is required for agent {self.name}")
        if not ctx.model_base_url:
            raise ValueError(f"agent {self.name} needs the model proxy URL (AgentContext.model_base_url)")
        env_extra, args_extra, config_extra = profile_options(profile, self.name)
        files = self.config_files(ctx, config_extra)
        argv = self.cli_argv(ctx, args_extra)
        env = {**self.environment(ctx), **self.config_env(ctx, config_extra), **env_extra}
        prefix, explicit = host_prefix(self.package, self.version, self.binary)
        missing = (f"harness: {self.binary} ({self.package}@{self.version}) is not installed in this sandbox; "
                   f"run with --sandbox docker and the agent image (harness image build --bootstrap), or set "
                   f"{PREFIX_ENV} to an npm prefix holding it")
        script = launch_script(list(files), stdin_null=not self.prompt_on_stdin, binary=self.binary, prefix=prefix,
                               explicit=explicit, missing=missing)
        ro_binds = [prefix] if prefix is not None else []
        return AgentInvocation(
            argv=["sh", "-c", script, f"harness-{self.name}", *files.values(), *argv],
            env=env,
            cwd=ctx.workspace,
            stdin=ctx.prompt if self.prompt_on_stdin else None,
            ro_binds=ro_binds,
        )

    def environment(self, ctx: AgentContext) -> dict[str, str]:
        """Environment variables of the CLI (model URL, dummy key, telemetry off ...)."""
        return {}

    def config_files(self, ctx: AgentContext, extra: dict[str, Any]) -> dict[str, str]:
        """Files to write before the CLI starts: sandbox path -> content (``extra``: ``options.config``)."""
        return {}

    def config_env(self, ctx: AgentContext, extra: dict[str, Any]) -> dict[str, str]:
        """Configuration passed in environment variables instead of files (``extra``: ``options.config``)."""
        return {}

    def cli_argv(self, ctx: AgentContext, extra_args: list[str]) -> list[str]:
        """The CLI's argv (headless, unattended, structured output)."""
        raise NotImplementedError

    @staticmethod
    def dummy_key() -> str:
        return DUMMY_API_KEY

    # -- failures ------------------------------------------------------------------
    def classify_failure(self, stdout: str, stderr: str, exit_code: int | None) -> str | None:
        """The :class:`harness.errors.ErrorKind` value this run's own output shows, or None.

        Reads the CLI's structured output for a failed model call: HTTP 429 is
        ``provider_rate_limited``, 5xx (and 529) ``provider_unavailable``, a
        connection that never reached the proxy ``proxy_error``; any other
        reported failure (e.g. a 400) is ``agent_crashed`` — also when the CLI
        exits 0 anyway (OpenCode does).  None when the output shows no failure
        (a non-zero exit without a signature is left to the caller).
        """
        errors = self.failure_messages(stdout, stderr, exit_code)
        if not errors:
            return None
        kinds = [classify_message(status, message) for status, message in errors]
        for kind in (ErrorKind.RATE_LIMIT, ErrorKind.UPSTREAM, ErrorKind.PROXY):
            if kind in kinds:
                return kind.value
        return ErrorKind.CRASH.value

    def failure_messages(self, stdout: str, stderr: str, exit_code: int | None) -> list[tuple[int | None, str]]:
        """``(HTTP status or None, message)`` of each failure the CLI reported."""
        return []

    # -- logs and trajectory ---------------------------------------------------------
    def native_logs(self, home: Path) -> list[Path]:
        """The CLI's session logs under ``home``, by their plain names (:func:`harness.atif.find_native_files`:
        the same list whether the harness stored them compressed or not)."""
        return []

    def convert(self, home: Path, stdout: str, calls: list[ProxyCall] | None) -> TrajectoryBuilder:
        """Read the native log under ``home`` (and ``stdout``) into a builder.  Raises when there is none."""
        raise NotImplementedError

    def trajectory(self, home: Path, stdout: str, proxy_log: Path | None) -> dict | None:
        """The ATIF trajectory: the native log converted, cross-checked against ``proxy_log``.

        When the native log is missing or unreadable (the CLI died early), a
        trajectory is still built from the proxy log (prompt and per-call
        token counts), with a note saying why.
        """
        home = Path(home)
        calls = None
        notes = []
        if proxy_log is not None and Path(proxy_log).exists():
            try:
                calls = read_calls(proxy_log)
            except Exception as exc:  # noqa: BLE001 - an unreadable proxy log must not lose the episode
                notes.append(f"proxy log unreadable: {untrusted.safe_str(exc)}")
        try:
            builder = self.convert(home, stdout or "", calls)
        except Exception as exc:  # noqa: BLE001 - a broken native log must not lose the episode
            builder = self.fallback(calls, f"native log not converted ({type(exc).__name__}: "
                                           f"{untrusted.safe_str(exc)})")
            if builder is None:
                return None
        builder.extra.setdefault("native_logs", [str(p.relative_to(home)) for p in self.native_logs(home)
                                                 if p.is_relative_to(home)])
        for note in notes:
            builder.note(note)
        return builder.build(calls)

    def fallback(self, calls: list[ProxyCall] | None, why: str) -> TrajectoryBuilder | None:
        """A trajectory from the proxy log alone: the prompt, then one agent step per model call."""
        if not calls:
            return None
        builder = TrajectoryBuilder(self.name, self.version, next((c.model for c in calls if c.model), None))
        builder.note(why + "; the steps below come from the proxy log (no tool calls or texts)")
        prompt = first_prompt(calls)
        if prompt is not None:
            builder.user(prompt, calls[0].ts)
        for call in calls:
            if call.conversational:
                builder.agent("", call.ts, model_name=call.model)
        return builder


#: Messages of failed model calls, by kind (matched case-insensitively).
RATE_LIMITED = re.compile(r"\b429\b|rate.?limit|too many requests|RESOURCE_EXHAUSTED|quota", re.I)
UNAVAILABLE = re.compile(r"\b5\d\d\b[^0-9]{0,3}(internal|bad gateway|service unavailable|gateway timeout|overloaded)"
                         r"|overloaded|high demand|temporar(y|ily) (errors?|unavailable)|server_error"
                         r"|\"status\": ?\"(INTERNAL|UNAVAILABLE)\"", re.I)
UNREACHABLE = re.compile(r"ECONNREFUSED|ECONNRESET|connection (error|refused|reset)|unable to connect|fetch failed"
                         r"|error sending request|socket hang up|ENOTFOUND|EAI_AGAIN", re.I)


def classify_message(status: int | None, message: str) -> ErrorKind:
    """The error kind of one reported failure (see :meth:`TerminalAgent.classify_failure`).

    429 or a rate-limit/quota message: ``provider_rate_limited``; 5xx (529
    included) or an overload message: ``provider_unavailable``; no HTTP status
    and a connection failure: ``proxy_error`` (the CLI never reached the
    proxy); anything else: ``agent_crashed``.
    """
    if status == 429 or (status is None and RATE_LIMITED.search(message)):
        return ErrorKind.RATE_LIMIT
    if (status is not None and status >= 500) or (status is None and UNAVAILABLE.search(message)):
        return ErrorKind.UPSTREAM
    if status is None and UNREACHABLE.search(message):
        return ErrorKind.PROXY
    return ErrorKind.CRASH


#: Bounds of one native-log file and of each JSON value in it (see :mod:`harness.untrusted`).
NATIVE_LOG_BOUNDS = untrusted.Bounds(max_bytes=256 * 2**20, max_depth=256, max_items=5_000_000, max_string=64 * 2**20)


def read_native_log(path: Path) -> str:
    """A native log's text within :data:`NATIVE_LOG_BOUNDS`, invalid UTF-8 replaced (steps are kept): the file
    as the CLI wrote it, or as the harness stored it compressed (``path.zst``; :func:`harness.atif.read_native_text`).

    Raises ValueError with the reason when the file cannot be read within the bound.
    """
    read = read_native_text(path, NATIVE_LOG_BOUNDS.max_bytes, str(path))
    if not read.ok:
        raise ValueError(read.reason)
    return read.value


def json_lines(text: str) -> list[dict]:
    """The JSON objects of a JSON-lines text (other lines, and lines past the bounds, are skipped)."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        value = untrusted.parse_json(line, NATIVE_LOG_BOUNDS).value
        if isinstance(value, dict):
            out.append(value)
    return out


def status_in(text: str) -> int | None:
    """An HTTP error status mentioned in ``text`` (``API Error: 429``, ``"code": 500`` ...), or None."""
    m = re.search(r"(?:API Error:?|status(?:Code)?\"?:?|\"code\":|last status:?|HTTP)\s*(\d{3})\b", text, re.I)
    if m and 400 <= int(m.group(1)) < 600:
        return int(m.group(1))
    return None
