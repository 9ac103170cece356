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

// the fields used, relocated against the running kernel's BTF (CO-RE). The steal clock: a KVM
// guest's run queue keeps the hypervisor's steal time (ns the host ran something else while the
// vCPU wanted to run) as of its last clock update (prev_steal_time_rq), which the scheduler does
// on every wake-up and switch; a task's CPU's run queue is reached through its fair-scheduling
// entity (se.cfs_rq->rq, set for every task whatever its class). Its advance over a wait is the
// hypervisor's part of the wait. Without paravirtual steal time it stays 0.
struct rq {
  __u64 prev_steal_time_rq;
} __attribute__((preserve_access_index));
struct cfs_rq {
  struct rq *rq;
} __attribute__((preserve_access_index));
struct sched_entity {
  struct cfs_rq *cfs_rq;
} __attribute__((preserve_access_index));
struct task_struct {
  int pid;
  char comm[16];
  struct sched_entity se;
} __attribute__((preserve_access_index));

static __always_inline __u64 stolen_ns(struct task_struct *t) {
  return BPF_CORE_READ(t, se.cfs_rq, rq, prev_steal_time_rq);
}

struct woken {
  __u64 at;     // the probe's last wake-up (CLOCK_MONOTONIC ns), 0 = none pending
  __u64 steal;  // the CPU's steal clock then
};

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 256);
  __type(key, __u32);  // probe thread id
  __type(value, struct woken);
} probes SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, __u64); // threshold (ns)
} config SEC(".maps");

struct held {
  __u64 woken, switched, stolen;
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
  struct woken *w = bpf_map_lookup_elem(&probes, &tid);
  if (w) {
    w->at = bpf_ktime_get_ns();
    w->steal = stolen_ns(p);
  }
  return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(crt_probe_switch, _Bool preempt, struct task_struct *prev, struct task_struct *next) {
  __u32 tid = BPF_CORE_READ(next, pid);
  struct woken *w = bpf_map_lookup_elem(&probes, &tid);
  if (!w || w->at == 0) return 0;
  __u64 now = bpf_ktime_get_ns(), woken = w->at, steal = w->steal;
  w->at = 0;
  __u32 zero = 0;
  __u64 *thr = bpf_map_lookup_elem(&config, &zero);
  if (!thr || now - woken < *thr) return 0;
  struct held *e = bpf_ringbuf_reserve(&events, sizeof *e, 0);
  if (!e) return 0;
  e->woken = woken;
  e->switched = now;
  e->stolen = stolen_ns(next) - steal;
  e->cpu = bpf_get_smp_processor_id();
  e->holder = BPF_CORE_READ(prev, pid);
  BPF_CORE_READ_STR_INTO(&e->comm, prev, comm);
  bpf_ringbuf_submit(e, 0);
  return 0;
}

char LICENSE[] SEC("license") = "GPL";
