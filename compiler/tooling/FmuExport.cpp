//===- compiler/tooling/FmuExport.cpp - FMI 3.0 packaging -----------------===//
//
// The model description is written from the standard's schema
// (fmi3ModelDescription.xsd, fmi3Variable.xsd, fmi3ModelStructure.xsd):
// every variable is a Float64; parameters whose default reads no other
// parameter are tunable, the others calculated (the FMU computes them, as
// hbg does, from the parameters they read); structural parameters are
// constants; inputs are continuous inputs; the full state is the
// continuous state vector.
//
// The archive is a zip of stored entries (no compression): an FMU's
// binary and description need nothing more, and no library is needed.
//
//===----------------------------------------------------------------------===//

#include "FmuExport.h"

#include "hbg/runtime/FmuLayout.h"

#include "hbg/runtime/System.h"

#include "hbg/support/Xml.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace hbg::driver {

namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

/// Whether the tape reads a parameter.
bool readsParameters(const runtime::Tape &t) {
  for (const runtime::TapeInstr &i : t.code)
    if (i.op == runtime::TapeOp::P)
      return true;
  return false;
}

} // namespace

std::string modelDescription(const runtime::ModelImage &image, const std::string &token) {
  using fmi::Kind;
  fmi::Layout L(image);
  const runtime::SetupProgram &s = image.setup;
  std::vector<double> p = s.parameters({});
  std::ostringstream x;
  const std::string id = xmlEscaped(image.name);
  x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<fmiModelDescription fmiVersion=\"3.0\" modelName=\"" << id << "\" instantiationToken=\""
    << token << "\" generationTool=\"hbg\" variableNamingConvention=\"flat\" description=\""
    << "hybrid bond graph `" << id << "`, compiled by hbgc build --fmu\">\n"
    << "  <ModelExchange modelIdentifier=\"" << id
    << "\" needsCompletedIntegratorStep=\"false\" canGetAndSetFMUState=\"false\""
    << " canSerializeFMUState=\"false\" providesDirectionalDerivatives=\"false\""
    << " providesAdjointDerivatives=\"false\"/>\n"
    << "  <CoSimulation modelIdentifier=\"" << id
    << "\" canHandleVariableCommunicationStepSize=\"true\" hasEventMode=\"false\""
    << " canGetAndSetFMUState=\"false\" canSerializeFMUState=\"false\""
    << " providesIntermediateUpdate=\"false\" canReturnEarlyAfterIntermediateUpdate=\"false\"/>\n";
  try {
    runtime::ExperimentValues ev = s.experimentValues(p, image.name);
    using runtime::Setting;
    x << "  <DefaultExperiment";
    if (ev[Setting::TStart])
      x << " startTime=\"" << number(*ev[Setting::TStart]) << "\"";
    if (ev[Setting::TEnd])
      x << " stopTime=\"" << number(*ev[Setting::TEnd]) << "\"";
    if (ev[Setting::Rtol])
      x << " tolerance=\"" << number(*ev[Setting::Rtol]) << "\"";
    if (ev[Setting::DtOut])
      x << " stepSize=\"" << number(*ev[Setting::DtOut]) << "\"";
    x << "/>\n";
  } catch (const std::invalid_argument &) {
    // Settings invalid at the defaults: the importer chooses.
  }
  x << "  <ModelVariables>\n";
  auto variable = [&](Kind kind, std::size_t i, const std::string &attributes) {
    std::uint32_t vr = L.vr(kind, i);
    x << "    <Float64 name=\"" << xmlEscaped(L.name(vr)) << "\" valueReference=\"" << vr << "\" "
      << attributes << "/>\n";
  };
  variable(Kind::Time, 0, "causality=\"independent\" variability=\"continuous\"");
  std::vector<std::uint32_t> calculated;
  for (std::size_t k = 0; k < L.parameters; ++k) {
    std::string start = " start=\"" + number(p[k]) + "\"";
    if (s.inputs[k])
      variable(Kind::Parameter, k, "causality=\"input\" variability=\"continuous\"" + start);
    else if (k < image.structural.size() && image.structural[k])
      variable(Kind::Parameter, k, "causality=\"local\" variability=\"constant\"" + start);
    else if (readsParameters(s.defaults[k])) {
      variable(Kind::Parameter, k,
               "causality=\"calculatedParameter\" variability=\"tunable\" initial=\"calculated\"");
      calculated.push_back(L.vr(Kind::Parameter, k));
    } else
      variable(Kind::Parameter, k, "causality=\"parameter\" variability=\"tunable\"" + start);
  }
  for (std::size_t i = 0; i < L.states; ++i)
    variable(Kind::State, i, "causality=\"local\" variability=\"continuous\" initial=\"calculated\"");
  for (std::size_t i = 0; i < L.states; ++i)
    variable(Kind::Derivative, i,
             "causality=\"local\" variability=\"continuous\" initial=\"calculated\" derivative=\"" +
                 std::to_string(L.vr(Kind::State, i)) + "\"");
  for (std::size_t i = 0; i < L.outputs; ++i)
    variable(Kind::Output, i, "causality=\"output\" variability=\"continuous\" initial=\"calculated\"");
  // A discrete value of sampled control: set at its clock's ticks,
  // constant between (a discrete state, which the FMU's event handling
  // updates), readable.
  for (std::size_t i = 0; i < L.discretes; ++i)
    variable(Kind::Discrete, i, "causality=\"local\" variability=\"discrete\" initial=\"calculated\"");
  for (std::size_t i = 0; i < L.indicators; ++i)
    variable(Kind::Indicator, i,
             "causality=\"local\" variability=\"continuous\" initial=\"calculated\"");
  x << "  </ModelVariables>\n  <ModelStructure>\n";
  auto element = [&](const char *tag, std::uint32_t vr) {
    x << "    <" << tag << " valueReference=\"" << vr << "\"/>\n";
  };
  for (std::size_t i = 0; i < L.outputs; ++i)
    element("Output", L.vr(Kind::Output, i));
  for (std::size_t i = 0; i < L.states; ++i)
    element("ContinuousStateDerivative", L.vr(Kind::Derivative, i));
  for (std::size_t i = 0; i < L.outputs; ++i)
    element("InitialUnknown", L.vr(Kind::Output, i));
  for (std::uint32_t vr : calculated)
    element("InitialUnknown", vr);
  for (std::size_t i = 0; i < L.states; ++i)
    element("InitialUnknown", L.vr(Kind::State, i));
  for (std::size_t i = 0; i < L.states; ++i)
    element("InitialUnknown", L.vr(Kind::Derivative, i));
  for (std::size_t i = 0; i < L.indicators; ++i)
    element("EventIndicator", L.vr(Kind::Indicator, i));
  x << "  </ModelStructure>\n</fmiModelDescription>\n";
  return x.str();
}

