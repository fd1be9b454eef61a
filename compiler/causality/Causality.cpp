//===- compiler/causality/Causality.cpp - SCAP ----------------------------===//

#include "hbg/causality/Causality.h"
#include "hbg/bondgraph/Path.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <sstream>
#include <tuple>
#include <unordered_map>

namespace hbg::causality {

using namespace hbg::bg;

bool CausalAssignment::setsEffort(const BondGraph &g, BondId b, ElementId e) const {
  EffortFrom c = bonds[b.index].effort;
  return c == EffortFrom::Tail ? g.bond(b).from == e : c == EffortFrom::Head && g.bond(b).to == e;
}

namespace {

/// The propagation engine. Every assignment is followed at once by the
/// junction, TF and GY rules at both ends, so constraints stay saturated and
/// a bond is only ever assigned while unassigned.
class Scap {
public:
  Scap(const BondGraph &g, const Mode &mode, DiagnosticEngine &diags) : g_(g), diags_(diags) {
    ca_.mode = mode;
    ca_.mode.on.resize(g.elements.size(), true);
    ca_.bonds.resize(g.bonds.size());
  }

  std::optional<CausalAssignment> run();
  /// The source whose fixed causality met a conflict, if one did.
  ElementId conflictingSource() const { return conflictSource_; }

private:
  /// Assigns `b` so that `setter` sets its effort, then propagates.
  void assignAndPropagate(BondId b, ElementId setter, ElementId origin);
  /// assignAndPropagate for a choice that may be retracted: on a conflict
  /// the wave is undone and false returned (the conflict is kept pending).
  bool tryWave(BondId b, ElementId setter, ElementId origin);
  /// A choice, in its preferred causality if that leads to no conflict,
  /// else in the other one; a conflict both ways is reported.
  void chooseEitherWay(BondId b, ElementId preferredSetter, ElementId origin);
  /// Reports the pending conflict and stops (only marks it while quiet_).
  void reportConflict();
  /// A causality for every open bond that satisfies every junction rule,
  /// found as a matching, for structures where choosing R causalities
  /// greedily meets a conflict that no single choice explains (see run());
  /// by bond index, the end that sets the effort. Empty when the open
  /// bonds are not all between a 0- and a 1-junction or between a junction
  /// and a free R, or when no such causality exists.
  std::optional<std::vector<ElementId>> coverByMatching(const std::vector<ElementId> &rOrder) const;
  /// Where two imposers of one variable meet, for messages: at the element
  /// `at`, or on their common bond when they are bonded to each other.
  std::string meetingPlace(ElementId at, ElementId other) const {
    return at == other ? std::string("on the bond between them")
                       : "at `" + g_.element(at).name + "`";
  }
  void assign(BondId b, ElementId setter, ElementId origin, BondId via);
  void examine(ElementId e, ElementId origin, BondId via);
  bool sets(BondId b, ElementId e) const { return ca_.setsEffort(g_, b, e); }
  bool assigned(BondId b) const { return ca_.bonds[b.index].effort != EffortFrom::Unassigned; }
  /// An OFF junction, or an isolated one: fixed causality on every bond,
  /// like a source.
  bool off(ElementId e) const { return isJunction(g_.element(e).kind) && ca_.imposesZero(e); }
  /// Marks the ON junctions whose every bond ends at an OFF junction of the
  /// other kind (`CausalAssignment::isolated`).
  void findIsolated();
  /// Notes the mode after a causal error in a switched model.
  void noteMode();
  /// Elements from the origin of `b`'s wave to `b`'s far end from the origin.
  std::vector<ElementId> pathTo(BondId b, ElementId end) const;
  /// The sources and OFF junctions that impose `b`'s effort (or flow)
  /// through `setter`, the end that sets it: followed back through ON
  /// junctions, TF and GY, sorted by name. Every one of them is connected
  /// to the variable through the junction structure, unlike the origin of
  /// the wave that happened to arrive last.
  std::vector<ElementId> imposers(BondId b, ElementId setter, bool effort) const;
  /// Reports that source or OFF junction `e` cannot impose the effort (or
  /// flow) of its bond `b` because `at`, its other end, imposes it.
  void reportImposed(ElementId e, BondId b, ElementId at, bool effort);
  bool sourceSetsEffort(ElementKind k) const {
    return k == ElementKind::Se || k == ElementKind::MSe;
  }
  /// The preferred (integral) causality: does the storage element set its effort?
  static bool storageSetsEffort(ElementKind k) { return k == ElementKind::C; }

