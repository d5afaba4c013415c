"""Deep-research agent adapters (harness side) of Dr-CiK (Section 5, Appendix G "Deep-research agents").

Adapters only: what runs in the sandbox (:mod:`.tools`, :mod:`.client`,
:mod:`.retrieval`) is never imported by the harness process (a test checks it);
:mod:`.trace` turns the agent's step log into the ATIF trajectory.

- ``retrieval``: one retrieval pass + one synthesis call, run by the host's Python
  inside a local sandbox (bubblewrap/unshare), over the corpus in the workspace.
  Profile ``options``: ``retriever`` (``embeddings`` | ``bm25``; bm25 is a labelled
  deviation), ``embedding_model``, ``top_k`` (default 10), ``max_tool_calls``,
  ``max_tokens``, ``max_output_tokens``.  Needs the ``dr`` extra (bm25s) for bm25.
- ``codex-dr``: the Codex CLI terminal agent with the corpus as files in its
  workspace, asked for ``report.md`` and ``evidence.json`` (the research prompt says
  so); runs under Docker or bubblewrap like the other terminal agents.  Profile
  ``options``: those of the terminal agents, plus ``max_tool_calls``/``max_tokens``,
  which are checked after the run against the trajectory (Codex has no such switch;
  enforce tokens with the run's proxy budget); the trajectory's ``extra.stop_reason`` says
  ``complete`` or which cap the run went past.
- ``drbench``, ``opendr``, ``bench2future``: iterative DR agents run like ``retrieval`` (host
  Python in a local sandbox; :mod:`.drbench`, :mod:`.opendr` (needs langgraph, the ``dr``
  extra), :mod:`.bench2future`).  Their limits are profile ``options`` with the upstream
  defaults (:data:`LIMITS`); every limit, given or default, goes to the agent and to the
  trajectory's ``extra.limits`` (the profile, with the options it gives, is in ``run.json``).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

from harness import Agent, AgentContext, AgentInvocation, EpisodeArtifacts, MetricExtractor, get_plugin
from harness import hookimpl
from harness.atif import find_native_files, read_native_text
from harness.wire import DUMMY_API_KEY
from tsagent_plugins.agents.terminal.base import ProfileError
from tsagent_plugins.agents.terminal.codex import Codex

CAP_OPTIONS = ("max_tool_calls", "max_tokens")
RETRIEVAL_OPTIONS = ("retriever", "embedding_model", "top_k", "max_output_tokens") + CAP_OPTIONS
RETRIEVERS = ("embeddings", "bm25")
CAPS_FILE = "research/caps.json"


def _caps(options: dict, where: str) -> dict:
    out = {}
    for name in CAP_OPTIONS:
        value = options.get(name)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise ProfileError(f"{where}: options.{name} must be a positive integer")
        out[name] = value
    return out


def runtime_files() -> list[Path]:
    """What the in-sandbox agent needs readable: this package and its parents' ``__init__`` files."""
    here = Path(__file__).resolve().parent
    return [here.parent.parent / "__init__.py", here.parent / "__init__.py", here]


class RetrievalAgent(Agent):
    """The Retrieval DR baseline (see :mod:`.retrieval`)."""

    name = "retrieval"
    version = "1"
    needs_model = True
    image_capable = False  # runs the host's Python (numpy, bm25s) in a local sandbox
    #: Modules the in-sandbox agent imports beyond the core, each with its install command (checked before a run).
    requires: dict[str, str] = {}

    def refusal(self, params) -> str | None:
        """Refused before the run when a module of :attr:`requires` is not installed (the agent runs the
        host's Python: it would crash in every episode), with the install command."""
        missing = {name: how for name, how in self.requires.items() if importlib.util.find_spec(name) is None}
        if missing:
            return (f"needs {', '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} not installed: "
                    + "; ".join(dict.fromkeys(missing.values())))
        return None

    def config(self, ctx: AgentContext) -> dict:
        profile = ctx.profile
        where = f"agent profile {profile.name!r} (agent {self.name})"
        options = dict(profile.options or {})
        unknown = sorted(set(options) - set(RETRIEVAL_OPTIONS))
        if unknown:
            raise ProfileError(f"{where}: options.{unknown[0]} is not understood (known: {', '.join(RETRIEVAL_OPTIONS)})")
        retriever = options.get("retriever", "embeddings")
        if retriever not in RETRIEVERS:
            raise ProfileError(f"{where}: options.retriever must be one of {RETRIEVERS}, got {retriever!r}")
        if not profile.model:
            raise ProfileError(f"{where}: 'model' is required")
        if not ctx.model_base_url:
            raise ValueError(f"agent {self.name} needs the model proxy URL (AgentContext.model_base_url)")
        top_k = options.get("top_k", 10)
        if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 1:
            raise ProfileError(f"{where}: options.top_k must be a positive integer")
        info = ctx.task_info or {}
        return {"model": profile.model, "base_url": ctx.model_base_url, "api_key": DUMMY_API_KEY,
                "retriever": retriever, "embedding_model": options.get("embedding_model"),
                "top_k": top_k, "max_output_tokens": options.get("max_output_tokens"),
                **_caps(options, where), "workspace": ctx.workspace, "log": f"{ctx.home}/research/steps.jsonl",
                "corpus_dir": info.get("corpus_dir", "corpus"), "prompt_file": info.get("prompt_file", "task.md"),
                "report": info.get("report", "report.md"), "evidence": info.get("evidence", "evidence.json")}

    def command(self, ctx: AgentContext) -> AgentInvocation:
        return AgentInvocation(
            argv=[sys.executable, "-m", "tsagent_plugins.agents.research.retrieval", "--config", json.dumps(self.config(ctx))],
            env={"PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"},
            cwd=ctx.workspace,
            ro_binds=runtime_files(),
        )

    def native_logs(self, home: Path) -> list[Path]:
        return find_native_files(Path(home) / "research", "steps.jsonl")  # plain or stored compressed

    def trajectory(self, home: Path, stdout: str, proxy_log: Path | None) -> dict | None:
        from tsagent_plugins.agents.research.trace import trajectory

        return trajectory(self.name, self.version, home, proxy_log)


