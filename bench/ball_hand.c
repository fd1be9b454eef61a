/* examples/bouncing_ball.hbg written by hand: a ball of m = 1 kg dropped
 * from h0 = 1 m under g = 9.81 m/s^2 onto a floor with restitution e; an
 * impact slower than vrest = 7e-7 m/s leaves it resting on the floor. The
 * baseline of bench/whole.sh for `hbgc run examples/bouncing_ball.hbg`.
 *
 * States as in hbg: the ball's momentum p and the gap d (the contact's
 * integral of the ball's velocity, d(0) = h0). In flight dp/dt = -m g,
 * dd/dt = p / m. The impact is the first time d <= 0 with the ball
 * approaching; there p becomes -e p (approach faster than vrest), or the
 * ball rests (p = 0, d as it is) for the rest of the run.
 *
 * Dormand-Prince 5(4) (hand_dopri5.h) at hbg's default tolerance, rtol
 * 1e-6 with the nominal magnitude 1 for both states; the first trial step
 * is 1e-3 and each restart after an impact keeps the step size reached
 * before it. Impacts are located by the Illinois method on the step's
 * interpolant of d (exact here: d is quadratic in time), to neighbouring
 * doubles of time, on each monotone piece of the interpolant in turn, so
 * that a step that rises and falls again is not missed.
 *
 * Usage: ball_hand [T_END [E]]   (10, 0.8)
 * Writes the CSV of hbgc run (101 rows of time, h = d, v = p / m at
 * t = k T_END / 100, from the interpolant); its counts on standard error.
 */
#include "hand_dopri5.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct {
  double m, g;
} ball;

static void rhs(double t, const double *x, double *dx, const void *ud) {
  const ball *b = (const ball *)ud;
  (void)t;
  dx[0] = -b->m * b->g;
  dx[1] = x[0] / b->m;
}

static void row(double t, const double *x, double m) {
  printf("%.17g,%.17g,%.17g\n", t, x[1], x[0] / m);
}

int main(int argc, char **argv) {
  const double t_end = argc > 1 ? atof(argv[1]) : 10.0;
  const double e = argc > 2 ? atof(argv[2]) : 0.8;
  const double h0 = 1.0, vrest = 7e-7;
  ball b = {1.0, 9.81};
  if (!(t_end > 0)) {
    fprintf(stderr, "usage: ball_hand [T_END [E]]\n");
    return 2;
  }
  double x[2] = {0.0, h0}, nominal[2] = {1.0, 1.0}, xi[2];
  hd_stepper s;
  hd_init(&s, 2, rhs, &b, 0.0, x, nominal, 1e-6, 1e-3);

  printf("time,h,v\n");
  row(0.0, s.x, b.m);
  int next_row = 1;
  long bounces = 0;
  double last_bounce = 0.0, rest_time = -1.0;
  while (s.t < t_end) {
    if (hd_step(&s, t_end) < 0) {
      fprintf(stderr, "ball_hand: step size underflow at t = %g\n", s.t);
      return 1;
    }
    /* the first passage of d from > 0 to <= 0 inside the step */
    double th_event = hd_first_crossing(&s, 1);
    double t_event = th_event >= 0 ? s.t0 + th_event * s.hs : s.t;
    if (th_event >= 0) {
      hd_interp_all(&s, th_event, xi);
      if (!(xi[0] < 0)) /* not approaching: no impact */
        th_event = -1.0, t_event = s.t;
    }
    /* rows up to the step's end, or the impact */
    while (next_row <= 100) {
      double tr = next_row == 100 ? t_end : t_end * next_row / 100.0;
      if (tr > t_event)
        break;
      double r[2] = {0.0, 0.0};
      hd_interp_all(&s, (tr - s.t0) / s.hs, r);
      if (tr == s.t)
        r[0] = s.x[0], r[1] = s.x[1];
      row(tr, r, b.m);
      ++next_row;
    }
    if (th_event < 0)
      continue;
    double v = xi[0] / b.m;
    if (-v > vrest) {
      xi[0] = -e * xi[0];
      ++bounces;
      last_bounce = t_event;
      hd_restart(&s, t_event, xi);
    } else {
      rest_time = t_event;
      xi[0] = 0.0;
      for (; next_row <= 100; ++next_row)
        row(next_row == 100 ? t_end : t_end * next_row / 100.0, xi, b.m);
      break;
    }
  }
  fprintf(stderr, "ball_hand: %ld bounces, last at %.10g s, rest at %.10g s; %ld steps, "
                  "%ld rejected, %ld rhs calls\n",
          bounces, last_bounce, rest_time, s.accepted, s.rejected, s.rhs_calls);
  return 0;
}
