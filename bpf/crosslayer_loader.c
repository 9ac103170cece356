// chainrt-xdp: loads chainrt's CROS-RT message selector (crosslayer.bpf.c) onto receiving
// interfaces of the current network namespace, installs the (port -> class) map (C1), creates
// one cpumap entry per class and CPU, and runs the RT/non-RT handlers (C3/C4): every class's
// kernel thread gets the class's SCHED_FIFO priority, the non-RT class a polling server (priority
// switching, see --class 0:server) or SCHED_OTHER, re-applied every handler period.
// Everything is removed on exit: the XDP programs are attached through bpf_links owned by this
// process (the kernel detaches them when it exits, however it exits), the maps die with them.
// On SIGINT/SIGTERM it writes the counters as JSON (--stats FILE) and exits 0.
//
// usage: chainrt-xdp OBJ --iface IF [--iface IF]... --port PORT:CLASS:CPU ...
//                    --class CLASS:fifo:PRIO | CLASS:deadline:BUDGET_NS:PERIOD_NS | CLASS:other
//                    | 0:server:BUDGET_NS:PERIOD_NS [--server-priority P]
//                    [--stats FILE] [--ready FILE] [--period-ms N] [--skb-mode]
#define _GNU_SOURCE
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define CLASSES 4
#define MAX_IFACES 8
#define MAX_PORTS 256

struct crt_class { uint32_t cls; int32_t cpu; };
struct sched_attr_ {
  uint32_t size, sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime, sched_deadline, sched_period;
};
enum { POL_NONE, POL_FIFO, POL_DEADLINE, POL_OTHER, POL_SERVER };
struct class_policy { int policy; int prio; uint64_t budget, period; };

static volatile sig_atomic_t stop = 0;
static void on_signal(int s) { (void)s; stop = 1; }

static int die(const char *what) {
  fprintf(stderr, "chainrt-xdp: %s: %s\n", what, strerror(errno));
  return 1;
}

// the kernel threads of a cpumap: "cpumap/<cpu>/map:<id>"
static int set_policy(pid_t tid, const struct class_policy *p) {
  struct sched_attr_ a;
  memset(&a, 0, sizeof a);
  a.size = sizeof a;
  switch (p->policy) {
    case POL_FIFO: a.sched_policy = SCHED_FIFO; a.sched_priority = p->prio; break;
    case POL_DEADLINE:
      a.sched_policy = 6; /* SCHED_DEADLINE */
      a.sched_runtime = p->budget; a.sched_deadline = p->period; a.sched_period = p->period;
      break;
    case POL_OTHER: a.sched_policy = SCHED_OTHER; break;
    default: return 0;
  }
  return (int)syscall(SYS_sched_setattr, tid, &a, 0);
}

// the thread ids of a map's cpumap threads (found once; a cpumap entry's thread lives as long as it)
static int find_tids(uint32_t map_id, pid_t *tids, int max) {
  char want[64];
  snprintf(want, sizeof want, "map:%u", map_id);
  DIR *d = opendir("/proc");
  if (!d) return 0;
  struct dirent *e;
  int n = 0;
  while ((e = readdir(d)) && n < max) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    char path[300], comm[64] = {0};
    snprintf(path, sizeof path, "/proc/%s/comm", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    if (fgets(comm, sizeof comm, f)) comm[strcspn(comm, "\n")] = 0;
    fclose(f);
    const char *m = strncmp(comm, "cpumap/", 7) == 0 ? strstr(comm, "/map:") : NULL;
    if (m && strcmp(m + 1, want) == 0) tids[n++] = atoi(e->d_name);
  }
  closedir(d);
  return n;
}

// the class threads found so far, per cpumap: looked up in /proc once (a scan of /proc takes
// milliseconds of kernel time on a busy machine, in system calls that this kernel does not
// preempt) and again only when one of them has gone (ESRCH)
struct tid_cache { uint32_t map_id; pid_t tids[64]; int n, valid; };

static int apply(struct tid_cache *c, const struct class_policy *p, int report, FILE *out) {
  if (!c->valid) {
    c->n = find_tids(c->map_id, c->tids, 64);
    c->valid = c->n > 0;
  }
  for (int i = 0; i < c->n; i++) {
    if (set_policy(c->tids[i], p) != 0) {
      if (errno == ESRCH) c->valid = 0;
      else if (report)
        fprintf(stderr, "chainrt-xdp: cannot set the policy of cpumap thread %d (map %u): %s\n", c->tids[i],
                c->map_id, strerror(errno));
    }
    if (out) fprintf(out, "%s{\"thread\": \"cpumap/map:%u\", \"tid\": %d}", i ? ", " : "", c->map_id, c->tids[i]);
  }
  return c->n;
}