#: Limits of the iterative DR agents and their defaults (sources in each agent's docstring).
LIMITS: dict[str, dict[str, int | bool]] = {
    "drbench": {"max_iterations": 15, "actions_per_iteration": 5, "top_k": 5, "max_structured_output_retries": 3},
    "opendr": {"max_concurrent_research_units": 5, "max_researcher_iterations": 3, "max_react_tool_calls": 5,
               "max_structured_output_retries": 3, "top_k": 5, "allow_clarification": False},
    "bench2future": {"max_steps": 20, "top_k": 5, "max_structured_output_retries": 3},
}


class IterativeResearchAgent(RetrievalAgent):
    """An in-sandbox iterative DR agent (``python -m tsagent_plugins.agents.research.<module>``)."""

    module = ""

    def config(self, ctx: AgentContext) -> dict:
        profile = ctx.profile
        where = f"agent profile {profile.name!r} (agent {self.name})"
        options = dict(profile.options or {})
        defaults = LIMITS[self.name]
        known = ("retriever", "embedding_model", "max_output_tokens") + CAP_OPTIONS + tuple(defaults)
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise ProfileError(f"{where}: options.{unknown[0]} is not understood (known: {', '.join(known)})")
        limits = {}
        for name, default in defaults.items():
            value = options.get(name, default)
            if isinstance(default, bool):
                if not isinstance(value, bool):
                    raise ProfileError(f"{where}: options.{name} must be true or false")
            elif not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ProfileError(f"{where}: options.{name} must be a positive integer")
            limits[name] = value
        if limits.get("allow_clarification"):
            raise ProfileError(f"{where}: options.allow_clarification must be false (research episodes have "
                               "no user to answer a clarifying question)")
        base = super().config(ctx.__class__(**{**ctx.__dict__, "profile": profile.model_copy(update={
            "options": {k: v for k, v in options.items() if k in RETRIEVAL_OPTIONS and k != "top_k"}})}))
        caps = {k: base[k] for k in CAP_OPTIONS}
        return {**base, "top_k": limits.get("top_k"), "limits": {**limits, **caps}}

    def command(self, ctx: AgentContext) -> AgentInvocation:
        return AgentInvocation(
            argv=[sys.executable, "-m", f"tsagent_plugins.agents.research.{self.module}", "--config",
                  json.dumps(self.config(ctx))],
            env={"PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"},
            cwd=ctx.workspace,
            ro_binds=runtime_files(),
        )


class DrBenchAgent(IterativeResearchAgent):
    """DRBench's research agent, re-implemented (see :mod:`.drbench`)."""

    name = "drbench"
    module = "drbench"


#: Open Deep Research: the distribution opendr reads at run time, and the version the paper ran (Appendix G).
OPENDR_UPSTREAM = {"package": "open-deep-research",
                   "paper": "langchain-ai/open_deep_research, GitHub repository as of 2026-05-07 (the paper's; "
                            "not reachable here, so not run)"}


class OpenDRAgent(IterativeResearchAgent):
    """LangChain's Open Deep Research graph rebuilt on langgraph (see :mod:`.opendr`).  ``upstream``: the
    upstream software it follows, recorded in every row (:class:`UpstreamColumns`)."""

    name = "opendr"
    upstream = OPENDR_UPSTREAM
    requires = {"langgraph": "pip install -e '.[dr]'",
                "open_deep_research": "pip install --no-deps open-deep-research==0.0.16"}
    module = "opendr"


