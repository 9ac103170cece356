// chainrt-platform-attrib: loads platform_attrib.bpf.c and records, for the platform probe's
// threads (their ids given), every wake-up after which a probe waited longer than THRESHOLD_US
// for its CPU: when it was woken, when it ran, on which CPU, and the task that held the CPU
// (python/chainrt/crosslayer/platform.py). Writes "ready" on stdout once attached; on
// SIGTERM/SIGINT writes OUT ("# attrib threshold_ns T lost L" then one
// "woken_ns switched_ns cpu holder_tid holder_comm stolen_ns" per wait, CLOCK_MONOTONIC; stolen:
// the hypervisor's part of the wait, 0 outside KVM) and exits 0.
//
// usage: chainrt-platform-attrib OBJ THRESHOLD_US OUT TID...
// With CHAINRT_PARENT_PID set it gets SIGTERM when that parent dies (PR_SET_PDEATHSIG), as the
// probe does: a killed chainrt leaves no attribution attached.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define MAX_EVENTS 400000

struct held {
  uint64_t woken, switched, stolen;
  uint32_t cpu, holder;
  char comm[16];
};

static volatile sig_atomic_t stop = 0;
static void on_signal(int s) { (void)s; stop = 1; }

static struct held *recs;
static long n = 0, lost = 0;

static int on_event(void *ctx, void *data, size_t size) {
  (void)ctx;
  if (size < sizeof(struct held)) return 0;
  if (n < MAX_EVENTS) memcpy(&recs[n++], data, sizeof(struct held));
  else ++lost;
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: chainrt-platform-attrib OBJ THRESHOLD_US OUT TID...\n");
    return 1;
  }
  const char *parent = getenv("CHAINRT_PARENT_PID");
  if (parent && *parent) {
    prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
    if (getppid() != (pid_t)atol(parent)) return 1;  // the parent died before the request
  }
  recs = calloc(MAX_EVENTS, sizeof *recs);
  if (!recs) return 1;
  libbpf_set_print(NULL);
  struct bpf_object *obj = bpf_object__open_file(argv[1], NULL);
  if (!obj || libbpf_get_error(obj) || bpf_object__load(obj)) {
    fprintf(stderr, "chainrt-platform-attrib: cannot load %s: %s\n", argv[1], strerror(errno));
    return 1;
  }
  int probes = bpf_object__find_map_fd_by_name(obj, "probes");
  int config = bpf_object__find_map_fd_by_name(obj, "config");
  int events = bpf_object__find_map_fd_by_name(obj, "events");
  uint32_t zero = 0;
  uint64_t thr = strtoull(argv[2], NULL, 10) * 1000ull, none[2] = {0, 0};
  if (probes < 0 || config < 0 || events < 0 || bpf_map_update_elem(config, &zero, &thr, BPF_ANY)) {
    fprintf(stderr, "chainrt-platform-attrib: bad BPF object\n");
    return 1;
  }
  for (int i = 4; i < argc; i++) {
    uint32_t tid = (uint32_t)strtoul(argv[i], NULL, 10);
    if (bpf_map_update_elem(probes, &tid, none, BPF_ANY)) {
      fprintf(stderr, "chainrt-platform-attrib: probe map: %s\n", strerror(errno));
      return 1;
    }
  }
  struct bpf_program *prog;
  bpf_object__for_each_program(prog, obj) {
    struct bpf_link *l = bpf_program__attach(prog);
    if (!l || libbpf_get_error(l)) {
      fprintf(stderr, "chainrt-platform-attrib: cannot attach %s: %s\n", bpf_program__name(prog), strerror(errno));
      return 1;
    }
  }
  struct ring_buffer *rb = ring_buffer__new(events, on_event, NULL, NULL);
  if (!rb) {
    fprintf(stderr, "chainrt-platform-attrib: ring buffer: %s\n", strerror(errno));
    return 1;
  }
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  printf("ready\n");
  fflush(stdout);
  while (!stop) ring_buffer__poll(rb, 100);
  ring_buffer__consume(rb);
  FILE *f = fopen(argv[3], "w");
  if (!f) {
    fprintf(stderr, "chainrt-platform-attrib: %s: %s\n", argv[3], strerror(errno));
    return 1;
  }
  fprintf(f, "# attrib threshold_ns %llu lost %ld\n", (unsigned long long)thr, lost);
  for (long i = 0; i < n; i++) {
    char comm[17];
    memcpy(comm, recs[i].comm, 16);
    comm[16] = 0;
    for (char *c = comm; *c; c++)
      if (*c == ' ' || *c == '\n' || *c == '\t') *c = '_';
    fprintf(f, "%llu %llu %u %u %s %llu\n", (unsigned long long)recs[i].woken, (unsigned long long)recs[i].switched,
            recs[i].cpu, recs[i].holder, comm[0] ? comm : "-", (unsigned long long)recs[i].stolen);
  }
  ring_buffer__free(rb);
  bpf_object__close(obj);
  return fclose(f) == 0 ? 0 : 1;
}
