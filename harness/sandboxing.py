"""Sandboxes: the contract a sandbox backend implements (:class:`SandboxBackend`, the :class:`Sandbox` it
starts from a :class:`SandboxSpec` under :class:`Limits`, what ``exec`` returns, the fixed paths inside) and the
backends the engine implements (the built-in plugins register them), with the image cache's root, and the
episode inputs the sandbox is given in private copies and that are kept by reference once it has run
(:mod:`harness.inputs`: the error a rebuilt input that differs from its record raises, the record's file name,
the readers of a by-reference input).  An agent
reaches its sandbox through :class:`harness.AgentContext` and needs none of these names.  Loaded lazily like
the package root (:func:`harness.lazy.public_api`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.lazy import public_api

if TYPE_CHECKING:
    from harness.contracts.sandbox import HOME as HOME
    from harness.contracts.sandbox import WORKSPACE as WORKSPACE
    from harness.contracts.sandbox import ExecResult as ExecResult
    from harness.contracts.sandbox import Limits as Limits
    from harness.contracts.sandbox import Sandbox as Sandbox
    from harness.contracts.sandbox import SandboxBackend as SandboxBackend
    from harness.contracts.sandbox import SandboxSpec as SandboxSpec
    from harness.sandbox.none import NoneBackend as NoneBackend
    from harness.sandbox.unshare import UnshareBackend as UnshareBackend
    from harness.sandbox.bubblewrap import BubblewrapBackend as BubblewrapBackend
    from harness.sandbox.docker import DockerBackend as DockerBackend
    from harness.image.cache import cache_root as cache_root
    from harness.image.build import agent_image_tag as agent_image_tag
    from harness.sandbox import owner as process_owner
    from harness.inputs import INPUTS_FILE as INPUTS_FILE
    from harness.inputs import InputMismatch as InputMismatch
    from harness.inputs import resolve as resolve_input
    from harness.inputs import listing as input_listing

__getattr__, __dir__ = public_api(globals())
