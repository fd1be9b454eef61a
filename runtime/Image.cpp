//===- runtime/Image.cpp - A compiled model without the compiler ----------===//
//
// The format: a magic word and version, then the fields of ModelImage in
// declaration order, little-endian as the host writes them (an image is
// read by a simulator built for the machine that wrote it). Every read is
// bounds-checked, and then every index against what it indexes: a
// truncated, foreign or altered image is an ImageError, never a crash.
//
// The fields are listed once, in the templates below, each visited by a
// Writer and by a Reader (as serialisation libraries do): the Writer
// appends what each field holds, the Reader fills it from the bytes and
// makes the checks a read can make as it goes (`check`). Both see the
// same order, so what is written is what is read. The checks that need
// the whole image come after the read (validate()).
//
//===----------------------------------------------------------------------===//

#include "hbg/runtime/Image.h"

#include <array>
#include <cstring>
#include <functional>
#include <limits>
#include <type_traits>

namespace hbg::runtime {

namespace {

constexpr char kMagic[8] = {'h', 'b', 'g', 'i', 'm', 'g', '0', '4'};

// A tape instruction is stored with its TapeOp's value, so the order of
// hbg/support/ExprOps.def is part of the format: ops are added at its end.
static_assert(static_cast<int>(TapeOp::Neg) == 4 && static_cast<int>(TapeOp::Select) == 22,
              "an image stores TapeOp by value: add ops at the end of ExprOps.def");

[[noreturn]] void corrupt() {
  throw ImageError("the model image is corrupt or from another version of hbg");
}

/// Appends the fields it is shown. Functions are written as their index
/// in the table of entry points, and with their tapes when `withTapes`.
class Writer {
public:
  Writer(const std::function<std::uint32_t(const ModeFn &)> &index, bool withTapes)
      : index_(index), withTapes_(withTapes) {}
  std::string out;

  void magic() { out.append(kMagic, sizeof kMagic); }
  template <class T> void pod(const T &v) {
    static_assert(std::is_trivially_copyable_v<T>);
    out.append(reinterpret_cast<const char *>(&v), sizeof v);
  }
  void u32(std::uint32_t v) { pod(v); }
  void u64(std::uint64_t v) { pod(v); }
  void f64(double v) { pod(v); }
  void flag(bool v) { pod(static_cast<std::uint8_t>(v)); }
  /// `v` written as `encode(v)`, a Stored.
  template <class Stored, class T, class Encode, class Decode>
  void as(const T &v, Encode &&encode, Decode &&) {
    pod(static_cast<Stored>(encode(v)));
  }
  void str(const std::string &s) {
    u64(s.size());
    out += s;
  }
  /// The size, then each item as `each` writes it.
  template <class T, class F> void vec(const std::vector<T> &v, std::size_t, F &&each) {
    u64(v.size());
    for (const T &x : v)
      each(x);
  }
  void flags(const std::vector<bool> &v) {
    u64(v.size());
    for (bool b : v)
      flag(b);
  }
  /// Whether there is a value, then the value as `each` writes it.
  template <class T, class F> void optional(const std::optional<T> &o, F &&each) {
    flag(o.has_value());
    if (o)
      each(*o);
  }
  template <class T> const T &pointee(const std::shared_ptr<T> &p) { return *p; }
  template <class F> void check(F &&) {}

  /// A function's entry point and whether its tape follows; resolve()
  /// is for the Reader.
  std::uint32_t entry(const ModeFn &f) const { return index_(f); }
  bool withTapes() const { return withTapes_; }
  void resolve(const ModeFn &, std::uint32_t, bool) {}

private:
  const std::function<std::uint32_t(const ModeFn &)> &index_;
  bool withTapes_;
};

/// Fills the fields it is shown from the bytes, bounds-checked: running
/// out of bytes, an enumerator out of range or a failed check() is an
/// ImageError. Functions take their entry point from `table` (`tableSize`
/// entries; null: none, they run on their tapes).
class Reader {
public:
  Reader(const std::uint8_t *data, std::size_t size, const CompiledFn *table, std::size_t tableSize)
      : p_(data), end_(data + size), table_(table), tableSize_(tableSize) {}

