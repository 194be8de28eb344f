// Writing a set of files all or nothing: what every command that leaves files behind uses
// (compile's generated code and report, plan's and compile's CSV, run's outputs).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tightfit {

// Writes each {file name, contents} into `dir` (created if missing). Every file goes to a
// temporary name of this process first; they are renamed into place only when all were written,
// with SIGINT, SIGTERM and SIGHUP held, and if one rename fails those done are undone. So a failure
// never leaves a new NAME.cpp beside an old NAME.hpp, and a signal never leaves half a set: one
// that arrives before the renames leaves the folder as it was (it then takes effect as
// util/interrupt.hpp says), one during them once every file is in place. Throws tightfit::Error
// naming the file that could not be written.
void write_files(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& files);

// One file at `path`, the same way: the old file stays whole until the new one replaces it.
void write_file(const std::string& path, const std::string& contents);

}  // namespace tightfit