  const BondGraph &g_;
  DiagnosticEngine &diags_;
  CausalAssignment ca_;
  std::deque<std::pair<ElementId, BondId>> work_;
  std::vector<BondId> wave_; ///< bonds assigned by the current wave, in order
  bool conflict_ = false;
  /// While set, a conflict both ways is marked but not reported.
  bool quiet_ = false;
  /// The last conflict found: where, and what rule failed.
  ElementId conflictAt_;
  std::string conflictWhy_;
  ElementId conflictSource_;
};

bool Scap::tryWave(BondId b, ElementId setter, ElementId origin) {
  assignAndPropagate(b, setter, origin);
  if (!conflict_)
    return true;
  for (BondId w : wave_)
    ca_.bonds[w.index] = {};
  conflict_ = false;
  return false;
}

void Scap::chooseEitherWay(BondId b, ElementId preferredSetter, ElementId origin) {
  // Greedy preferences can be wrong around loops of junctions: a storage
  // element may have to take derivative causality, or an R the other
  // causality, for the junction rules to hold at all.
  if (tryWave(b, preferredSetter, origin) || tryWave(b, g_.otherEnd(b, preferredSetter), origin))
    return;
  reportConflict();
}

void Scap::reportConflict() {
  conflict_ = true;
  if (quiet_)
    return;
  diags_.report(DiagKind::CausalConflict, g_.element(conflictAt_).range,
                {g_.element(conflictAt_).name, conflictWhy_});
  noteMode();
}

void Scap::noteMode() {
  if (hasSwitched(g_))
    diags_.note(DiagKind::InMode, {}, {modeText(g_, ca_.mode)});
}

void Scap::assign(BondId b, ElementId setter, ElementId origin, BondId via) {
  const Bond &bd = g_.bond(b);
  ca_.bonds[b.index] = {bd.from == setter ? EffortFrom::Tail : EffortFrom::Head, origin, via};
  wave_.push_back(b);
  work_.push_back({bd.from, b});
  work_.push_back({bd.to, b});
}

void Scap::assignAndPropagate(BondId b, ElementId setter, ElementId origin) {
  wave_.clear();
  assign(b, setter, origin, {});
  while (!work_.empty() && !conflict_) {
    auto [e, via] = work_.front();
    work_.pop_front();
    examine(e, origin, via);
  }
  work_.clear();
}

void Scap::examine(ElementId id, ElementId origin, BondId via) {
  const Element &e = g_.element(id);
  if (off(id))
    return; // every bond was fixed when the OFF junction was
  if (isJunction(e.kind)) {
    // A 0-junction takes its effort from exactly one bond and sets it on all
    // others; a 1-junction dually takes its flow from exactly one bond, the
    // one on which it sets the effort.
    bool zero = e.kind == ElementKind::Zero;
    std::size_t special = 0, ordinary = 0, open = 0;
    for (BondId b : e.bonds) {
      if (!assigned(b))
        ++open;
      else if (sets(b, id) != zero)
        ++special;
      else
        ++ordinary;
    }
    if (special > 1 || (open == 0 && special == 0)) {
      conflict_ = true;
      conflictAt_ = id;
      conflictWhy_ = special > 1 ? (zero ? "more than one bond sets its effort"
                                         : "more than one bond sets its flow")
                                 : (zero ? "no bond sets its effort" : "no bond sets its flow");
      return;
    }
    if (open == 0)
      return;
    if (special == 1) {
      for (BondId b : e.bonds)
        if (!assigned(b))
          assign(b, zero ? id : g_.otherEnd(b, id), origin, via);
    } else if (open == 1) {
      for (BondId b : e.bonds)
        if (!assigned(b))
          assign(b, zero ? g_.otherEnd(b, id) : id, origin, via);
    }
    return;
  }
  if (isTwoPort(e.kind) && e.bonds.size() == 2) {
    BondId in = e.bonds[0], out = e.bonds[1];
    bool gyrator = e.kind == ElementKind::GY || e.kind == ElementKind::MGY;
    BondId known = assigned(in) ? in : out;
    BondId other = known == in ? out : in;
    if (!assigned(known))
      return;
    // TF passes effort through (sets it on one side iff it receives it on
    // the other); GY sets both or neither.
    bool setsOther = gyrator ? sets(known, id) : !sets(known, id);
    if (!assigned(other)) {
      assign(other, setsOther ? id : g_.otherEnd(other, id), origin, via);
      return;
    }
    // Both ports were set by waves that met here (a loop of junctions).
    if (sets(other, id) != setsOther) {
      conflict_ = true;
      conflictAt_ = id;
      conflictWhy_ = gyrator ? "its two ports must both set or both take the effort"
                             : "one port must set the effort and the other take it";
    }
  }
}

std::vector<ElementId> Scap::imposers(BondId b, ElementId setter, bool effort) const {
  // Breadth first over (bond, variable, setting end); each bond variable
  // once.
  std::vector<ElementId> out;
  std::vector<std::uint8_t> seen(2 * g_.bonds.size(), 0);
  std::vector<std::tuple<BondId, ElementId, bool>> work{{b, setter, effort}};
  while (!work.empty()) {
    auto [bond, at, isEffort] = work.back();
    work.pop_back();
    std::uint8_t &mark = seen[2 * bond.index + (isEffort ? 1 : 0)];
    if (mark)
      continue;
    mark = 1;
    const Element &e = g_.element(at);
    auto follow = [&](BondId other, bool otherEffort) {
      // The end of `other` that sets the variable into `at`.
      if (!assigned(other))
        return;
      bool atSets = sets(other, at);
      bool setByAt = otherEffort ? atSets : !atSets;
      if (!setByAt)
        work.emplace_back(other, g_.otherEnd(other, at), otherEffort);
    };
    if (isJunction(e.kind) && !off(at)) {
      // A 0-junction's common effort comes in through one bond, and its
      // setting bond's flow is the sum of the others'; dually for a 1.
      for (BondId other : e.bonds)
        if (other != bond)
          follow(other, isEffort);
    } else if (isTwoPort(e.kind)) {
      bool gyrator = e.kind == ElementKind::GY || e.kind == ElementKind::MGY;
      for (BondId other : e.bonds)
        if (other != bond)
          follow(other, gyrator ? !isEffort : isEffort);
    } else if ((isSource(e.kind) || off(at)) &&
               std::find(out.begin(), out.end(), at) == out.end()) {
      out.push_back(at);
    }
  }
  std::sort(out.begin(), out.end(), [&](ElementId x, ElementId y) {
    return g_.element(x).name < g_.element(y).name;
  });
  return out;
}

void Scap::reportImposed(ElementId id, BondId b, ElementId at, bool effort) {
  const Element &e = g_.element(id);
  ElementId origin = ca_.bonds[b.index].origin;
  std::vector<ElementId> by = imposers(b, at, effort);
  by.erase(std::remove(by.begin(), by.end(), id), by.end());
  if (by.empty())
    by.push_back(origin);
  // "`a`, `b` and OFF junctions `c` and `d`": sources, then OFF junctions.
  auto join = [](const std::vector<std::string> &items) {
    std::string text;
    for (std::size_t k = 0; k < items.size(); ++k)
      text += (k == 0 ? "" : k + 1 == items.size() ? " and " : ", ") + items[k];
    return text;
  };
  std::vector<std::string> items, offs;
  for (ElementId o : by)
    (off(o) ? offs : items).push_back("`" + g_.element(o).name + "`");
  if (!offs.empty())
    items.push_back((offs.size() == 1 ? "OFF junction " : "OFF junctions ") + join(offs));
  std::string who = join(items);
  const char *what = effort ? "effort" : "flow";
  std::string where = by.size() == 1 ? meetingPlace(at, by[0]) : meetingPlace(at, ElementId{});
  bool anyOff = std::any_of(by.begin(), by.end(), [&](ElementId o) { return off(o); });
  if (anyOff)
    diags_.report(DiagKind::SwitchedConflict, e.range,
                  {e.name, who, what, where, modeText(g_, ca_.mode)});
  else
    diags_.report(DiagKind::SourceConflict, e.range, {e.name, who, what, where});
  for (ElementId o : by) {
    const Element &oe = g_.element(o);
    bool oEffort = off(o) ? oe.kind == ElementKind::Zero : sourceSetsEffort(oe.kind);
    diags_.note(DiagKind::ConflictOrigin, oe.range, {oe.name, oEffort ? "effort" : "flow"});
  }
  if (!anyOff)
    noteMode();
  conflict_ = true;
}

std::optional<std::vector<ElementId>>
Scap::coverByMatching(const std::vector<ElementId> &rOrder) const {
  // Every open junction (one with an open bond) still lacks the bond that
  // sets its effort (0) or flow (1): propagation would have fixed all its
  // bonds otherwise. A bond between a 0- and a 1-junction is that special
  // bond for both ends or for neither, so the special bonds between
  // junctions form a matching of 0- against 1-junctions; a junction left
  // unmatched must take a free R's bond as its special one. The matching
  // has to cover every junction without a free R: grown from each by
  // alternating paths that end at an unmatched junction, or at one with a
  // free R that gives up its match.
  const std::size_t none = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> vertex(g_.elements.size(), none);
  std::vector<ElementId> junctions;
  auto vertexOf = [&](ElementId e) {
    if (vertex[e.index] == none) {
      vertex[e.index] = junctions.size();
      junctions.push_back(e);
    }
    return vertex[e.index];
  };
  std::vector<std::vector<std::pair<BondId, std::size_t>>> adj;
  std::vector<std::vector<BondId>> rBonds;
  auto freeR = [&](ElementId e) {
    const Element &el = g_.element(e);
    return el.kind == ElementKind::R && el.bonds.size() == 1;
  };
  for (std::uint32_t i = 0; i < g_.bonds.size(); ++i) {
    BondId b{i};
    if (assigned(b))
      continue;
    ElementId from = g_.bonds[i].from, to = g_.bonds[i].to;
    bool jf = isJunction(g_.element(from).kind) && !off(from),
         jt = isJunction(g_.element(to).kind) && !off(to);
    if (jf && jt && g_.element(from).kind != g_.element(to).kind) {
      std::size_t a = vertexOf(from), c = vertexOf(to);
      adj.resize(junctions.size());
      adj[a].emplace_back(b, c);
      adj[c].emplace_back(b, a);
    } else if ((jf && freeR(to)) || (jt && freeR(from))) {
      std::size_t v = vertexOf(jf ? from : to);
      rBonds.resize(junctions.size());
      rBonds[v].push_back(b);
    } else {
      return std::nullopt;
    }
  }
  std::size_t n = junctions.size();
  adj.resize(n);
  rBonds.resize(n);
  std::vector<std::uint32_t> matchBond(n, std::numeric_limits<std::uint32_t>::max());
  auto matched = [&](std::size_t v) { return matchBond[v] != std::numeric_limits<std::uint32_t>::max(); };
  auto partner = [&](std::size_t v) {
    return vertex[g_.otherEnd(BondId{matchBond[v]}, junctions[v]).index];
  };
  std::vector<std::size_t> prevVertex(n), seen(n, none), queue;
  std::vector<BondId> prevBond(n);
  for (std::size_t s = 0; s < n; ++s) {
    if (matched(s) || !rBonds[s].empty())
      continue;
    // Breadth first from s over alternating paths; `seen` marks the
    // vertices of the other side reached in this search.
    queue.assign(1, s);
    std::size_t end = none;
    for (std::size_t head = 0; head < queue.size() && end == none; ++head) {
      std::size_t u = queue[head];
      for (auto [b, w] : adj[u]) {
        if (seen[w] == s)
          continue;
        seen[w] = s;
        prevVertex[w] = u;
        prevBond[w] = b;
        if (!matched(w)) {
          end = w;
          break;
        }
        std::size_t x = partner(w);
        if (!rBonds[x].empty()) { // x takes its R instead
          matchBond[x] = std::numeric_limits<std::uint32_t>::max();
          end = w;
          break;
        }
        queue.push_back(x);
      }
    }
    if (end == none)
      return std::nullopt;
    for (std::size_t cur = end;;) {
      std::size_t u = prevVertex[cur];
      std::size_t next = u == s ? none : partner(u);
      matchBond[u] = matchBond[cur] = prevBond[cur].index;
      if (next == none)
        break;
      cur = next;
    }
  }
  // The plan. A junction left unmatched takes as its special bond the R
  // that prefers it most: at a 0-junction the R that sets the effort,
  // which resistance causality prefers for the smallest R; at a
  // 1-junction the R that takes it, conductance causality, for the
  // largest.
  std::vector<std::size_t> rank(g_.elements.size(), 0);
  for (std::size_t k = 0; k < rOrder.size(); ++k)
    rank[rOrder[k].index] = k;
  std::vector<ElementId> plan(g_.bonds.size());
  for (std::size_t v = 0; v < n; ++v) {
    ElementId j = junctions[v];
    bool zero = g_.element(j).kind == ElementKind::Zero;
    for (auto [b, w] : adj[v]) // 0-1 bonds: the 1-junction sets the effort of a matched one
      if (zero)
        plan[b.index] = matched(v) && matchBond[v] == b.index ? junctions[w] : j;
    BondId special;
    if (!matched(v)) {
      auto better = [&](BondId x, BondId y) {
        std::size_t rx = rank[g_.otherEnd(x, j).index], ry = rank[g_.otherEnd(y, j).index];
        return zero ? rx < ry : rx > ry;
      };
      special = *std::min_element(rBonds[v].begin(), rBonds[v].end(), better);
    }
    for (BondId b : rBonds[v]) {
      // Special at a 0-junction: its effort comes from the R; at a
      // 1-junction: it sets the effort on the R.
      bool isSpecial = b == special;
      plan[b.index] = isSpecial == zero ? g_.otherEnd(b, j) : j;
    }
  }
  return plan;
}

std::vector<ElementId> Scap::pathTo(BondId b, ElementId end) const {
  std::vector<ElementId> path{end};
  ElementId at = end;
  for (BondId cur = b; cur.valid(); cur = ca_.bonds[cur.index].via) {
    at = g_.otherEnd(cur, at);
    path.push_back(at);
  }
  // Walking `via` back from a far bond may pass a junction twice when the
  // junction fanned the wave out; that is fine for naming the path.
  std::reverse(path.begin(), path.end());
  return path;
}

void Scap::findIsolated() {
  // OFF junctions cut the network into connected parts. In a part, the
  // nodes are the 0-junctions bonded to nothing but junctions and flow
  // sources. The part floats when an OFF 1-junction cuts one of its nodes
  // off and adding one constant to the effort of every node breaks no
  // law: no node is bonded to an OFF 0-junction or to a 0-junction that
  // is not a node, and every ON 1-junction has as many bonds from nodes
  // pointing in as out. Nothing then sets that constant: the first node
  // by name (so the choice does not depend on declaration order) is
  // isolated and takes effort 0 like an OFF 0-junction; the part's other
  // efforts follow from it. Dually for flows, 1-junctions, effort sources
  // and OFF 0-junctions. A single 0-junction between OFF 1-junctions is
  // the smallest such part.
  std::size_t n = g_.elements.size();
  ca_.isolated.assign(n, false);
  auto cutOff = [&](ElementId e) { return isJunction(g_.element(e).kind) && !ca_.mode.isOn(e); };
  std::vector<bool> seen(n, false), node(n, false);
  std::vector<ElementId> part, todo;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (seen[i] || cutOff(ElementId{i}))
      continue;
    part.clear();
    todo.assign(1, ElementId{i});
    seen[i] = true;
    while (!todo.empty()) {
      ElementId e = todo.back();
      todo.pop_back();
      part.push_back(e);
      for (BondId b : g_.element(e).bonds) {
        ElementId o = g_.otherEnd(b, e);
        if (!seen[o.index] && !cutOff(o)) {
          seen[o.index] = true;
          todo.push_back(o);
        }
      }
    }
    for (bool zero : {true, false}) {
      ElementKind own = zero ? ElementKind::Zero : ElementKind::One;
      ElementKind dual = zero ? ElementKind::One : ElementKind::Zero;
      auto passive = [&](ElementKind k) {
        return isJunction(k) || (zero ? k == ElementKind::Sf || k == ElementKind::MSf
                                      : k == ElementKind::Se || k == ElementKind::MSe);
      };
      for (ElementId e : part) {
        const Element &el = g_.element(e);
        node[e.index] = el.kind == own && !el.bonds.empty() &&
                        std::all_of(el.bonds.begin(), el.bonds.end(), [&](BondId b) {
                          return passive(g_.element(g_.otherEnd(b, e)).kind);
                        });
      }
      bool cut = false, floats = true;
      ElementId first;
      for (ElementId e : part) {
        const Element &el = g_.element(e);
        if (node[e.index]) {
          if (!first.valid() || el.name < g_.element(first).name)
            first = e;
          for (BondId b : el.bonds) {
            ElementId o = g_.otherEnd(b, e);
            ElementKind k = g_.element(o).kind;
            if (cutOff(o) && k == dual)
              cut = true;
            else if (k == own && (cutOff(o) || !node[o.index]))
              floats = false;
          }
        } else if (el.kind == dual) {
          int balance = 0;
          for (BondId b : el.bonds) {
            ElementId o = g_.otherEnd(b, e);
            if (!cutOff(o) && node[o.index])
              balance += g_.sign(b, e);
          }
          floats = floats && balance == 0;
        }
      }
      for (ElementId e : part)
        node[e.index] = false;
      if (first.valid() && cut && floats)
        ca_.isolated[first.index] = true;
    }
  }
}

std::optional<CausalAssignment> Scap::run() {
  findIsolated();

  // 0. OFF junctions, whose causality is fixed like a source's: an OFF
  // 0-junction sets the effort (zero) of every bond, an OFF 1-junction the
  // flow (zero) of every bond, so the other ends set the effort. Isolated
  // junctions are OFF ones of their kind here.
  for (std::uint32_t i = 0; i < g_.elements.size() && !conflict_; ++i) {
    ElementId id{i};
    if (!off(id))
      continue;
    const Element &e = g_.elements[i];
    bool zero = e.kind == ElementKind::Zero;
    for (BondId b : e.bonds) {
      if (conflict_)
        break;
      if (!assigned(b)) {
        assignAndPropagate(b, zero ? id : g_.otherEnd(b, id), id);
        if (conflict_)
          reportConflict();
        continue;
      }
      if (sets(b, id) == zero)
        continue;
      // Another OFF junction's wave set this bond the other way, or this
      // junction's own wave came back through another of its bonds.
      ElementId other = ca_.bonds[b.index].origin;
      ElementId at = g_.otherEnd(b, id);
      if (other == id) {
        conflictAt_ = at;
        conflictWhy_ = "OFF junction `" + e.name + "` imposes its " +
                       (zero ? "effort" : "flow") + " on it through two bonds";
        reportConflict();
        break;
      }
      reportImposed(id, b, at, zero);
    }
  }
  if (conflict_)
    return std::nullopt;

  // 1. Sources, whose causality is fixed.
  for (std::uint32_t i = 0; i < g_.elements.size() && !conflict_; ++i) {
    ElementId id{i};
    const Element &e = g_.elements[i];
    if (!isSource(e.kind) || e.bonds.size() != 1)
      continue;
    BondId b = e.bonds[0];
    bool wantSets = sourceSetsEffort(e.kind);
    if (!assigned(b)) {
      assignAndPropagate(b, wantSets ? id : g_.otherEnd(b, id), id);
      if (conflict_) { // sources' causality is fixed: nothing to retract
        conflictSource_ = id;
        reportConflict();
      }
      continue;
    }
    if (sets(b, id) == wantSets)
      continue;
    reportImposed(id, b, g_.otherEnd(b, id), wantSets);
    conflictSource_ = id;
  }
  if (conflict_)
    return std::nullopt;

  // 2. Storage in its preferred integral causality (derivative causality
  // when the preferred one contradicts the junction structure).
  for (std::uint32_t i = 0; i < g_.elements.size() && !conflict_; ++i) {
    ElementId id{i};
    const Element &e = g_.elements[i];
    if (!isStorage(e.kind) || e.bonds.size() != 1 || assigned(e.bonds[0]))
      continue;
    BondId b = e.bonds[0];
    chooseEitherWay(b, storageSetsEffort(e.kind) ? id : g_.otherEnd(b, id), id);
  }

  // 3. R elements left free: a choice each, in the causality of their law.
  auto choose = [&](BondId b, ElementId setter, ElementId element) {
    chooseEitherWay(b, setter, element.valid() ? element : setter);
    if (conflict_)
      return;
    Choice c{element, b, {}};
    ElementId from = element.valid() ? element : setter;
    for (BondId w : wave_) {
      if (w == b)
        continue;
      for (ElementId end : {g_.bond(w).from, g_.bond(w).to}) {
        if (g_.element(end).kind == ElementKind::R && end != from && c.path.empty())
          c.path = pathTo(w, end);
      }
    }
    if (c.path.empty()) {
      c.path.push_back(from);
      for (BondId w : wave_)
        for (ElementId end : {g_.bond(w).from, g_.bond(w).to})
          if (std::find(c.path.begin(), c.path.end(), end) == c.path.end())
            c.path.push_back(end);
    }
    ca_.choices.push_back(std::move(c));
  };
  // Nonlinear R elements choose first: their input is then the tearing
  // variable and their law is evaluated forward, while the linear ones,
  // trivially invertible, take whatever causality is left. (Tearing a
  // diode's current instead would make Newton's method crawl down its
  // exponential.) Linear ones choose resistance causality, e = R f, the
  // smallest resistance (at the parameters' defaults) first: an effort
  // computed as R f from a small R is accurate, while a small R left in
  // conductance causality would compute its flow as a small difference
  // of efforts divided by R (an ideal diode's 1 mOhm on-resistance beside
  // its 1 kOhm leak). Ties, and the nonlinear ones, go by name, so the
  // choice never depends on the order of declarations.
  std::vector<ElementId> free;
  for (std::uint32_t i = 0; i < g_.elements.size(); ++i) {
    const Element &e = g_.elements[i];
    if (e.kind == ElementKind::R && e.bonds.size() == 1 && !assigned(e.bonds[0]))
      free.push_back(ElementId{i});
  }
  std::vector<ElementId> rOrder;
  if (!free.empty()) {
    std::vector<double> params = defaultParameterValues(g_);
    const sym::ExprContext &ctx = *g_.ctx;
    std::unordered_map<std::uint32_t, double> bySymbol;
    for (std::size_t k = 0; k < params.size(); ++k)
      bySymbol[g_.parameters[k].symbol.index] = params[k];
    auto size = [&](ElementId id) {
      const Element &e = g_.element(id);
      if (e.law != LawForm::Linear)
        return 0.0;
      double r = std::abs(ctx.evaluate(e.value, [&](sym::SymbolId s) {
        auto it = bySymbol.find(s.index);
        return it == bySymbol.end() ? std::nan("") : it->second;
      }));
      return std::isnan(r) ? std::numeric_limits<double>::infinity() : r;
    };
    std::vector<std::pair<double, ElementId>> order;
    for (ElementId id : free)
      order.emplace_back(g_.element(id).law == LawForm::Linear ? size(id) : -1.0, id);
    std::stable_sort(order.begin(), order.end(), [&](const auto &a, const auto &b) {
      if (a.first != b.first)
        return a.first < b.first;
      return g_.element(a.second).name < g_.element(b.second).name;
    });
    for (const auto &entry : order)
      rOrder.push_back(entry.second);
  }
  // Steps 3 and 4, each choice either as preferred or, given `plan`, as
  // the plan says.
  auto chooseAll = [&](const std::vector<ElementId> *plan) {
    for (ElementId id : rOrder) {
      if (conflict_)
        break;
      const Element &e = g_.element(id);
      BondId b = e.bonds[0];
      if (assigned(b))
        continue;
      bool rSetsEffort = e.law != LawForm::FlowLaw;
      choose(b, plan ? (*plan)[b.index] : rSetsEffort ? id : g_.otherEnd(b, id), id);
    }
    // 4. Junction structure still free (loops of junctions alone).
    for (std::uint32_t i = 0; i < g_.bonds.size() && !conflict_; ++i)
      if (!assigned(BondId{i}))
        choose(BondId{i}, plan ? (*plan)[i] : g_.bonds[i].from, ElementId{});
  };
  // Greedy choices, each checked by propagation, fail on networks such as
  // a grid of resistors: early choices can leave a set of junctions with
  // fewer bonds able to set their effort than junctions, which no single
  // later choice can repair. Such a conflict is not reported at once: the
  // open structure is then solved as a whole, by a matching, and the
  // choices follow that solution; only when it has none (or is not of the
  // shape the matching handles) is the greedy conflict reported.
  std::vector<BondCausality> before = ca_.bonds;
  std::size_t choicesBefore = ca_.choices.size();
  quiet_ = true;
  chooseAll(nullptr);
  quiet_ = false;
  if (conflict_) {
    ca_.bonds = before;
    ca_.choices.resize(choicesBefore);
    conflict_ = false;
    std::optional<std::vector<ElementId>> plan = coverByMatching(rOrder);
    chooseAll(plan ? &*plan : nullptr);
  }
  if (conflict_)
    return std::nullopt;

  // Storage that ended up against its preference is in derivative causality.
  for (std::uint32_t i = 0; i < g_.elements.size(); ++i) {
    ElementId id{i};
    const Element &e = g_.elements[i];
    if (!isStorage(e.kind) || e.bonds.size() != 1)
      continue;
    BondId b = e.bonds[0];
    if (sets(b, id) != storageSetsEffort(e.kind))
      ca_.derivative.push_back({id, pathTo(b, id)});
  }

  std::string problem = ca_.verify(g_);
  if (!problem.empty())
    throw InternalError("causality verifier: " + problem);
  return std::move(ca_);
}

/// A causal path as text: `a -> 0:j -> b`.
} // namespace

