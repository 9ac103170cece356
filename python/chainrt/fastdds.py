"""Fast DDS XML profiles generated from a chainrt model (CROS-RT principles P4 and C1).

CROS-RT (see docs/crosslayer.md) carries a chain's priority through every layer a message
crosses. Two of those layers are configured here, once per OS process of the model (one rcl
context, hence one DDS participant, per ``chainrt-run`` process):

* **C1, the cross-layer priority identifier**: every participant receives on its own known UDP
  ports (:func:`participant_ports`), so the kernel can tell from a packet's destination port which
  executor (and so which chain priority) it is for; ``chainrt crosslayer`` installs that
  (port -> priority) map into the kernel.
* **P4, DDS threads at the executor's priority**: the participant's reception threads (of the UDP
  and SHM transports), its timed-events thread and its builtin flow-controller sender thread get
  the executor's SCHED_FIFO priority and the union of its threads' CPU pinning.

Network exposure: with ``localhost_only`` (the project's test setting,
``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``) the participant uses SHM plus a UDPv4 transport
allowed on 127.0.0.1 only, unicast locators on 127.0.0.1, static peers on 127.0.0.1 and no
multicast locators, so no socket is bound beyond loopback. For several hosts (network namespaces)
each participant binds its host's address (and loopback) and lists the other participants'
metatraffic locators as initial peers — discovery is unicast, no multicast is needed.

The profile is the file's default participant profile (``is_default_profile``), which is what
``rmw_fastrtps_cpp`` applies when ``FASTDDS_DEFAULT_PROFILES_FILE`` / ``FASTRTPS_...`` names the
file (:data:`PROFILES_VARIABLES`). The same XML serves Fast DDS 3 (Kilted) and 2.14 (Jazzy): every
element written here is in both versions' schema, and both apply the thread settings to the
threads they name dds.ev.*, dds.udp.*, dds.asyn.* (docs/ros_lines.md).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

from .janitor import current, guard
from .model import load_model

SCHED_FIFO = 1
#: Fast DDS's port formula (RTPS spec 9.6.1.1): PB + DG * domain + offsets; PB = 7400, DG = 250.
PORT_BASE, DOMAIN_GAIN = 7400, 250
#: chainrt's own participants use offsets [OFFSET, DOMAIN_GAIN) of the domain's port range,
#: above those of Fast DDS's automatic participant ids 0..(OFFSET-12)/2 (d1 = 10, d3 = 11, gain 2).
OFFSET = 170
PORTS_PER_PARTICIPANT = 2
#: Participants with Fast DDS's automatic ids 0..STANDARD_PEERS-1 on this machine that a
#: localhost-only chainrt participant announces itself to (port PB + DG * domain + 10 + 2 * id).
STANDARD_PEERS = 10


class ProfileError(ValueError):
    """The model cannot be given Fast DDS profiles (e.g. more processes than known ports)."""


@dataclass(frozen=True)
class Participant:
    """One DDS participant: the process of the model it belongs to, its host, its two known
    UDP ports (metatraffic = discovery, user = data) and the executor priority/affinity its DDS
    threads get (priority None: left at the default policy)."""
    process: str
    host: str
    metatraffic_port: int
    user_port: int
    priority: int | None
    affinity: int  # CPU bitmask, 0 = no pinning

    @property
    def ports(self) -> tuple[int, int]:
        return (self.metatraffic_port, self.user_port)


def executor_priority(executor) -> int | None:
    """The SCHED_FIFO priority an executor's DDS threads inherit (CROS-RT P4): the executor's
    ``priority`` when set, else the highest SCHED_FIFO priority among its threads and thread
    classes; None when it has none (no real-time priority to carry)."""
    if executor.priority is not None and executor.priority > 0:
        return int(executor.priority)
    prios = [t.fifo_priority for t in executor.threads if t.fifo_priority]
    prios += [c.fifo_priority for c in executor.thread_classes if c.fifo_priority]
    return max(prios) if prios else None


def executor_affinity(executor) -> int:
    """Union of the cores the executor's threads (and thread classes) are pinned to, as the
    uint64 bitmask Fast DDS takes; 0 when any of its threads is unpinned."""
    mask = 0
    for t in list(executor.threads) + list(executor.thread_classes):
        if not t.cores:
            return 0
        for c in t.cores:
            mask |= 1 << int(c)
    return mask


def participant_ports(model, domain_id: int = 0, offset: int = OFFSET) -> dict[str, tuple[int, int]]:
    """The known (metatraffic, user) UDP ports of every process of the model, in model order:
    ``7400 + 250 * domain + offset + 2 * i`` and ``+1``. Raises ProfileError when the model has
    more processes than the domain's port range leaves room for."""
    if not 0 <= domain_id <= 232:
        raise ProfileError(f"ROS domain id {domain_id} outside 0..232")
    procs = processes(model)
    room = (DOMAIN_GAIN - offset) // PORTS_PER_PARTICIPANT
    if len(procs) > room:
        raise ProfileError(f"{len(procs)} processes, but only {room} participants fit the known-port "
                           f"range of a domain (offset {offset})")
    base = PORT_BASE + DOMAIN_GAIN * domain_id + offset
    return {p: (base + 2 * i, base + 2 * i + 1) for i, p in enumerate(procs)}


