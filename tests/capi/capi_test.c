/* The C API: compile, parameters, inputs, advance, outputs, events and
 * error text, the periodic steady state, its losses and the frequency
 * response around it, from C. Exits 0 when every check passes; prints
 * each failed check. */
#include "hbg/hbg_c.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);                     \
      ++failures;                                                                                  \
    }                                                                                              \
  } while (0)

#define CHECK_CLOSE(a, b, tol)                                                                     \
  do {                                                                                             \
    double a_ = (a), b_ = (b);                                                                     \
    if (!(fabs(a_ - b_) <= (tol) * (1 + fabs(b_)))) {                                              \
      fprintf(stderr, "%s:%d: %s = %.15g, expected %.15g\n", __FILE__, __LINE__, #a, a_, b_);      \
      ++failures;                                                                                  \
    }                                                                                              \
  } while (0)

/* v' = (u - v) / (R C) with R C = 0.5, and a switch the input `close`
 * closes: the capacitor charges only while it is closed. */
static const char *kModel =
    "model Driven {\n"
    "    input u = 1;\n"
    "    input close;\n"
    "    parameter R = 1;\n"
    "    parameter C = 0.5;\n"
    "    MSe src(u);\n"
    "    R res(R);\n"
    "    C cap(C);\n"
    "    1 loop switched {\n"
    "        off open initial; on closed;\n"
    "        open -> closed when (close > 0.5)+;\n"
    "        closed -> open when (close < 0.5)+;\n"
    "    }\n"
    "    bond src -> loop; bond loop -> res; bond loop -> cap;\n"
    "    output v = cap.e;\n"
    "}\n";

static void compile_errors(void) {
  char *error = NULL;
  hbg_model *m = hbg_compile_string("model M { R r(; }", "bad.hbg", &error);
  CHECK(m == NULL);
  CHECK(error != NULL && strstr(error, "bad.hbg:1:") == error);
  hbg_free_string(error);
  error = NULL;
  CHECK(hbg_compile_file("/nonexistent/model.hbg", &error) == NULL);
  CHECK(error != NULL && strstr(error, "model.hbg") != NULL);
  hbg_free_string(error);
  /* No room for the message: NULL all the same. */
  CHECK(hbg_compile_string("model M { R r(x); }", NULL, NULL) == NULL);
}

/* A run that fails: its kind, time and output, as fields. */
static void run_errors(void) {
  /* q' = -1 - sqrt(q) from q = 1 empties the capacitor at t = 2 (1 - ln 2). */
  hbg_model *m =
      hbg_compile_string("model Root {\n"
                         "  Se src(-1); R res(1); C cap(e = sqrt(q)) { q0 = 1; } 1 loop;\n"
                         "  bond src -> loop; bond loop -> res; bond loop -> cap;\n"
                         "  output v = cap.e;\n"
                         "}\n",
                         "root.hbg", NULL);
  CHECK(m != NULL);
  if (!m)
    return;
  hbg_sim *sim = hbg_sim_new(m);
  CHECK(hbg_sim_start(sim) == HBG_OK);
  CHECK(strcmp(hbg_sim_error_kind(sim), "") == 0);
  CHECK(isnan(hbg_sim_error_time(sim)));
  CHECK(hbg_sim_advance(sim, 0.5) == HBG_OK);
  CHECK(hbg_sim_advance(sim, 2) == HBG_ERROR);
  CHECK(strcmp(hbg_sim_error_kind(sim), "RunDerivativeNotFinite") == 0);
  CHECK(fabs(hbg_sim_error_time(sim) - 2 * (1 - log(2.0))) < 1e-5);
  CHECK(strcmp(hbg_sim_error_element(sim), "cap.q") == 0);
  CHECK(strstr(hbg_sim_error(sim), "model `Root` at t = ") == hbg_sim_error(sim));
  CHECK(strstr(hbg_sim_error(sim), ": the derivative of state `cap.q` is not finite") != NULL);
  /* Another kind of error clears the fields. */
  CHECK(hbg_sim_set_parameter(sim, "nope", 1) == HBG_ERROR);
  CHECK(strcmp(hbg_sim_error_kind(sim), "") == 0);
  hbg_sim_free(sim);
  hbg_model_free(m);
}

/* The buck converter of tests/steady in its periodic steady state: the
 * figures against the exact ones, the mean output against D Vin, the
 * period's rows, and the errors. */
static void steady_state(void) {
  char *error = NULL;
  hbg_model *buck = hbg_compile_file(HBG_SOURCE_DIR "/tests/steady/models/buck_ccm.hbg", &error);
  CHECK(buck != NULL);
  if (!buck) {
    fprintf(stderr, "%s\n", error ? error : "");
    hbg_free_string(error);
    ++failures;
    return;
  }
  hbg_steady *s = hbg_model_steady(buck, 0, NULL, NULL, 0, 0);
  CHECK(s != NULL);
  CHECK(hbg_steady_status(s) == HBG_OK);
  CHECK(strcmp(hbg_steady_error(s), "") == 0);
  CHECK_CLOSE(hbg_steady_period(s), 5e-5, 1e-15);
  CHECK(hbg_steady_residual(s) <= 1e-11);
  CHECK(hbg_steady_iteration_count(s) >= 1);
  /* The exact periodic steady state (matrix exponentials per switch
   * state), as `/usr/bin/python3 tests/steady/reference.py buck_ccm`
   * prints it. */
  double mean = 0, rms = 0, min = 0, max = 0;
  CHECK(hbg_steady_figures(s, "vout", &mean, &rms, &min, &max) == HBG_OK);
  CHECK_CLOSE(mean, 4.799999999999999, 1e-10);
  CHECK_CLOSE(rms, 4.80000111132967, 1e-10);
  CHECK_CLOSE(min, 4.795197174407911, 1e-10);
  CHECK_CLOSE(max, 4.804202752628431, 1e-10);
  CHECK(hbg_steady_figures(s, "il", &mean, NULL, &min, NULL) == HBG_OK);
  CHECK_CLOSE(mean, 0.4800000000000008, 1e-10);
  CHECK_CLOSE(min, 0.40796406611719427, 1e-10);
  CHECK(hbg_steady_figures(s, "iL", &mean, NULL, NULL, NULL) == HBG_ERROR);
  /* The period's rows: time from 0 to T, then vout and il. */
  CHECK(hbg_steady_column_count(s) == 3);
  CHECK(strcmp(hbg_steady_column_name(s, 1), "vout") == 0);
  CHECK(hbg_steady_column_name(s, 3) == NULL && hbg_steady_column(s, 3) == NULL);
  size_t rows = hbg_steady_row_count(s);
  CHECK(rows >= 1001);
  const double *time = hbg_steady_column(s, 0), *vout = hbg_steady_column(s, 1);
  CHECK(time[0] == 0);
  CHECK_CLOSE(time[rows - 1], 5e-5, 1e-12);
  CHECK(vout[0] >= 4.795 && vout[0] <= 4.805);
  CHECK(hbg_steady_mode_count(s) == 2);
  CHECK(strcmp(hbg_steady_mode(s, 0), "switch.j=closed, diode.j=blocking") == 0);
  CHECK_CLOSE(hbg_steady_mode_phase(s, 1), 2e-5, 1e-9);
  CHECK(hbg_steady_mode(s, 2) == NULL && isnan(hbg_steady_mode_phase(s, 2)));
  /* The power balance: the load takes rms(vout)^2 / R, the supply gives
   * the same (ideal switches lose nothing). */
  {
    double load = NAN, supply = NAN, power = 0, vrms = 0;
    const char *name = NULL, *kind = NULL;
    CHECK(hbg_steady_figures(s, "vout", NULL, &vrms, NULL, NULL) == HBG_OK);
    for (size_t i = 0; i < hbg_steady_loss_count(s); ++i) {
      CHECK(hbg_steady_loss(s, i, &name, &kind, &power) == HBG_OK);
      if (strcmp(name, "load.r") == 0 && strcmp(kind, "R") == 0)
        load = power;
      if (strcmp(name, "supply.s") == 0 && strcmp(kind, "MSe") == 0)
        supply = power;
    }
    CHECK_CLOSE(load, vrms * vrms / 10, 1e-10);
    CHECK_CLOSE(supply, load, 1e-10);
    CHECK(fabs(hbg_steady_switching_loss(s)) <= 1e-10);
    CHECK(hbg_steady_loss(s, hbg_steady_loss_count(s), &name, &kind, &power) == HBG_ERROR);
  }
  hbg_steady_free(s);

  /* Other duty cycles and loads: the mean output is D Vin exactly. */
  {
    const char *names[] = {"D", "R"};
    double values[] = {0.3, 20};
    s = hbg_model_steady(buck, 2, names, values, 0, 0);
    CHECK(hbg_steady_status(s) == HBG_OK);
    CHECK(hbg_steady_figures(s, "vout", &mean, NULL, NULL, NULL) == HBG_OK);
    CHECK_CLOSE(mean, 0.3 * 12, 1e-10);
    hbg_steady_free(s);
  }

  /* An unknown name: a result that says so. */
  {
    const char *names[] = {"Dd"};
    double values[] = {0.5};
    s = hbg_model_steady(buck, 1, names, values, 0, 0);
    CHECK(hbg_steady_status(s) == HBG_ERROR);
    CHECK(strcmp(hbg_steady_error(s),
                 "model `BuckCcm` has no parameter or input `Dd`; did you mean `D`?") == 0);
    CHECK(strcmp(hbg_steady_error_kind(s), "") == 0);
    CHECK(hbg_steady_figures(s, "vout", &mean, NULL, NULL, NULL) == HBG_ERROR);
    CHECK(hbg_steady_row_count(s) == 0);
    CHECK(hbg_steady_loss_count(s) == 0);
    CHECK(isnan(hbg_steady_switching_loss(s)));
    hbg_steady_free(s);
  }
  hbg_model_free(buck);

  /* A model without a period: the error says why. */
  hbg_model *constant =
      hbg_compile_file(HBG_SOURCE_DIR "/tests/steady/Inputs/no_time.hbg", NULL);
  CHECK(constant != NULL);
  s = hbg_model_steady(constant, 0, NULL, NULL, 0, 0);
  CHECK(hbg_steady_status(s) == HBG_ERROR);
  CHECK(strcmp(hbg_steady_error(s), "model `RcConstant`: no period: no source of the model "
                                    "depends on time; give one with --period") == 0);
  CHECK(strcmp(hbg_steady_error_kind(s), "SteadyNoPeriod") == 0);
  CHECK(isnan(hbg_steady_residual(s)));
  hbg_steady_free(s);
  /* ... and with one given, the steady state of its constant supply. */
  s = hbg_model_steady(constant, 0, NULL, NULL, 1e-3, 0);
  CHECK(hbg_steady_status(s) == HBG_OK);
  CHECK(hbg_steady_figures(s, "v", &mean, NULL, NULL, NULL) == HBG_OK);
  CHECK_CLOSE(mean, 5, 1e-9);
  hbg_steady_free(s);
  hbg_model_free(constant);

  CHECK(hbg_model_steady(NULL, 0, NULL, NULL, 0, 0) == NULL);
  CHECK(hbg_steady_status(NULL) == HBG_ERROR);
  hbg_steady_free(NULL);
}

/* The buck's small-signal response to its duty cycle: at 10 Hz and
 * 100 Hz, far below its switching frequency, the LC filter's
 * Vin / (1 + s L / R + s^2 L C). */
static void frequency_response(void) {
  hbg_model *buck = hbg_compile_file(HBG_SOURCE_DIR "/tests/steady/models/buck_ccm.hbg", NULL);
  CHECK(buck != NULL);
  if (!buck)
    return;
  const double freqs[] = {10, 100};
  hbg_ac *ac = hbg_model_ac(buck, "D", 2, freqs, 0, NULL, NULL, 0);
  CHECK(ac != NULL);
  CHECK(hbg_ac_status(ac) == HBG_OK);
  CHECK(strcmp(hbg_ac_error(ac), "") == 0);
  for (size_t k = 0; k < 2; ++k) {
    double w = 2 * 3.14159265358979323846 * freqs[k], L = 1e-3, C = 1e-4, R = 10;
    /* 12 / (a + j b) */
    double a = 1 - w * w * L * C, b = w * L / R, d = a * a + b * b;
    double re = NAN, im = NAN, mag = 12 / sqrt(d);
    CHECK(hbg_ac_response(ac, "vout", k, &re, &im) == HBG_OK);
    CHECK(fabs(re - 12 * a / d) <= 1e-6 * mag);
    CHECK(fabs(im + 12 * b / d) <= 1e-6 * mag);
  }
  CHECK(hbg_ac_response(ac, "vout", 2, NULL, NULL) == HBG_ERROR);
  CHECK(hbg_ac_response(ac, "vot", 0, NULL, NULL) == HBG_ERROR);
  hbg_ac_free(ac);

  /* An unknown input: a result that says so. */
  ac = hbg_model_ac(buck, "Duty", 2, freqs, 0, NULL, NULL, 0);
  CHECK(hbg_ac_status(ac) == HBG_ERROR);
  CHECK(strstr(hbg_ac_error(ac), "model `BuckCcm` has no parameter or input `Duty`") != NULL);
  CHECK(strcmp(hbg_ac_error_kind(ac), "") == 0);
  CHECK(hbg_ac_response(ac, "vout", 0, NULL, NULL) == HBG_ERROR);
  hbg_ac_free(ac);
  CHECK(hbg_model_ac(NULL, "D", 2, freqs, 0, NULL, NULL, 0) == NULL);
  CHECK(hbg_ac_status(NULL) == HBG_ERROR);
  hbg_model_free(buck);
}

int main(void) {
  char *error = NULL;
  hbg_model *model = hbg_compile_string(kModel, "driven.hbg", &error);
  if (!model) {
    fprintf(stderr, "%s", error);
    hbg_free_string(error);
    return 1;
  }
  CHECK(strcmp(hbg_model_name(model), "Driven") == 0);
  CHECK(hbg_model_input_count(model) == 2);
  CHECK(strcmp(hbg_model_input_name(model, 0), "u") == 0);
  CHECK(strcmp(hbg_model_input_name(model, 1), "close") == 0);
  CHECK(hbg_model_input_name(model, 2) == NULL);
  CHECK(hbg_model_name(NULL) == NULL && hbg_model_output_count(NULL) == 0);
  CHECK(hbg_sim_new(NULL) == NULL);
  CHECK(hbg_sim_start(NULL) == HBG_ERROR);
  CHECK(hbg_model_parameter_count(model) == 4);
  CHECK(hbg_model_output_count(model) == 1);
  CHECK(strcmp(hbg_model_output_name(model, 0), "v") == 0);
  CHECK(hbg_model_state_count(model) == 1);
  CHECK(strcmp(hbg_model_state_name(model, 0), "cap.q") == 0);

  hbg_sim *sim = hbg_sim_new(model);
  CHECK(isnan(hbg_sim_time(sim)));
  CHECK(hbg_sim_mode(sim) == NULL);
  CHECK(hbg_sim_set_tolerances(sim, 1e-10, 1e-14) == HBG_OK);
  CHECK(hbg_sim_set_method(sim, "rk5") == HBG_ERROR);
  CHECK(strstr(hbg_sim_error(sim), "unknown method `rk5`") != NULL);
  CHECK(hbg_sim_set_parameter(sim, "R", 2) == HBG_OK); /* R C = 1 */
  CHECK(hbg_sim_set_parameter(sim, "Q", 2) == HBG_ERROR);
  CHECK(strcmp(hbg_sim_error(sim), "model `Driven` has no parameter `Q`") == 0);
  CHECK(hbg_sim_set_input(sim, "close", 1) == HBG_OK);
  CHECK(hbg_sim_start(sim) == HBG_OK);
  CHECK(strcmp(hbg_sim_mode(sim), "loop=closed") == 0);
  CHECK(hbg_sim_time(sim) == 0);

  /* Charging with tau = R C = 1: v = 1 - e^{-t}. */
  for (int k = 1; k <= 10; ++k)
    CHECK(hbg_sim_advance(sim, 0.1 * k) == HBG_OK);
  double v = 0;
  CHECK(hbg_sim_output(sim, "v", &v) == HBG_OK);
  CHECK_CLOSE(v, 1 - exp(-1.0), 1e-8);
  /* Opening holds the charge: an event at t = 1. */
  CHECK(hbg_sim_set_input(sim, "close", 0) == HBG_OK);
  CHECK(strcmp(hbg_sim_mode(sim), "loop=open") == 0);
  CHECK(hbg_sim_advance(sim, 2) == HBG_OK);
  double y[1], x[1];
  CHECK(hbg_sim_outputs(sim, y, 1) == HBG_OK);
  CHECK_CLOSE(y[0], 1 - exp(-1.0), 1e-8);
  CHECK(hbg_sim_states(sim, x, 1) == HBG_OK);
  CHECK_CLOSE(x[0], 0.5 * y[0], 1e-12);
  CHECK(hbg_sim_states(sim, x, 0) == HBG_ERROR);
  CHECK(hbg_sim_outputs(sim, NULL, 1) == HBG_ERROR);
  /* Closed again with u = -1: v = -1 + (v2 + 1) e^{-(t - 2)}. */
  double v2 = y[0];
  CHECK(hbg_sim_set_input(sim, "u", -1) == HBG_OK);
  CHECK(hbg_sim_set_input(sim, "close", 1) == HBG_OK);
  CHECK(hbg_sim_advance(sim, 3) == HBG_OK);
  CHECK(hbg_sim_output(sim, "v", &v) == HBG_OK);
  CHECK_CLOSE(v, -1 + (v2 + 1) * exp(-1.0), 1e-8);
  CHECK(hbg_sim_event_count(sim) == 3); /* closed at 0, opened at 1, closed at 2 */
  CHECK(hbg_sim_event_time(sim, 1) == 1);
  CHECK(hbg_sim_event_time(sim, 2) == 2);
  CHECK(isnan(hbg_sim_event_time(sim, 3)));

  /* Errors carry their text and leave the run where it was. */
  CHECK(hbg_sim_set_input(sim, "clos", 1) == HBG_ERROR);
  CHECK(strcmp(hbg_sim_error(sim), "model `Driven` has no input `clos`; did you mean `close`?") == 0);
  CHECK(hbg_sim_output(sim, "w", &v) == HBG_ERROR);
  CHECK(hbg_sim_advance(sim, 2.5) == HBG_ERROR);
  CHECK(strstr(hbg_sim_error(sim), "cannot advance to t = 2.5") != NULL);
  CHECK(hbg_sim_time(sim) == 3);
  CHECK(hbg_sim_advance(sim, 4) == HBG_OK); /* a refused time leaves the run going */
  CHECK(hbg_sim_time(sim) == 4);
  /* Starting over clears it. */
  CHECK(hbg_sim_start(sim) == HBG_OK);
  CHECK(hbg_sim_advance(sim, 0.5) == HBG_OK);
  CHECK(hbg_sim_event_count(sim) == 1);

  hbg_sim_free(sim);
  hbg_model_free(model);
  compile_errors();
  run_errors();
  steady_state();
  frequency_response();
  if (failures)
    fprintf(stderr, "%d checks failed\n", failures);
  else
    printf("capi_test: all checks passed\n");
  return failures ? 1 : 0;
}
