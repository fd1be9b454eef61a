//===- hbg/support/File.h - Reading files ---------------------------------===//
#pragma once

#include <string>

namespace hbg {

/// Reads a whole file into `text`. False, with `why` ("no such file",
/// "permission denied", "it is a directory"), when it cannot.
bool readFile(const std::string &path, std::string &text, std::string &why);

} // namespace hbg
