/* A hand-written Dormand-Prince 5(4) stepper with the Illinois root finder,
 * for the hand-written baselines of bench/whole.sh (ball_hand.c,
 * buck_hand.c). Header-only, C99, small fixed state size.
 *
 * Step control follows hbg's rule (docs/numerics.md): the step is accepted
 * when, for every state i,
 *
 *   |err_i| <= max(atol, rtol * nominal_i) + rtol * max(|x_i|, |x_i,new|)
 *
 * (a maximum norm), where nominal_i is raised to the largest |x_i| seen
 * after every accepted step. The new step is h * min(5, max(0.2,
 * 0.9 err^(-1/5))), and at most h after a rejection. Between the ends of a
 * step, states are interpolated by the cubic Hermite polynomial through
 * both ends and their derivatives (exact for the ball's quadratic flight).
 */
#ifndef HBG_BENCH_HAND_DOPRI5_H
#define HBG_BENCH_HAND_DOPRI5_H

#include <math.h>

#define HD_MAXN 4

typedef void (*hd_rhs)(double t, const double *x, double *dx, const void *ud);

typedef struct {
  int n;
  double rtol, atol;
  double nominal[HD_MAXN];
  hd_rhs f;
  const void *ud;
  double t, h;              /* current time; step to try next */
  double x[HD_MAXN];        /* state at t */
  double k1[HD_MAXN];       /* f(t, x), valid when have_k1 */
  int have_k1;
  /* the last accepted step, for interpolation */
  double t0, hs, x0[HD_MAXN], f0[HD_MAXN];
  long accepted, rejected, rhs_calls;
} hd_stepper;

static void hd_init(hd_stepper *s, int n, hd_rhs f, const void *ud, double t,
                    const double *x, const double *nominal, double rtol, double h) {
  s->n = n, s->f = f, s->ud = ud, s->t = t, s->h = h;
  s->rtol = rtol, s->atol = 0.0;
  for (int i = 0; i < n; ++i)
    s->x[i] = x[i], s->nominal[i] = fmax(nominal[i], fabs(x[i]));
  s->have_k1 = 0;
  s->accepted = s->rejected = s->rhs_calls = 0;
}

/* After an event changed the state: the next step starts afresh from x,
 * with the step size reached before it. */
static void hd_restart(hd_stepper *s, double t, const double *x) {
  s->t = t;
  for (int i = 0; i < s->n; ++i) {
    s->x[i] = x[i];
    if (fabs(x[i]) > s->nominal[i])
      s->nominal[i] = fabs(x[i]);
  }
  s->have_k1 = 0;
}

/* One accepted step, ending at t_stop at the latest (exactly on it when
 * it reaches it). Returns 0, or -1 when the step size underflows. */
static int hd_step(hd_stepper *s, double t_stop) {
  const double h_max = t_stop - s->t;
  const int n = s->n;
  double k2[HD_MAXN], k3[HD_MAXN], k4[HD_MAXN], k5[HD_MAXN], k6[HD_MAXN], k7[HD_MAXN];
  double y[HD_MAXN], xn[HD_MAXN];
  if (!s->have_k1) {
    s->f(s->t, s->x, s->k1, s->ud);
    ++s->rhs_calls;
    s->have_k1 = 1;
  }
  const double *x = s->x, *k1 = s->k1;
  double h = s->h;
  int last = 0;
  for (;;) {
    if (h >= h_max)
      h = h_max, last = 1;
    if (h <= 1e-14 * fabs(s->t) || h <= 0)
      return -1;
    const double t = s->t;
    for (int i = 0; i < n; ++i) y[i] = x[i] + h * (1.0 / 5) * k1[i];
    s->f(t + h / 5, y, k2, s->ud);
    for (int i = 0; i < n; ++i) y[i] = x[i] + h * (3.0 / 40 * k1[i] + 9.0 / 40 * k2[i]);
    s->f(t + 3 * h / 10, y, k3, s->ud);
    for (int i = 0; i < n; ++i)
      y[i] = x[i] + h * (44.0 / 45 * k1[i] - 56.0 / 15 * k2[i] + 32.0 / 9 * k3[i]);
    s->f(t + 4 * h / 5, y, k4, s->ud);
    for (int i = 0; i < n; ++i)
      y[i] = x[i] + h * (19372.0 / 6561 * k1[i] - 25360.0 / 2187 * k2[i] +
                         64448.0 / 6561 * k3[i] - 212.0 / 729 * k4[i]);
    s->f(t + 8 * h / 9, y, k5, s->ud);
    for (int i = 0; i < n; ++i)
      y[i] = x[i] + h * (9017.0 / 3168 * k1[i] - 355.0 / 33 * k2[i] + 46732.0 / 5247 * k3[i] +
                         49.0 / 176 * k4[i] - 5103.0 / 18656 * k5[i]);
    const double tn = last ? t_stop : t + h;
    s->f(tn, y, k6, s->ud);
    for (int i = 0; i < n; ++i)
      xn[i] = x[i] + h * (35.0 / 384 * k1[i] + 500.0 / 1113 * k3[i] + 125.0 / 192 * k4[i] -
                          2187.0 / 6784 * k5[i] + 11.0 / 84 * k6[i]);
    s->f(tn, xn, k7, s->ud);
    s->rhs_calls += 6;
    double err = 0.0;
    for (int i = 0; i < n; ++i) {
      double e = h * (71.0 / 57600 * k1[i] - 71.0 / 16695 * k3[i] + 71.0 / 1920 * k4[i] -
                      17253.0 / 339200 * k5[i] + 22.0 / 525 * k6[i] - 1.0 / 40 * k7[i]);
      double sc = fmax(s->atol, s->rtol * s->nominal[i]) +
                  s->rtol * fmax(fabs(x[i]), fabs(xn[i]));
      double r = fabs(e) / sc;
      if (r > err)
        err = r;
    }
    if (err <= 1.0) {
      double fac = err > 0 ? 0.9 * pow(err, -0.2) : 5.0;
      fac = fmin(5.0, fmax(0.2, fac));
      s->t0 = t, s->hs = tn - t;
      for (int i = 0; i < n; ++i) {
        s->x0[i] = x[i], s->f0[i] = k1[i];
        s->x[i] = xn[i], s->k1[i] = k7[i];
        if (fabs(xn[i]) > s->nominal[i])
          s->nominal[i] = fabs(xn[i]);
      }
      s->t = tn;
      /* a step cut short to land on h_max keeps the size it had */
      s->h = last ? fmax(s->h, h * fac) : h * fac;
      ++s->accepted;
      return 0;
    }
    ++s->rejected;
    last = 0;
    h *= fmax(0.2, 0.9 * pow(err, -0.2));
    s->h = h;
  }
}

