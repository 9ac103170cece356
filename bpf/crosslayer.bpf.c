// SPDX-License-Identifier: GPL-2.0
// chainrt's CROS-RT kernel part on an unmodified kernel (docs/crosslayer.md):
//   C1  port_class: the cross-layer priority identifier, (UDP destination port -> class, CPU),
//       filled from the model's known participant ports (python/chainrt/fastdds.py);
//   C2  the message selector: this XDP program, on a receiving interface, classifies every IPv4
//       UDP packet by its destination port and steers it to its class's processing: a cpumap
//       per class (class 0 = non-RT, 1..3 = real-time classes), whose entry's kernel thread
//       (cpumap/<cpu>/map:<id>) builds the skb and runs the network stack for that class only;
//   C3/C4  the loader (crosslayer_loader.c) gives each class's kernel thread the class's
//       SCHED_FIFO priority (RT handler) or a SCHED_DEADLINE server (non-RT handler).
// Deviation from the paper: CROS-RT keeps one RT priority queue served by one thread (krtcd)
// whose priority kmond raises to the highest pending message's; here every class has its own
// queue and thread at the class's priority, which serves the same order without re-prioritising
// one thread (XDP cannot reorder a ring, and no kernel module can be loaded).
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define CRT_CLASSES 4
#define CRT_MAX_CPUS 64

struct crt_class {
  __u32 cls;  // 0 = non-RT, 1..CRT_CLASSES-1 = real-time classes
  __s32 cpu;  // CPU whose class thread processes it; -1 = the receiving CPU
};

// C1: UDP destination port (host byte order) -> class
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 1024);
  __type(key, __u16);
  __type(value, struct crt_class);
} port_class SEC(".maps");

// packets seen per class (index CRT_CLASSES: not UDP/IPv4, passed untouched)
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, CRT_CLASSES + 1);
  __type(key, __u32);
  __type(value, __u64);
} class_packets SEC(".maps");

// packets seen per classified port (ports of the model only)
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_HASH);
  __uint(max_entries, 1024);
  __type(key, __u16);
  __type(value, __u64);
} port_packets SEC(".maps");

// classes of fragmented datagrams, by (source, destination, IP id), set by their first fragment
struct crt_frag_key {
  __u32 saddr, daddr;
  __u16 id, pad;
};
struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 4096);
  __type(key, struct crt_frag_key);
  __type(value, struct crt_class);
} frag_class SEC(".maps");

#define CPUMAP(name)                                   \
  struct {                                             \
    __uint(type, BPF_MAP_TYPE_CPUMAP);                 \
    __uint(max_entries, CRT_MAX_CPUS);                 \
    __type(key, __u32);                                \
    __type(value, struct bpf_cpumap_val);              \
  } name SEC(".maps")

CPUMAP(cpus_c0);
CPUMAP(cpus_c1);
CPUMAP(cpus_c2);
CPUMAP(cpus_c3);

static __always_inline void count(__u32 idx) {
  __u64 *n = bpf_map_lookup_elem(&class_packets, &idx);
  if (n) *n += 1;
}

SEC("xdp")
int crt_selector(struct xdp_md *ctx) {
  void *data = (void *)(long)ctx->data;
  void *end = (void *)(long)ctx->data_end;
  struct ethhdr *eth = data;
  if ((void *)(eth + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP)) {
    count(CRT_CLASSES);
    return XDP_PASS;
  }
  struct iphdr *ip = (void *)(eth + 1);
  if ((void *)(ip + 1) > end || ip->protocol != IPPROTO_UDP || ip->ihl < 5) {
    count(CRT_CLASSES);
    return XDP_PASS;
  }
  __u32 cls = 0;
  __s32 cpu = -1;
  struct crt_frag_key fk = {.saddr = ip->saddr, .daddr = ip->daddr, .id = ip->id, .pad = 0};
  if (ip->frag_off & bpf_htons(0x1FFF)) {
    // a later fragment carries no UDP header: it takes the class its first fragment got
    // (Linux sends a datagram's fragments in order); unknown ones are non-RT
    struct crt_class *c = bpf_map_lookup_elem(&frag_class, &fk);
    if (c) {
      cls = c->cls < CRT_CLASSES ? c->cls : 0;
      cpu = c->cpu;
    }
    count(cls);
  } else {
    struct udphdr *udp = (void *)ip + ip->ihl * 4;
    if ((void *)(udp + 1) > end) {
      count(CRT_CLASSES);
      return XDP_PASS;
    }
    __u16 port = bpf_ntohs(udp->dest);
    struct crt_class *c = bpf_map_lookup_elem(&port_class, &port);
    if (c) {
      cls = c->cls < CRT_CLASSES ? c->cls : 0;
      cpu = c->cpu;
      if (ip->frag_off & bpf_htons(0x2000))  // more fragments follow: remember the class
        bpf_map_update_elem(&frag_class, &fk, c, BPF_ANY);
      __u64 *n = bpf_map_lookup_elem(&port_packets, &port);
      if (n) {
        *n += 1;
      } else {
        __u64 one = 1;
        bpf_map_update_elem(&port_packets, &port, &one, BPF_NOEXIST);
      }
    }
    count(cls);
  }
  __u32 target = cpu >= 0 ? (__u32)cpu : bpf_get_smp_processor_id();
  switch (cls) {
    case 1: return bpf_redirect_map(&cpus_c1, target, XDP_PASS);
    case 2: return bpf_redirect_map(&cpus_c2, target, XDP_PASS);
    case 3: return bpf_redirect_map(&cpus_c3, target, XDP_PASS);
    default: return bpf_redirect_map(&cpus_c0, target, XDP_PASS);
  }
}

char LICENSE[] SEC("license") = "GPL";
