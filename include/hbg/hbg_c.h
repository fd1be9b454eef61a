/*===- hbg/hbg_c.h - The embedding API for C ------------------------------===
 *
 * hbg's embedding API (hbg/hbg.h) for C and for anything that calls C:
 * compile a model, set parameters and inputs, drive a simulation step by
 * step, and find a periodic steady state.
 *
 *   char *error = NULL;
 *   hbg_model *model = hbg_compile_file("motor.hbg", &error);
 *   if (!model) { fprintf(stderr, "%s", error); hbg_free_string(error); }
 *   hbg_sim *sim = hbg_sim_new(model);
 *   hbg_sim_start(sim);
 *   for (int k = 1; k <= 100; ++k) {
 *     hbg_sim_set_input(sim, "u", control(...));
 *     if (hbg_sim_advance(sim, 0.01 * k) != HBG_OK)
 *       fprintf(stderr, "%s\n", hbg_sim_error(sim));
 *   }
 *   hbg_sim_free(sim);
 *   hbg_model_free(model);
 *
 * Functions that can fail return HBG_OK or HBG_ERROR; after HBG_ERROR,
 * hbg_sim_error() says what failed (for a run: what, the mode and the
 * time), and hbg_steady_error() why a steady state was not found. A model may be shared by simulations on several threads; one
 * simulation is used by one thread at a time. Strings returned as
 * `const char *` stay valid until the object they came from is freed (or,
 * for hbg_sim_error() and hbg_sim_mode(), until the next call on it).
 *
 *===----------------------------------------------------------------------===*/
#ifndef HBG_HBG_C_H
#define HBG_HBG_C_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { HBG_OK = 0, HBG_ERROR = 1 };

typedef struct hbg_model hbg_model;
typedef struct hbg_sim hbg_sim;
typedef struct hbg_steady hbg_steady;
typedef struct hbg_ac hbg_ac;

/* Compiles a file or text (`name` names it in messages; may be NULL). On
 * failure returns NULL and, when `error` is not NULL, sets *error to the
 * rendered diagnostics (file:line:col, the line and a caret), to be freed
 * with hbg_free_string(). */
hbg_model *hbg_compile_file(const char *path, char **error);
hbg_model *hbg_compile_string(const char *text, const char *name, char **error);
void hbg_model_free(hbg_model *model);
void hbg_free_string(char *text);

/* The model's name and its named quantities, by index. The parameter list
 * includes the inputs (as Model::parameterNames()). A bad index or a NULL
 * model gives NULL (and counts of 0). */
const char *hbg_model_name(const hbg_model *model);
size_t hbg_model_parameter_count(const hbg_model *model);
const char *hbg_model_parameter_name(const hbg_model *model, size_t i);
size_t hbg_model_input_count(const hbg_model *model);
const char *hbg_model_input_name(const hbg_model *model, size_t i);
size_t hbg_model_output_count(const hbg_model *model);
const char *hbg_model_output_name(const hbg_model *model, size_t i);
size_t hbg_model_state_count(const hbg_model *model);
const char *hbg_model_state_name(const hbg_model *model, size_t i);

/* A simulation with the model's `experiment` settings; the model must
 * outlive it. */
hbg_sim *hbg_sim_new(const hbg_model *model);
void hbg_sim_free(hbg_sim *sim);

/* Settings, before hbg_sim_start(): a parameter, the start time, the
 * method ("euler", "rk4", "dopri5", "rosenbrock", "auto"), the
 * tolerances (rtol relative, atol absolute floor; 0: none) and the step
 * (fixed methods) or first trial step. */
int hbg_sim_set_parameter(hbg_sim *sim, const char *name, double value);
int hbg_sim_set_start_time(hbg_sim *sim, double t);
int hbg_sim_set_method(hbg_sim *sim, const char *method);
int hbg_sim_set_tolerances(hbg_sim *sim, double rtol, double atol);
int hbg_sim_set_step(hbg_sim *sim, double step);

/* Sets an input, before the start (its starting value) or between steps
 * (the model follows at once; an input that makes a guard true is an
 * event at the current time). */
int hbg_sim_set_input(hbg_sim *sim, const char *name, double value);

/* Starts (or starts over) at the start time, then integrates to exactly
 * `t`, handling every event on the way. After a run-time failure the
 * state stays where the run stopped and later calls fail too. */
int hbg_sim_start(hbg_sim *sim);
int hbg_sim_advance(hbg_sim *sim, double t);

/* The run's time, its outputs and full state at that time (`n` values
 * room in `out`: hbg_model_output_count() and hbg_model_state_count()),
 * one output by name, and the current mode (`j1=on, j2=off`; "" without
 * switched junctions). Before the start: HBG_ERROR, NaN time, NULL mode. */
double hbg_sim_time(const hbg_sim *sim);
int hbg_sim_outputs(hbg_sim *sim, double *out, size_t n);
int hbg_sim_output(hbg_sim *sim, const char *name, double *value);
int hbg_sim_states(hbg_sim *sim, double *out, size_t n);
const char *hbg_sim_mode(hbg_sim *sim);

/* Events since the start: how many, and the time of each. */
size_t hbg_sim_event_count(const hbg_sim *sim);
double hbg_sim_event_time(const hbg_sim *sim, size_t i);

/* What the last call that returned HBG_ERROR on `sim` failed on; "" when
 * none has. */
const char *hbg_sim_error(const hbg_sim *sim);
/* When that call failed because the run did (a loop that did not converge,
 * a value that is not finite, ...): the diagnostic's kind as named in
 * DiagnosticKinds.def ("RunOutputNotFinite"), its time (NaN when it has
 * none) and the element, state or output it names ("" when none). "" and
 * NaN after any other error. */