namespace {

std::uint32_t crc32(const std::string &data) {
  static const std::array<std::uint32_t, 256> table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t n = 0; n < 256; ++n) {
      std::uint32_t c = n;
      for (int k = 0; k < 8; ++k)
        c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  std::uint32_t c = 0xffffffffu;
  for (unsigned char b : data)
    c = table[(c ^ b) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

void put16(std::string &out, std::uint32_t v) {
  out += static_cast<char>(v & 0xff);
  out += static_cast<char>((v >> 8) & 0xff);
}
void put32(std::string &out, std::uint32_t v) {
  put16(out, v & 0xffff);
  put16(out, v >> 16);
}

} // namespace

void writeZip(const std::string &path,
              const std::vector<std::pair<std::string, std::string>> &entries) {
  std::string out, central;
  for (const auto &[name, data] : entries) {
    if (data.size() >= 0xffffffffu || out.size() >= 0xffffffffu)
      throw std::runtime_error("`" + path + "`: an entry is too large for a zip archive");
    std::uint32_t crc = crc32(data), size = static_cast<std::uint32_t>(data.size()),
                  offset = static_cast<std::uint32_t>(out.size());
    // Stored, version 2.0, no flags, 1980-01-01 00:00.
    auto common = [&](std::string &h) {
      put16(h, 20);
      put16(h, 0);
      put16(h, 0);
      put16(h, 0);
      put16(h, 0x21);
      put32(h, crc);
      put32(h, size);
      put32(h, size);
      put16(h, static_cast<std::uint32_t>(name.size()));
      put16(h, 0);
    };
    put32(out, 0x04034b50);
    common(out);
    out += name;
    out += data;
    put32(central, 0x02014b50);
    put16(central, 20); // made by
    common(central);
    put16(central, 0); // comment
    put16(central, 0); // disk
    put16(central, 0); // internal attributes
    put32(central, 0); // external attributes
    put32(central, offset);
    central += name;
  }
  std::uint32_t at = static_cast<std::uint32_t>(out.size());
  out += central;
  put32(out, 0x06054b50);
  put16(out, 0);
  put16(out, 0);
  put16(out, static_cast<std::uint32_t>(entries.size()));
  put16(out, static_cast<std::uint32_t>(entries.size()));
  put32(out, static_cast<std::uint32_t>(central.size()));
  put32(out, at);
  put16(out, 0);
  std::ofstream f(path, std::ios::binary);
  f.write(out.data(), static_cast<std::streamsize>(out.size()));
  f.close();
  if (!f)
    throw std::runtime_error("cannot write `" + path + "`");
}

} // namespace hbg::driver
