//===- compiler/driver/ModelImpl.h - What a compiled Model holds ----------===//
#pragma once

#include "hbg/hbg.h"

namespace hbg {

struct Model::Impl {
  eq::EquationSystem equations;
  std::vector<std::string> parameterNames, stateNames, outputNames;
  codegen::CompiledModule code;
  codegen::CompiledFn rhs = nullptr;
  codegen::CompiledFn outputs = nullptr;
};

} // namespace hbg
