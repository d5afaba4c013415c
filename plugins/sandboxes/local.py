"""Built-in local sandbox backends: bubblewrap (20), unshare (10), none (-1, explicit only)."""

from harness.hookspecs import hookimpl
from harness.sandbox.bubblewrap import BubblewrapBackend
from harness.sandbox.none import NoneBackend
from harness.sandbox.unshare import UnshareBackend


@hookimpl
def register_sandbox_backends(register):
    register(BubblewrapBackend())
    register(UnshareBackend())
    register(NoneBackend())
