// chainrt sim: shared accelerators (PiCAS Sec. IV; model/accelerator.hpp) — devices, their
// direct and server access, block preemption.
#include "sim_state.hpp"

namespace chainrt::sim::detail {

// Devices of every host (flat, accelerator_index order); server threads after the executors'
// threads, pinned to their first core (unpinned: round robin after the executors' threads) at
// their SCHED_FIFO priority; every piece's calls; the Outs that are server-mode requests.
void Simulator::build_devices() {
  const auto refs = accelerator_refs(*user_);
  dev_.resize(refs.size());
  std::vector<std::uint32_t> base(m_.hosts.size() + 1, 0), rr(m_.hosts.size(), 0);
  for (std::size_t h = 0; h < m_.hosts.size(); ++h) base[h + 1] = base[h] + static_cast<std::uint32_t>(std::max(1, m_.hosts[h].cores));
  for (const ThreadInfo& ti : r_.threads)  // continue the executors' round robin
    for (std::size_t h = 0; h < m_.hosts.size(); ++h)
      if (m_.hosts[h].name == ti.host) ++rr[h];
  // (the executors' round robin counted only unpinned threads; counting all is a placement too)
  for (std::size_t d = 0; d < refs.size(); ++d) {
    const Accelerator& a = accelerator_of(*user_, refs[d]);
    DeviceState& dv = dev_[d];
    dv.access = a.access;
    dv.overhead = a.server_overhead;
    dv.block = a.block_preemption;
    r_.accelerators.push_back(m_.hosts[refs[d].host].name + "/" + a.name);
    if (a.access != AcceleratorAccess::Server) continue;
    const std::uint32_t host_cores = base[refs[d].host + 1] - base[refs[d].host];
    ThreadState st;
    st.exec = kNone;
    st.device = static_cast<std::uint32_t>(d);
    const std::uint32_t core = a.server_cores.empty() ? rr[refs[d].host]++ % host_cores
                                                      : static_cast<std::uint32_t>(a.server_cores.front()) % host_cores;
    st.core = base[refs[d].host] + core;
    st.pinned = !a.server_cores.empty();
    st.cls = 1;
    st.rank = -static_cast<std::int64_t>(a.server_priority.value_or(0));
    dv.server = static_cast<std::uint32_t>(th_.size());
    th_.push_back(st);
    cores_[st.core].threads.push_back(dv.server);
    r_.threads.push_back(ThreadInfo{"", a.name + " server", m_.hosts[refs[d].host].name, static_cast<int>(core)});
  }
  for (std::size_t c = 0; c < cb_.size(); ++c) {
    CbState& s = cb_[c];
    s.piece = &am_->pieces[c];
    if (!s.piece->request) continue;
    const std::string& next = m_.callbacks[c + 1].name;  // the continuation follows its piece
    for (Out& o : s.outs)
      if (m_.callbacks[o.sub].name == next) o.device = true;
  }
}

void Simulator::issue(std::uint32_t device, Request rq) {
  rq.issued = now_;
  rq.seq = req_seq_++;
  DeviceState& d = dev_[device];
  d.queue.push_back(rq);
  if (!d.dirty) {
    d.dirty = true;
    dev_dirty_.push_back(device);
  }
}

// After every event of an instant: an idle device takes its next request (direct: the oldest;
// server: the most urgent, then the oldest), the server first spending its overhead.
void Simulator::flush_devices() {
  for (std::size_t i = 0; i < dev_dirty_.size(); ++i) {
    const std::uint32_t x = dev_dirty_[i];
    DeviceState& d = dev_[x];
    d.dirty = false;
    if (d.busy || d.queue.empty()) continue;
    auto best = d.queue.begin();
    for (auto it = d.queue.begin(); it != d.queue.end(); ++it)
      if (d.access == AcceleratorAccess::Server ? std::pair(it->key, it->seq) < std::pair(best->key, best->seq)
                                                 : it->seq < best->seq)
        best = it;
    d.current = *best;
    d.queue.erase(best);
    d.busy = true;
    if (d.access == AcceleratorAccess::Server && d.overhead > 0 && !d.current.started) {
      ThreadState& srv = th_[d.server];
      srv.busy = true;
      srv.remaining = d.overhead;
      mark(srv.core);
    } else {
      start_device(x);
    }
  }
  dev_dirty_.clear();
}

// One part of a segment (copy-in, kernel or copy-out) as the execution-time mode draws it.
Duration Simulator::device_part(Duration w, const std::optional<Duration>& b) {
  const Duration lo = std::min(b.value_or(w), w);
  switch (o_.exec) {
    case ExecTime::Wcet: return w;
    case ExecTime::Bcet: return lo;
    case ExecTime::Uniform: return rng_.uniform(lo, w);
    case ExecTime::Mix: return (rng_.next() >> 11) & 1 ? w : lo;
  }
  return w;
}

Duration Simulator::device_time(const AcceleratorSegment& s) {
  return device_part(s.copy_in, s.copy_in_bcet) + device_part(s.kernel, s.kernel_bcet) +
         device_part(s.copy_out, s.copy_out_bcet);
}

// Request-level: the whole segment is one event. Block preemption: the next non-preemptive
// chunk (copy-in, one block of the kernel, copy-out); the parts are drawn at the first start.
void Simulator::start_device(std::uint32_t x) {
  DeviceState& d = dev_[x];
  if (!d.block) {
    d.started = now_;
    push_event(now_ + device_time(segment_of(d.current)), Ev::DeviceDone, x);
    return;
  }
  Request& rq = d.current;
  if (!rq.started) {
    const AcceleratorSegment& s = segment_of(rq);
    rq.started = true;
    rq.first_start = now_;
    rq.left_in = device_part(s.copy_in, s.copy_in_bcet);
    rq.left_kernel = device_part(s.kernel, s.kernel_bcet);
    rq.left_out = device_part(s.copy_out, s.copy_out_bcet);
    rq.block = std::max<Duration>(1, s.block.value_or(s.kernel));
  }
  d.started = rq.first_start;
  Duration chunk = 0;
  if (rq.left_in > 0) std::swap(chunk, rq.left_in);
  else if (rq.left_kernel > 0) rq.left_kernel -= (chunk = std::min(rq.block, rq.left_kernel));
  else std::swap(chunk, rq.left_out);
  push_event(now_ + chunk, Ev::DeviceDone, x);
}

void Simulator::device_done(std::uint32_t x) {
  DeviceState& d = dev_[x];
  if (d.block && d.current.left_in + d.current.left_kernel + d.current.left_out > 0) {
    // between two chunks: a strictly more urgent queued request takes the device
    const bool urgent = std::any_of(d.queue.begin(), d.queue.end(), [&](const Request& q) { return q.key < d.current.key; });
    if (!urgent) {
      start_device(x);
      return;
    }
    d.queue.push_back(d.current);  // resumes later where it stopped (same key and arrival)
    d.busy = false;
    if (!d.dirty) {
      d.dirty = true;
      dev_dirty_.push_back(x);
    }
    return;
  }
  const Request rq = d.current;
  d.busy = false;
  if (o_.trace) {
    if (r_.device_trace.size() < o_.trace_limit)
      r_.device_trace.push_back(DeviceTraceEntry{x, rq.piece, rq.segment, rq.issued, d.started, now_});
    else
      r_.trace_truncated = true;
  }
  if (rq.thread != kNone) {  // direct: the thread goes on with its CPU part
    ThreadState& th = th_[rq.thread];
    th.suspended = false;
    ++th.next_call;
    th.remaining = chunk_end(th) - th.exec_done;
    if (th.remaining <= 0) chunk_done(rq.thread);
    else mark(th.core);
  } else {  // server: the continuation is released with the request's chain instances
    flight_[rq.slot].arrival = now_;
    flight_free_.push_back(rq.slot);
    deliver(rq.target, flight_[rq.slot]);
  }
  if (!d.dirty) {
    d.dirty = true;
    dev_dirty_.push_back(x);
  }
}

}  // namespace chainrt::sim::detail
