//===- tools/common/Monitor.cpp - A run's progress bar and Ctrl-C ---------===//

#include "Monitor.h"

#include "Output.h"


#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <unistd.h>

namespace hbg::tools {

namespace {

// Lock-free, so that the handler may set it on whichever thread the
// signal lands on (the tiered compiler's included).
std::atomic<int> gInterrupted{0};
static_assert(std::atomic<int>::is_always_lock_free);
struct sigaction gPrevious {};

extern "C" void onInterrupt(int) {
  gInterrupted.store(1);
  // A second Ctrl-C ends the program at once (a step that never returns).
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigaction(SIGINT, &dfl, nullptr);
}

std::string seconds(double s) {
  char buf[32];
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%.0f s", s);
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%.0f min %02.0f s", std::floor(s / 60), std::fmod(s, 60));
  else
    std::snprintf(buf, sizeof buf, "%.0f h %02.0f min", std::floor(s / 3600),
                  std::floor(std::fmod(s, 3600) / 60));
  return buf;
}

} // namespace

void plotEvent(Plot &plot, const runtime::Event &e) {
  plot.event(e.time, e.modes.empty() ? "" : e.modes.front(), e.modes.empty() ? "" : e.modes.back());
}

bool stderrIsTerminal() { return ::isatty(2) == 1; }

RunMonitor::RunMonitor(bool show) : show_(show) {
  gInterrupted.store(0);
  // A program started with SIGINT ignored (in the background of a
  // script) keeps ignoring it.
  sigaction(SIGINT, nullptr, &gPrevious);
  if (gPrevious.sa_handler != SIG_IGN) {
    struct sigaction on {};
    on.sa_handler = onInterrupt;
    sigemptyset(&on.sa_mask);
    sigaction(SIGINT, &on, nullptr);
  }
  start_ = last_ = std::chrono::steady_clock::now();
}

RunMonitor::~RunMonitor() {
  finish();
  sigaction(SIGINT, &gPrevious, nullptr);
}

bool RunMonitor::interrupted() { return gInterrupted.load() != 0; }

std::string RunMonitor::line(const runtime::Progress &p, double elapsed) {
  double span = p.tEnd - p.tStart;
  double done = span > 0 ? std::clamp((p.t - p.tStart) / span, 0.0, 1.0) : 1.0;
  constexpr int kBar = 20;
  int filled = static_cast<int>(done * kBar);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar += std::string(static_cast<std::size_t>(kBar - filled), '.');
  char buf[256];
  double rate = elapsed > 0 ? static_cast<double>(p.steps) / elapsed : 0;
  std::snprintf(buf, sizeof buf, "t = %.6g of %.6g [%s] %3.0f%%  %zu steps (%.3g/s)  %zu events",
                p.t, p.tEnd, bar.c_str(), 100 * done, p.steps, rate, p.events);
  std::string out = buf;
  if (done > 0 && done < 1 && elapsed > 0.5)
    out += "  " + seconds(elapsed * (1 - done) / done) + " left";
  return out;
}

bool RunMonitor::step(const runtime::Progress &p) {
  if (show_) {
    auto now = std::chrono::steady_clock::now();
    if (now - last_ >= std::chrono::milliseconds(100)) {
      last_ = now;
      std::string text = line(p, std::chrono::duration<double>(now - start_).count());
      std::cerr << "\r\033[K" << text << std::flush;
      drawn_ = true;
    }
  }
  return gInterrupted.load() == 0;
}

void RunMonitor::finish() {
  if (drawn_)
    std::cerr << "\r\033[K" << std::flush;
  drawn_ = false;
}

} // namespace hbg::tools
