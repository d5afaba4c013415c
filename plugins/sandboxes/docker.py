"""Registers the Docker sandbox backend (:mod:`harness.sandbox.docker`)."""

from harness.hookspecs import hookimpl
from harness.sandbox.docker import DockerBackend


@hookimpl
def register_sandbox_backends(register):
    register(DockerBackend())
