/* hooks.c - see hooks.h.  Until flags, report and policy land these say so. */
#include "runners/hooks.h"
#include "runners/accept.h"
#include "runners/flags.h"
#include "runners/util.h"
#include "results/store.h"

#include <stdio.h>
#include <stdlib.h>

void hooks_after_run(struct store *s, int64_t run_id)
{
	json_t *fp, *flags, *f;
	size_t i;
	if (store_load_fingerprint(s, run_id, &fp)) {
		gv_err("flags not computed: %s", store_errmsg(s));
		return;
	}
	flags = flags_compute(fp);
	if (store_clear_flags(s, run_id))
		gv_err("flags not stored: %s", store_errmsg(s));
	else
		json_array_foreach(flags, i, f) {
			char *ev = json_dumps(json_object_get(f, "evidence"), JSON_COMPACT | JSON_REAL_PRECISION(10));
			if (store_put_flag(s, run_id, json_string_value(json_object_get(f, "code")),
					   json_string_value(json_object_get(f, "severity")),
					   json_string_value(json_object_get(f, "message")), ev ? ev : "{}"))
				gv_err("flag not stored: %s", store_errmsg(s));
			free(ev);
		}
	json_decref(flags);
	json_decref(fp);
}

int hooks_report(struct store *s, int64_t run_id, const char *path)
{
	/* the HTML report is not built yet: write the fingerprint instead, and say so */
	json_t *fp;
	if (store_load_fingerprint(s, run_id, &fp)) {
		gv_err("%s", store_errmsg(s));
		return -1;
	}
	int rc = json_dump_file(fp, path, JSON_INDENT(2));
	json_decref(fp);
	if (rc) {
		gv_err("cannot write report '%s'", path);
		return -1;
	}
	gv_err("the html report is not built yet: wrote the fingerprint json to '%s'", path);
	return 0;
}

int hooks_accept(struct store *s, int64_t run_id, const char *policy_path, FILE *out)
{
	return accept_run(s, run_id, policy_path, 0, out);
}
