//===- bench/stiff_cvode.h - CVODE BDF baseline for the stiff benchmark ---===//
//
// C interface to the hand-written SUNDIALS CVODE baseline in stiff_cvode.c:
// an RC ladder integrated with BDF, a dense direct solver and an analytic
// Jacobian. Usable from C and C++.
//
//===----------------------------------------------------------------------===//

#ifndef HBG_BENCH_STIFF_CVODE_H
#define HBG_BENCH_STIFF_CVODE_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  long steps, rhs_evals, jac_evals, lu_setups, newton_iters, err_test_fails;
  double cpu_seconds; /* setup + integration, minimum over the repeats */
  int ok;             /* 1 on success */
  char message[256];  /* why not, on failure */
} hbg_cvode_stats;

/* Integrates the ladder with n nodes, resistances R[0..n-1] (R_k = R[k-1]),
   capacitances C[0..n-1], constant source V, every v_k(0) = 0, from t = 0 to
   t_end with relative tolerance rtol and per-state absolute tolerances
   atol[0..n-1]. Writes v(t_end) into v_end[0..n-1]. Repeats the whole run
   `repeat` times (>= 1) and reports the minimum cpu_seconds; the counters
   are from the last run. Returns 0 on success, nonzero otherwise (then
   stats->ok = 0 and stats->message says why). */
int hbg_cvode_rc_ladder(int n, const double *R, const double *C, double V,
                        double t_end, double rtol, const double *atol,
                        int repeat, double *v_end, hbg_cvode_stats *stats);

#ifdef __cplusplus
}
#endif

#endif // HBG_BENCH_STIFF_CVODE_H