std::string CausalAssignment::verify(const BondGraph &g) const {
  for (std::uint32_t i = 0; i < g.bonds.size(); ++i)
    if (bonds[i].effort == EffortFrom::Unassigned)
      return "bond `" + g.bonds[i].name + "` has no causality";
  for (std::uint32_t i = 0; i < g.elements.size(); ++i) {
    ElementId id{i};
    const Element &e = g.elements[i];
    if (isJunction(e.kind) && imposesZero(id)) {
      bool zero = e.kind == ElementKind::Zero;
      for (BondId b : e.bonds)
        if (setsEffort(g, b, id) != zero)
          return (mode.isOn(id) ? "isolated junction `" : "OFF junction `") + e.name +
                 (zero ? "` does not set the effort of `" : "` does not set the flow of `") +
                 g.bond(b).name + "`";
    } else if (isJunction(e.kind)) {
      bool zero = e.kind == ElementKind::Zero;
      int special = 0;
      for (BondId b : e.bonds)
        special += setsEffort(g, b, id) != zero;
      if (special != 1)
        return "junction `" + e.name + "` has " + std::to_string(special) +
               (zero ? " bonds setting its effort" : " bonds setting its flow");
    } else if (isTwoPort(e.kind) && e.bonds.size() == 2) {
      bool a = setsEffort(g, e.bonds[0], id), b = setsEffort(g, e.bonds[1], id);
      bool gyrator = e.kind == ElementKind::GY || e.kind == ElementKind::MGY;
      if ((a == b) != gyrator)
        return "two-port `" + e.name + "` has inconsistent causality";
    } else if (isSource(e.kind) && e.bonds.size() == 1) {
      bool wants = e.kind == ElementKind::Se || e.kind == ElementKind::MSe;
      if (setsEffort(g, e.bonds[0], id) != wants)
        return "source `" + e.name + "` has the wrong causality";
    }
  }
  return "";
}

