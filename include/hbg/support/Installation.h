//===- hbg/support/Installation.h - Where an installed hbg is -*- C++ -*-===//
//
// A program that links an installed hbg through its CMake package
// (`find_package(hbg)`) gets these two functions from the package: the
// standard library's directory and the LLVM backend's path in that
// installation, computed from where the package was found, so that a
// moved prefix is found too. hbgc and the build tree's programs do not
// define them (weak: their addresses are null), and find both relative to
// their own binary or in the build tree.
//
//===----------------------------------------------------------------------===//
#pragma once

extern "C" {
const char *hbg_installed_stdlib() __attribute__((weak));
const char *hbg_installed_backend() __attribute__((weak));
}
