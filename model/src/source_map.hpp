// Internal: where each field of a loaded model came from (file line/column by field path), so
// that validation, which runs on the typed model, can still point at the file.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "chainrt/model/yaml_io.hpp"

namespace chainrt::detail {

struct Place {
  int line = 0;
  int column = 0;
};

class SourceMap {
 public:
  void set(const std::string& path, Place p) { places_[path] = p; }
  // The place of `path`, or of its closest recorded parent ("a[1].b" -> "a[1]" -> "a").
  Place find(std::string path) const {
    for (;;) {
      auto it = places_.find(path);
      if (it != places_.end()) return it->second;
      auto cut = path.find_last_of(".[");
      if (cut == std::string::npos || cut == 0) return {};
      path.resize(cut);
    }
  }

 private:
  std::unordered_map<std::string, Place> places_;
};

class Diagnostics {
 public:
  Diagnostics(std::string file, const SourceMap* map) : file_(std::move(file)), map_(map) {}
  void error(const std::string& field, const std::string& message) {
    Place p = map_ ? map_->find(field) : Place{};
    list_.push_back({file_, p.line, p.column, field, message});
  }
  void error_at(Place p, const std::string& field, const std::string& message) {
    list_.push_back({file_, p.line, p.column, field, message});
  }
  bool empty() const { return list_.empty(); }
  std::vector<Diagnostic>& list() { return list_; }
  const std::string& file() const { return file_; }

 private:
  std::string file_;
  const SourceMap* map_;
  std::vector<Diagnostic> list_;
};

// Validation of a typed model (validate.cpp): fills defaults, derives hops, reports problems.
// `derive` false: the model is known to be broken (the parser found errors), so only report.
void validate_model(Model& model, Diagnostics& diags, bool derive = true);

}  // namespace chainrt::detail