class Bench2FutureAgent(IterativeResearchAgent):
    """The Bench2Future ReAct agent, implemented from the Dr-CiK paper's description (see :mod:`.bench2future`)."""

    name = "bench2future"
    module = "bench2future"


class CodexDR(Codex):
    """Codex 0.124.0 as a DR agent: the research prompt, the corpus as workspace files."""

    name = "codex-dr"

    def command(self, ctx: AgentContext) -> AgentInvocation:
        profile = ctx.profile
        options = dict(profile.options or {})
        caps = _caps(options, f"agent profile {profile.name!r} (agent {self.name})")
        for name in caps:
            options.pop(name, None)
        inner = AgentContext(**{**ctx.__dict__, "profile": profile.model_copy(update={"options": options}),
                                "task_info": {**(ctx.task_info or {}), "caps": caps}})
        return super().command(inner)

    def config_files(self, ctx: AgentContext, extra: dict) -> dict[str, str]:
        files = super().config_files(ctx, extra)
        files[f"{ctx.home}/{CAPS_FILE}"] = json.dumps((ctx.task_info or {}).get("caps") or {})
        return files

    def trajectory(self, home: Path, stdout: str, proxy_log: Path | None) -> dict | None:
        doc = super().trajectory(home, stdout, proxy_log)
        read = read_native_text(Path(home) / CAPS_FILE, 1 << 20)
        try:
            caps = json.loads(read.value) if read.ok else {}
        except ValueError:
            caps = {}
        if doc is not None and isinstance(caps, dict):
            reason = check_caps(doc, caps.get("max_tool_calls"), caps.get("max_tokens"))
            doc.setdefault("extra", {}).update({"caps": caps, "stop_reason": reason or "complete"})
        return doc


def check_caps(trajectory: dict | None, max_tool_calls: int | None, max_tokens: int | None) -> str | None:
    """The reason a finished run went past its profile caps (tool calls in the trajectory, prompt +
    completion tokens in its final metrics), or None."""
    if not trajectory:
        return None
    calls = sum(len(s.get("tool_calls") or []) for s in trajectory.get("steps", []))
    if max_tool_calls is not None and calls > max_tool_calls:
        return f"tool-call cap exceeded ({calls} > {max_tool_calls})"
    final = trajectory.get("final_metrics") or {}
    tokens = int(final.get("total_prompt_tokens") or 0) + int(final.get("total_completion_tokens") or 0)
    if max_tokens is not None and tokens > max_tokens:
        return f"token cap exceeded ({tokens} > {max_tokens})"
    return None


def installed_version(package: str) -> str:
    """``<package> <version>`` of the installed distribution, or ``<package> not installed``."""
    from importlib import metadata

    try:
        return f"{package} {metadata.version(package)}"
    except metadata.PackageNotFoundError:
        return f"{package} not installed"


class UpstreamColumns(MetricExtractor):
    """The upstream software a DR agent follows, in every row of its episodes (agents with an ``upstream``
    attribute: ``{"package", "paper"}``; ``opendr``): ``upstream`` is what the agent read at run time (the
    trajectory's ``extra.upstream``, e.g. ``open-deep-research 0.0.16``), else, when the agent stopped
    before recording it, the version installed beside the harness (the agent runs the host's Python, so
    the same one); ``upstream_paper`` is the version the paper ran.  Null for other agents."""

    name = "agent-upstream"
    version = "1"
    columns = {
        "upstream": ("str", "upstream software the agent follows and its version, as the agent read it at run time "
                            "(else as installed); null: the agent follows none"),
        "upstream_paper": ("str", "the upstream version the paper ran; null: the agent follows none"),
    }

    def extract(self, artifacts: EpisodeArtifacts) -> dict[str, Any]:
        name = getattr(artifacts.profile, "agent", None)
        try:
            upstream = getattr(get_plugin("agent", name), "upstream", None) if name else None
        except Exception:  # noqa: BLE001 - an agent this registry does not know follows no upstream here
            upstream = None
        if not upstream:
            return {"upstream": None, "upstream_paper": None}
        extra = (artifacts.trajectory or {}).get("extra") or {}
        ran = extra.get("upstream") if isinstance(extra, dict) else None
        return {"upstream": str(ran) if ran else installed_version(upstream["package"]),
                "upstream_paper": upstream["paper"]}


@hookimpl
def register_metric_extractors(register):
    register(UpstreamColumns())


@hookimpl
def register_agents(register):
    register(RetrievalAgent())
    register(CodexDR())
    register(DrBenchAgent())
    register(OpenDRAgent())
    register(Bench2FutureAgent())
