//===- codegen/BackendLoader.cpp - Finding and loading libhbg_llvm.so -----===//

#include "Backend.h"

#include "hbg/support/Installation.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>

namespace hbg::codegen {

namespace {

/// The directory of the binary this code is linked into (an executable or
/// a shared library), with a trailing '/'; empty when unknown.
std::string ownDirectory() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void *>(&backend), &info) || !info.dli_fname)
    return "";
  std::string path = info.dli_fname;
  std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

Backend *load() {
  // In order: HBG_LLVM_BACKEND; next to the binary, or in ../lib/hbg from
  // it (an installation); in the installation a program embedding hbg was
  // built against (its CMake package says where, moved or not); where the
  // build tree puts it; where the installation put it at install time.
  std::vector<std::string> candidates;
  if (const char *env = std::getenv("HBG_LLVM_BACKEND"); env && *env)
    candidates.push_back(env);
  else {
    std::string dir = ownDirectory();
    if (!dir.empty()) {
      candidates.push_back(dir + "libhbg_llvm.so");
      candidates.push_back(dir + "../lib/hbg/libhbg_llvm.so");
    }
    if (hbg_installed_backend && hbg_installed_backend())
      candidates.push_back(hbg_installed_backend());
#ifdef HBG_LLVM_BACKEND_BUILD_PATH
    candidates.push_back(HBG_LLVM_BACKEND_BUILD_PATH);
#endif
#ifdef HBG_LLVM_BACKEND_INSTALL_PATH
    candidates.push_back(HBG_LLVM_BACKEND_INSTALL_PATH);
#endif
  }
  std::string why;
  for (const std::string &path : candidates) {
    void *handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL);
    if (!handle) {
      const char *e = dlerror();
      why += "\n  " + (e ? std::string(e) : path);
      continue;
    }
    auto entry = reinterpret_cast<Backend *(*)()>(dlsym(handle, "hbg_llvm_backend"));
    if (!entry) {
      why += "\n  " + path + ": no symbol hbg_llvm_backend";
      continue;
    }
    return entry();
  }
  throw BackendUnavailable("cannot load LLVM's code generator (libhbg_llvm.so); tried:" + why);
}

} // namespace

namespace {
std::atomic<bool> wasLoaded{false};
} // namespace

Backend &backend() {
  // Loaded once and never unloaded: compiled code and the handles' deleters
  // live in it.
  static Backend *loaded = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    loaded = load();
    wasLoaded = true;
  });
  return *loaded;
}

bool backendLoaded() { return wasLoaded.load(std::memory_order_relaxed); }

} // namespace hbg::codegen