  void magic() {
    need(sizeof kMagic);
    if (std::memcmp(p_, kMagic, sizeof kMagic) != 0)
      corrupt();
    p_ += sizeof kMagic;
  }
  template <class T> void pod(T &v) {
    static_assert(std::is_trivially_copyable_v<T>);
    need(sizeof(T));
    std::memcpy(&v, p_, sizeof v);
    p_ += sizeof v;
  }
  void u32(std::uint32_t &v) { pod(v); }
  template <class T> void u64(T &v) { v = static_cast<T>(read<std::uint64_t>()); }
  void f64(double &v) { pod(v); }
  void flag(bool &v) { v = read<std::uint8_t>() != 0; }
  /// `v` read as `decode` of a Stored (which fails on what it cannot decode).
  template <class Stored, class T, class Encode, class Decode>
  void as(T &v, Encode &&, Decode &&decode) {
    v = decode(read<Stored>());
  }
  void str(std::string &s) {
    std::size_t n = count(1);
    s.assign(reinterpret_cast<const char *>(p_), n);
    p_ += n;
  }
  /// Items, each at least `minBytes` long, each read by `each`.
  template <class T, class F> void vec(std::vector<T> &v, std::size_t minBytes, F &&each) {
    v.clear();
    v.resize(count(minBytes));
    for (T &x : v)
      each(x);
  }
  void flags(std::vector<bool> &v) {
    v.clear();
    v.resize(count(1));
    for (std::size_t i = 0; i < v.size(); ++i)
      v[i] = read<std::uint8_t>() != 0;
  }
  template <class T, class F> void optional(std::optional<T> &o, F &&each) {
    o.reset();
    if (read<std::uint8_t>() != 0)
      each(o.emplace());
  }
  template <class T> T &pointee(std::shared_ptr<T> &p) {
    p = std::make_shared<T>();
    return *p;
  }
  template <class F> void check(F &&ok) {
    if (!ok())
      corrupt();
  }

  /// What entry() and withTapes() stand for here is read from the image.
  std::uint32_t entry(const ModeFn &) const { return 0; }
  bool withTapes() const { return false; }
  /// The function's machine code, at `entry` of the table, or none: then
  /// its tape is needed.
  void resolve(ModeFn &f, std::uint32_t entry, bool tape) {
    if (table_ && entry < tableSize_)
      f.jit.store(table_[entry], std::memory_order_relaxed);
    else if (!tape)
      corrupt(); // neither code nor tape
  }

