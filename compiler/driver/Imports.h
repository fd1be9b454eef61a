//===- compiler/driver/Imports.h - Finding and parsing imported files -----===//
#pragma once

#include "hbg/support/Diagnostics.h"
#include "hbg/syntax/AST.h"

#include <memory>
#include <set>
#include <string>
#include <vector>

namespace hbg::driver {

/// Parses the files `root` imports, and theirs, each once: a file reached
/// again through another import is the same file; reached again from
/// itself, a cycle. False after errors (reported at the import).
class Importer {
public:
  Importer(SourceManager &sm, DiagnosticEngine &diags, std::vector<std::string> dirs)
      : sm_(sm), diags_(diags), dirs_(std::move(dirs)) {}

  /// Loads what `root` imports; false after errors.
  bool load(const ast::File &root);
  /// The imported files, each after those it imports.
  std::vector<const ast::File *> files() const {
    std::vector<const ast::File *> out;
    for (const std::unique_ptr<ast::File> &f : files_)
      out.push_back(f.get());
    return out;
  }

private:
  static std::string canonical(const std::string &path);
  bool visit(const ast::File &file);

  SourceManager &sm_;
  DiagnosticEngine &diags_;
  std::vector<std::string> dirs_;
  std::vector<std::string> stack_;
  std::set<std::string> loaded_;
  std::vector<std::unique_ptr<ast::File>> files_;
};

} // namespace hbg::driver
