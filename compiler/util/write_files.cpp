#include "util/write_files.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <system_error>

#include "error.hpp"
#include "util/interrupt.hpp"

namespace tightfit {

namespace fs = std::filesystem;

void write_files(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& files) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(dir + ": cannot create the output folder (" + ec.message() + ")");

  // Every file goes to a temporary name of this process first (so two compiles into one folder
  // never mix their files); a signal meanwhile removes them (util/interrupt.hpp).
  struct Staged {
    fs::path temp, final, backup;  // backup: a hard link to the file being replaced, if any
    int slot = -1;
  };
  const std::string tag = "." + std::to_string(getpid()) + ".tmp";
  std::vector<Staged> staged;
  auto discard = [&] {
    for (const Staged& s : staged) {
      fs::remove(s.temp, ec);
      if (!s.backup.empty()) fs::remove(s.backup, ec);
      interrupt::forget(s.slot);
    }
  };
  for (const auto& [file, text] : files) {
    Staged s;
    s.final = fs::path(dir) / file;
    s.temp = fs::path(dir) / ("." + file + tag);
    s.slot = interrupt::remember(s.temp.string());
    staged.push_back(s);
    std::ofstream out(s.temp, std::ios::binary);
    out << text;
    out.close();
    if (!out) {
      discard();
      throw Error(s.final.string() + ": cannot write");
    }
  }

  // Into place, all or nothing, with signals held so that none lands between two renames. The
  // files being replaced are kept (hard links) until every rename succeeded; if one fails, those
  // already renamed are put back, so a failure never leaves a new NAME.cpp beside an old NAME.hpp.
  [&] {
    interrupt::SignalHold hold;
    if (hold.pending()) {  // interrupted before anything was replaced: see below
      discard();
      return;
    }
    for (Staged& s : staged) {
      if (!fs::exists(fs::symlink_status(s.final, ec))) continue;
      s.backup = fs::path(dir) / ("." + s.final.filename().string() + ".old" + tag);
      fs::remove(s.backup, ec);
      fs::create_hard_link(s.final, s.backup, ec);
      if (ec) fs::copy_file(s.final, s.backup, ec);
      if (ec) {
        const std::string reason = ec.message();
        discard();
        throw Error(s.final.string() + ": cannot replace the existing file (" + reason + ")");
      }
    }
    for (std::size_t i = 0; i < staged.size(); ++i) {
      fs::rename(staged[i].temp, staged[i].final, ec);
      if (!ec) {
        continue;
      }
      const std::string reason = ec.message();
      for (std::size_t j = 0; j < i; ++j) {  // undo: the old file back, or no file
        if (!staged[j].backup.empty())
          fs::rename(staged[j].backup, staged[j].final, ec);
        else
          fs::remove(staged[j].final, ec);
      }
      discard();
      throw Error(staged[i].final.string() + ": cannot write (" + reason + ")");
    }
    discard();  // the temporary names are gone already; this drops the backups
  }();
  // A signal that came meanwhile was delivered as the hold ended: it has ended the process, or,
  // under an interrupt::Deferral, it stops the command here.
  interrupt::check();
}

void write_file(const std::string& path, const std::string& contents) {
  const fs::path p(path);
  if (p.filename().empty()) throw Error(path + ": names a folder, not a file");
  write_files(p.has_parent_path() ? p.parent_path().string() : ".", {{p.filename().string(), contents}});
}

}  // namespace tightfit