def processes(model) -> list[str]:
    """The OS processes of the model in order of first appearance among its executors."""
    out: list[str] = []
    for e in model.executors:
        if e.process not in out:
            out.append(e.process)
    return out


def participants(model, domain_id: int = 0, offset: int = OFFSET) -> list[Participant]:
    """One Participant per process: its host, known ports, and the priority (highest) and
    affinity (union) of the executors it hosts."""
    ports = participant_ports(model, domain_id, offset)
    out = []
    for proc, (meta, user) in ports.items():
        execs = [e for e in model.executors if e.process == proc]
        prios = [p for p in (executor_priority(e) for e in execs) if p is not None]
        masks = [executor_affinity(e) for e in execs]
        affinity = 0 if not masks or 0 in masks else _or(masks)
        out.append(Participant(proc, execs[0].host, meta, user, max(prios) if prios else None, affinity))
    return out


def port_priorities(model, domain_id: int = 0, offset: int = OFFSET) -> dict[int, int]:
    """The C1 map: each known UDP port of a participant -> the priority of the chains it serves
    (its executor's priority; 0 = non-RT, for participants without a real-time priority)."""
    out = {}
    for p in participants(model, domain_id, offset):
        for port in p.ports:
            out[port] = p.priority or 0
    return out


def socket_buffer_size(model) -> int:
    """The UDP socket buffer size the profiles ask for: four of the model's largest messages,
    at least 1 MiB, at most 4 MiB (the kernel caps it at net.core.rmem_max / wmem_max). The
    system default (~208 KiB) overflows on bursts of large fragmented messages — above all
    when XDP hands the stack page-sized frames, whose skbs count twice the memory."""
    largest = max((int(t.size) for t in model.topics), default=0)
    return int(min(4 << 20, max(1 << 20, 4 * largest)))


def _or(masks):
    m = 0
    for x in masks:
        m |= x
    return m


def _thread(tag: str, priority: int | None, affinity: int, indent: str) -> str:
    if priority is None and not affinity:
        return ""
    body = []
    if priority is not None:
        body += [f"<scheduling_policy>{SCHED_FIFO}</scheduling_policy>", f"<priority>{priority}</priority>"]
    if affinity:
        body.append(f"<affinity>{affinity}</affinity>")
    inner = "".join(f"\n{indent}  {b}" for b in body)
    return f"\n{indent}<{tag}>{inner}\n{indent}</{tag}>"


