/* What the hand-written CVODE programs of bench/ share: failing loudly,
 * creating an integrator with per-state absolute tolerances, and the
 * output grid hbgc run writes by default (101 rows, t = k T_END / 100,
 * the last exactly T_END). Each program includes it once. */
#ifndef HBG_BENCH_CVODE_SETUP_H
#define HBG_BENCH_CVODE_SETUP_H

#include <cvode/cvode.h>
#include <nvector/nvector_serial.h>

#include <stdio.h>
#include <stdlib.h>

/* The program's name in messages; set by main before anything else. */
static const char *program_name = "cvode";

static void die(const char *what, int flag) {
  fprintf(stderr, "%s: %s failed (flag %d)\n", program_name, what, flag);
  exit(1);
}

/* CVODE with method `lmm` (CV_ADAMS or CV_BDF) from t = 0 at y, scalar
 * rtol and per-state abstol, `user_data` for rhs and at most max_steps
 * steps to each output time. */
static void *cvode_start(int lmm, CVRhsFn rhs, N_Vector y, double rtol, N_Vector abstol,
                         void *user_data, long max_steps, SUNContext ctx) {
  int f;
  void *mem = CVodeCreate(lmm, ctx);
  if (!mem)
    die("CVodeCreate", 0);
  if ((f = CVodeInit(mem, rhs, 0.0, y)) < 0)
    die("CVodeInit", f);
  if ((f = CVodeSVtolerances(mem, rtol, abstol)) < 0)
    die("CVodeSVtolerances", f);
  if ((f = CVodeSetUserData(mem, user_data)) < 0)
    die("CVodeSetUserData", f);
  if ((f = CVodeSetMaxNumSteps(mem, max_steps)) < 0)
    die("CVodeSetMaxNumSteps", f);
  return mem;
}

/* Integrates to t_end and calls row(t, y, data) at t = 0 and at the 100
 * output times, the last exactly t_end (CVODE's interpolant between its
 * steps, as hbgc's dense output). */
static void cvode_run_grid(void *mem, N_Vector y, double t_end,
                           void (*row)(double t, N_Vector y, void *data), void *data) {
  row(0.0, y, data);
  realtype t = 0.0;
  for (int k = 1; k <= 100; ++k) {
    double tout = k == 100 ? t_end : t_end * k / 100.0;
    int f = CVode(mem, tout, y, &t, CV_NORMAL);
    if (f < 0)
      die("CVode", f);
    row(t, y, data);
  }
}

#endif
