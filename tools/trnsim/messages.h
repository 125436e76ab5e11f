// How the command line reports to its user: errors and warnings go to stderr, one prefixed line
// per line of the message ("trnsim: error: ...", "trnsim: warning: ..."); results go to stdout.
#pragma once

#include <string_view>

namespace trn::tools {

/// Prints `message` to stderr, one "trnsim: error: " line per line of the message.
void printError(std::string_view message);

/// Prints `message` to stderr, one "trnsim: warning: " line per line of the message.
void printWarning(std::string_view message);

}  // namespace trn::tools