// the command line
struct options {
  const char *obj_path, *stats, *ready;
  const char *ifaces[MAX_IFACES];
  int nif, nports, period_ms, skb_mode, server_prio;
  uint16_t ports[MAX_PORTS];
  struct crt_class pcls[MAX_PORTS];
  struct class_policy pol[CLASSES];
};

// --class CLASS:KIND[:X[:Y]] into o->pol; 1 (after the message) when it is malformed
static int parse_class(struct options *o, const char *v) {
  struct class_policy *pol = o->pol;
  unsigned cls; char kind[16]; unsigned long long x = 0, y = 0;
  int n = sscanf(v, "%u:%15[a-z]:%llu:%llu", &cls, kind, &x, &y);
  if (n < 2 || cls >= CLASSES) { fprintf(stderr, "chainrt-xdp: bad --class %s\n", v); return 1; }
  if (!strcmp(kind, "fifo") && n >= 3 && x >= 1 && x <= 99) { pol[cls].policy = POL_FIFO; pol[cls].prio = (int)x; }
  else if (!strcmp(kind, "deadline") && n == 4 && x > 0 && x <= y) {
    pol[cls].policy = POL_DEADLINE; pol[cls].budget = x; pol[cls].period = y;
  } else if (!strcmp(kind, "server") && cls == 0 && n == 4 && x > 0 && x < y) {
    // C4 as a polling server by priority switching: SCHED_DEADLINE is refused for the
    // CPU-bound cpumap threads (EPERM: their affinity is not the whole root domain), so the
    // handler raises them above the RT threads for BUDGET of every PERIOD, SCHED_OTHER else
    pol[cls].policy = POL_SERVER; pol[cls].budget = x; pol[cls].period = y;
  } else if (!strcmp(kind, "other")) pol[cls].policy = POL_OTHER;
  else { fprintf(stderr, "chainrt-xdp: bad --class %s\n", v); return 1; }
  return 0;
}

// the command line into o; 1 (after the message) on a bad one
static int parse_args(int argc, char **argv, struct options *o) {
  memset(o, 0, sizeof *o);
  o->obj_path = argv[1];
  o->period_ms = 100;
  o->server_prio = 90;
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--skb-mode")) { o->skb_mode = 1; continue; }
    if (!v) { fprintf(stderr, "chainrt-xdp: %s needs a value\n", a); return 1; }
    i++;
    if (!strcmp(a, "--iface") && o->nif < MAX_IFACES) o->ifaces[o->nif++] = v;
    else if (!strcmp(a, "--stats")) o->stats = v;
    else if (!strcmp(a, "--ready")) o->ready = v;
    else if (!strcmp(a, "--server-priority")) o->server_prio = atoi(v) >= 1 && atoi(v) <= 99 ? atoi(v) : 90;
    else if (!strcmp(a, "--period-ms")) o->period_ms = atoi(v) > 0 ? atoi(v) : 100;
    else if (!strcmp(a, "--port") && o->nports < MAX_PORTS) {
      unsigned port, cls; int cpu;
      if (sscanf(v, "%u:%u:%d", &port, &cls, &cpu) != 3 || port > 65535 || cls >= CLASSES) {
        fprintf(stderr, "chainrt-xdp: bad --port %s (PORT:CLASS:CPU)\n", v); return 1;
      }
      o->ports[o->nports] = (uint16_t)port; o->pcls[o->nports].cls = cls; o->pcls[o->nports].cpu = cpu; o->nports++;
    } else if (!strcmp(a, "--class")) {
      if (parse_class(o, v)) return 1;
    } else { fprintf(stderr, "chainrt-xdp: unknown option %s\n", a); return 1; }
  }
  if (o->nif == 0) { fprintf(stderr, "chainrt-xdp: no --iface\n"); return 1; }
  return 0;
}

// the loaded BPF object: its program, maps, per-class cpumaps and their threads, and the links
struct loaded {
  struct bpf_object *obj;
  struct bpf_program *prog;
  int port_map, class_map, pport_map;
  int cpumaps[CLASSES];
  uint32_t cpumap_ids[CLASSES];
  struct tid_cache cache[CLASSES];
  struct bpf_link *links[MAX_IFACES];
};

