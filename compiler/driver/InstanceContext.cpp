//===- compiler/driver/InstanceContext.cpp - Where in which instance ------===//
//
// Notes that name the instances around a diagnostic inside a component.
//
//===----------------------------------------------------------------------===//

#include "hbg/driver/Pipeline.h"

#include <algorithm>

namespace hbg::driver {

namespace {

/// The names a message quotes: `mass.body` in "initial value `p0` of
/// `mass.body` is ignored". A quoted mode (`d1.j=off, d2.j=on`) names
/// every instance's junctions, so it is left out.
std::vector<std::string> quotedNames(const std::string &message) {
  std::vector<std::string> out;
  for (std::size_t open = message.find('`'); open != std::string::npos;) {
    std::size_t close = message.find('`', open + 1);
    if (close == std::string::npos)
      break;
    std::string quoted = message.substr(open + 1, close - open - 1);
    if (quoted.find('=') == std::string::npos)
      out.push_back(std::move(quoted));
    open = message.find('`', close + 1);
  }
  return out;
}

bool within(SourceRange inner, SourceRange outer) {
  return inner.valid() && outer.valid() && inner.begin.file == outer.begin.file &&
         inner.begin.offset >= outer.begin.offset &&
         inner.begin.offset < outer.begin.offset + outer.length;
}

} // namespace

DiagnosticEngine::ContextFn instanceContext(const std::vector<ast::InstanceInfo> &instances) {
  auto all = std::make_shared<std::vector<ast::InstanceInfo>>(instances);
  return [all](const Diagnostic &d) {
    std::vector<Diagnostic> notes;
    // Flattening's own errors name their instances already.
    for (const Diagnostic &n : d.notes)
      if (n.kind == DiagKind::InInstance)
        return notes;
    // The instances of the component the line is in; of those, the one
    // whose path begins a name the message quotes (`d1.j` for `d1`), the
    // longest such; or the only one.
    const ast::InstanceInfo *found = nullptr;
    std::size_t candidates = 0;
    const ast::InstanceInfo *only = nullptr;
    std::vector<std::string> names = quotedNames(d.message);
    for (const Diagnostic &n : d.notes)
      for (std::string &name : quotedNames(n.message))
        names.push_back(std::move(name));
    for (const ast::InstanceInfo &in : *all) {
      if (!within(d.range, in.body))
        continue;
      ++candidates;
      only = &in;
      for (const std::string &name : names)
        if (name.size() > in.path.size() && name.compare(0, in.path.size(), in.path) == 0 &&
            name[in.path.size()] == '.' && (!found || in.path.size() > found->path.size()))
          found = &in;
    }
    if (!found && candidates == 1)
      found = only;
    if (!found)
      return notes;
    // The instance, then each one around it, outwards.
    std::string path = found->path;
    while (!path.empty()) {
      for (const ast::InstanceInfo &in : *all)
        if (in.path == path) {
          notes.push_back(DiagnosticEngine::make(DiagKind::InInstance, in.declared, {in.path, in.type}));
          break;
        }
      std::size_t dot = path.rfind('.');
      path = dot == std::string::npos ? "" : path.substr(0, dot);
    }
    return notes;
  };
}

} // namespace hbg::driver
