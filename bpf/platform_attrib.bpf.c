// SPDX-License-Identifier: GPL-2.0
// chainrt's platform attribution (python/chainrt/crosslayer/platform.py): who held a CPU while
// the platform probe (platform_probe.c) waited for it.
//
// The probe is a SCHED_FIFO 99 thread per CPU; when it runs late, either its timer fired late
// (the vCPU was not running: hypervisor steal, or interrupts were off) or it was woken on time
// and a task kept the CPU (on a kernel without full preemption, any task running kernel code
// keeps the CPU until its next scheduling point: a long system call, a network poll, softirq
// work). For every probe wake-up that waited longer than the threshold this records when the
// probe was woken, when it got the CPU, and the task that had it then (prev of the switch):
// the holder, which the experiment tells apart into the model's own threads (its processes,
// its receive-path kernel threads) and the platform's (everything else).
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

// the two fields used, relocated against the running kernel's BTF (CO-RE)
struct task_struct {
  int pid;
  char comm[16];
} __attribute__((preserve_access_index));

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 256);
  __type(key, __u32);   // probe thread id
  __type(value, __u64); // its last wake-up (CLOCK_MONOTONIC ns), 0 = none pending
} probes SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64); // threshold (ns)
} config SEC(".maps");

struct held {
  __u64 woken, switched;
  __u32 cpu, holder;
  char comm[16];
};

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 1 << 20);
} events SEC(".maps");

SEC("tp_btf/sched_wakeup")
int BPF_PROG(crt_probe_wakeup, struct task_struct *p) {
  __u32 tid = BPF_CORE_READ(p, pid);
  __u64 *w = bpf_map_lookup_elem(&probes, &tid);
  if (w) *w = bpf_ktime_get_ns();
  return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(crt_probe_switch, _Bool preempt, struct task_struct *prev, struct task_struct *next) {
  __u32 tid = BPF_CORE_READ(next, pid);
  __u64 *w = bpf_map_lookup_elem(&probes, &tid);
  if (!w || *w == 0) return 0;
  __u64 now = bpf_ktime_get_ns(), woken = *w;
  *w = 0;
  __u32 zero = 0;
  __u64 *thr = bpf_map_lookup_elem(&config, &zero);
  if (!thr || now - woken < *thr) return 0;
  struct held *e = bpf_ringbuf_reserve(&events, sizeof *e, 0);
  if (!e) return 0;
  e->woken = woken;
  e->switched = now;
  e->cpu = bpf_get_smp_processor_id();
  e->holder = BPF_CORE_READ(prev, pid);
  BPF_CORE_READ_STR_INTO(&e->comm, prev, comm);
  bpf_ringbuf_submit(e, 0);
  return 0;
}

char LICENSE[] SEC("license") = "GPL";
