// trnsim: the command-line front end. Each subcommand group lives in its own file and registers
// itself on the CLI11 application here.
#include <CLI/CLI.hpp>
#include <cstdio>

int main(int argc, char** argv) {
  CLI::App app{"trnsim: a software model of a Trainium2-class accelerator"};
  app.require_subcommand(1);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
