/* summary.c - see summary.h */
#include "runners/summary.h"
#include "common/ident.h"
#include "judge/flags.h"
#include "judge/standing.h"
#include "judge/derive.h"
#include "results/fprun.h"

#include <math.h>
#include <string.h>

void summary_format_value(double v, const char *unit, char *buf, size_t size)
{
	const char *u = unit && *unit ? unit : "";
	if (!isfinite(v))
		snprintf(buf, size, "n/a");
	else if (fabs(v) >= 1000 || v == floor(v))
		snprintf(buf, size, "%.0f %s", v, u);
	else if (fabs(v) >= 10)
		snprintf(buf, size, "%.1f %s", v, u);
	else
		snprintf(buf, size, "%.3g %s", v, u);
	/* "42 %" reads oddly: join the percent sign */
	size_t n = strlen(buf);
	if (n >= 2 && buf[n - 1] == '%' && buf[n - 2] == ' ') {
		buf[n - 2] = '%';
		buf[n - 1] = '\0';
	}
}

/* A stored string made safe for a terminal (an imported or old store may hold escapes). */
static const char *s_or(const json_t *o, const char *k, const char *dflt)
{
	static char bufs[8][1024];
	static unsigned next;
	const char *v = json_string_value(json_object_get(o, k));
	if (!v)
		return dflt;
	char *b = bufs[next++ % 8];
	ident_escape(v, b, sizeof b[0] * 1024);
	return b;
}

void summary_print(const json_t *fp, FILE *f)
{
	const json_t *run = json_object_get(fp, "run");
	fprintf(f, "run %lld  %s  profile %s  %s\n", (long long)json_integer_value(json_object_get(run, "id")),
		s_or(run, "uuid", "?"), s_or(run, "profile", "?"), s_or(run, "status", "?"));
	char machine[256];
	const char *itype = s_or(run, "instance_type", NULL);
	const char *region = s_or(run, "region", NULL);
	const char *model = s_or(run, "gpu_model", NULL);
	snprintf(machine, sizeof machine, "%s%s%s%s%s", s_or(run, "provider", "unknown"), itype ? " " : "",
		 itype ? itype : "", region ? " " : "", region ? region : "");
	fprintf(f, "machine: %s, %lld GPU(s)%s%s\n", machine,
		(long long)json_integer_value(json_object_get(run, "gpu_count")), model ? " " : "", model ? model : "");
	fprintf(f, "\n%-10s %-9s %8s  %s\n", "bench", "status", "time", "detail");
	size_t i;
	json_t *b;
	const char *said = NULL;   /* one cause (no GPU) is said once, not once per bench */
	json_array_foreach(json_object_get(fp, "benches"), i, b) {
		if (!strcmp(s_or(b, "name", ""), "harness"))
			continue;
		const char *why = s_or(b, "reason", "");
		int again = said && *why && !strcmp(why, said);
		fprintf(f, "%-10s %-9s %6.1f s  %s\n", s_or(b, "name", "?"), s_or(b, "status", "?"),
			json_number_value(json_object_get(b, "duration_s")), again ? "(the same)" : why);
		if (*why)
			said = why;
	}
	json_t *m;
	int any = 0;
	json_array_foreach(json_object_get(fp, "metrics"), i, m) {
		if (json_integer_value(json_object_get(m, "gpu")) != -1)
			continue;
		if (!any++)
			fprintf(f, "\nmetrics (instance):\n");
		char val[64];
		json_t *v = json_object_get(m, "value");
		summary_format_value(json_is_number(v) ? json_number_value(v) : NAN, s_or(m, "unit", ""), val, sizeof val);
		fprintf(f, "  %-32s %s\n", s_or(m, "name", "?"), val);
	}
	json_t *fl = json_object_get(fp, "flags");
	if (!json_array_size(fl)) {
		fprintf(f, "\nflags: none\n");
	} else {
		fprintf(f, "\nflags:\n");
		json_array_foreach(fl, i, m) {
			char buf[256];
			json_t *g = json_object_get(json_object_get(m, "evidence"), "gpu");
			const char *rem = json_string_value(json_object_get(m, "remediation"));
			if (!rem)   /* a run stored before remediations were: the same line, computed now */
				rem = flags_remediation(s_or(m, "code", ""), s_or(m, "severity", ""),
							json_is_integer(g) ? (int)json_integer_value(g) : -1, buf, sizeof buf);
			fprintf(f, "  %-8s %-18s %s\n", s_or(m, "severity", "?"), s_or(m, "code", "?"), s_or(m, "message", ""));
			char shown[1024];
			ident_escape(rem, shown, sizeof shown);
			fprintf(f, "  %-8s %-18s -> %s\n", "", "", shown);
		}
	}
	json_t *verdicts = json_object_get(fp, "verdicts");
	json_array_foreach(verdicts, i, m)
		fprintf(f, "verdict: %s (policy %s%s)\n", s_or(m, "verdict", "?"), s_or(m, "policy", "?"),
			json_is_true(json_object_get(m, "imported")) ? ", imported: judged elsewhere" : "");
}

void summary_standing(const json_t *fp, FILE *f)
{
	struct standing st;
	struct fprun *r = derive_from_json(fp);   /* decoded once; the standing reads its fields */
	if (!r)
		r = fprun_new();   /* not a fingerprint: a run of nothing (no GPU visible) */
	if (standing_of(NULL, r, &st)) {
		fprun_free(r);
		return;
	}
	long long id = r->run.id;
	if (st.kind == STANDING_NO_GPU)
		fprintf(f, "\nNo GPU measured on this machine: %s; nothing for a GPU policy to judge.\n", st.reason);
	else if (st.kind >= STANDING_WOULD_ACCEPT)
		fprintf(f, "\nNot judged: the built-in policy would find it %s (%s); a preview, not recorded: "
			   "'gpuvet accept %lld' records a verdict.\n",
			st.kind == STANDING_WOULD_ACCEPT ? "accepted" : st.kind == STANDING_WOULD_REJECT ? "rejected" :
			"unmeasurable", st.reason, id);
	standing_free(&st);
	fprun_free(r);
}
