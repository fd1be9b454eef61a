//===- hbg/support/PassTimer.h - Timing a pass for --time-passes --------===//

#ifndef HBG_SUPPORT_PASSTIMER_H
#define HBG_SUPPORT_PASSTIMER_H

#include <chrono>
#include <ctime>
#include <ostream>

namespace hbg {

/// Prints, when `out` is set, the time from its construction to its end
/// as `pass NAME: WALL ms (cpu CPU ms)`: the wall time, and CPU time,
/// which a machine shared with other work does not inflate. The CPU time
/// is the process's, or with Cpu::Thread the calling thread's alone (for
/// a step that may run on a background thread while the run goes on).
class PassTimer {
public:
  enum class Cpu { Process, Thread };
  PassTimer(std::ostream *out, const char *name, Cpu cpu = Cpu::Process)
      : out_(out), name_(name), clock_(cpu == Cpu::Thread ? CLOCK_THREAD_CPUTIME_ID
                                                          : CLOCK_PROCESS_CPUTIME_ID),
        start_(std::chrono::steady_clock::now()), cpuStart_(cpuMs()) {}
  ~PassTimer() {
    if (!out_)
      return;
    std::chrono::duration<double, std::milli> ms = std::chrono::steady_clock::now() - start_;
    *out_ << "pass " << name_ << ": " << ms.count() << " ms (cpu " << cpuMs() - cpuStart_
          << " ms)\n";
  }
  PassTimer(const PassTimer &) = delete;
  PassTimer &operator=(const PassTimer &) = delete;

private:
  double cpuMs() const {
    timespec ts{};
    clock_gettime(clock_, &ts);
    return 1e3 * static_cast<double>(ts.tv_sec) + 1e-6 * static_cast<double>(ts.tv_nsec);
  }
  std::ostream *out_;
  const char *name_;
  clockid_t clock_;
  std::chrono::steady_clock::time_point start_;
  double cpuStart_;
};

} // namespace hbg

#endif
