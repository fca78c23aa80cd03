/* cf_fuzz: malformed models through session creation and one Run.
 *
 * Mutants of the node-test cases are made in the parent (no ORT there),
 * deterministically from a seed, each written as a case folder (model.onnx,
 * test_data_set_0/input_K.pb and mutation.txt saying what was changed).
 * Each then runs in its own child process like a conformance case, so a
 * crash or a hang costs one mutant, and cf_fuzz_case classifies it:
 *   pass         our EP ran it; same outputs as the CPU EP alone (or the CPU
 *                EP refuses it too at run time)
 *   not-claimed  our EP took no node
 *   ort-error    a clean error: ORT or our EP refused it with a status
 *   fail         our EP ran it to another answer than the CPU EP's
 *   crash, timeout
 * The detail of each starts with a tag that the summary counts:
 * "[rejected]" (ORT refuses it with or without us), "[ep-session-only]" and
 * "[ep-run-only]" (our EP failed, with a status, a model the CPU EP runs),
 * "[same]", "[cpu-refuses]", "[differs]", "[not-claimed]". Every crash or
 * hang is run again with the CPU EP alone (backend "cpu"): when ORT itself
 * crashes or hangs on the mutant, it is reported as ORT's, not ours. */
#ifndef CF_FUZZ_H
#define CF_FUZZ_H

#include <stdint.h>
#include <stdio.h>

#include "tools/conformance/cf_case.h"
#include "tools/conformance/cf_run.h"

/* Writes n mutants of the cases in cases_dir (matching filter, a POSIX
 * extended regex, or all) into out_dir (which must exist). 0 on success. */
int cf_fuzz_make(const char *cases_dir, const char *filter, const char *out_dir, int n, uint64_t seed);

/* The child's work for one mutant (the runner's case function). */
void cf_fuzz_case(const cf_config *cfg, const char *dir, const char *name, cf_result *r);

/* Counts by outcome and tag, and every failure with its mutation. ort_own
 * (or NULL): per mutant, 1 when ONNX Runtime crashes or hangs on it without
 * our EP too (the CPU EP alone; a crash that is not ours). Returns the
 * number of our failures (fail + crash + timeout). */
int cf_fuzz_report(FILE *f, const cf_run *run, const char *dir, const int *ort_own);

#endif
