// The module plan of docs/architecture.md as a test: every `#include "trn/<module>/..."` in a
// module's headers and sources names the module itself or one below it, so dependencies point
// downward only. The table is the plan; adding a module or an edge means editing it here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

/// Each module and the modules it may use directly.
const std::map<std::string, std::vector<std::string>>& directDependencies() {
  static const std::map<std::string, std::vector<std::string>> table = {
      {"base", {}},
      {"numerics", {"base"}},
      {"spec", {"base", "numerics"}},
      {"isa", {"numerics", "spec"}},
      {"core", {"isa", "spec"}},
      {"kernel", {"isa"}},
      {"kernels", {"kernel"}},
      {"runtime", {"core", "kernel", "fabric"}},
      {"profile", {"core", "fabric"}},
      {"harness", {"kernels", "runtime", "profile"}},
      {"fabric", {"core"}},
      // The plan's edges; the front end (import, shapes) uses only numerics and base so far.
      {"graph", {"kernels", "runtime", "fabric"}},
  };
  return table;
}

std::set<std::string> allowed(const std::string& module) {
  std::set<std::string> reach = {module};
  std::vector<std::string> todo = {module};
  while (!todo.empty()) {
    const std::string m = todo.back();
    todo.pop_back();
    for (const std::string& dep : directDependencies().at(m)) {
      if (reach.insert(dep).second) {
        todo.push_back(dep);
      }
    }
  }
  return reach;
}

std::vector<fs::path> filesOf(const std::string& module) {
  std::vector<fs::path> files;
  for (const fs::path& dir : {fs::path(TRN_SOURCE_DIR) / "include" / "trn" / module,
                              fs::path(TRN_SOURCE_DIR) / "src" / module}) {
    if (!fs::exists(dir)) {
      continue;
    }
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
      const std::string ext = entry.path().extension().string();
      if (entry.is_regular_file() && (ext == ".h" || ext == ".cpp")) {
        files.push_back(entry.path());
      }
    }
  }
  return files;
}

TEST(ModuleLayering, EveryModuleFolderIsInThePlan) {
  for (const auto& entry : fs::directory_iterator(fs::path(TRN_SOURCE_DIR) / "src")) {
    if (entry.is_directory()) {
      EXPECT_TRUE(directDependencies().contains(entry.path().filename().string()))
          << "src/" << entry.path().filename().string()
          << " is not in the module table of tests/layering/module_layering_test.cpp";
    }
  }
}

TEST(ModuleLayering, IncludesPointDownward) {
  const std::regex include(R"(^\s*#\s*include\s*"trn/([a-z_]+)/)");
  std::size_t checked = 0;
  for (const auto& [module, deps] : directDependencies()) {
    const std::set<std::string> reach = allowed(module);
    for (const fs::path& file : filesOf(module)) {
      std::ifstream in(file);
      std::string line;
      int number = 0;
      while (std::getline(in, line)) {
        ++number;
        std::smatch m;
        if (std::regex_search(line, m, include)) {
          ++checked;
          EXPECT_TRUE(reach.contains(m[1].str()))
              << file.string() << ":" << number << ": module '" << module << "' includes '"
              << m[1].str() << "', which is not below it";
        }
      }
    }
  }
  EXPECT_GT(checked, 100u);  // the scan found the sources
}

}  // namespace
