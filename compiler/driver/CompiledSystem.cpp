//===- compiler/driver/CompiledSystem.cpp - A Model as the runtime sees it ===//

#include "CompiledSystem.h"

#include <chrono>

namespace hbg {

CompiledSystem::CompiledSystem(const Model &model, std::vector<double> params)
    : ProgramSystem(std::move(params), model.impl()->initial->equations.numHeld,
                    model.impl()->switched, &model.impl()->storageLaws),
      model_(model), m_(*model.impl()) {
  for (std::size_t k = 0; k < m_.graph->held.size(); ++k) {
    if (m_.graph->held[k].kind == bg::Held::Kind::Discrete)
      discretes_.push_back({m_.graph->held[k].name, std::uint32_t(k)});
    if (m_.graph->held[k].kind == bg::Held::Kind::Settle)
      settle_ = std::int64_t(k);
  }
  for (const bg::Integrator &in : m_.graph->integrators)
    for (std::uint32_t i = 0; i < m_.stateNames.size(); ++i)
      if (m_.stateNames[i] == in.name)
        integrals_.push_back(i);
}


CompiledSystem::~CompiledSystem() {
  // The run's modes are free for the cache to drop once it lets go.
  releaseModes();
  if (m_.switched) {
    std::lock_guard<std::mutex> lock(m_.cacheMutex);
    m_.evict();
  }
}

std::shared_ptr<const runtime::ModeProgram>
CompiledSystem::program(const std::vector<std::uint32_t> &q, std::string &why) {
  if (!m_.switched)
    return m_.initial;
  bg::Mode mode = m_.modeOf(q);
  std::size_t before = m_.modesCompiled();
  auto start = std::chrono::steady_clock::now();
  std::shared_ptr<ModeCode> code;
  try {
    code = m_.modeCode(mode);
  } catch (const CompileError &e) {
    why = std::string("cannot be analysed:\n") + e.what();
    return nullptr;
  }
  if (m_.modesCompiled() != before) {
    compileSeconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ++modesCompiled;
  }
  return code;
}

} // namespace hbg
