"""Linux primitives for building a sandbox from inside fresh namespaces (stdlib + ctypes only).

Used by the sandbox launcher in ``unshare`` mode: mount / bind / remount
read-only, pivot_root, bring up loopback, set the hostname, drop capabilities.
Every failure raises ``OSError`` naming the operation and path.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import platform
import socket
import struct

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_NOATIME = 1024
MS_NODIRATIME = 2048
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MS_RELATIME = 1 << 21
MNT_DETACH = 2

PR_SET_PDEATHSIG = 1
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38

#: statvfs f_flag bit -> mount flag (flags a remount must keep when they are locked)
_ST_TO_MS = {1: MS_RDONLY, 2: MS_NOSUID, 4: MS_NODEV, 8: MS_NOEXEC, 1024: MS_NOATIME,
             2048: MS_NODIRATIME, 4096: MS_RELATIME}

#: pivot_root syscall numbers (no glibc wrapper); other machines fall back to chroot.
_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217, "i686": 217}
_SYS_CAPSET = {"x86_64": 126, "aarch64": 91, "riscv64": 91, "ppc64le": 184, "s390x": 185, "i686": 185}

_libc = ctypes.CDLL(None, use_errno=True)  # the C library is already loaded into the interpreter
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
_libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
_libc.sethostname.argtypes = [ctypes.c_char_p, ctypes.c_size_t]


def _check(ret: int, what: str) -> None:
    if ret != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"{what}: {os.strerror(e)}")


def _b(s: str | None) -> bytes | None:
    return None if s is None else os.fsencode(s)


def mount(src: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    _check(_libc.mount(_b(src), _b(target), _b(fstype), flags, _b(data)), f"mount {src} on {target}")


def umount_detach(target: str) -> None:
    _check(_libc.umount2(_b(target), MNT_DETACH), f"umount {target}")


def _locked_flags(path: str) -> int:
    f = os.statvfs(path).f_flag
    return sum(ms for st, ms in _ST_TO_MS.items() if f & st)


def _submounts(target: str) -> list[str]:
    """Mount points strictly below ``target`` (from /proc/self/mountinfo)."""
    out = []
    prefix = target.rstrip("/") + "/"
    with open("/proc/self/mountinfo", "rb") as fh:
        for line in fh:
            point = line.split()[4].decode("utf-8", "surrogateescape")
            point = point.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")
            if point.startswith(prefix):
                out.append(point)
    return out


def bind(src: str, target: str, readonly: bool) -> None:
    """Bind ``src`` (file or directory, recursively) at ``target``; read-only including submounts."""
    mount(src, target, None, MS_BIND | MS_REC)
    extra = MS_NOSUID | MS_NODEV | (MS_RDONLY if readonly else 0)
    for point in [target] + (_submounts(target) if readonly else []):
        mount(None, point, None, MS_BIND | MS_REMOUNT | _locked_flags(point) | extra)


def make_private(path: str = "/") -> None:
    mount(None, path, None, MS_REC | MS_PRIVATE)


def pivot_root(new_root: str) -> None:
    """Make ``new_root`` the root and detach the old one (chroot where pivot_root is unknown)."""
    os.chdir(new_root)
    nr = _SYS_PIVOT_ROOT.get(platform.machine())
    if nr is None:
        os.chroot(".")
        os.chdir("/")
        return
    _check(_libc.syscall(nr, b".", b"."), f"pivot_root {new_root}")
    umount_detach(".")
    os.chdir("/")


def set_hostname(name: str) -> None:
    raw = name.encode()
    _check(_libc.sethostname(raw, len(raw)), "sethostname")


def loopback_up() -> None:
    """``ip link set lo up`` through SIOCSIFFLAGS."""
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = struct.pack("16sh22x", b"lo", 0)
        flags = struct.unpack("16sh", fcntl.ioctl(s, siocgifflags, req)[:18])[1]
        fcntl.ioctl(s, siocsifflags, struct.pack("16sh22x", b"lo", flags | iff_up))


def _last_cap() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap") as fh:
            return int(fh.read())
    except OSError:
        return 40


def drop_bounding_set() -> None:
    """Empty the capability bounding set: nothing exec'd later gains capabilities (needs CAP_SETPCAP)."""
    for cap in range(_last_cap() + 1):
        if _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() != errno.EINVAL:
            _check(-1, f"drop capability {cap} from the bounding set")


def set_no_new_privs() -> None:
    """execve never grants privileges again (setuid bits and file capabilities are ignored)."""
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "set no_new_privs")


def clear_capabilities() -> None:
    """Clear this process's effective, permitted and inheritable capability sets (capset)."""
    nr = _SYS_CAPSET.get(platform.machine())
    if nr is None:
        return
    header = struct.pack("Ii", 0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this thread
    data = bytes(24)  # two zeroed cap_user_data_t
    hb, db = ctypes.create_string_buffer(header), ctypes.create_string_buffer(data)
    _check(_libc.syscall(nr, hb, db), "capset")


def set_parent_death_signal(sig: int) -> None:
    _check(_libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0), "set parent death signal")
