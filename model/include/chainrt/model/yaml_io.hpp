// chainrt model files: the one YAML parser and writer of the model (docs/model.md), and the
// validation that every loaded model passes. Every diagnostic names file, line, column and the
// field path (e.g. "chains[1].callbacks[2]") and says what is wrong.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "chainrt/model/model.hpp"

namespace chainrt {

struct Diagnostic {
  std::string file;
  int line = 0;    // 1-based; 0 when the problem has no single place
  int column = 0;  // 1-based
  std::string field;
  std::string message;
  std::string str() const;  // "file:line:col: field: message"
};

class ModelError : public std::runtime_error {
 public:
  explicit ModelError(std::vector<Diagnostic> diags);
  const std::vector<Diagnostic>& diagnostics() const { return diags_; }

 private:
  std::vector<Diagnostic> diags_;
};

// Parses and validates; throws ModelError with every problem found (not just the first).
Model load_model(const std::string& path);
Model load_model_from_string(const std::string& yaml, const std::string& file_name = "<string>");

// Validates a model built in code (e.g. by a generator); throws ModelError. The loader calls it.
void validate(Model& model, const std::string& file_name = "<model>");

std::string save_model_to_string(const Model& model);
void save_model(const Model& model, const std::string& path);

}  // namespace chainrt
