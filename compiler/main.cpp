// tightfit: compiles a quantized ONNX model into C++ for microcontrollers in the least RAM.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <cstdio>

#include "cli/commands.hpp"
#include "error.hpp"
#include "util/interrupt.hpp"

#ifndef TIGHTFIT_VERSION
#error "TIGHTFIT_VERSION must be defined by the build"
#endif

int main(int argc, char** argv) {
  // Ctrl-C: stop at once, no partial outputs, exit status 130 (util/interrupt.hpp).
  tightfit::interrupt::install();
  CLI::App app{"tightfit: compile a quantized ONNX model into C++ for microcontrollers, in the least RAM"};
  app.name("tightfit");
  app.set_version_flag("--version", "tightfit " TIGHTFIT_VERSION);
  app.require_subcommand(1);
  tightfit::add_inspect_command(app);
  tightfit::add_plan_command(app);
  tightfit::add_compile_command(app);
  tightfit::add_run_command(app);
  tightfit::add_report_command(app);
  tightfit::add_embed_npy_command(app);
  tightfit::add_firmware_lines_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version: printed as asked
    // A bad command line is one line, like every other error (CLI11 would add a second).
    fmt::print(stderr, "tightfit: error: {} (see tightfit --help)\n", tightfit::model_text::shown(e.what()));
    return tightfit::kExitUsage;
  } catch (const tightfit::interrupt::Interrupted& e) {
    fmt::print(stderr, "tightfit: interrupted\n");  // as the signal handler says it
    return e.exit_code();
  } catch (const tightfit::Error& e) {
    fmt::print(stderr, "tightfit: error: {}\n", tightfit::model_text::shown(e.what()));
    return e.exit_code();
  } catch (const std::exception& e) {
    // Anything else is a bug in tightfit; still one line and a non-zero exit, never an abort.
    fmt::print(stderr, "tightfit: internal error: {}\n", tightfit::model_text::shown(e.what()));
    return tightfit::kExitError;
  }
  return tightfit::kExitOk;
}
