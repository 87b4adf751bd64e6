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

json_t *hooks_after_run(struct store *s, int64_t run_id, json_t *fp, int *failed)
{
	json_t *flags, *f;
	size_t i;
	*failed = 0;
	flags = flags_compute(fp);
	/* the old flags replaced by the new in one transaction: a failing disk leaves the old ones */
	int rc = store_batch_begin(s) || store_clear_flags(s, run_id);
	json_array_foreach(flags, i, f) {
		if (rc)
			break;
		char *ev = json_dumps(json_object_get(f, "evidence"), JSON_COMPACT | JSON_REAL_PRECISION(10));
		rc = store_put_flag(s, run_id, json_string_value(json_object_get(f, "code")),
				    json_string_value(json_object_get(f, "severity")),
				    json_string_value(json_object_get(f, "message")), ev ? ev : "{}",
				    json_string_value(json_object_get(f, "remediation"))) != 0;
		free(ev);
	}
	if (rc || store_batch_end(s, 1)) {
		gv_err("flags not stored: %s", store_errmsg(s));
		store_batch_end(s, 0);
		*failed = 1;
	} else {
		json_object_set(fp, "flags", flags);   /* fp as the store now holds it */
	}
	return flags;
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
