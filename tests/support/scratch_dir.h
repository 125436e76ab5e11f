// Test support: a directory of its own for the running test (named after its suite, test and
// process), created empty and removed with everything in it when the test ends.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace trn::testing {

class ScratchDir {
 public:
  ScratchDir() {
    const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            (std::string("trnsim_") + test->test_suite_name() + "_" + test->name() + "_" +
             std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

  /// The path of `name` inside the directory.
  [[nodiscard]] std::string file(const std::string& name) const { return (path_ / name).string(); }

  /// Writes `contents` to `name` and returns its path.
  std::string write(const std::string& name, std::string_view contents) const {
    const std::string target = file(name);
    std::ofstream(target, std::ios::binary) << contents;
    return target;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace trn::testing
