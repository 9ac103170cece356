// chainrt model: callbacks with accelerator segments as pieces (accelerator.hpp).
#include "chainrt/model/accelerator.hpp"

#include <algorithm>
#include <functional>

#include "chainrt/model/facts.hpp"
#include "chainrt/model/limits.hpp"

namespace chainrt {

bool uses_accelerators(const Model& model) {
  return std::any_of(model.callbacks.begin(), model.callbacks.end(),
                     [](const Callback& c) { return !c.accelerator_segments.empty(); });
}

std::string piece_name(const std::string& callback, int index) {
  return index == 0 ? callback : callback + "#" + std::to_string(index);
}

std::size_t host_of_callback(const Model& model, std::size_t callback) {
  const std::string& host = model.executor_of(model.callbacks[callback]).host;
  for (std::size_t h = 0; h < model.hosts.size(); ++h)
    if (model.hosts[h].name == host) return h;
  return 0;
}

std::size_t accelerator_index(const Model& model, const AcceleratorRef& ref) {
  std::size_t n = 0;
  for (std::size_t h = 0; h < ref.host && h < model.hosts.size(); ++h) n += model.hosts[h].accelerators.size();
  return n + ref.index;
}

std::vector<AcceleratorRef> accelerator_refs(const Model& model) {
  std::vector<AcceleratorRef> out;
  for (std::size_t h = 0; h < model.hosts.size(); ++h)
    for (std::size_t a = 0; a < model.hosts[h].accelerators.size(); ++a) out.push_back({h, a});
  return out;
}

const Accelerator& accelerator_of(const Model& model, const AcceleratorRef& ref) {
  return model.hosts[ref.host].accelerators[ref.index];
}

int cuda_stream_level(const std::vector<int>& thresholds, std::optional<int> priority, int levels) {
  const int least = std::max(levels, 1) - 1;
  if (priority)
    for (std::size_t k = 0; k < thresholds.size(); ++k)
      if (*priority >= thresholds[k]) return std::min(static_cast<int>(k), least);
  return least;
}

std::vector<int> cuda_stream_thresholds(const Model& model, const AcceleratorRef& ref) {
  const Accelerator& a = accelerator_of(model, ref);
  if (!a.stream_priorities.empty()) return a.stream_priorities;
  std::vector<int> out;
  for (std::size_t c = 0; c < model.callbacks.size(); ++c) {
    if (host_of_callback(model, c) != ref.host) continue;
    const auto& segs = model.callbacks[c].accelerator_segments;
    if (std::none_of(segs.begin(), segs.end(), [&](const AcceleratorSegment& s) { return s.accelerator == a.name; }))
      continue;
    if (auto p = effective_priority(model, c)) out.push_back(*p);
  }
  std::sort(out.begin(), out.end(), std::greater<int>());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

namespace {

// The pieces of one callback: their CPU worst and best cases and their device calls.
struct Split {
  std::vector<Duration> wcet, bcet;
  std::vector<Piece> pieces;
};

Split split(const Model& m, std::size_t c) {
  const Callback& cb = m.callbacks[c];
  const Duration best = std::min(cb.best_case(), cb.wcet);
  const std::size_t host = cb.accelerator_segments.empty() ? 0 : host_of_callback(m, c);
  Split out;
  out.pieces.push_back(Piece{c, 0, {}, std::nullopt});
  Duration start = 0;  // the `after` where the current piece starts
  auto close = [&](Duration end) {
    out.wcet.push_back(end - start);
    out.bcet.push_back(std::min(end, best) - std::min(start, best));
  };
  for (std::size_t k = 0; k < cb.accelerator_segments.size(); ++k) {
    AcceleratorSegment s = cb.accelerator_segments[k];
    // A validated model has after <= wcet; a simulation with execution times below the WCET
    // as the worst case (the soundness harness' climb) makes the call when the CPU part ends.
    s.after = std::clamp<Duration>(s.after, start, cb.wcet);
    const Accelerator* a = m.hosts[host].accelerator(s.accelerator);
    AcceleratorRef ref{host, static_cast<std::size_t>(a - m.hosts[host].accelerators.data())};
    if (a->access == AcceleratorAccess::Direct) {
      out.pieces.back().direct.push_back(DeviceCall{ref, k, s.after - start});
      continue;
    }
    out.pieces.back().request = DeviceCall{ref, k, 0};
    close(s.after);
    start = s.after;
    out.pieces.push_back(Piece{c, static_cast<int>(out.pieces.size()), {}, std::nullopt});
  }
  close(cb.wcet);
  return out;
}

}  // namespace

AcceleratedModel expand_accelerators(const Model& m) {
  AcceleratedModel am;
  am.model = m;
  Model& x = am.model;
  x.callbacks.clear();
  std::vector<std::vector<std::string>> names(m.callbacks.size());  // pieces of each callback
  for (std::size_t c = 0; c < m.callbacks.size(); ++c) {
    const Callback& cb = m.callbacks[c];
    Split sp = split(m, c);
    am.first.push_back(x.callbacks.size());
    for (std::size_t k = 0; k < sp.pieces.size(); ++k) {
      Callback p = cb;
      p.accelerator_segments.clear();
      if (k > 0) {
        p.name = piece_name(cb.name, static_cast<int>(k));
        p.kind = CallbackKind::Subscription;  // released by the device's delivery on its own topic
        p.topic = p.name;
        p.period = p.offset = p.jitter = 0;
        p.queue_depth = limits::kMaxQueueDepth;  // a continuation is never overwritten
        p.fuses.clear();
      }
      if (sp.pieces.size() > 1) {
        p.wcet = sp.wcet[k];
        p.bcet = sp.bcet[k];
        p.publishes = k + 1 < sp.pieces.size() ? std::vector<std::string>{piece_name(cb.name, static_cast<int>(k) + 1)}
                                               : cb.publishes;
      }
      names[c].push_back(p.name);
      if (k > 0) x.topics.push_back(Topic{p.name, 0});
      x.callbacks.push_back(std::move(p));
      am.pieces.push_back(sp.pieces[k]);
    }
    am.last.push_back(x.callbacks.size() - 1);
  }
  if (x.callbacks.size() == m.callbacks.size()) {  // nothing split
    x.reindex();
    return am;
  }
  auto pieces_of = [&](const std::string& cb) -> const std::vector<std::string>& {
    return names[m.callback_index(cb)];
  };
  for (Chain& ch : x.chains) {
    const Chain orig = ch;
    ch.callbacks.clear();
    ch.hops.clear();
    for (const auto& n : orig.callbacks)
      for (const auto& p : pieces_of(n)) ch.callbacks.push_back(p);
    auto internal = [&](const std::string& cb, std::vector<Hop>& hops) {
      const auto& ps = pieces_of(cb);
      for (std::size_t k = 1; k < ps.size(); ++k) hops.push_back(Hop{ps[k - 1], ps[k], ps[k], CommKind::IntraProcess, 0});
    };
    if (orig.is_linear()) {
      // the path: each callback's internal hops, then the hop to the next callback
      for (std::size_t i = 0; i < orig.callbacks.size(); ++i) {
        internal(orig.callbacks[i], ch.hops);
        if (i + 1 < orig.callbacks.size()) {
          Hop h = orig.hops[i];
          h.from = pieces_of(h.from).back();
          ch.hops.push_back(h);
        }
      }
    } else {
      for (Hop h : orig.hops) {
        h.from = pieces_of(h.from).back();
        ch.hops.push_back(h);
      }
      for (const auto& n : orig.callbacks) internal(n, ch.hops);
    }
  }
  x.reindex();
  return am;
}

}  // namespace chainrt