const char *hbg_sim_error_kind(const hbg_sim *sim);
double hbg_sim_error_time(const hbg_sim *sim);
const char *hbg_sim_error_element(const hbg_sim *sim);

/* The periodic steady state of `model` (hbg::Model::steady): the motion it
 * settles into under its periodic sources, found by shooting. `count`
 * parameters or inputs are set, names[i] to values[i] (the defaults
 * otherwise; NULL arrays when `count` is 0). `period` is the period T, or
 * 0 for the common period of the model's periodic sources; `rtol` the
 * period's integration's relative tolerance, or 0 for 1e-12. Returns NULL
 * only for a NULL model or when out of memory; otherwise a result to free
 * with hbg_steady_free(), also when the analysis failed (an unknown name
 * included): hbg_steady_status() says whether it did. */
hbg_steady *hbg_model_steady(const hbg_model *model, size_t count, const char *const *names,
                             const double *values, double period, double rtol);
void hbg_steady_free(hbg_steady *steady);

/* HBG_OK when the steady state was found, HBG_ERROR otherwise (and for
 * NULL); then hbg_steady_error() says what failed ("" when nothing did),
 * and hbg_steady_error_kind() names the diagnostic's kind as in
 * DiagnosticKinds.def ("SteadyNoPeriod"; "" when the failure is not one,
 * such as an unknown parameter). */
int hbg_steady_status(const hbg_steady *steady);
const char *hbg_steady_error(const hbg_steady *steady);
const char *hbg_steady_error_kind(const hbg_steady *steady);

/* The period T, the residual at the end (the largest change of a state
 * over the period relative to its magnitude) and the Newton iterations
 * taken (NaN and 0 for NULL). */
double hbg_steady_period(const hbg_steady *steady);
double hbg_steady_residual(const hbg_steady *steady);
size_t hbg_steady_iteration_count(const hbg_steady *steady);

/* Output `output`'s mean, RMS, minimum and maximum over the period, each
 * written where its pointer is not NULL. HBG_ERROR, and nothing written,
 * when the model has no such output or the analysis failed (a result is
 * not changed after hbg_model_steady(): threads may read it at once). */
int hbg_steady_figures(const hbg_steady *steady, const char *output, double *mean, double *rms,
                       double *min, double *max);

/* The period's rows: column 0 is `time`, from 0 to T measured from a start
 * of the sources' period, then one column per output (model order). A
 * column is hbg_steady_row_count() values, valid until the result is
 * freed; a bad index gives NULL. No rows after a failure. */
size_t hbg_steady_row_count(const hbg_steady *steady);
size_t hbg_steady_column_count(const hbg_steady *steady);
const char *hbg_steady_column_name(const hbg_steady *steady, size_t j);
const double *hbg_steady_column(const hbg_steady *steady, size_t j);

/* The modes in the period, in order (`sw=on, d=off`; one "" without
 * switched junctions), and the phase in [0, T) at which each begins (NaN
 * for a bad index). */
size_t hbg_steady_mode_count(const hbg_steady *steady);
const char *hbg_steady_mode(const hbg_steady *steady, size_t i);
double hbg_steady_mode_phase(const hbg_steady *steady, size_t i);

/* The power balance over the period: each R element's and source's path
 * ("load.r"), kind ("R", "Se", "Sf", "MSe", "MSf") and mean power
 * (dissipated by R elements, delivered into the model by sources), each
 * written where its pointer is not NULL (the strings valid until the
 * result is freed); HBG_ERROR, and nothing written, for a bad index. None
 * after a failure. hbg_steady_switching_loss() is the loss at events, a
 * power (NaN after a failure and for NULL). */
size_t hbg_steady_loss_count(const hbg_steady *steady);
int hbg_steady_loss(const hbg_steady *steady, size_t i, const char **name, const char **kind,
                    double *power);
double hbg_steady_switching_loss(const hbg_steady *steady);

/* The small-signal frequency response of `model` around its periodic
 * steady state (hbg::Model::frequencyResponse): the response of each
 * output at each of the `nfreq` frequencies `freqs` (Hz) to a small
 * sinusoid on `input`, a parameter or an input. `count`, `names`,
 * `values` and `period` as for hbg_model_steady(). Returns NULL only for a
 * NULL model or when out of memory; otherwise a result to free with
 * hbg_ac_free(), also when the analysis failed (an unknown name or a
 * frequency that is not positive included): hbg_ac_status() says whether
 * it did, hbg_ac_error() and hbg_ac_error_kind() what failed, as for a
 * steady state. */
hbg_ac *hbg_model_ac(const hbg_model *model, const char *input, size_t nfreq, const double *freqs,
                     size_t count, const char *const *names, const double *values, double period);
void hbg_ac_free(hbg_ac *ac);
int hbg_ac_status(const hbg_ac *ac);
const char *hbg_ac_error(const hbg_ac *ac);
const char *hbg_ac_error_kind(const hbg_ac *ac);

/* Output `output`'s complex response at frequency k (freqs[k]) per unit
 * of the input, its real and imaginary parts written where the pointers
 * are not NULL. HBG_ERROR, and nothing written, when the model has no such
 * output, k is out of range or the analysis failed. */
int hbg_ac_response(const hbg_ac *ac, const char *output, size_t k, double *re, double *im);

#ifdef __cplusplus
}
#endif

#endif /* HBG_HBG_C_H */
