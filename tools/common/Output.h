//===- tools/common/Output.h - Checked writes to files and stdout ---------===//
#pragma once

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>

namespace hbg::tools {

/// The program's name in its messages (`hbgc`, or a built simulator's).
inline std::string &programName() {
  static std::string name = "hbgc";
  return name;
}

/// Where hbgc and built simulators write what they produce: standard output, or a file named on
/// the command line (`-o`, `--events`). A run that exits with status 0 must
/// have written everything, so every write is checked; streams buffer, so a
/// full disk often shows only when the last bytes are flushed, which
/// finish() does and checks.
class Output {
public:
  /// Standard output.
  Output() = default;
  Output(const Output &) = delete;
  Output &operator=(const Output &) = delete;

  /// Opens (and truncates) `path` now, so that an unwritable path is an
  /// error before a long simulation rather than after it. False, with the
  /// error printed, when the file cannot be opened.
  bool open(const std::string &path) {
    name_ = path;
    errno = 0;
    file_.open(path);
    if (file_) {
      os_ = &file_;
      return true;
    }
    fail(errno);
    return false;
  }

  /// Where to write; what is written is checked by finish().
  std::ostream &stream() { return *os_; }

  /// Flushes (and closes a file) after the last write. False, with the
  /// error printed once, when some write did not reach its destination.
  bool finish() {
    if (failed_)
      return false;
    // A stream stops writing at its first failure and leaves errno as that
    // write set it; reset errno only when the flush is what may fail.
    if (*os_) {
      errno = 0;
      if (os_ == &file_)
        file_.close();
      else
        os_->flush();
    }
    if (*os_)
      return true;
    fail(errno);
    return false;
  }

private:
  void fail(int error) {
    failed_ = true;
    std::cerr << programName() << ": error: cannot write `" << name_ << "`";
    if (error != 0)
      std::cerr << ": " << std::strerror(error);
    std::cerr << "\n";
  }

  std::string name_ = "standard output";
  std::ofstream file_;
  std::ostream *os_ = &std::cout;
  bool failed_ = false;
};

} // namespace hbg::tools