def _locators(addresses: list[str], port: int, indent: str) -> str:
    items = "".join(f"\n{indent}  <locator><udpv4><address>{escape(a)}</address><port>{port}</port></udpv4></locator>"
                    for a in addresses)
    return items


def profiles_xml(model, process: str | None = None, *, domain_id: int = 0, localhost_only: bool = True,
                 host_addresses: dict[str, str] | None = None, shm: bool | None = None,
                 thread_priorities: bool = True, offset: int = OFFSET) -> str:
    """The Fast DDS XML profiles file for one process of ``model`` (default: its first).

    The default participant profile makes the process's participant
      * receive on its known ports (:func:`participant_ports`) — CROS-RT's C1 identifier;
      * run its reception (UDP and SHM transports), timed-events and sender threads at its
        executor's SCHED_FIFO priority, pinned to its executor's cores — CROS-RT's P4
        (``thread_priorities=False`` leaves them at Fast DDS's defaults, the vanilla baseline);
      * discover its peers by unicast at their known metatraffic ports, with no multicast.

    ``localhost_only=True``: every locator and the UDP allowlist are 127.0.0.1 (nothing is bound
    beyond loopback). Otherwise ``host_addresses`` maps each model host to the IPv4 address its
    participants bind (e.g. a network namespace's veth address); participants on other hosts are
    reached there over UDP. ``shm``: add Fast DDS's shared-memory transport (default: only when
    every participant is on one host — Fast DDS would otherwise pick shared memory between network
    namespaces of one machine too, and a remote hop would not cross the kernel's network path).
    Raises ProfileError for an unknown process, a missing host address or too many processes.
    """
    parts = participants(model, domain_id, offset)
    if not parts:
        raise ProfileError("the model has no executors")
    by_proc = {p.process: p for p in parts}
    if process is None:
        process = parts[0].process
    if process not in by_proc:
        raise ProfileError(f"no process {process!r} in the model (processes: {', '.join(by_proc)})")
    me = by_proc[process]
    if shm is None:
        shm = localhost_only or len({p.host for p in parts}) == 1

    def addr(host: str) -> str:
        if localhost_only:
            return "127.0.0.1"
        if not host_addresses or host not in host_addresses:
            raise ProfileError(f"no address given for host {host!r}")
        return host_addresses[host]

    # one address: Fast DDS 3.2 binds a port on only one of several whitelisted addresses, and
    # processes of one host reach each other over the host address as well
    my_addrs = [addr(me.host)]
    prio = me.priority if thread_priorities else None
    aff = me.affinity if thread_priorities else 0
    I = "    "
    transports = ["chainrt_udp"] + (["chainrt_shm"] if shm else [])
    # loopback only: the UDP transport is allowed on 127.0.0.1 alone. Several hosts: no allowlist
    # (Fast DDS 3.2 opens no socket for an explicit non-loopback locator under an allowlist); the
    # sockets bind 0.0.0.0 inside the host's namespace, whose only interfaces are lo and its veth
    allow = "".join(f"\n{I*4}<address>{a}</address>" for a in my_addrs) if localhost_only else ""
    allow_xml = (f"\n{I*3}<interfaceWhiteList>{allow}\n{I*3}</interfaceWhiteList>" if allow else "")
    shm_desc = ""
    if shm:
        shm_desc = (f"\n{I*2}<transport_descriptor>\n{I*3}<transport_id>chainrt_shm</transport_id>"
                    f"\n{I*3}<type>SHM</type>{_thread('default_reception_threads', prio, aff, I*3)}"
                    f"{_thread('dump_thread', prio, aff, I*3)}\n{I*2}</transport_descriptor>")
    # discovery: the known metatraffic locator of every participant (ourselves excluded)
    peers = "".join(_locators([addr(p.host)], p.metatraffic_port, I * 5)
                    for p in parts if p.process != process)
    if localhost_only:
        # ...and the metatraffic ports of the first STANDARD_PEERS participants Fast DDS numbers
        # itself on this machine (ros2 CLI, rclpy programs, chainrt discover/profile): they
        # listen there, not on chainrt's known ports, so without these announcements they would
        # never see the run's nodes (their answers go to our announced locators)
        peers += "".join(_locators(["127.0.0.1"], PORT_BASE + DOMAIN_GAIN * domain_id + 10 + 2 * pid, I * 5)
                         for pid in range(STANDARD_PEERS))
    peers_xml = (f"\n{I*5}<initialPeersList>{peers}\n{I*5}</initialPeersList>" if peers else "")
    threads = "".join(_thread(t, prio, aff, I * 4) for t in
                      ("timed_events_thread", "builtin_controllers_sender_thread",
                       "builtin_transports_reception_threads"))
    pr = "default" if prio is None else str(prio)
    buf = socket_buffer_size(model)
    return f"""<?xml version="1.0" encoding="UTF-8" ?>
<!-- Generated by chainrt from model {escape(model.name)!s}: process {escape(process)} on host {escape(me.host)},
     known UDP ports {me.metatraffic_port} (discovery) and {me.user_port} (data), DDS thread priority {pr}. -->
<dds xmlns="http://www.eprosima.com">
  <profiles>
    <transport_descriptors>
        <transport_descriptor>
            <transport_id>chainrt_udp</transport_id>
            <type>UDPv4</type>
            <sendBufferSize>{buf}</sendBufferSize>
            <receiveBufferSize>{buf}</receiveBufferSize>{allow_xml}{_thread('default_reception_threads', prio, aff, I*3)}
        </transport_descriptor>{shm_desc}
    </transport_descriptors>
    <participant profile_name="chainrt_{escape(process)}" is_default_profile="true">
        <domainId>{domain_id}</domainId>
        <rtps>
            <name>chainrt_{escape(process)}</name>
            <useBuiltinTransports>false</useBuiltinTransports>
            <userTransports>{''.join(f'<transport_id>{t}</transport_id>' for t in transports)}</userTransports>
            <defaultUnicastLocatorList>{_locators(my_addrs, me.user_port, I*4)}
            </defaultUnicastLocatorList>
            <builtin>
                <avoid_builtin_multicast>true</avoid_builtin_multicast>
                <metatrafficUnicastLocatorList>{_locators(my_addrs, me.metatraffic_port, I*5)}
                </metatrafficUnicastLocatorList>{peers_xml}
            </builtin>{threads}
        </rtps>
    </participant>
  </profiles>
</dds>
"""


