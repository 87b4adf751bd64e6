/*
 * fuzz_flags.c - flags_compute() and flags_measurable() on arbitrary JSON
 * (a fingerprint from an imported file or a merged store is untrusted):
 * never crash or leak, always return an array of well-formed flags.
 */
#include "judge/flags.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *fp = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
	if (!fp)
		return 0;
	json_t *flags = flags_compute(fp), *f;
	size_t i;
	if (!json_is_array(flags))
		abort();
	json_array_foreach(flags, i, f) {
		if (!flags_code_known(json_string_value(json_object_get(f, "code"))) ||
		    gv_severity_rank(json_string_value(json_object_get(f, "severity"))) < 0 ||
		    !json_is_object(json_object_get(f, "evidence")))
			abort();
	}
	for (int c = 0; flag_rows[c].code; c++) {
		const char *why;
		if (flags_measurable(fp, flag_rows[c].code, &why) == 0 && !why)
			abort();
	}
	json_decref(flags);
	json_decref(fp);
	return 0;
}
