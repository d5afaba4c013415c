"""Registers the Docker sandbox backend (:mod:`harness.sandbox.docker`)."""

from harness import hookimpl
from harness.sandboxing import DockerBackend


@hookimpl
def register_sandbox_backends(register):
    register(DockerBackend())
