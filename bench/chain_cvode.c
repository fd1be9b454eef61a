/* The chain of N masses of bench/chain_bench.cpp, written by hand on
 * SUNDIALS CVODE: Adams-Moulton with fixed-point (functional) iteration,
 * no linear solver. The baseline of bench/whole.sh for `hbgc run` on the
 * .hbg text `hbg_bench_chain --print-model N` prints.
 *
 * Mass i sits between spring i (to mass i-1, or the wall for i = 0) and
 * spring i+1; the last mass is free on its right; each has a damper to
 * ground. With v_i = p_i / m_i, F_i = q_i / c_i, v_{-1} = 0, F_N = 0:
 *
 *   dq_i/dt = v_i - v_{i-1}
 *   dp_i/dt = F_{i+1} - F_i - b_i v_i
 *
 * State layout x[2i] = q_i, x[2i+1] = p_i, as hbg orders it. The parameters
 * and initial extensions come from the same splitmix64 generator and seed
 * as chain_bench.cpp's chainModel(), drawn in the same order: m_i, c_i, b_i
 * for every mass, then q0_i for every spring; every p0_i is 0.
 *
 * Tolerances: scalar rtol and atol_i = rtol * nominal_i, where nominal_i is
 * the magnitude hbg derives from the initial energy W = sum q0^2 / (2 c)
 * (docs/numerics.md): 1e-3 sqrt(2 c_i W) for q_i, 1e-3 sqrt(2 m_i W) for
 * p_i. CVODE's norm is a weighted RMS, hbg's a maximum, so equal rtol does
 * not mean equal accuracy; bench/whole.sh picks rtol by measured error.
 *
 * Usage: chain_cvode N [T_END [RTOL [--final]]]
 * Writes the CSV hbgc run writes by default: 101 rows of time and the last
 * mass's momentum at t = k T_END / 100 (CVODE's interpolant). --final adds
 * a line "final" followed by all 2N states at T_END, %.17g, for accuracy
 * checks. Statistics go to standard error.
 */
#include "cvode_setup.h"

#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  long n;
  double *m, *c, *b;
} chain;

/* splitmix64, as chain_bench.cpp's Rng. */
static uint64_t rng_state;
static double uniform(double lo, double hi) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return lo + (hi - lo) * ((double)(z >> 11) * 0x1.0p-53);
}

static int rhs(realtype t, N_Vector y, N_Vector ydot, void *ud) {
  const chain *ch = (const chain *)ud;
  const double *x = N_VGetArrayPointer(y);
  double *dx = N_VGetArrayPointer(ydot);
  const long n = ch->n;
  double vprev = 0.0; /* v_{i-1}: the wall's is 0 */
  (void)t;
  for (long i = 0; i < n; ++i) {
    double v = x[2 * i + 1] / ch->m[i];
    double f = x[2 * i] / ch->c[i];
    double fnext = i + 1 < n ? x[2 * i + 2] / ch->c[i + 1] : 0.0;
    dx[2 * i] = v - vprev;
    dx[2 * i + 1] = fnext - f - ch->b[i] * v;
    vprev = v;
  }
  return 0;
}

/* One output row: the time and the last mass's momentum. */
static void print_row(double t, N_Vector y, void *data) {
  const chain *ch = (const chain *)data;
  printf("%.17g,%.17g\n", t, N_VGetArrayPointer(y)[2 * ch->n - 1]);
}

int main(int argc, char **argv) {
  program_name = "chain_cvode";
  if (argc < 2) {
    fprintf(stderr, "usage: chain_cvode N [T_END [RTOL [--final]]]\n");
    return 2;
  }
  const long n = atol(argv[1]);
  const double t_end = argc > 2 ? atof(argv[2]) : 10.0;
  const double rtol = argc > 3 ? atof(argv[3]) : 1e-6;
  const int final = argc > 4 && strcmp(argv[4], "--final") == 0;
  if (n < 1 || !(t_end > 0) || !(rtol > 0)) {
    fprintf(stderr, "chain_cvode: bad arguments\n");
    return 2;
  }

  chain ch = {n, malloc(n * sizeof(double)), malloc(n * sizeof(double)),
              malloc(n * sizeof(double))};
  double *q0 = malloc(n * sizeof(double));
  rng_state = 0x5eed0000ull + (uint64_t)n;
  for (long i = 0; i < n; ++i) {
    ch.m[i] = uniform(1.0, 2.0);
    ch.c[i] = uniform(0.005, 0.01);
    ch.b[i] = uniform(0.1, 0.5);
  }
  double energy = 0.0;
  for (long i = 0; i < n; ++i) {
    q0[i] = uniform(-0.01, 0.01);
    energy += q0[i] * q0[i] / (2.0 * ch.c[i]);
  }

  SUNContext ctx;
  int f;
  if ((f = SUNContext_Create(NULL, &ctx)) < 0)
    die("SUNContext_Create", f);
  N_Vector y = N_VNew_Serial(2 * n, ctx), abstol = N_VNew_Serial(2 * n, ctx);
  double *x = N_VGetArrayPointer(y), *at = N_VGetArrayPointer(abstol);
  for (long i = 0; i < n; ++i) {
    x[2 * i] = q0[i];
    x[2 * i + 1] = 0.0;
    at[2 * i] = rtol * 1e-3 * sqrt(2.0 * ch.c[i] * energy);
    at[2 * i + 1] = rtol * 1e-3 * sqrt(2.0 * ch.m[i] * energy);
  }

  void *mem = cvode_start(CV_ADAMS, rhs, y, rtol, abstol, &ch, 10000000, ctx);
  SUNNonlinearSolver nls = SUNNonlinSol_FixedPoint(y, 0, ctx);
  if (!nls)
    die("SUNNonlinSol_FixedPoint", 0);
  if ((f = CVodeSetNonlinearSolver(mem, nls)) < 0)
    die("CVodeSetNonlinearSolver", f);

  printf("time,x\n");
  cvode_run_grid(mem, y, t_end, print_row, &ch);
  if (final) {
    printf("final\n");
    for (long i = 0; i < 2 * n; ++i)
      printf("%.17g\n", x[i]);
  }

  long steps = 0, nfe = 0, nni = 0, ncfn = 0, netf = 0;
  CVodeGetNumSteps(mem, &steps);
  CVodeGetNumRhsEvals(mem, &nfe);
  CVodeGetNumNonlinSolvIters(mem, &nni);
  CVodeGetNumNonlinSolvConvFails(mem, &ncfn);
  CVodeGetNumErrTestFails(mem, &netf);
  fprintf(stderr, "chain_cvode: N %ld rtol %g: %ld steps, %ld rhs, %ld iterations, "
                  "%ld convergence failures, %ld error test failures\n",
          n, rtol, steps, nfe, nni, ncfn, netf);

  CVodeFree(&mem);
  SUNNonlinSolFree(nls);
  N_VDestroy(y);
  N_VDestroy(abstol);
  SUNContext_Free(&ctx);
  free(ch.m), free(ch.c), free(ch.b), free(q0);
  return 0;
}
