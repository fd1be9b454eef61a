//===- compiler/tooling/Dot.cpp - The bond graph as Graphviz draws it -----===//

#include "hbg/tooling/Dot.h"

#include "hbg/bondgraph/Mode.h"
#include "hbg/bondgraph/Path.h"

#include <algorithm>
#include <functional>
#include <map>
#include <sstream>

namespace hbg::driver {

namespace {

/// A DOT string: in double quotes, with `"` and `\` escaped. A line break
/// is `\n` (centred) in labels.
std::string quoted(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// Colours of algebraic loops, in turn; derivative causality is red.
const char *const kLoopColours[] = {"darkorange", "blue3", "green4", "magenta3", "cyan4",
                                    "goldenrod3"};
const char *const kDerivative = "red3";
const char *const kOff = "gray55";
const char *const kPseudo = "sienna";

struct Cluster {
  std::string type;
  std::vector<std::uint32_t> elements;
  std::map<std::string, Cluster> children;
};

} // namespace

std::string dot(const bg::BondGraph &g, const causality::CausalAssignment &ca,
                const std::vector<ast::InstanceInfo> &instances) {
  std::size_t n = g.elements.size();
  // Each element's and bond's highlight: a loop's colour, or red.
  std::vector<std::string> elementColour(n), bondColour(g.bonds.size());
  std::vector<std::string> legend;
  std::string mode = bg::modeText(g, ca.mode);
  legend.push_back("model " + g.modelName + (mode.empty() ? "" : ", mode " + mode));
  for (const causality::DerivativeStorage &d : ca.derivative) {
    elementColour[d.element.index] = kDerivative;
    for (bg::BondId b : g.element(d.element).bonds)
      bondColour[b.index] = kDerivative;
    legend.push_back("red: " + g.element(d.element).name +
                     " in derivative causality (a dependent state)");
  }
  std::size_t loop = 0;
  for (const causality::Choice &c : ca.choices) {
    const char *colour = kLoopColours[loop % std::size(kLoopColours)];
    ++loop;
    for (std::size_t i = 0; i < c.path.size(); ++i) {
      bg::ElementId e = c.path[i];
      if (elementColour[e.index].empty())
        elementColour[e.index] = colour;
      const bg::Element &el = g.element(e);
      if (i + 1 < c.path.size())
        for (bg::BondId b : el.bonds)
          if (g.otherEnd(b, e) == c.path[i + 1] && bondColour[b.index].empty())
            bondColour[b.index] = colour;
    }
    if (c.bond.valid() && bondColour[c.bond.index].empty())
      bondColour[c.bond.index] = colour;
    legend.push_back(std::string(colour) + ": algebraic loop " + std::to_string(loop) + " (" +
                     bg::pathText(g, c.path) + ")");
  }

  // A pseudo bond graph's bonds (temperature and heat flow) are drawn in a
  // colour of their own: they carry no power.
  bool pseudo = false;
  for (const bg::Bond &b : g.bonds)
    pseudo = pseudo || g.element(b.from).pseudo;
  if (pseudo)
    legend.push_back(std::string(kPseudo) + ": pseudo bond graph (temperature, heat flow: no power)");

  // Clusters: the instance paths that prefix element names.
  std::map<std::string, std::string> typeOf;
  for (const ast::InstanceInfo &i : instances)
    typeOf[i.path] = i.type;
  Cluster top;
  std::vector<std::string> shortName(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::string &name = g.elements[i].name;
    Cluster *at = &top;
    std::size_t start = 0;
    for (std::size_t dot = name.find('.'); dot != std::string::npos;
         dot = name.find('.', dot + 1)) {
      std::string prefix = name.substr(0, dot);
      if (!typeOf.count(prefix))
        break;
      at = &at->children[prefix];
      at->type = typeOf[prefix];
      start = dot + 1;
    }
    at->elements.push_back(i);
    shortName[i] = name.substr(start);
  }

  std::ostringstream os;
  os << "digraph " << quoted(g.modelName) << " {\n"
     << "  rankdir=LR;\n"
     << "  node [shape=plaintext, fontname=\"Helvetica\", fontsize=14, margin=0.05, "
        "height=0.3, width=0.3];\n"
     << "  edge [arrowhead=lvee, arrowsize=1.2, fontname=\"Helvetica\", fontsize=9];\n";
  std::string legendText;
  for (const std::string &line : legend)
    legendText += line + "\n";
  os << "  labelloc=b;\n  labeljust=l;\n  fontname=\"Helvetica\";\n  fontsize=11;\n"
     << "  label=" << quoted(legendText) << ";\n";

  auto element = [&](std::uint32_t i, const std::string &indent) {
    const bg::Element &e = g.elements[i];
    std::string label = std::string(bg::kindName(e.kind)) + ":" + shortName[i];
    std::vector<std::string> attrs;
    bg::ElementId id{i};
    if (e.fsm) {
      // A switched junction: boxed, with the state it is in.
      bool on = ca.mode.isOn(id);
      std::uint32_t s = ca.mode.stateOf(id);
      std::string state = s != bg::Mode::kNoState && s < e.fsm->states.size()
                              ? e.fsm->states[s].name
                              : (on ? "on" : "off");
      label += "\n[" + state + "]";
      attrs.push_back(on ? "shape=box, style=rounded" : "shape=box, style=\"rounded,dashed\"");
      if (!on)
        attrs.push_back(std::string("color=") + kOff + ", fontcolor=" + kOff);
    } else if (i < ca.isolated.size() && ca.isolated[i]) {
      label += "\n[cut off]";
      attrs.push_back(std::string("fontcolor=") + kOff);
    }
    if (!elementColour[i].empty()) {
      attrs.push_back("fontcolor=" + elementColour[i]);
      if (e.fsm)
        attrs.push_back("color=" + elementColour[i]);
    }
    os << indent << "e" << i << " [label=" << quoted(label) << ", tooltip=" << quoted(e.name);
    for (const std::string &a : attrs)
      os << ", " << a;
    os << "];\n";
  };
  std::function<void(const std::string &, const Cluster &, const std::string &)> cluster =
      [&](const std::string &path, const Cluster &c, const std::string &indent) {
        for (const auto &[childPath, child] : c.children) {
          os << indent << "subgraph " << quoted("cluster_" + childPath) << " {\n"
             << indent << "  label=" << quoted(childPath + ": " + child.type) << ";\n"
             << indent << "  labelloc=t;\n" << indent << "  style=rounded;\n"
             << indent << "  color=gray70;\n";
          cluster(childPath, child, indent + "  ");
          os << indent << "}\n";
        }
        for (std::uint32_t i : c.elements)
          element(i, indent);
        (void)path;
      };
  cluster("", top, "  ");

  for (std::uint32_t b = 0; b < g.bonds.size(); ++b) {
    const bg::Bond &bond = g.bonds[b];
    os << "  e" << bond.from.index << " -> e" << bond.to.index << " [label=" << quoted(bond.name);
    // The causal stroke: at the end that does not set the effort.
    causality::EffortFrom from =
        b < ca.bonds.size() ? ca.bonds[b].effort : causality::EffortFrom::Unassigned;
    if (from == causality::EffortFrom::Tail)
      os << ", arrowhead=teelvee";
    else if (from == causality::EffortFrom::Head)
      os << ", dir=both, arrowtail=tee";
    bool off = ca.imposesZero(bond.from) || ca.imposesZero(bond.to);
    if (off)
      os << ", style=dashed, color=" << kOff << ", fontcolor=" << kOff;
    else if (!bondColour[b].empty())
      os << ", color=" << bondColour[b] << ", fontcolor=" << bondColour[b] << ", penwidth=2";
    else if (g.element(bond.from).pseudo)
      os << ", color=" << kPseudo << ", fontcolor=" << kPseudo;
    os << "];\n";
  }
  os << "}\n";
  return os.str();
}

} // namespace hbg::driver
