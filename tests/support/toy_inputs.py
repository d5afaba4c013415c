"""A plugin distribution's source (for ``make_distribution``) with a task template whose inputs are kept by
reference (``harness.inputs``) and an agent that edits one input, deletes another and leaves the rest: the
harness/inputs.py and Dask executor tests run episodes of it."""

from __future__ import annotations

FILES = {"workspace/data/a.txt": "a", "workspace/data/b.txt": "b", "workspace/data/c.txt": "c",
         "key/hidden/k.txt": "k"}

TOY = '''
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from harness import Agent, AgentInvocation, AgentTaskTemplate, EpisodeScore, Materialized, hookimpl

FILES = %r
#: what the generator adds to every file: a test changes it to make a rebuild differ from its record
SALT = ""
REBUILT = []


class ToyParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    seed: int = 0


def content(name, seed):
    return f"{name}-{seed}{SALT}\\n" * 50


class Toy(AgentTaskTemplate):
    name = "toy-inputs"
    params_model = ToyParams

    def materialize(self, params, episode, workspace, key_dir):
        root = Path(workspace).parent
        for rel, name in FILES.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(content(name, params.seed))
        return Materialized(prompt="look at data/", task_info={})

    def score(self, params, episode, workspace, key_dir, run_submission):
        # reads a key input and a workspace input: rescoring needs both back
        hidden = (Path(key_dir) / "hidden" / "k.txt").read_text()
        seen = (Path(workspace) / "data" / "a.txt").read_text() if (Path(workspace) / "data" / "a.txt").exists() else ""
        return EpisodeScore({"hidden_lines": hidden.count("\\n"), "seen_lines": seen.count("\\n")})

    def input_references(self, params, episode, root):
        return {rel: {"name": name, "source": f"toy generator seed {params.seed}"} for rel, name in FILES.items()}

    def rebuild_input(self, params, episode, reference, dest):
        REBUILT.append(reference["name"])
        Path(dest).write_text(content(reference["name"], params.seed))


class Edits(Agent):
    """Edits data/b.txt, deletes data/c.txt, leaves data/a.txt alone and writes its answer."""

    name = "editor"
    version = "1"
    needs_model = False
    image_capable = False

    def command(self, ctx):
        return AgentInvocation(argv=["sh", "-c", "echo mine > data/b.txt && rm data/c.txt && echo 1 > answer.txt"])


@hookimpl
def register_task_templates(register):
    register(Toy())


@hookimpl
def register_agents(register):
    register(Edits())
''' % (FILES,)