def write_profiles(model, directory: str | os.PathLike, **kwargs) -> dict[str, Path]:
    """Writes :func:`profiles_xml` for every process of the model into ``directory``
    (``<process>.fastdds.xml``) and returns {process: path}; kwargs as for profiles_xml."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    out = {}
    for proc in processes(model):
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in proc)
        path = d / f"{safe}.fastdds.xml"
        path.write_text(profiles_xml(model, proc, **kwargs))
        out[proc] = path
    return out


#: The variables naming a default profiles file: Fast DDS 3 (Kilted) reads the first, Fast DDS 2.14
#: (Jazzy) only the second; both are set, so one environment serves either line (Kilted's
#: rmw_fastrtps also reads the second, and logs that the name is deprecated). Both versions' XML
#: loader takes the file's realpath(): the file must be a named one (an unlinked file's /dev/fd/N
#: has no realpath and is silently not loaded on Jazzy).
PROFILES_VARIABLES = ("FASTDDS_DEFAULT_PROFILES_FILE", "FASTRTPS_DEFAULT_PROFILES_FILE")


def profile_environment(path: str | os.PathLike) -> dict[str, str]:
    """The environment variables that make rmw_fastrtps_cpp load ``path`` as its default
    participant profile, on every line (PROFILES_VARIABLES)."""
    return {v: str(path) for v in PROFILES_VARIABLES}


def chainrt_configures(env: dict[str, str]) -> bool:
    """Does chainrt give the participants started with `env` its own Fast DDS profile? Not when the
    user named a profiles file (PROFILES_VARIABLES) or selected another RMW."""
    return not any(env.get(v) for v in PROFILES_VARIABLES) \
        and env.get("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp") == "rmw_fastrtps_cpp"


def discovery_is_local(env: dict[str, str]) -> bool:
    """Is discovery limited to this machine (ROS 2's default range, LOCALHOST, or the older
    ROS_LOCALHOST_ONLY=1)?"""
    return env.get("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST").upper() == "LOCALHOST" \
        or env.get("ROS_LOCALHOST_ONLY") == "1"


def run_environments(model, directory: str | os.PathLike, env: dict[str, str],
                     thread_priorities: bool = True,
                     host_addresses: dict[str, str] | None = None) -> dict[str, dict[str, str]]:
    """Per-process environment additions that make every ``chainrt-run`` process of a run use
    its generated profile (written into ``directory``), or {} where chainrt leaves Fast DDS alone
    (``model``: the loaded model, or its file, then loaded here):
    the user named a profiles file (``FASTDDS_DEFAULT_PROFILES_FILE`` / ``FASTRTPS_...``), or
    another RMW is selected, or discovery is not limited to localhost and no host addresses
    (network namespaces) are given.

    With a generated profile ``ROS_AUTOMATIC_DISCOVERY_RANGE`` is set to ``SYSTEM_DEFAULT``: the
    profile itself restricts discovery (to loopback, or to the model's hosts' addresses), and the
    rmw's own LOCALHOST setting would add a second UDP transport with a socket on 0.0.0.0."""
    if not chainrt_configures(env) or (host_addresses is None and not discovery_is_local(env)):
        return {}
    if isinstance(model, (str, os.PathLike)):
        model = load_model(str(model))
    try:
        domain = int(env.get("ROS_DOMAIN_ID", "0") or 0)
    except ValueError:
        raise ProfileError(f"ROS_DOMAIN_ID={env.get('ROS_DOMAIN_ID')!r} is not a number") from None
    paths = write_profiles(model, directory, domain_id=domain, localhost_only=host_addresses is None,
                           host_addresses=host_addresses, thread_priorities=thread_priorities)
    return {proc: {**profile_environment(path), "ROS_AUTOMATIC_DISCOVERY_RANGE": "SYSTEM_DEFAULT"}
            for proc, path in paths.items()}


