/* hooks.c - see hooks.h.  Until flags, report and policy land these say so. */
#include "runners/hooks.h"
#include "runners/util.h"
#include "results/store.h"

#include <stdio.h>
#include <stdlib.h>

void hooks_after_run(struct store *s, int64_t run_id)
{
	(void)s;
	(void)run_id;
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
	(void)s;
	(void)run_id;
	(void)policy_path;
	(void)out;
	gv_err("'--accept' is not built yet in this version");
	return GV_EXIT_USAGE;
}
