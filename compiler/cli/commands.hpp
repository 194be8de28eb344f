// The subcommands of `tightfit`. Each registers itself on the app; its callback does the work
// and reports failure by throwing tightfit::Error (see error.hpp for the exit statuses).
#pragma once

namespace CLI {
class App;
}

namespace tightfit {

void add_inspect_command(CLI::App& app);         // inspect_command.cpp
void add_plan_command(CLI::App& app);            // plan_command.cpp
void add_compile_command(CLI::App& app);         // compile_command.cpp
void add_run_command(CLI::App& app);             // run_command.cpp
void add_report_command(CLI::App& app);          // report_command.cpp
void add_embed_npy_command(CLI::App& app);       // embed_npy_command.cpp
void add_firmware_lines_command(CLI::App& app);  // firmware_lines_command.cpp

}  // namespace tightfit