  bool atEnd() const { return p_ == end_; }

private:
  template <class T> T read() {
    T v;
    pod(v);
    return v;
  }
  /// A count of items, each at least `minBytes` long: bounded by what is
  /// left, so a corrupt count cannot ask for a huge allocation.
  std::size_t count(std::size_t minBytes) {
    std::uint64_t n = read<std::uint64_t>();
    if (n > static_cast<std::uint64_t>(end_ - p_) / std::max<std::size_t>(minBytes, 1))
      corrupt();
    return static_cast<std::size_t>(n);
  }
  void need(std::size_t n) {
    if (static_cast<std::size_t>(end_ - p_) < n)
      corrupt();
  }
  const std::uint8_t *p_, *end_;
  const CompiledFn *table_;
  std::size_t tableSize_;
};

// The fields. Each template takes the archive (Writer or Reader) and the
// object (const when written); its lines are the format.

/// An enumerator, one byte, at most `last`.
template <class A, class E> void enumerator(A &a, E &e, std::remove_const_t<E> last) {
  using Enum = std::remove_const_t<E>;
  a.template as<std::uint8_t>(
      e, [](Enum v) { return static_cast<std::uint8_t>(v); },
      [last](std::uint8_t v) {
        if (v > static_cast<std::uint8_t>(last))
          corrupt();
        return static_cast<Enum>(v);
      });
}

template <class A, class V> void u32s(A &a, V &v) {
  a.vec(v, 4, [&](auto &x) { a.u32(x); });
}

template <class A, class V> void strs(A &a, V &v) {
  a.vec(v, 8, [&](auto &s) { a.str(s); });
}

template <class A, class V> void pairs(A &a, V &v) {
  a.vec(v, 8, [&](auto &p) {
    a.u32(p.first);
    a.u32(p.second);
  });
}

template <class A, class T> void tapeFields(A &a, T &t) {
  a.vec(t.code, 21, [&](auto &i) {
    enumerator(a, i.op, static_cast<TapeOp>(kNumTapeOps - 1));
    a.u32(i.a);
    a.u32(i.b);
    a.u32(i.c);
    a.f64(i.value);
  });
  u32s(a, t.results);
  a.check([&] { return t.verify().empty(); });
}

template <class A, class P> void patternFields(A &a, P &p) {
  u32s(a, p.colStart);
  u32s(a, p.rows);
}

template <class A, class G> void guardFields(A &a, G &g, int depth = 0) {
  a.check([&] { return depth <= 10000; });
  enumerator(a, g.kind, GuardNode::Not);
  a.u32(g.comparison);
  enumerator(a, g.op, CompareOp::Greater);
  a.flag(g.minus);
  a.vec(g.children, 15, [&](auto &c) { guardFields(a, c, depth + 1); });
}

/// A function: whether it is there; then its entry point in the table and
/// whether its tape follows, and the tape.
template <class A, class F> void functionFields(A &a, F &f) {
  a.flag(f.present);
  if (!f.present)
    return;
  std::uint32_t entry = a.entry(f);
  bool tape = a.withTapes();
  a.u32(entry);
  a.flag(tape);
  if (tape)
    tapeFields(a, f.tape);
  a.resolve(f, entry, tape);
}

template <class A, class S> void setupFields(A &a, S &s) {
  strs(a, s.names);
  a.vec(s.defaults, 16, [&](auto &t) { tapeFields(a, t); });
  a.flags(s.inputs);
  u32s(a, s.order);
  tapeFields(a, s.initial);
  tapeFields(a, s.nominal);
  tapeFields(a, s.experiment);
  a.flags(s.given);
  // The method, or -1 for none.
  a.template as<std::int8_t>(
      s.method, [](const std::optional<Method> &m) { return m ? static_cast<int>(*m) : -1; },
      [](std::int8_t m) -> std::optional<Method> {
        if (m > static_cast<int>(Method::Auto))
          corrupt();
        if (m >= 0)
          return static_cast<Method>(m);
        return std::nullopt;
      });
  a.check([&] {
    std::size_t n = s.names.size();
    if (s.defaults.size() != n || s.inputs.size() != n || s.order.size() != n)
      return false;
    for (std::uint32_t i : s.order)
      if (i >= n)
        return false;
    return true;
  });
}

template <class A, class J> void junctionFields(A &a, J &j) {
  a.str(j.name);
  strs(a, j.stateNames);
  a.u32(j.initial);
  a.flag(j.dissipative);
  a.vec(j.transitions, 30, [&](auto &t) {
    a.u32(t.from);
    a.u32(t.to);
    guardFields(a, t.guard);
    a.str(t.text);
  });
}

/// The junctions, then every comparison's operator.
template <class A, class Js, class Ops> void switchingFields(A &a, Js &junctions, Ops &ops) {
  a.vec(junctions, 32, [&](auto &j) { junctionFields(a, j); });
  a.vec(ops, 1, [&](auto &op) { enumerator(a, op, CompareOp::Greater); });
}

void switchingFields(Writer &w, const Switching &sw) {
  std::vector<CompareOp> ops;
  for (std::uint32_t k = 0; k < sw.numComparisons(); ++k)
    ops.push_back(sw.op(k));
  switchingFields(w, sw.junctions(), ops);
}

void switchingFields(Reader &r, Switching &sw) {
  std::vector<Junction> junctions;
  std::vector<CompareOp> ops;
  switchingFields(r, junctions, ops);
  sw = Switching(std::move(junctions), std::move(ops));
}

template <class A, class L> void storageLawFields(A &a, L &law) {
  a.optional(law, [&](auto &l) {
    a.u32(l.slot);
    // One byte: 0 linear, anything else integral.
    a.template as<std::uint8_t>(
        l.form, [](StorageLaw::Form f) { return static_cast<std::uint8_t>(f); },
        [](std::uint8_t f) { return f ? StorageLaw::Form::Integral : StorageLaw::Form::Linear; });
    tapeFields(a, l.law);
  });
}

/// The functions of a program in the order the image stores them.
template <class P> auto functionsOf(P &p) {
  return std::array{&p.rhs,         &p.outputs, &p.residual.fn, &p.jacobian.fn,       &p.guards,
                    &p.held,        &p.kinks,   &p.dependent,   &p.dependentJacobian, &p.impulse,
                    &p.guardImpulse};
}

template <class A, class J> void jacobianFields(A &a, J &j) {
  functionFields(a, j.fn);
  patternFields(a, j.pattern);
  u32s(a, j.fxAt);
  pairs(a, j.fz);
  pairs(a, j.rx);
  u32s(a, j.columns);
  u32s(a, j.fzAt);
  a.u64(j.numOutputs);
  a.flag(j.constancy.dfdx);
  a.flag(j.constancy.dfdt);
}

template <class A, class P> void programFields(A &a, P &p) {
  strs(a, p.stateNames);
  for (auto *f : functionsOf(p))
    functionFields(a, *f);
  a.u64(p.numUnknowns);
  patternFields(a, p.loopPattern);
  for (auto *s : {&p.residual, &p.jacobian}) {
    u32s(a, s->of);
    a.u64(s->distinct);
  }
  a.flag(p.linearLoops);
  a.vec(p.kinkInfo, 9, [&](auto &k) {
    a.flag(k.floor);
    a.flag(k.slides);
    a.str(k.text);
  });
  a.optional(p.guardTape, [&](auto &t) { tapeFields(a, t); });
  u32s(a, p.guardStates);
  u32s(a, p.timeComparisons);
  a.str(p.nonlinearLoops);
  a.str(p.modeName);
  u32s(a, p.stateSlots);
  u32s(a, p.dependentSlots);
  a.str(p.shortCircuit);
  strs(a, p.standIns);
  a.flag(p.hasJacobian);
  if (p.hasJacobian)
    jacobianFields(a, p.jacobianCode);
}

template <class A, class M> void imageFields(A &a, M &image) {
  a.magic();
  a.str(image.name);
  strs(a, image.stateNames);
  strs(a, image.outputNames);
  setupFields(a, image.setup);
  a.flags(image.structural);
  a.u64(image.numHeld);
  a.vec(image.discretes, 12, [&](auto &d) {
    a.str(d.first);
    a.pod(d.second);
  });
  a.pod(image.settleSlot);
  a.flag(image.switched);
  switchingFields(a, image.switching);
  a.vec(image.storageLaws, 1, [&](auto &law) { storageLawFields(a, law); });
  a.vec(image.programs, 64, [&](auto &p) { programFields(a, a.pointee(p)); });
  a.vec(image.modes, 20, [&](auto &m) {
    u32s(a, m.states);
    a.pod(m.program);
    a.str(m.why);
    a.check([&] { return m.program < static_cast<std::int64_t>(image.programs.size()); });
  });
  a.str(image.missingModes);
  a.vec(image.sources, 16, [&](auto &s) {
    a.str(s.first);
    a.str(s.second);
  });
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
      corrupt();
  };
  const SetupProgram &s = image.setup;
  std::size_t np = s.names.size(), ns = image.stateNames.size();
  // Counts that size the run's arrays cannot exceed what the image spells
  // out, one byte each at least.
  check(image.numHeld <= bytes);
  for (const auto &d : image.discretes)
    check(d.second < image.numHeld);
  check(image.settleSlot == -1 ||
        (image.settleSlot >= 0 && std::uint64_t(image.settleSlot) + 1 < image.numHeld));
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
  auto functions = functionsOf(p);
  return {functions.begin(), functions.end()};
}

std::string writeImage(const ModelImage &image,
                       const std::function<std::uint32_t(const ModeFn &)> &index,
                       bool withTapes) {
  Writer w(index, withTapes);
  imageFields(w, image);
  return std::move(w.out);
}

ModelImage readImage(const std::uint8_t *data, std::size_t size, const CompiledFn *table,
                     std::size_t tableSize) {
  Reader r(data, size, table, tableSize);
  ModelImage image;
  imageFields(r, image);
  if (!r.atEnd())
    corrupt();
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