// opens and loads the BPF object and finds its program and maps; 1 (after the message) on failure
static int load(const struct options *o, struct loaded *l) {
  memset(l, 0, sizeof *l);
  libbpf_set_print(NULL);
  l->obj = bpf_object__open_file(o->obj_path, NULL);
  if (!l->obj || libbpf_get_error(l->obj)) return die("open BPF object");
  if (bpf_object__load(l->obj)) return die("load BPF object (needs root / CAP_BPF)");
  l->prog = bpf_object__find_program_by_name(l->obj, "crt_selector");
  l->port_map = bpf_object__find_map_fd_by_name(l->obj, "port_class");
  l->class_map = bpf_object__find_map_fd_by_name(l->obj, "class_packets");
  l->pport_map = bpf_object__find_map_fd_by_name(l->obj, "port_packets");
  for (int c = 0; c < CLASSES; c++) {
    char name[16];
    snprintf(name, sizeof name, "cpus_c%d", c);
    l->cpumaps[c] = bpf_object__find_map_fd_by_name(l->obj, name);
    struct bpf_map_info info; uint32_t len = sizeof info;
    memset(&info, 0, sizeof info);
    if (l->cpumaps[c] < 0 || bpf_obj_get_info_by_fd(l->cpumaps[c], &info, &len)) return die("cpumap");
    l->cpumap_ids[c] = info.id;
    l->cache[c].map_id = info.id;
  }
  if (!l->prog || l->port_map < 0 || l->class_map < 0 || l->pport_map < 0) {
    fprintf(stderr, "chainrt-xdp: bad BPF object\n");
    return 1;
  }
  return 0;
}

// C1's (port -> class) map, the cpumap entries and the XDP program on every interface; 1 (after
// the message) on failure
static int install(const struct options *o, struct loaded *l) {
  for (int i = 0; i < o->nports; i++)
    if (bpf_map_update_elem(l->port_map, &o->ports[i], &o->pcls[i], BPF_ANY)) return die("port map update");
  // one cpumap entry per class on every CPU (an entry is a kernel thread bound to that CPU)
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  for (int c = 0; c < CLASSES; c++) {
    int used = (c == 0);
    for (int i = 0; i < o->nports; i++) used |= (o->pcls[i].cls == (uint32_t)c);
    if (!used) continue;
    for (uint32_t cpu = 0; cpu < (uint32_t)ncpu && cpu < 64; cpu++) {
      struct bpf_cpumap_val val; memset(&val, 0, sizeof val);
      val.qsize = 2048;
      if (bpf_map_update_elem(l->cpumaps[c], &cpu, &val, BPF_ANY)) return die("cpumap entry");
    }
  }
  for (int i = 0; i < o->nif; i++) {
    int idx = (int)if_nametoindex(o->ifaces[i]);
    if (!idx) { fprintf(stderr, "chainrt-xdp: no interface %s in this network namespace\n", o->ifaces[i]); return 1; }
    if (o->skb_mode) {
      int fd = bpf_link_create(bpf_program__fd(l->prog), idx, BPF_XDP, &(struct bpf_link_create_opts){.sz = sizeof(struct bpf_link_create_opts), .flags = XDP_FLAGS_SKB_MODE});
      if (fd < 0) return die("attach XDP (generic)");
      l->links[i] = NULL; (void)fd;  // fd stays open until exit
    } else {
      l->links[i] = bpf_program__attach_xdp(l->prog, idx);
      if (!l->links[i] || libbpf_get_error(l->links[i])) return die("attach XDP");
    }
  }
  return 0;
}

// "<pid>" then "class <c> map <id>" per class: written last, read as the start signal
static void write_ready(const char *ready, const uint32_t *cpumap_ids) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", ready);
  FILE *f = fopen(tmp, "w");
  if (f) {
    fprintf(f, "%d\n", getpid());
    for (int c = 0; c < CLASSES; c++) fprintf(f, "class %d map %u\n", c, cpumap_ids[c]);
    fclose(f);
    rename(tmp, ready);
  }
}

