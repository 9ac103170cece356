"""CROS-RT's cross-layer priority path on an unmodified kernel (docs/crosslayer.md).

* :mod:`.netns` — the model's hosts as network namespaces linked by veth pairs;
* :mod:`.kernel` — C1 (port -> class map), C2 (XDP message selector steering each class to its
  own cpumap kernel threads), C3/C4 (those threads at the class's priority, the non-RT class as a
  polling server), built from ``bpf/`` with clang and libbpf at first use; and the Preempt-RT-style
  receive path (every receive kernel thread at one fixed priority) the paper compares against;
* :mod:`.stacks` — the configurations CROS-RT is evaluated in (vanilla, Preempt-RT-style,
  application + DDS priorities, full, full with the non-RT server), one descriptor each;
* :mod:`.session` — ``chainrt run`` of a multi-host model across namespaces, with or without
  the kernel part, and a non-RT UDP flood for the experiments;
* :mod:`.platform` — the platform probe: the CPUs' blackouts measured beside a run.

The DDS layer (known ports, DDS threads at the executor's priority) is :mod:`chainrt.fastdds`.
"""
