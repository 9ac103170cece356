"""The model's hosts as network namespaces on this machine (CROS-RT's remote hops for real).

:class:`HostNetwork` creates one network namespace per host of the model, named
``crt<pid>h<i>`` (unique per chainrt process), links them with veth pairs (two hosts: one pair;
more: a bridge in a switch namespace ``crt<pid>sw``) on 10.77.0.0/24, and removes everything on
exit — normal, exception, Ctrl-C or SIGTERM (``chainrt crosslayer cleanup`` removes what a killed
chainrt left behind). A message between executors on different hosts then crosses the kernel's
real UDP path: socket, IP, veth transmit, the receiving interface's XDP/NAPI, IP, UDP, socket.

Receive processing runs in threaded NAPI (GRO on, ``/sys/class/net/<dev>/threaded``): the
``napi/<dev>-<id>`` kernel thread at SCHED_OTHER does what a NIC's softirq/ksoftirqd does on a
real host (a plain veth would process every packet in its sender's context instead).

Transmit checksum offload is turned off on every veth: a veth hands a peer packets whose UDP
checksum is still to be computed (CHECKSUM_PARTIAL); a packet that XDP redirects into a cpumap
loses that state and would be dropped as a checksum error.

Needs root (CAP_SYS_ADMIN and CAP_NET_ADMIN) and ``ip`` (iproute2); :class:`NetnsUnavailable`
says why otherwise.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import subprocess

SUBNET = "10.77.0"


class NetnsUnavailable(RuntimeError):
    """Network namespaces cannot be created here (no privilege, no iproute2, ...)."""


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    out = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
    if check and out.returncode != 0:
        raise NetnsUnavailable(f"ip {' '.join(args)}: {out.stderr.strip() or 'failed'}")
    return out


def available() -> str | None:
    """None when namespaces can be created here, else the reason (one line)."""
    if os.geteuid() != 0:
        return "hosts in network namespaces need root (CAP_SYS_ADMIN and CAP_NET_ADMIN)"
    if not shutil.which("ip"):
        return "hosts in network namespaces need the ip command (iproute2)"
    return None


class HostNetwork:
    """Network namespaces for ``hosts`` (model host names, in order), as a context manager.

    ``namespace[host]``, ``interface[host]`` (its veth inside its namespace) and
    ``address[host]`` (IPv4) are set once entered; :meth:`prefix` is the command prefix that
    runs a program in a host's namespace."""

    def __init__(self, hosts: list[str], tag: str | None = None, threaded_napi: bool = True):
        self.threaded_napi = threaded_napi
        if len(hosts) < 1:
            raise ValueError("no hosts")
        self.hosts = list(hosts)
        self.tag = tag or f"crt{os.getpid()}"
        self.namespace = {h: f"{self.tag}h{i}" for i, h in enumerate(self.hosts)}
        self.interface = {h: f"{self.tag}h{i}" for i, h in enumerate(self.hosts)}
        self.address = {h: f"{SUBNET}.{i + 1}" for i, h in enumerate(self.hosts)}
        self.switch = f"{self.tag}sw" if len(self.hosts) > 2 else None
        if len(self.interface[self.hosts[-1]]) + 1 > 15:
            raise NetnsUnavailable(f"interface names too long for tag {self.tag!r}")
        self._created: list[str] = []

    def prefix(self, host: str) -> list[str]:
        return ["ip", "netns", "exec", self.namespace[host]]

    def __enter__(self) -> "HostNetwork":
        why = available()
        if why:
            raise NetnsUnavailable(why)
        atexit.register(self.close)
        try:
            self._create()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _netns(self, name: str) -> None:
        _ip("netns", "add", name)
        self._created.append(name)
        _ip("-n", name, "link", "set", "lo", "up")

    def _create(self) -> None:
        for h in self.hosts:
            self._netns(self.namespace[h])
        if len(self.hosts) == 1:  # one host: its namespace has loopback only
            self.address[self.hosts[0]] = "127.0.0.1"
            return
        if self.switch:
            self._netns(self.switch)
            _ip("-n", self.switch, "link", "add", "br0", "type", "bridge")
            _ip("-n", self.switch, "link", "set", "br0", "up")
        for i, h in enumerate(self.hosts):
            ns, dev = self.namespace[h], self.interface[h]
            if self.switch:
                peer, peer_ns = f"{self.tag}p{i}", self.switch
            elif i == 0:
                continue  # two hosts: host 1's loop iteration makes the pair
            else:
                peer, peer_ns = self.interface[self.hosts[0]], self.namespace[self.hosts[0]]
            _ip("link", "add", dev, "netns", ns, "type", "veth", "peer", "name", peer, "netns", peer_ns)
            if self.switch:
                _ip("-n", self.switch, "link", "set", peer, "master", "br0")
                _ip("-n", self.switch, "link", "set", peer, "up")
        for h in self.hosts:
            ns, dev = self.namespace[h], self.interface[h]
            _ip("-n", ns, "addr", "add", f"{self.address[h]}/24", "dev", dev)
            _ip("-n", ns, "link", "set", dev, "up")
            self._tx_checksum_off(ns, dev)
            if self.threaded_napi:
                self._threaded_napi(ns, dev)
        if self.switch:
            for i in range(len(self.hosts)):
                self._tx_checksum_off(self.switch, f"{self.tag}p{i}")

    @staticmethod
    def _threaded_napi(ns: str, dev: str) -> None:
        """Receive processing in a NAPI kernel thread (``napi/<dev>-<id>``), as a NIC driver's:
        a veth otherwise processes a packet in its sender's context, which no real host does."""
        subprocess.run(["ip", "netns", "exec", ns, "ethtool", "-K", dev, "gro", "on"],
                       capture_output=True, check=False)
        subprocess.run(["ip", "netns", "exec", ns, "ethtool", "-K", dev, "rx-udp-gro-forwarding", "on"],
                       capture_output=True, check=False)
        out = subprocess.run(["ip", "netns", "exec", ns, "sh", "-c", f"echo 1 > /sys/class/net/{dev}/threaded"],
                             capture_output=True, text=True, check=False)
        if out.returncode != 0:
            raise NetnsUnavailable(f"threaded NAPI on {dev}: {out.stderr.strip()}")

    @staticmethod
    def _tx_checksum_off(ns: str, dev: str) -> None:
        if not shutil.which("ethtool"):
            raise NetnsUnavailable("hosts in network namespaces need ethtool (apt package ethtool)")
        out = subprocess.run(["ip", "netns", "exec", ns, "ethtool", "-K", dev, "tx", "off"],
                             capture_output=True, text=True, check=False)
        if out.returncode != 0:
            raise NetnsUnavailable(f"ethtool -K {dev} tx off: {out.stderr.strip()}")

    def close(self) -> None:
        """Removes every namespace made (their veth and bridge devices go with them); idempotent."""
        while self._created:
            _ip("netns", "del", self._created.pop(), check=False)
        try:
            atexit.unregister(self.close)
        except Exception:  # pragma: no cover - interpreter shutdown
            pass


def stale_namespaces() -> list[str]:
    """chainrt's namespaces (``crt<pid>...``) whose creating process no longer runs."""
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False).stdout
    stale = []
    for line in out.splitlines():
        name = line.split()[0] if line.split() else ""
        m = re.fullmatch(r"crt(\d+)(h\d+|sw)", name)
        if m and not os.path.exists(f"/proc/{m.group(1)}"):
            stale.append(name)
    return stale


def remove_stale() -> list[str]:
    """Removes :func:`stale_namespaces`; returns their names."""
    gone = stale_namespaces()
    for name in gone:
        _ip("netns", "del", name, check=False)
    return gone
