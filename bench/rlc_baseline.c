/* The series RLC of examples/rlc.hbg written by hand: the baseline of
 * bench/startup.sh for a built simulator's start-to-finish time. Classic
 * RK4 with step 1e-4 to t = 0.01 (100 steps, more than the 28 dopri5
 * takes), writing the same 101 rows of CSV (time, capacitor.q, current)
 * to standard output. */
#include <stdio.h>

static void rhs(const double x[2], double dx[2]) {
  const double V = 1.0, R = 1.0, L = 0.5, C = 0.1;
  double i = x[1] / L;                     /* inductor.f = p / L */
  dx[0] = i;                               /* q' = i */
  dx[1] = V - R * i - x[0] / C;            /* p' = V - R i - q / C */
}

int main(void) {
  double x[2] = {0, 0}, k1[2], k2[2], k3[2], k4[2], y[2];
  const double h = 1e-4;
  printf("time,capacitor.q,current\n");
  for (int n = 0; n <= 100; ++n) {
    printf("%.17g,%.17g,%.17g\n", n * h, x[0], x[1] / 0.5);
    if (n == 100)
      break;
    rhs(x, k1);
    for (int j = 0; j < 2; ++j) y[j] = x[j] + h / 2 * k1[j];
    rhs(y, k2);
    for (int j = 0; j < 2; ++j) y[j] = x[j] + h / 2 * k2[j];
    rhs(y, k3);
    for (int j = 0; j < 2; ++j) y[j] = x[j] + h * k3[j];
    rhs(y, k4);
    for (int j = 0; j < 2; ++j) x[j] += h / 6 * (k1[j] + 2 * k2[j] + 2 * k3[j] + k4[j]);
  }
  return 0;
}
