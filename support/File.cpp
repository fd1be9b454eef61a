//===- support/File.cpp - Reading files -----------------------------------===//

#include "hbg/support/File.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace hbg {

bool readFile(const std::string &path, std::string &text, std::string &why) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    why = "it is a directory";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    why = std::filesystem::exists(path, ec) ? "permission denied" : "no such file";
    return false;
  }
  std::ostringstream os;
  os << in.rdbuf();
  text = os.str();
  return true;
}

} // namespace hbg
