//===- compiler/driver/Imports.cpp - Finding and parsing imported files ---===//

#include "Imports.h"

#include "hbg/driver/Pipeline.h"
#include "hbg/support/Installation.h"
#include "hbg/syntax/Parser.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

namespace hbg::driver {

std::vector<std::string> libraryDirs(const std::vector<std::string> &libPath) {
  std::vector<std::string> dirs = libPath;
  if (const char *env = std::getenv("HBG_PATH")) {
    std::string list = env;
    std::size_t start = 0;
    while (start <= list.size()) {
      std::size_t colon = list.find(':', start);
      std::string dir = list.substr(start, colon == std::string::npos ? std::string::npos
                                                                      : colon - start);
      if (!dir.empty())
        dirs.push_back(dir);
      if (colon == std::string::npos)
        break;
      start = colon + 1;
    }
  }
  // The standard library: next to the running program's installation
  // (bin/../share/hbg/stdlib); in the installation a program embedding hbg
  // was built against (its CMake package says where, moved or not); the
  // source tree's; the installation's path at install time.
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  std::vector<std::string> stdlib;
  if (!ec)
    stdlib.push_back((exe.parent_path() / ".." / "share" / "hbg" / "stdlib").string());
  if (hbg_installed_stdlib && hbg_installed_stdlib())
    stdlib.push_back(hbg_installed_stdlib());
  stdlib.push_back(HBG_STDLIB_DIR);
#ifdef HBG_STDLIB_INSTALL_DIR
  stdlib.push_back(HBG_STDLIB_INSTALL_DIR);
#endif
  for (const std::string &dir : stdlib)
    if (std::filesystem::is_directory(dir, ec)) {
      dirs.push_back(dir);
      return dirs;
    }
  dirs.push_back(HBG_STDLIB_DIR); // named in "not found" messages
  return dirs;
}

bool Importer::load(const ast::File &root) {
  stack_.push_back(canonical(sm_.name(root.fileId)));
  bool ok = visit(root);
  stack_.pop_back();
  return ok;
}

std::string Importer::canonical(const std::string &path) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
  return ec ? path : p.string();
}

bool Importer::visit(const ast::File &file) {
  bool ok = true;
  std::filesystem::path here = std::filesystem::path(sm_.name(file.fileId)).parent_path();
  for (const ast::Import &im : file.imports) {
    std::string path;
    if (im.isPath) {
      std::filesystem::path p(im.name);
      path = (p.is_relative() ? here / p : p).string();
    } else {
      for (const std::string &dir : dirs_) {
        std::filesystem::path candidate = std::filesystem::path(dir) / (im.name + ".hbg");
        std::error_code ec;
        if (std::filesystem::is_regular_file(candidate, ec)) {
          path = candidate.string();
          break;
        }
      }
      if (path.empty()) {
        std::string searched;
        std::vector<std::string> libraries;
        for (const std::string &dir : dirs_) {
          searched += (searched.empty() ? "`" : ", `") + dir + "`";
          std::error_code ec;
          for (const auto &entry : std::filesystem::directory_iterator(dir, ec))
            if (entry.path().extension() == ".hbg")
              libraries.push_back(entry.path().stem().string());
        }
        std::sort(libraries.begin(), libraries.end());
        std::string best = closestName(im.name, libraries);
        if (!best.empty())
          searched += "; did you mean `" + best + "`?";
        diags_.report(DiagKind::ImportNotFound, im.range, {im.name, searched});
        ok = false;
        continue;
      }
    }
    std::string key = canonical(path);
    auto onStack = std::find(stack_.begin(), stack_.end(), key);
    if (onStack != stack_.end()) {
      std::string cycle;
      for (auto it = onStack; it != stack_.end(); ++it)
        cycle += "`" + std::filesystem::path(*it).filename().string() + "` -> ";
      cycle += "`" + std::filesystem::path(key).filename().string() + "`";
      diags_.report(DiagKind::ImportCycle, im.range, {cycle});
      ok = false;
      continue;
    }
    if (!loaded_.insert(key).second)
      continue; // imported before, through another file
    std::string text, why;
    if (!readFile(path, text, why)) {
      diags_.report(DiagKind::CannotOpenFile, im.range, {path, why});
      ok = false;
      continue;
    }
    std::uint32_t id = sm_.addBuffer(path, std::move(text));
    std::unique_ptr<ast::File> parsed = syntax::parse(id, sm_, diags_);
    if (!parsed) {
      diags_.note(DiagKind::ImportedHere, im.range, {path});
      ok = false;
      continue;
    }
    for (const std::unique_ptr<ast::Model> &m : parsed->models)
      if (!m->component) {
        diags_.report(DiagKind::ImportedModel, m->nameRange, {m->name});
        diags_.note(DiagKind::ImportedHere, im.range, {path});
        ok = false;
      }
    stack_.push_back(key);
    ok = visit(*parsed) && ok;
    stack_.pop_back();
    files_.push_back(std::move(parsed));
  }
  return ok;
}

} // namespace hbg::driver
