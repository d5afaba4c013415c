"""Built-in local sandbox backends: bubblewrap (20), unshare (10), none (-1, explicit only)."""

from harness import hookimpl
from harness.sandboxing import BubblewrapBackend
from harness.sandboxing import NoneBackend
from harness.sandboxing import UnshareBackend


@hookimpl
def register_sandbox_backends(register):
    register(BubblewrapBackend())
    register(UnshareBackend())
    register(NoneBackend())
