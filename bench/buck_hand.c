/* examples/buck.hbg written by hand: an ideal switch chops Vin = 12 V at
 * fs = 10 kHz with duty cycle D = 0.4 into an ideal freewheeling diode and
 * an LC filter (L = 1 mH, C = 100 uF) with a 10 ohm load. The baseline of
 * bench/whole.sh for `hbgc run examples/buck.hbg`.
 *
 * States as in hbg: the coil's flux linkage p (i = p / L) and the
 * capacitor's charge q (vout = q / C), both zero at t = 0. Three modes:
 *
 *   closed                 dp/dt = Vin - vout    dq/dt = i - vout / R
 *   open, diode conducts   dp/dt = -vout         dq/dt = i - vout / R
 *   open, diode blocks     p = 0, dp/dt = 0      dq/dt = -vout / R
 *
 * The switch is closed while cos(2 pi fs t) > cos(pi D), that is on
 * [(k - D/2) / fs, (k + D/2) / fs]: these time events are computed ahead
 * and each step ends on the next one exactly. When the switch opens the
 * diode conducts (if i > 0; else it blocks and p becomes 0); while it
 * conducts, the first time p <= 0 is located by the Illinois method on
 * the step's interpolant (hand_dopri5.h), and the diode blocks. When the
 * switch closes the supply reverse-biases the diode.
 *
 * Dormand-Prince 5(4) at hbg's default tolerance: rtol 1e-6 with the
 * nominal magnitudes hbg derives from the source (1e-3 of L Vin / R for
 * p, of C Vin for q); the first trial step is 1e-3, and each restart after
 * an event keeps the step size reached before it.
 *
 * Usage: buck_hand [T_END]   (0.2, 2,000 periods)
 * Writes the CSV of hbgc run (101 rows of time, vout, il at t = k T_END /
 * 100, from the interpolant); its counts on standard error.
 */
#include "hand_dopri5.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { CLOSED, CONDUCTING, BLOCKING };

typedef struct {
  double Vin, D, fs, L, C, R;
  int mode;
} buck;

static void rhs(double t, const double *x, double *dx, const void *ud) {
  const buck *b = (const buck *)ud;
  double i = x[0] / b->L, vout = x[1] / b->C;
  (void)t;
  switch (b->mode) {
  case CLOSED:
    dx[0] = b->Vin - vout;
    dx[1] = i - vout / b->R;
    break;
  case CONDUCTING:
    dx[0] = -vout;
    dx[1] = i - vout / b->R;
    break;
  default:
    dx[0] = 0.0;
    dx[1] = -vout / b->R;
    break;
  }
}

static void row(double t, const double *x, const buck *b) {
  printf("%.17g,%.17g,%.17g\n", t, x[1] / b->C, x[0] / b->L);
}

int main(int argc, char **argv) {
  const double t_end = argc > 1 ? atof(argv[1]) : 0.2;
  buck b = {12.0, 0.4, 10000.0, 1e-3, 1e-4, 10.0, CLOSED};
  if (!(t_end > 0)) {
    fprintf(stderr, "usage: buck_hand [T_END]\n");
    return 2;
  }
  double x[2] = {0.0, 0.0}, xi[2];
  double nominal[2] = {1e-3 * b.L * b.Vin / b.R, 1e-3 * b.C * b.Vin};
  hd_stepper s;
  hd_init(&s, 2, rhs, &b, 0.0, x, nominal, 1e-6, 1e-3);

  /* switching instants: closed on [(k - D/2) / fs, (k + D/2) / fs] */
  long period = 0;
  int next_opens = 1; /* the next instant opens the switch */
  double t_switch = (period + b.D / 2) / b.fs;
  long switchings = 0, blockings = 0;

  printf("time,vout,il\n");
  row(0.0, s.x, &b);
  int next_row = 1;
  while (s.t < t_end) {
    double t_stop = fmin(t_switch, t_end);
    if (hd_step(&s, t_stop) < 0) {
      fprintf(stderr, "buck_hand: step size underflow at t = %g\n", s.t);
      return 1;
    }
    double th_event = b.mode == CONDUCTING ? hd_first_crossing(&s, 0) : -1.0;
    double t_event = th_event >= 0 ? s.t0 + th_event * s.hs : s.t;
    while (next_row <= 100) {
      double tr = next_row == 100 ? t_end : t_end * next_row / 100.0;
      if (tr > t_event)
        break;
      double r[2] = {0.0, 0.0};
      if (tr == s.t)
        r[0] = s.x[0], r[1] = s.x[1];
      else
        hd_interp_all(&s, (tr - s.t0) / s.hs, r);
      row(tr, r, &b);
      ++next_row;
    }
    if (th_event >= 0) { /* the diode's current reaches zero */
      hd_interp_all(&s, th_event, xi);
      xi[0] = 0.0;
      b.mode = BLOCKING;
      ++blockings;
      hd_restart(&s, t_event, xi);
    } else if (s.t == t_switch) {
      if (next_opens) {
        if (s.x[0] > 0) {
          b.mode = CONDUCTING;
          hd_restart(&s, s.t, s.x);
        } else {
          xi[0] = 0.0, xi[1] = s.x[1];
          b.mode = BLOCKING;
          ++blockings;
          hd_restart(&s, s.t, xi);
        }
        t_switch = (period + 1 - b.D / 2) / b.fs;
      } else {
        b.mode = CLOSED;
        hd_restart(&s, s.t, s.x);
        ++period;
        t_switch = (period + b.D / 2) / b.fs;
      }
      next_opens = !next_opens;
      ++switchings;
    }
  }
  fprintf(stderr, "buck_hand: %ld switchings, %ld diode blockings; %ld steps, %ld rejected, "
                  "%ld rhs calls\n",
          switchings, blockings, s.accepted, s.rejected, s.rhs_calls);
  return 0;
}