// the non-RT server until a signal: class 0 threads at server_prio for BUDGET of every PERIOD,
// the RT classes re-applied every handler period
static void run_server(const struct options *o, struct loaded *l) {
  const struct class_policy *pol = o->pol;
  struct sched_param sp = {.sched_priority = 99};
  sched_setscheduler(0, SCHED_FIFO, &sp);  // the handler itself: above everything it switches
  struct class_policy on = {POL_FIFO, o->server_prio, 0, 0}, off = {POL_OTHER, 0, 0, 0};
  struct timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  uint64_t periods = 0, per_refresh = (uint64_t)o->period_ms * 1000000ull / pol[0].period + 1;
  while (!stop) {
    apply(&l->cache[0], &on, 0, NULL);
    struct timespec t = next;
    t.tv_nsec += (long)pol[0].budget;
    while (t.tv_nsec >= 1000000000L) { t.tv_nsec -= 1000000000L; t.tv_sec++; }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
    apply(&l->cache[0], &off, 0, NULL);
    next.tv_nsec += (long)pol[0].period;
    while (next.tv_nsec >= 1000000000L) { next.tv_nsec -= 1000000000L; next.tv_sec++; }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if ((now.tv_sec - next.tv_sec) * 1000000000LL + (now.tv_nsec - next.tv_nsec) > (long long)pol[0].period)
      next = now;  // the handler was held up past a whole period: skip the periods missed, never
                   // run them back to back at priority 99
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
    if (++periods % per_refresh == 0) {
      // re-applying the RT classes may have to scan /proc again (a thread gone: milliseconds on a
      // busy machine): done at SCHED_OTHER, never at the handler's priority 99, where it would
      // preempt the real-time executors for that long
      struct sched_param other = {.sched_priority = 0};
      sched_setscheduler(0, SCHED_OTHER, &other);
      for (int c = 1; c < CLASSES; c++) if (pol[c].policy) apply(&l->cache[c], &pol[c], 0, NULL);
      sched_setscheduler(0, SCHED_FIFO, &sp);
    }
  }
}

// the counters as JSON: packets per class and per port, and each class's threads
static void write_stats(const struct options *o, struct loaded *l) {
  FILE *f = fopen(o->stats, "w");
  if (!f) return;
  int ncpus = libbpf_num_possible_cpus();
  uint64_t *vals = calloc((size_t)ncpus, sizeof(uint64_t));
  fprintf(f, "{\"classes\": [");
  for (uint32_t k = 0; k <= CLASSES; k++) {
    uint64_t sum = 0;
    if (!bpf_map_lookup_elem(l->class_map, &k, vals)) for (int j = 0; j < ncpus; j++) sum += vals[j];
    fprintf(f, "%s%llu", k ? ", " : "", (unsigned long long)sum);
  }
  fprintf(f, "], \"ports\": {");
  for (int i = 0; i < o->nports; i++) {
    uint64_t sum = 0;
    if (!bpf_map_lookup_elem(l->pport_map, &o->ports[i], vals)) for (int j = 0; j < ncpus; j++) sum += vals[j];
    fprintf(f, "%s\"%u\": %llu", i ? ", " : "", o->ports[i], (unsigned long long)sum);
  }
  fprintf(f, "}, \"class_threads\": {");
  int first = 1;
  for (int c = 0; c < CLASSES; c++) {
    if (!o->pol[c].policy) continue;
    fprintf(f, "%s\"%d\": [", first ? "" : ", ", c);
    apply(&l->cache[c], &(struct class_policy){0}, 0, f);
    fprintf(f, "]");
    first = 0;
  }
  fprintf(f, "}}\n");
  fclose(f);
  free(vals);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: chainrt-xdp OBJ --iface IF --port PORT:CLASS:CPU --class CLASS:fifo:PRIO ...\n");
    return 1;
  }
  static struct options o;
  static struct loaded l;
  if (parse_args(argc, argv, &o)) return 1;
  if (load(&o, &l) || install(&o, &l)) return 1;
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  signal(SIGHUP, on_signal);
  signal(SIGPIPE, SIG_IGN);
  for (int c = 0; c < CLASSES; c++)
    if (o.pol[c].policy && o.pol[c].policy != POL_SERVER) apply(&l.cache[c], &o.pol[c], 1, NULL);
  if (o.ready) write_ready(o.ready, l.cpumap_ids);
  // C3/C4 handler loop: keep every class thread at its class's policy; with a non-RT server,
  // open the server (class 0 threads at server_prio) for BUDGET of every PERIOD
  if (o.pol[0].policy == POL_SERVER) run_server(&o, &l);
  while (!stop) {
    struct timespec ts = {o.period_ms / 1000, (long)(o.period_ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    for (int c = 0; c < CLASSES && !stop; c++) if (o.pol[c].policy) apply(&l.cache[c], &o.pol[c], 0, NULL);
  }
  if (o.stats) write_stats(&o, &l);
  for (int i = 0; i < o.nif; i++) if (l.links[i]) bpf_link__destroy(l.links[i]);
  bpf_object__close(l.obj);
  return 0;
}
