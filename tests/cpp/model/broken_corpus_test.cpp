// Every file in tests/models/broken/ is an invalid model whose last line says where and why:
//   # expect: <line> | <field path> | <part of the message>
// The loader must reject it with a diagnostic naming that file, line and field.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "chainrt/model/yaml_io.hpp"

namespace fs = std::filesystem;
using namespace chainrt;

namespace {

struct Expectation {
  int line = 0;
  std::string field, message;
};

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.erase(s.begin());
  return s;
}

Expectation read_expectation(const fs::path& p) {
  std::ifstream in(p);
  std::string line, last;
  while (std::getline(in, line))
    if (line.rfind("# expect:", 0) == 0) last = line.substr(9);
  Expectation e;
  std::stringstream ss(last);
  std::string a, b, c;
  std::getline(ss, a, '|');
  std::getline(ss, b, '|');
  std::getline(ss, c);
  e.line = std::stoi(trim(a));
  e.field = trim(b);
  e.message = trim(c);
  return e;
}

std::vector<fs::path> corpus() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(fs::path(CHAINRT_SOURCE_DIR) / "tests/models/broken"))
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST(BrokenCorpus, HasAtLeastThirtyFiles) { EXPECT_GE(corpus().size(), 30u); }

TEST(BrokenCorpus, EachFileIsRejectedAtTheRightPlace) {
  for (const auto& path : corpus()) {
    SCOPED_TRACE(path.filename().string());
    Expectation want = read_expectation(path);
    try {
      load_model(path.string());
      ADD_FAILURE() << "accepted an invalid model";
    } catch (const ModelError& err) {
      bool found = false;
      std::string all;
      for (const auto& d : err.diagnostics()) {
        all += d.str() + "\n";
        EXPECT_EQ(d.file, path.string());
        bool line_ok = want.line == 0 ? d.line == 0 : d.line == want.line;
        bool field_ok = want.field.empty() || d.field == want.field;
        if (line_ok && field_ok && d.message.find(want.message) != std::string::npos) found = true;
      }
      EXPECT_TRUE(found) << "wanted line " << want.line << " field '" << want.field << "' message '"
                         << want.message << "'; got:\n"
                         << all;
    }
  }
}
