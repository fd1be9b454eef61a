//===- support/Source.cpp - Source buffers --------------------------------===//

#include "hbg/support/Source.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace hbg {

std::uint32_t SourceManager::addBuffer(std::string name, std::string text) {
  File f{std::move(name), std::move(text), {0}};
  for (std::uint32_t i = 0; i < f.text.size(); ++i)
    if (f.text[i] == '\n')
      f.lineStarts.push_back(i + 1);
  files_.push_back(std::move(f));
  return static_cast<std::uint32_t>(files_.size());
}

SourceLoc SourceManager::locOfLine(std::uint32_t file, std::uint32_t line,
                                   std::uint32_t column0) const {
  const File &f = files_[file - 1];
  if (line == 0)
    line = 1;
  if (line > f.lineStarts.size())
    return {file, static_cast<std::uint32_t>(f.text.size())};
  std::uint32_t off = f.lineStarts[line - 1] + column0;
  return {file, std::min<std::uint32_t>(off, f.text.size())};
}

LineCol SourceManager::lineCol(SourceLoc loc) const {
  const File &f = files_[loc.file - 1];
  auto it = std::upper_bound(f.lineStarts.begin(), f.lineStarts.end(), loc.offset);
  std::uint32_t line = static_cast<std::uint32_t>(it - f.lineStarts.begin());
  return {line, loc.offset - f.lineStarts[line - 1] + 1};
}

std::string_view SourceManager::lineText(std::uint32_t file, std::uint32_t line) const {
  const File &f = files_[file - 1];
  if (line == 0 || line > f.lineStarts.size())
    return {};
  std::uint32_t begin = f.lineStarts[line - 1];
  std::uint32_t end = line < f.lineStarts.size() ? f.lineStarts[line] - 1
                                                 : static_cast<std::uint32_t>(f.text.size());
  std::string_view text(f.text);
  std::string_view s = text.substr(begin, end - begin);
  if (!s.empty() && s.back() == '\r')
    s.remove_suffix(1);
  return s;
}

} // namespace hbg