def loopback_profile_xml(domain_id: int = 0) -> str:
    """The profile of a participant that is no process of a model (chainrt discover's, profile's and
    report's listeners, the reference system's processes) under localhost discovery: SHM plus UDPv4
    on 127.0.0.1 only, with Fast DDS's own ports for its participant id (port 0: Fast DDS fills in
    the standard port), no multicast, and the first STANDARD_PEERS participant ids of the domain
    on 127.0.0.1 as discovery peers -- so that, as a ``chainrt run`` process, it binds nothing
    beyond loopback."""
    I = "    "
    peers = "".join(_locators(["127.0.0.1"], PORT_BASE + DOMAIN_GAIN * domain_id + 10 + 2 * pid, I * 5)
                    for pid in range(STANDARD_PEERS))
    return f"""<?xml version="1.0" encoding="UTF-8" ?>
<!-- Generated by chainrt: a participant on loopback only (localhost discovery). -->
<dds xmlns="http://www.eprosima.com">
  <profiles>
    <transport_descriptors>
        <transport_descriptor>
            <transport_id>chainrt_udp</transport_id>
            <type>UDPv4</type>
            <interfaceWhiteList>
                <address>127.0.0.1</address>
            </interfaceWhiteList>
        </transport_descriptor>
        <transport_descriptor>
            <transport_id>chainrt_shm</transport_id>
            <type>SHM</type>
        </transport_descriptor>
    </transport_descriptors>
    <participant profile_name="chainrt_loopback" is_default_profile="true">
        <domainId>{domain_id}</domainId>
        <rtps>
            <useBuiltinTransports>false</useBuiltinTransports>
            <userTransports><transport_id>chainrt_udp</transport_id><transport_id>chainrt_shm</transport_id></userTransports>
            <defaultUnicastLocatorList>{_locators(["127.0.0.1"], 0, I * 4)}
            </defaultUnicastLocatorList>
            <builtin>
                <avoid_builtin_multicast>true</avoid_builtin_multicast>
                <metatrafficUnicastLocatorList>{_locators(["127.0.0.1"], 0, I * 5)}
                </metatrafficUnicastLocatorList>
                <initialPeersList>{peers}
                </initialPeersList>
            </builtin>
        </rtps>
    </participant>
  </profiles>
</dds>
"""


