/* The stiff RC ladder of bench/rc_ladder.hbg written by hand on SUNDIALS
 * CVODE: BDF, Newton iteration, band linear solver (bandwidth 1) with the
 * analytic Jacobian. The baseline of bench/whole.sh.
 *
 * N sections of R = 1 ohm; capacitor k (1-based) has C_k = 10^(-6 (k-1) /
 * (N-1)) F and charge q_k, all zero at t = 0; a constant source V = 1 V
 * drives node 0. With v_k = q_k / C_k and v_0 = V:
 *
 *   i_k = (v_{k-1} - v_k) / R          current through resistor k
 *   dq_k/dt = i_k - i_{k+1}            i_{N+1} = 0
 *
 * The states are the charges, as in hbg. Tolerances are hbg's defaults:
 * rtol and atol_k = rtol * 1e-3 * C_k * V, the nominal charge hbg derives
 * from the source (docs/numerics.md).
 *
 * Usage: rc_ladder_cvode [N [T_END [RTOL [--final]]]]   (100, 10, 1e-6)
 * Writes the CSV hbgc run writes by default: 101 rows of time, v_1,
 * v_50 and v_N at t = k T_END / 100. --final adds a line "final" and the
 * N node voltages at T_END, %.17g. Statistics go to standard error.
 */
#include "cvode_setup.h"

#include <cvode/cvode_ls.h>
#include <sunlinsol/sunlinsol_band.h>
#include <sunmatrix/sunmatrix_band.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  sunindextype n;
  double V, R;
  double *C;
} ladder;

static int rhs(realtype t, N_Vector y, N_Vector ydot, void *ud) {
  const ladder *L = (const ladder *)ud;
  const double *q = N_VGetArrayPointer(y);
  double *dq = N_VGetArrayPointer(ydot);
  const sunindextype n = L->n;
  double vleft = L->V, iin;
  (void)t;
  double v = q[0] / L->C[0];
  iin = (vleft - v) / L->R;
  for (sunindextype k = 0; k + 1 < n; ++k) {
    double vnext = q[k + 1] / L->C[k + 1];
    double iout = (v - vnext) / L->R;
    dq[k] = iin - iout;
    iin = iout;
    v = vnext;
  }
  dq[n - 1] = iin;
  return 0;
}

/* d(dq_k)/dq_k = -(1 + [k < N]) / (R C_k), d(dq_k)/dq_{k-1} = 1 / (R C_{k-1}),
 * d(dq_k)/dq_{k+1} = 1 / (R C_{k+1}). */
static int jac(realtype t, N_Vector y, N_Vector fy, SUNMatrix J, void *ud,
               N_Vector t1, N_Vector t2, N_Vector t3) {
  const ladder *L = (const ladder *)ud;
  const sunindextype n = L->n;
  (void)t, (void)y, (void)fy, (void)t1, (void)t2, (void)t3;
  for (sunindextype k = 0; k < n; ++k) {
    double g = 1.0 / (L->R * L->C[k]);
    SM_ELEMENT_B(J, k, k) = k + 1 < n ? -2.0 * g : -g;
    if (k > 0)
      SM_ELEMENT_B(J, k - 1, k) = g;
    if (k + 1 < n)
      SM_ELEMENT_B(J, k + 1, k) = g;
  }
  return 0;
}

/* One output row: the time and the voltages of the first, the 50th and
 * the last capacitor. */
static void print_row(double t, N_Vector y, void *data) {
  const ladder *L = (const ladder *)data;
  const double *q = N_VGetArrayPointer(y);
  const long n = L->n, mid = 49; /* cap[50] */
  printf("%.17g,%.17g,%.17g,%.17g\n", t, q[0] / L->C[0], q[mid] / L->C[mid],
         q[n - 1] / L->C[n - 1]);
}

int main(int argc, char **argv) {
  program_name = "rc_ladder_cvode";
  const long n = argc > 1 ? atol(argv[1]) : 100;
  const double t_end = argc > 2 ? atof(argv[2]) : 10.0;
  const double rtol = argc > 3 ? atof(argv[3]) : 1e-6;
  const int final = argc > 4 && strcmp(argv[4], "--final") == 0;
  if (n < 50 || !(t_end > 0) || !(rtol > 0)) {
    fprintf(stderr, "usage: rc_ladder_cvode [N >= 50 [T_END [RTOL [--final]]]]\n");
    return 2;
  }
  ladder L = {n, 1.0, 1.0, malloc(n * sizeof(double))};
  for (long k = 0; k < n; ++k)
    L.C[k] = pow(10.0, -6.0 * (double)k / (double)(n - 1));

  SUNContext ctx;
  int f;
  if ((f = SUNContext_Create(NULL, &ctx)) < 0)
    die("SUNContext_Create", f);
  N_Vector y = N_VNew_Serial(n, ctx), abstol = N_VNew_Serial(n, ctx);
  double *q = N_VGetArrayPointer(y), *at = N_VGetArrayPointer(abstol);
  for (long k = 0; k < n; ++k) {
    q[k] = 0.0;
    at[k] = rtol * 1e-3 * L.C[k] * L.V;
  }
  void *mem = cvode_start(CV_BDF, rhs, y, rtol, abstol, &L, 1000000, ctx);
  SUNMatrix A = SUNBandMatrix(n, 1, 1, ctx);
  SUNLinearSolver LS = SUNLinSol_Band(y, A, ctx);
  if (!A || !LS)
    die("SUNBandMatrix/SUNLinSol_Band", 0);
  if ((f = CVodeSetLinearSolver(mem, LS, A)) < 0)
    die("CVodeSetLinearSolver", f);
  if ((f = CVodeSetJacFn(mem, jac)) < 0)
    die("CVodeSetJacFn", f);

  printf("time,v1,vmid,vN\n");
  cvode_run_grid(mem, y, t_end, print_row, &L);
  if (final) {
    printf("final\n");
    for (long k = 0; k < n; ++k)
      printf("%.17g\n", q[k] / L.C[k]);
  }

  long steps = 0, nfe = 0, nje = 0, nsetups = 0, nni = 0, netf = 0;
  CVodeGetNumSteps(mem, &steps);
  CVodeGetNumRhsEvals(mem, &nfe);
  CVodeGetNumJacEvals(mem, &nje);
  CVodeGetNumLinSolvSetups(mem, &nsetups);
  CVodeGetNumNonlinSolvIters(mem, &nni);
  CVodeGetNumErrTestFails(mem, &netf);
  fprintf(stderr, "rc_ladder_cvode: N %ld rtol %g: %ld steps, %ld rhs, %ld Jacobians, "
                  "%ld LU, %ld Newton iterations, %ld error test failures\n",
          n, rtol, steps, nfe, nje, nsetups, nni, netf);
  CVodeFree(&mem);
  SUNLinSolFree(LS);
  SUNMatDestroy(A);
  N_VDestroy(y);
  N_VDestroy(abstol);
  SUNContext_Free(&ctx);
  free(L.C);
  return 0;
}
