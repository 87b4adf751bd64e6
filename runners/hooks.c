/* hooks.c - see hooks.h: flags after every run, the HTML report, the acceptance gate. */
#include "runners/hooks.h"
#include "runners/cli.h"
#include "reports/html.h"
#include "judge/accept.h"
#include "runners/accept_table.h"
#include "judge/policy.h"
#include "judge/flags.h"
#include "common/util.h"
#include "results/store.h"

#include <stdio.h>
#include <stdlib.h>

/* Replaces the run's stored flags with flags; 0, or non-zero (the store's message) with the caller's batch to undo. */
static int store_flags(struct store *s, int64_t run_id, const json_t *flags)
{
	json_t *f;
	size_t i;
	int rc = store_clear_flags(s, run_id);
	json_array_foreach(flags, i, f) {
		if (rc)
			break;
		char *ev = json_dumps(json_object_get(f, "evidence"), JSON_COMPACT | JSON_REAL_PRECISION(17));
		rc = store_put_flag(s, run_id, json_string_value(json_object_get(f, "code")),
				    json_string_value(json_object_get(f, "severity")),
				    json_string_value(json_object_get(f, "message")), ev ? ev : "{}",
				    json_string_value(json_object_get(f, "remediation"))) != 0;
		free(ev);
	}
	return rc;
}

json_t *hooks_after_run(struct store *s, int64_t run_id, json_t *fp, int *failed)
{
	json_t *flags = flags_compute(fp);
	*failed = 0;
	/* the old flags replaced by the new in one transaction: a failing disk leaves the old ones */
	if (store_batch_begin(s) || store_flags(s, run_id, flags) || store_batch_end(s, 1)) {
		gv_err("flags not stored: %s", store_errmsg(s));
		store_batch_end(s, 0);
		*failed = 1;
	} else {
		json_object_set(fp, "flags", flags);   /* fp as the store now holds it */
	}
	return flags;
}

int hooks_imported_flags(struct store *s, int64_t run_id)
{
	json_t *fp = NULL;
	if (store_load_fingerprint(s, run_id, &fp))
		return -1;
	json_t *flags = flags_compute(fp), *f;
	size_t i;
	const char *why;
	/* the file's flag of a code its evidence cannot judge (no soak, no inventory) stays: a claim against the run */
	json_array_foreach(json_object_get(fp, "flags"), i, f)
		if (flags_measurable(fp, json_string_value(json_object_get(f, "code")), &why) == 0)
			json_array_append(flags, f);
	int rc = store_flags(s, run_id, flags) ? -1 : 0;
	json_decref(flags);
	json_decref(fp);
	return rc;
}

int hooks_report(struct store *s, int64_t run_id, json_t *fp, const char *path, const struct policy *p)
{
	/* this run in full detail (its fingerprint as held, not loaded again); rankings use the whole store */
	char err[512];
	struct report_opts o = { .run_ids = &run_id, .n_run_ids = 1, .remedy = flags_remediation, .run_fp = fp,
				 .policy = p };
	if (gv_prices_ready(s, err, sizeof err) < 0)
		gv_debug("report: %s", err);
	if (report_write_file(s, &o, path, err, sizeof err)) {
		gv_err("report: %s", err);
		return -1;
	}
	return 0;
}

int hooks_accept(struct store *s, int64_t run_id, const struct policy *p, json_t *fp, const json_t *flags, FILE *out)
{
	accept_legacy_rebuild(s);   /* an upgraded store's baseline first (judge/accept_legacy.c) */
	int rc = accept_judge(s, run_id, p, fp, flags, 0, out);
	if (rc != GV_EXIT_USAGE)   /* every check, from the verdict accept_judge appended to fp */
		accept_table_print(accept_table_newest(fp, p->digest), out);
	return rc;
}