std::string CausalAssignment::dump(const BondGraph &g) const {
  std::ostringstream os;
  os << "causality\n";
  for (std::uint32_t i = 0; i < g.bonds.size(); ++i) {
    const Bond &b = g.bonds[i];
    const Element &from = g.element(b.from), &to = g.element(b.to);
    bool tail = bonds[i].effort == EffortFrom::Tail;
    os << "  bond " << b.name << ": " << from.name << " -> " << to.name << "   effort set by "
       << (tail ? from.name : to.name) << ", flow set by " << (tail ? to.name : from.name)
       << "\n";
  }
  for (std::uint32_t i = 0; i < g.elements.size(); ++i) {
    const Element &e = g.elements[i];
    if (!isStorage(e.kind))
      continue;
    bool derivativeCausality = std::any_of(derivative.begin(), derivative.end(), [&](auto &d) {
      return d.element.index == i;
    });
    os << "  " << kindName(e.kind) << " " << e.name << ": "
       << (derivativeCausality ? "derivative" : "integral") << " causality\n";
  }
  for (std::uint32_t i = 0; i < g.elements.size(); ++i) {
    const Element &e = g.elements[i];
    if (isJunction(e.kind) && mode.isOn(ElementId{i}) && imposesZero(ElementId{i}))
      os << "  " << kindName(e.kind) << " " << e.name << ": isolated by OFF junctions ("
         << (e.kind == ElementKind::Zero ? "effort" : "flow") << " 0)\n";
  }
  for (const Choice &c : choices)
    os << "  choice: " << (c.element.valid() ? g.element(c.element).name : g.bond(c.bond).name)
       << " (loop " << pathText(g, c.path) << ")\n";
  return os.str();
}

std::optional<CausalAssignment> assignCausality(const BondGraph &g, const Mode &mode,
                                                DiagnosticEngine &diags, ElementId *source) {
  Scap scap(g, mode, diags);
  std::optional<CausalAssignment> ca = scap.run();
  if (source)
    *source = ca ? ElementId{} : scap.conflictingSource();
  return ca;
}

std::optional<CausalAssignment> assignCausality(const BondGraph &g, DiagnosticEngine &diags) {
  return assignCausality(g, initialMode(g), diags);
}

} // namespace hbg::causality
