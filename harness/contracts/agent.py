"""Agent contract: how an agent is installed, run headless, and its log read.

An agent is run inside a sandbox with the episode workspace as its working
directory.  Terminal agents (LLM CLIs) reach their model only through the
harness model proxy at ``AgentContext.model_base_url`` with a dummy key;
classical agents (no LLM) need neither.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class AgentContext:
    """What the harness tells an agent adapter about one episode.

    ``workspace``: the agent's working directory *inside* the sandbox.
    ``home``: a fresh per-episode home/state directory inside the sandbox
    (native logs land there); it is copied out with the workspace.
    ``prompt``: the task prompt.  ``task_info``: non-secret facts a
    classical agent may need (``submission``: ``"direct"|"programmatic"``,
    ``labels``: allowed labels).  ``profile``: the agent profile (model,
    reasoning effort, ...).  ``model_base_url``: the proxy bridge URL, or None.
    ``timeout``: wall-clock seconds for the whole agent run.
    """

    workspace: str
    home: str
    prompt: str
    profile: Any
    task_info: dict[str, Any] = field(default_factory=dict)
    model_base_url: str | None = None
    timeout: float = 3600.0


@dataclass
class AgentInvocation:
    """The command the sandbox runs: ``argv`` with ``env`` in ``cwd``; ``stdin`` text or None.

    ``ro_binds``: host paths the command needs readable at the same path in
    local (non-image) sandboxes, e.g. a host-installed CLI prefix.
    """

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    stdin: str | None = None
    ro_binds: list[Path] = field(default_factory=list)


@dataclass
class ImageRecipe:
    """What an agent adds to the runtime image: npm packages (``name@version``),
    pip requirements, files (path in image -> content), and the commands the
    finished image must have on ``PATH`` (the build fails naming a missing one)."""

    npm: list[str] = field(default_factory=list)
    pip: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    commands: list[str] = field(default_factory=list)


class Agent(ABC):
    """Contract every agent plugin implements.

    ``name``: registry key named by profiles (``agent:`` field).
    ``version``: the pinned version of the tool it runs.
    ``needs_model``: True for LLM agents (the harness starts the model proxy).
    ``needs_image``: the agent is meant to run in the agent runtime image (its
    tools are installed there); ``--sandbox auto`` then chooses only an image backend
    (refusing the run before its folder is made when none is available).
    ``image_capable``: False for agents that run host programs (e.g. the host's
    Python) and so cannot run in an image backend such as docker.
    ``privileged_inputs``: the agent is a privileged baseline: the template also
    writes its privileged inputs into the workspace (e.g. clean paired reference
    trajectories; :meth:`AgentTaskTemplate.write_privileged`).
    No other agent ever gets them.
    """

    name: str
    version: str = "0"
    needs_model: bool = True
    needs_image: bool = False
    image_capable: bool = True
    privileged_inputs: bool = False

    def refusal(self, params) -> str | None:
        """Why this agent cannot run episodes of these template ``params`` (checked before
        anything runs), or None (default)."""
        return None

    def install(self, recipe: ImageRecipe) -> None:
        """Add what the agent needs to the runtime image recipe (default: nothing)."""

    @abstractmethod
    def command(self, ctx: AgentContext) -> AgentInvocation:
        """The headless command, environment and stdin for this episode."""

    def native_logs(self, home: Path) -> list[Path]:
        """Paths of the native session logs under the copied-out ``home`` (default: none), by their plain names:
        after the episode the harness stores ``home``'s files compressed (``name.zst``,
        :mod:`harness.native_logs`), so list them with :func:`harness.atif.find_native_files`."""
        return []

    def classify_failure(self, stdout: str, stderr: str, exit_code: int | None) -> str | None:
        """An :class:`harness.errors.ErrorKind` value when the output shows a failure the exit
        code hides (e.g. a CLI that exits 0 after its model call failed), else None."""
        return None

    def trajectory(self, home: Path, stdout: str, proxy_log: Path | None) -> dict | None:
        """Convert the native log (and proxy log) into an ATIF trajectory dict, or None.  Read the files of
        ``home`` through :mod:`harness.atif` (``read_native_text``, ``copy_native_file`` for a reader that opens
        a file by path): run again on a finished episode, they are stored compressed."""
        return None
