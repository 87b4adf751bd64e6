/*
 * flags_json.c - the flags of a fingerprint document (flags.h flags_compute,
 * flags_measurable): decoded once into the typed run by the one reader
 * (results/fprun_decode.c), derived (judge/derive.h: the model and the count
 * the flags read), then judged as fields.  For the readers that hold a
 * document (the tests, the fuzz targets); gpuvet's own paths hold the run.
 */
#include "judge/flags.h"
#include "judge/derive.h"
#include "results/fprun.h"

json_t *flags_compute(const json_t *fp)
{
	struct fprun *r = derive_from_json(fp);
	json_t *out = r ? flags_compute_run(r) : json_array();
	fprun_free(r);
	return out;
}

int flags_measurable(const json_t *fp, const char *code, const char **why)
{
	struct fprun *r = derive_from_json(fp);
	int rc;
	if (!r) {
		*why = "not a fingerprint";
		return flags_def_find(code) ? 0 : -1;
	}
	rc = flags_measurable_run(r, code, why);
	fprun_free(r);
	return rc;
}
