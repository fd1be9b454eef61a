//===- runtime/Image.cpp - A compiled model without the compiler ----------===//
//
// The format: a magic word and version, then the fields of ModelImage in
// declaration order, little-endian as the host writes them (an image is
// read by a simulator built for the machine that wrote it). Every read is
// bounds-checked, and then every index against what it indexes: a
// truncated, foreign or altered image is an ImageError, never a crash.
//
//===----------------------------------------------------------------------===//

#include "hbg/runtime/Image.h"

#include <cstring>
#include <functional>
#include <limits>
#include <type_traits>

namespace hbg::runtime {

namespace {

constexpr char kMagic[8] = {'h', 'b', 'g', 'i', 'm', 'g', '0', '2'};

// A tape instruction is stored with its TapeOp's value, so the order of
// hbg/support/ExprOps.def is part of the format: ops are added at its end.
static_assert(static_cast<int>(TapeOp::Neg) == 4 && static_cast<int>(TapeOp::Select) == 22,
              "an image stores TapeOp by value: add ops at the end of ExprOps.def");

class Writer {
public:
  std::string out;
  template <class T> void pod(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out.append(reinterpret_cast<const char *>(&v), sizeof v);
  }
  void u32(std::uint32_t v) { pod(v); }
  void u64(std::uint64_t v) { pod(v); }
  void f64(double v) { pod(v); }
  void flag(bool v) { pod(static_cast<std::uint8_t>(v)); }
  void str(const std::string &s) {
    u64(s.size());
    out += s;
  }
  template <class T, class F> void vec(const std::vector<T> &v, F &&each) {
    u64(v.size());
    for (const T &x : v)
      each(x);
  }
  void u32s(const std::vector<std::uint32_t> &v) {
    vec(v, [&](std::uint32_t x) { u32(x); });
  }
  void strs(const std::vector<std::string> &v) {
    vec(v, [&](const std::string &s) { str(s); });
  }
  void flags(const std::vector<bool> &v) {
    u64(v.size());
    for (bool b : v)
      flag(b);
  }
  void tape(const Tape &t) {
    vec(t.code, [&](const TapeInstr &i) {
      pod(static_cast<std::uint8_t>(i.op));
      u32(i.a);
      u32(i.b);
      u32(i.c);
      f64(i.value);
    });
    u32s(t.results);
  }
  void pattern(const SparsePattern &p) {
    u32s(p.colStart);
    u32s(p.rows);
  }
  void pairs(const std::vector<std::pair<std::uint32_t, std::uint32_t>> &v) {
    vec(v, [&](const auto &p) {
      u32(p.first);
      u32(p.second);
    });
  }
  void guard(const GuardNode &g) {
    pod(static_cast<std::uint8_t>(g.kind));
    u32(g.comparison);
    pod(static_cast<std::uint8_t>(g.op));
    flag(g.minus);
    vec(g.children, [&](const GuardNode &c) { guard(c); });
  }
};

class Reader {
public:
  Reader(const std::uint8_t *data, std::size_t size) : p_(data), end_(data + size) {}
  template <class T> T pod() {
    static_assert(std::is_trivially_copyable_v<T>);
    need(sizeof(T));
    T v;
    std::memcpy(&v, p_, sizeof v);
    p_ += sizeof v;
    return v;
  }
  std::uint32_t u32() { return pod<std::uint32_t>(); }
  std::uint64_t u64() { return pod<std::uint64_t>(); }
  double f64() { return pod<double>(); }
  bool flag() { return pod<std::uint8_t>() != 0; }
  /// A count of items, each at least `minBytes` long: bounded by what is
  /// left, so a corrupt count cannot ask for a huge allocation.
  std::size_t count(std::size_t minBytes) {
    std::uint64_t n = u64();
    if (n > static_cast<std::uint64_t>(end_ - p_) / std::max<std::size_t>(minBytes, 1))
      fail();
    return static_cast<std::size_t>(n);
  }
  std::string str() {
    std::size_t n = count(1);
    std::string s(reinterpret_cast<const char *>(p_), n);
    p_ += n;
    return s;
  }
  template <class T, class F> std::vector<T> vec(std::size_t minBytes, F &&each) {
    std::size_t n = count(minBytes);
    std::vector<T> v;
    v.reserve(n);
    for (std::size_t i = 0; i < n; ++i)
      v.push_back(each());
    return v;
  }
  std::vector<std::uint32_t> u32s() {
    return vec<std::uint32_t>(4, [&] { return u32(); });
  }
  std::vector<std::string> strs() {
    return vec<std::string>(8, [&] { return str(); });
  }
  std::vector<bool> flags() {
    return vec<bool>(1, [&] { return flag(); });
  }
  Tape tape() {
    Tape t;
    t.code = vec<TapeInstr>(21, [&] {
      TapeInstr i;
      auto op = pod<std::uint8_t>();
      if (op >= kNumTapeOps)
        fail();
      i.op = static_cast<TapeOp>(op);
      i.a = u32();
      i.b = u32();
      i.c = u32();
      i.value = f64();
      return i;
    });
    t.results = u32s();
    if (!t.verify().empty())
      fail();
    return t;
  }
  SparsePattern pattern() {
    SparsePattern p;
    p.colStart = u32s();
    p.rows = u32s();
    return p;
  }
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs() {
    return vec<std::pair<std::uint32_t, std::uint32_t>>(8, [&] {
      std::uint32_t a = u32();
      return std::pair{a, u32()};
    });
  }
  GuardNode guard(int depth = 0) {
    if (depth > 10000)
      fail();
    GuardNode g;
    auto kind = pod<std::uint8_t>();
    if (kind > GuardNode::Not)
      fail();
    g.kind = static_cast<GuardNode::Kind>(kind);
    g.comparison = u32();
    auto op = pod<std::uint8_t>();
    if (op > static_cast<std::uint8_t>(CompareOp::Greater))
      fail();
    g.op = static_cast<CompareOp>(op);
    g.minus = flag();
    g.children = vec<GuardNode>(15, [&] { return guard(depth + 1); });
    return g;
  }
  bool atEnd() const { return p_ == end_; }
  [[noreturn]] static void fail() {
    throw ImageError("the model image is corrupt or from another version of hbg");
  }

private:
  void need(std::size_t n) {
    if (static_cast<std::size_t>(end_ - p_) < n)
      fail();
  }
  const std::uint8_t *p_, *end_;
};

void writeFn(Writer &w, const ModeFn &f, const std::function<std::uint32_t(const ModeFn &)> &index,
             bool withTapes) {
  w.flag(f.present);
  if (!f.present)
    return;
  w.u32(index(f));
  w.flag(withTapes);
  if (withTapes)
    w.tape(f.tape);
}

void readFn(Reader &r, ModeFn &f, const CompiledFn *table, std::size_t tableSize) {
  f.present = r.flag();
  if (!f.present)
    return;
  std::uint32_t k = r.u32();
  bool tape = r.flag();
  if (tape)
    f.tape = r.tape();
  if (table && k < tableSize)
    f.jit.store(table[k], std::memory_order_relaxed);
  else if (!tape)
    Reader::fail(); // neither code nor tape
}

void writeSetup(Writer &w, const SetupProgram &s) {
  w.strs(s.names);
  w.vec(s.defaults, [&](const Tape &t) { w.tape(t); });
  w.flags(s.inputs);
  w.u32s(s.order);
  w.tape(s.initial);
  w.tape(s.nominal);
  w.tape(s.experiment);
  w.flags(s.given);
  w.pod(static_cast<std::int8_t>(s.method ? static_cast<int>(*s.method) : -1));
}

SetupProgram readSetup(Reader &r) {
  SetupProgram s;
  s.names = r.strs();
  s.defaults = r.vec<Tape>(16, [&] { return r.tape(); });
  s.inputs = r.flags();
  s.order = r.u32s();
  s.initial = r.tape();
  s.nominal = r.tape();
  s.experiment = r.tape();
  s.given = r.flags();
  auto method = r.pod<std::int8_t>();
  if (method > static_cast<int>(Method::Auto))
    Reader::fail();
  if (method >= 0)
    s.method = static_cast<Method>(method);
  std::size_t n = s.names.size();
  if (s.defaults.size() != n || s.inputs.size() != n || s.order.size() != n)
    Reader::fail();
  for (std::uint32_t i : s.order)
    if (i >= n)
      Reader::fail();
  return s;
}

/// Whether every x[a] and p[a] the tape reads is below nx and np.
bool reads(const Tape &t, std::size_t nx, std::size_t np) {
  for (const TapeInstr &i : t.code)
    if ((i.op == TapeOp::X && i.a >= nx) || (i.op == TapeOp::P && i.a >= np))
      return false;
  return true;
}

/// The cross-references a read cannot check as it goes: slots, indices
/// and what tapes read, against the sizes they index.
void validate(const ModelImage &image, std::size_t bytes) {
  auto check = [](bool ok) {
    if (!ok)
      Reader::fail();
  };
  const SetupProgram &s = image.setup;
  std::size_t np = s.names.size(), ns = image.stateNames.size();
  // Counts that size the run's arrays cannot exceed what the image spells
  // out, one byte each at least.
  check(image.numHeld <= bytes);
  for (const auto &p : image.programs)
    check(p->numUnknowns <= bytes && p->jacobianCode.numOutputs <= bytes);
  check(image.structural.size() == np || image.structural.empty());
  for (const Tape &t : s.defaults)
    check(reads(t, 0, np));
  for (const Tape *t : {&s.initial, &s.nominal, &s.experiment})
    check(reads(*t, 0, np));
  check(s.initial.results.size() == ns && s.nominal.results.size() == ns);
  check(s.given.size() == s.experiment.results.size());
  const std::vector<Junction> &js = image.switching.junctions();
  std::size_t nc = image.switching.numComparisons();
  std::function<bool(const GuardNode &)> comparisonsKnown = [&](const GuardNode &g) {
    if (g.kind == GuardNode::Compare && g.comparison >= nc)
      return false;
    for (const GuardNode &c : g.children)
      if (!comparisonsKnown(c))
        return false;
    return true;
  };
  for (const Junction &j : js) {
    check(j.initial < j.stateNames.size());
    for (const Transition &t : j.transitions)
      check(t.from < j.stateNames.size() && t.to < j.stateNames.size() &&
            comparisonsKnown(t.guard));
  }
  for (const std::optional<StorageLaw> &law : image.storageLaws)
    check(!law || (law->slot < ns && reads(law->law, 1, np + image.numHeld)));
  for (const auto &pp : image.programs) {
    const ImageProgram &p = *pp;
    std::size_t n = p.stateNames.size(), nx = n + p.numUnknowns, nk = p.kinkInfo.size(),
                nd = p.dependentSlots.size(), nall = np + image.numHeld + nk;
    // What each function writes, where its tape says (an image with
    // machine code carries the counts in the code, written by this build).
    auto writes = [&](const ModeFn &f, std::size_t count) {
      check(!f.present || f.tape.code.empty() || f.tape.results.size() == count);
    };
    writes(p.rhs, n);
    writes(p.outputs, image.outputNames.size());
    writes(p.held, image.numHeld);
    writes(p.guards, 2 * (nc + nk));
    writes(p.kinks, nk);
    writes(p.dependent, nd);
    writes(p.dependentJacobian, nd * n);
    writes(p.impulse, n * nd);
    writes(p.guardImpulse, 2 * nc * nd);
    writes(p.residual.fn, p.residual.of.empty() ? p.numUnknowns : p.residual.distinct);
    writes(p.jacobian.fn, p.jacobian.of.empty() ? p.loopPattern.rows.size() : p.jacobian.distinct);
    check(p.residual.of.empty() || p.residual.of.size() == p.numUnknowns);
    check(p.jacobian.of.empty() || p.jacobian.of.size() == p.loopPattern.rows.size());
    check(!p.guardTape || p.guardTape->results.size() == 3 * (nc + nk));
    for (std::uint32_t slot : p.stateSlots)
      check(slot < ns);
    for (std::uint32_t slot : p.dependentSlots)
      check(slot < ns || slot == kNoSlot);
    check(!image.switched || p.stateSlots.size() == n);
    for (const ModeFn *f : programFunctions(p))
      check(!f->present || reads(f->tape, nx, nall));
    check(!p.guardTape || reads(*p.guardTape, n, nall));
    for (std::uint32_t k : p.guardStates)
      check(k < n);
    for (std::uint32_t k : p.timeComparisons)
      check(k < nc + p.kinkInfo.size());
    check(p.loopPattern.colStart.empty() || p.loopPattern.colStart.size() == p.numUnknowns + 1);
    for (std::uint32_t r : p.loopPattern.rows)
      check(r < p.numUnknowns);
    for (const ScatteredFn *sf : {&p.residual, &p.jacobian})
      for (std::uint32_t k : sf->of)
        check(k < sf->distinct);
    if (p.hasJacobian) {
      const JacobianProgram &j = p.jacobianCode;
      check(j.pattern.colStart.size() == n + 1);
      for (std::uint32_t r : j.pattern.rows)
        check(r < n);
      for (std::uint32_t at : j.fxAt)
        check(at < j.pattern.rows.size());
      for (std::uint32_t at : j.fzAt)
        check(at < j.pattern.rows.size());
      check(j.fzAt.size() == j.fz.size() * j.columns.size());
      for (const auto &e : j.fz)
        check(e.first < n && e.second < p.numUnknowns);
      for (const auto &e : j.rx)
        check(e.first < p.numUnknowns && e.second < n);
      for (std::uint32_t c : j.columns)
        check(c < n);
      check(j.numOutputs >= j.fxAt.size() + n + j.fz.size() + j.rx.size() + p.numUnknowns);
      check(!j.fn.present || reads(j.fn.tape, nx, nall));
      writes(j.fn, j.numOutputs);
    }
  }
  for (const ImageMode &m : image.modes) {
    check(m.states.size() == js.size());
    for (std::size_t k = 0; k < js.size(); ++k)
      check(m.states[k] < js[k].stateNames.size());
  }
  check(image.switched || image.programs.size() == 1);
}

} // namespace

const JacobianProgram &ImageProgram::jacobianProgram() const {
  if (!hasJacobian)
    throw std::logic_error("mode `" + modeName + "` was built without its Jacobian");
  return jacobianCode;
}

std::vector<const ModeFn *> programFunctions(const ModeProgram &p) {
  return {&p.rhs,  &p.outputs, &p.residual.fn, &p.jacobian.fn,        &p.guards,  &p.held,
          &p.kinks, &p.dependent, &p.dependentJacobian, &p.impulse, &p.guardImpulse};
}

std::string writeImage(const ModelImage &image,
                       const std::function<std::uint32_t(const ModeFn &)> &index,
                       bool withTapes) {
  Writer w;
  w.out.append(kMagic, sizeof kMagic);
  w.str(image.name);
  w.strs(image.stateNames);
  w.strs(image.outputNames);
  writeSetup(w, image.setup);
  w.flags(image.structural);
  w.u64(image.numHeld);
  w.flag(image.switched);
  const Switching &sw = image.switching;
  w.vec(sw.junctions(), [&](const Junction &j) {
    w.str(j.name);
    w.strs(j.stateNames);
    w.u32(j.initial);
    w.flag(j.dissipative);
    w.vec(j.transitions, [&](const Transition &t) {
      w.u32(t.from);
      w.u32(t.to);
      w.guard(t.guard);
      w.str(t.text);
    });
  });
  w.u64(sw.numComparisons());
  for (std::uint32_t k = 0; k < sw.numComparisons(); ++k)
    w.pod(static_cast<std::uint8_t>(sw.op(k)));
  w.vec(image.storageLaws, [&](const std::optional<StorageLaw> &law) {
    w.flag(law.has_value());
    if (law) {
      w.u32(law->slot);
      w.pod(static_cast<std::uint8_t>(law->form));
      w.tape(law->law);
    }
  });
  w.vec(image.programs, [&](const std::shared_ptr<ImageProgram> &pp) {
    const ImageProgram &p = *pp;
    w.strs(p.stateNames);
    for (const ModeFn *f : programFunctions(p))
      writeFn(w, *f, index, withTapes);
    w.u64(p.numUnknowns);
    w.pattern(p.loopPattern);
    for (const ScatteredFn *s : {&p.residual, &p.jacobian}) {
      w.u32s(s->of);
      w.u64(s->distinct);
    }
    w.flag(p.linearLoops);
    w.vec(p.kinkInfo, [&](const KinkInfo &k) {
      w.flag(k.floor);
      w.flag(k.slides);
      w.str(k.text);
    });
    w.flag(p.guardTape.has_value());
    if (p.guardTape)
      w.tape(*p.guardTape);
    w.u32s(p.guardStates);
    w.u32s(p.timeComparisons);
    w.str(p.nonlinearLoops);
    w.str(p.modeName);
    w.u32s(p.stateSlots);
    w.u32s(p.dependentSlots);
    w.str(p.shortCircuit);
    w.strs(p.standIns);
    w.flag(p.hasJacobian);
    if (p.hasJacobian) {
      const JacobianProgram &j = p.jacobianCode;
      writeFn(w, j.fn, index, withTapes);
      w.pattern(j.pattern);
      w.u32s(j.fxAt);
      w.pairs(j.fz);
      w.pairs(j.rx);
      w.u32s(j.columns);
      w.u32s(j.fzAt);
      w.u64(j.numOutputs);
    }
  });
  w.vec(image.modes, [&](const ImageMode &m) {
    w.u32s(m.states);
    w.pod(m.program);
    w.str(m.why);
  });
  w.str(image.missingModes);
  w.vec(image.sources, [&](const auto &s) {
    w.str(s.first);
    w.str(s.second);
  });
  return std::move(w.out);
}

ModelImage readImage(const std::uint8_t *data, std::size_t size, const CompiledFn *table,
                     std::size_t tableSize) {
  if (size < sizeof kMagic || std::memcmp(data, kMagic, sizeof kMagic) != 0)
    Reader::fail();
  Reader r(data + sizeof kMagic, size - sizeof kMagic);
  ModelImage image;
  image.name = r.str();
  image.stateNames = r.strs();
  image.outputNames = r.strs();
  image.setup = readSetup(r);
  image.structural = r.flags();
  image.numHeld = r.u64();
  image.switched = r.flag();
  std::vector<Junction> junctions = r.vec<Junction>(32, [&] {
    Junction j;
    j.name = r.str();
    j.stateNames = r.strs();
    j.initial = r.u32();
    j.dissipative = r.flag();
    j.transitions = r.vec<Transition>(30, [&] {
      Transition t;
      t.from = r.u32();
      t.to = r.u32();
      t.guard = r.guard();
      t.text = r.str();
      return t;
    });
    return j;
  });
  std::vector<CompareOp> ops = r.vec<CompareOp>(1, [&] {
    auto op = r.pod<std::uint8_t>();
    if (op > static_cast<std::uint8_t>(CompareOp::Greater))
      Reader::fail();
    return static_cast<CompareOp>(op);
  });
  image.switching = Switching(std::move(junctions), std::move(ops));
  image.storageLaws = r.vec<std::optional<StorageLaw>>(1, [&] {
    std::optional<StorageLaw> law;
    if (r.flag()) {
      law.emplace();
      law->slot = r.u32();
      law->form = r.pod<std::uint8_t>() ? StorageLaw::Form::Integral : StorageLaw::Form::Linear;
      law->law = r.tape();
    }
    return law;
  });
  image.programs = r.vec<std::shared_ptr<ImageProgram>>(64, [&] {
    auto pp = std::make_shared<ImageProgram>();
    ImageProgram &p = *pp;
    p.stateNames = r.strs();
    // The functions programFunctions() lists, in its order.
    for (ModeFn *f : {&p.rhs, &p.outputs, &p.residual.fn, &p.jacobian.fn, &p.guards, &p.held,
                      &p.kinks, &p.dependent, &p.dependentJacobian, &p.impulse, &p.guardImpulse})
      readFn(r, *f, table, tableSize);
    p.numUnknowns = r.u64();
    p.loopPattern = r.pattern();
    for (ScatteredFn *s : {&p.residual, &p.jacobian}) {
      s->of = r.u32s();
      s->distinct = r.u64();
    }
    p.linearLoops = r.flag();
    p.kinkInfo = r.vec<KinkInfo>(9, [&] {
      KinkInfo k;
      k.floor = r.flag();
      k.slides = r.flag();
      k.text = r.str();
      return k;
    });
    if (r.flag())
      p.guardTape = r.tape();
    p.guardStates = r.u32s();
    p.timeComparisons = r.u32s();
    p.nonlinearLoops = r.str();
    p.modeName = r.str();
    p.stateSlots = r.u32s();
    p.dependentSlots = r.u32s();
    p.shortCircuit = r.str();
    p.standIns = r.strs();
    p.hasJacobian = r.flag();
    if (p.hasJacobian) {
      JacobianProgram &j = p.jacobianCode;
      readFn(r, j.fn, table, tableSize);
      j.pattern = r.pattern();
      j.fxAt = r.u32s();
      j.fz = r.pairs();
      j.rx = r.pairs();
      j.columns = r.u32s();
      j.fzAt = r.u32s();
      j.numOutputs = r.u64();
    }
    return pp;
  });
  image.modes = r.vec<ImageMode>(20, [&] {
    ImageMode m;
    m.states = r.u32s();
    m.program = r.pod<std::int32_t>();
    m.why = r.str();
    if (m.program >= static_cast<std::int64_t>(image.programs.size()))
      Reader::fail();
    return m;
  });
  image.missingModes = r.str();
  image.sources = r.vec<std::pair<std::string, std::string>>(16, [&] {
    std::string path = r.str();
    return std::pair{path, r.str()};
  });
  if (!r.atEnd())
    Reader::fail();
  validate(image, size);
  return image;
}

ImageSystem::ImageSystem(const ModelImage &image, std::vector<double> params)
    : ProgramSystem(std::move(params), image.numHeld, image.switched, &image.storageLaws),
      image_(image) {
  for (const ImageMode &m : image.modes)
    modes_[m.states] = &m;
}

std::shared_ptr<const ModeProgram> ImageSystem::missing(const std::vector<std::uint32_t> &,
                                                        std::string &why) {
  why = "is not compiled into this simulator (" + image_.missingModes + ")";
  return nullptr;
}

std::shared_ptr<const ModeProgram> ImageSystem::program(const std::vector<std::uint32_t> &q,
                                                        std::string &why) {
  if (!image_.switched)
    return image_.programs.empty() ? nullptr : image_.programs[0];
  auto it = modes_.find(q);
  if (it == modes_.end())
    return missing(q, why);
  if (it->second->program < 0) {
    why = "cannot be analysed:\n" + it->second->why;
    return nullptr;
  }
  return image_.programs[static_cast<std::size_t>(it->second->program)];
}

} // namespace hbg::runtime
