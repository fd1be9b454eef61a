//===- runtime/Auto.cpp - Switching between dopri5 and the stiff method ---===//
//
// `--method auto`: Dormand-Prince while its steps follow the solution's
// accuracy, the Rosenbrock method while they are held to its stability
// bound, as LSODA switches between Adams and BDF. Both report h times an
// estimate of the Jacobian's largest eigenvalue magnitude over each
// accepted step (Stepper::stiffness): dopri5 from its last two stages
// (Hairer and Wanner's test, reliable near its stability boundary of
// about 3.3), the Rosenbrock method from Gershgorin's bound on the
// Jacobian it already has.
//
//  - dopri5 -> rosenbrock after 15 accepted steps at h|lambda| above
//    3.25, counted until 6 in a row fall below (HW's DOPRI5 rule): such
//    steps sit on the stability boundary, so the error controller, not
//    the solution, sets their size;
//  - rosenbrock -> dopri5 likewise after 15 at h|lambda| below 1.5:
//    dopri5 would be stable at these steps with room to grow.
//
// Counts persist through reset(): a run restarted after an event in the
// same mode keeps the method it had found.
//
//===----------------------------------------------------------------------===//

#include "StepperBase.h"

namespace hbg::runtime {
namespace {

constexpr double StiffAbove = 3.25, NonStiffBelow = 1.5;
constexpr std::size_t StepsToSwitch = 15, StepsToForget = 6;

class AutoStepper final : public Stepper {
public:
  AutoStepper(OdeSystem &sys, const IntegratorOptions &opts) : sys_(sys), opts_(opts) {
    IntegratorOptions o = opts;
    o.method = Method::DormandPrince;
    explicit_ = makeStepper(sys, o);
    active_ = explicit_.get();
    method_ = Method::DormandPrince;
  }
  void reset(double t0, const double *x0) override {
    if (pendingSwitch_) {
      pendingSwitch_ = false;
      streak_ = calm_ = 0;
      active_ = other();
    }
    sinceReset_ = {};
    active_->reset(t0, x0);
    mirror();
  }
  double proposedStep() const override { return active_->proposedStep(); }
  void proposeStep(double h) override { active_->proposeStep(h); }
  void setNominal(const double *nominal) override { active_->setNominal(nominal); }
  const double *nominal() const override { return active_->nominal(); }
  ScaleCollapse scaleCollapse() const override { return active_->scaleCollapse(); }
  StepStatus step(double tLimit) override {
    if (pendingSwitch_)
      switchMethod();
    double before = active_->t();
    StepStatus st = active_->step(tLimit);
    mirror();
    if (st == StepStatus::Ok && active_->t() > before)
      judge();
    return st;
  }
  void interpolate(double tau, double *out) const override { active_->interpolate(tau, out); }
  void densePolynomial(std::size_t i, double c[5]) const override {
    active_->densePolynomial(i, c);
  }
  Method method() const override { return active_->method(); }
  double stiffness() const override { return active_->stiffness(); }

private:
  struct Counts {
    std::size_t accepted = 0, rejected = 0, rhs = 0, jacobian = 0, lu = 0;
  };
  /// Takes the active stepper's time, state and counters as its own.
  void mirror() {
    t_ = active_->t();
    tPrev_ = active_->tPrev();
    state_ = &active_->x();
    nonFinite_ = active_->nonFinite();
    errorLeader_ = active_->errorLeader();
    accepted_ = sinceReset_.accepted + active_->acceptedSteps();
    rejected_ = sinceReset_.rejected + active_->rejectedSteps();
    rhsCalls_ = sinceReset_.rhs + active_->rhsCalls();
    jacobianCalls_ = sinceReset_.jacobian + active_->jacobianCalls();
    factorisations_ = sinceReset_.lu + active_->factorisations();
  }
  /// Counts the step towards a switch.
  void judge() {
    double s = active_->stiffness();
    bool towardsOther = active_ == explicit_.get() ? s > StiffAbove : s < NonStiffBelow;
    if (towardsOther) {
      ++streak_;
      calm_ = 0;
    } else if (++calm_ >= StepsToForget) {
      streak_ = 0;
    }
    if (streak_ >= StepsToSwitch)
      pendingSwitch_ = true;
  }
  /// The method not active, made on first use.
  Stepper *other() {
    if (active_ != explicit_.get())
      return explicit_.get();
    if (!implicit_) {
      IntegratorOptions o = opts_;
      o.method = Method::Rosenbrock;
      implicit_ = makeStepper(sys_, o);
    }
    return implicit_.get();
  }
  /// Restarts the other method from the current point, with the nominal
  /// magnitudes and step size reached.
  void switchMethod() {
    pendingSwitch_ = false;
    streak_ = calm_ = 0;
    Stepper *from = active_;
    active_ = other();
    sinceReset_.accepted += from->acceptedSteps();
    sinceReset_.rejected += from->rejectedSteps();
    sinceReset_.rhs += from->rhsCalls();
    sinceReset_.jacobian += from->jacobianCalls();
    sinceReset_.lu += from->factorisations();
    std::vector<double> nominal(from->nominal(), from->nominal() + x().size());
    double h = from->proposedStep();
    active_->reset(t_, x().data());
    active_->setNominal(nominal.data());
    active_->proposeStep(h);
    mirror();
  }

  OdeSystem &sys_;
  IntegratorOptions opts_;
  std::unique_ptr<Stepper> explicit_, implicit_;
  Stepper *active_;
  Counts sinceReset_;
  std::size_t streak_ = 0, calm_ = 0;
  bool pendingSwitch_ = false;
};

} // namespace

std::unique_ptr<Stepper> makeAutoStepper(OdeSystem &sys, const IntegratorOptions &opts) {
  return std::make_unique<AutoStepper>(sys, opts);
}

} // namespace hbg::runtime