_loopback_dir: list[str] = []  # this process's folder of loopback profiles (made once, removed at exit)


def loopback_environment(env: dict[str, str]) -> dict[str, str]:
    """The environment additions that keep a participant started with `env` (in this process or a
    child) on loopback under localhost discovery, as :func:`run_environments` keeps a ``chainrt
    run`` process: its profile (:func:`loopback_profile_xml`) and ``ROS_AUTOMATIC_DISCOVERY_RANGE``
    set to SYSTEM_DEFAULT (the rmw's own LOCALHOST setting would bind 0.0.0.0). {} where chainrt
    leaves Fast DDS alone (:func:`chainrt_configures`) or discovery is not limited to localhost.
    The file lives in a folder of this process, removed at its exit (and, killed, by the
    janitor of the command's guard)."""
    if not chainrt_configures(env) or not discovery_is_local(env):
        return {}
    try:
        domain = int(env.get("ROS_DOMAIN_ID", "0") or 0)
    except ValueError:
        raise ProfileError(f"ROS_DOMAIN_ID={env.get('ROS_DOMAIN_ID')!r} is not a number") from None
    if not _loopback_dir:
        import atexit
        import shutil
        import tempfile
        _loopback_dir.append(tempfile.mkdtemp(prefix="chainrt-dds-"))
        atexit.register(shutil.rmtree, _loopback_dir[0], True)
    if current() is not None:
        current().remove_if_killed(_loopback_dir[0])
    path = Path(_loopback_dir[0]) / f"loopback-{domain}.fastdds.xml"
    if not path.exists():
        path.write_text(loopback_profile_xml(domain))
    return {**profile_environment(path), "ROS_AUTOMATIC_DISCOVERY_RANGE": "SYSTEM_DEFAULT"}


#: The variables loopback_participants set in os.environ, with their values before (None: unset).
_in_process: dict[str, str | None] = {}


class loopback_participants:
    """``with loopback_participants():`` around the creation and life of this process's own ROS 2
    participants (an rclpy context): :func:`loopback_environment` applied to os.environ, restored
    afterwards. Children started meanwhile get the environment as it was (:func:`for_children`):
    a ``chainrt run`` process beside a listener gets its own profile, not the listener's."""

    def __enter__(self):
        import contextlib
        self.stack = contextlib.ExitStack()
        self.stack.enter_context(guard())  # killed: the janitor removes the profile and the Fast DDS files
        try:
            add = loopback_environment(dict(os.environ)) if not _in_process else {}
        except BaseException:
            self.stack.close()
            raise
        self.saved = {k: os.environ.get(k) for k in add}
        _in_process.update(self.saved)
        os.environ.update(add)
        return self

    def __exit__(self, *exc) -> bool:
        for k, v in self.saved.items():
            _in_process.pop(k, None)
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        self.stack.close()
        return False


def for_children(env: dict[str, str]) -> dict[str, str]:
    """`env` (a copy of os.environ) without what :class:`loopback_participants` set in it."""
    for k, v in _in_process.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env
