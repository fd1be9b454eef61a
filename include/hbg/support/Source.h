//===- hbg/support/Source.h - Source buffers and locations ----------------===//
#pragma once

#include "hbg/support/File.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hbg {

/// A position in a source buffer. File 0 means "no location".
struct SourceLoc {
  std::uint32_t file = 0;
  std::uint32_t offset = 0;
  bool valid() const { return file != 0; }
};

/// A span of characters in one buffer.
struct SourceRange {
  SourceLoc begin;
  std::uint32_t length = 1;
  bool valid() const { return begin.valid(); }
};

/// 1-based line and column.
struct LineCol {
  std::uint32_t line = 0, column = 0;
};

/// Owns the text of every file read, so that diagnostics can quote lines.
class SourceManager {
public:
  /// Adds a buffer and returns its file id (never 0).
  std::uint32_t addBuffer(std::string name, std::string text);
  const std::string &name(std::uint32_t file) const { return files_[file - 1].name; }
  std::string_view text(std::uint32_t file) const { return files_[file - 1].text; }
  /// Files are numbered 1 to numFiles().
  std::uint32_t numFiles() const { return static_cast<std::uint32_t>(files_.size()); }
  /// Location of a byte offset in a file.
  SourceLoc loc(std::uint32_t file, std::uint32_t offset) const { return {file, offset}; }
  /// Location of a 1-based line and 0-based column (ANTLR's convention).
  SourceLoc locOfLine(std::uint32_t file, std::uint32_t line, std::uint32_t column0) const;
  LineCol lineCol(SourceLoc loc) const;
  /// The text of a 1-based line, without its newline.
  std::string_view lineText(std::uint32_t file, std::uint32_t line) const;

private:
  struct File {
    std::string name, text;
    std::vector<std::uint32_t> lineStarts;
  };
  std::vector<File> files_;
};

} // namespace hbg
