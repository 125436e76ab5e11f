// Source locations as a kernel author reads them: relative to the kernel's project. Kernels
// record absolute file names (std::source_location); the project is the nearest directory above
// the files' common directory that holds a .git, else that common directory itself. Relative
// names, which a compiler run in a build directory records ("../../src/kernels/x.cpp"), lose
// their leading "../" and "./" ("src/kernels/x.cpp").
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace trn::profile {

/// Shortens the file names of one run's (or several runs') source locations.
class SourcePaths {
 public:
  /// Finds the project root of `files` (absolute names; relative ones are kept as they are).
  explicit SourcePaths(std::span<const std::string> files);

  /// `file` relative to the root ("src/kernels/matmul.cpp"); a relative name without its
  /// leading "../" and "./"; otherwise unchanged.
  [[nodiscard]] std::string relative(std::string_view file) const;
  [[nodiscard]] const std::string& root() const { return root_; }

 private:
  std::string root_;  ///< with a trailing '/', or empty
};

}  // namespace trn::profile