/* Component i of the last accepted step's interpolant at theta in [0, 1]. */
static double hd_interp(const hd_stepper *s, int i, double th) {
  double x0 = s->x0[i], x1 = s->x[i], h = s->hs;
  return (1 - th) * x0 + th * x1 +
         th * (th - 1) * ((1 - 2 * th) * (x1 - x0) + (th - 1) * h * s->f0[i] + th * h * s->k1[i]);
}

static void hd_interp_all(const hd_stepper *s, double th, double *out) {
  for (int i = 0; i < s->n; ++i)
    out[i] = hd_interp(s, i, th);
}

/* The first theta in (0, 1] where component i's interpolant over the last
 * step passes from > 0 to <= 0, or -1. The cubic is split at the roots of
 * its derivative into monotone pieces, taken in order, so that a crossing
 * inside the step is found even when both ends are positive. */
static double hd_first_crossing(const hd_stepper *s, int i) {
  const double h = s->hs, x0 = s->x0[i], x1 = s->x[i];
  const double c1 = h * s->f0[i], c2 = 3 * (x1 - x0) - 2 * h * s->f0[i] - h * s->k1[i];
  const double c3 = 2 * (x0 - x1) + h * s->f0[i] + h * s->k1[i];
  double cut[4] = {0.0, 2.0, 2.0, 1.0};
  int m = 1;
  /* roots of c1 + 2 c2 th + 3 c3 th^2 in (0, 1), ascending */
  double A = 3 * c3, B = 2 * c2, C = c1;
  if (A != 0) {
    double disc = B * B - 4 * A * C;
    if (disc > 0) {
      double sq = sqrt(disc), q = -0.5 * (B + (B >= 0 ? sq : -sq));
      double r1 = q / A, r2 = q != 0 ? C / q : r1;
      if (r1 > r2) { double tmp = r1; r1 = r2; r2 = tmp; }
      if (r1 > 0 && r1 < 1) cut[m++] = r1;
      if (r2 > 0 && r2 < 1 && r2 != r1) cut[m++] = r2;
    }
  } else if (B != 0) {
    double r = -C / B;
    if (r > 0 && r < 1) cut[m++] = r;
  }
  cut[m++] = 1.0;
  double a = 0.0, ga = x0;
  for (int k = 1; k < m; ++k) {
    double b = cut[k], gb = k + 1 == m ? x1 : hd_interp(s, i, b);
    if (ga > 0 && gb <= 0) {
      /* Illinois on the monotone piece [a, b] */
      int side = 0;
      const double eps = 4e-16 * fmax(1.0, fabs(s->t0 + h)) / h;
      for (int it = 0; it < 200 && b - a > eps; ++it) {
        double c = b - gb * (b - a) / (gb - ga);
        if (!(c > a && c < b))
          c = 0.5 * (a + b);
        double gc = hd_interp(s, i, c);
        if (gc <= 0) {
          b = c, gb = gc;
          if (side == -1) ga *= 0.5;
          side = -1;
        } else {
          a = c, ga = gc;
          if (side == 1) gb *= 0.5;
          side = 1;
        }
      }
      return b;
    }
    a = b, ga = gb;
  }
  return -1.0;
}

#endif
