/*
 * flags_table.c - one row per flag code (flags.h struct flag_def): its code,
 * the severities it may be raised at, the two lines of what to do, and the
 * function that says whether a fingerprint holds the evidence its check
 * needs.  Every reader of the codes reads this table: flags_compute() checks
 * each flag raised against its row (flags.c), the policy asks the row's
 * measured() (policy_flags.c through flags_measurable), `gpuvet help flags`
 * writes docs/flags.md's table of what to do from it (`make docs`), and the
 * tests (tests/test_flag_codes.py, tests/unit/test_gate.c) walk it.  A row
 * without its measured function does not compile (the table is positional,
 * -Werror=missing-field-initializers); one whose function is NULL is refused
 * by flags_def_check() and judged not measured, never measured by default.
 *
 * It calls down only: the readings (flags_evidence.c), the shared helpers
 * (flags_util.c), and two families for their own measures (flags_links.c
 * flags_floor_measurable, flags_host.c flags_host_need_ips).
 */
#include "judge/flags.h"
#include "judge/flags_int.h"
#include <math.h>

#include <stdio.h>
#include <string.h>

static int soak_ok(const struct fprun *r)
{
	return flags_soak_ok(r);
}

/* ---- whether each check had its evidence (a series counts only when it covers the soak: flags_evidence.c) ---- */

static int m_throttle(struct fprun *fp, const char **why)
{
	if (soak_ok(fp) && flags_series_covered(fp, "soak.clock_events.mask"))
		return 1;
	*why = "needs the soak bench's clock-event samples on every gpu for 90% of its seconds";
	return 0;
}

static int m_clock_decay(struct fprun *fp, const char **why)
{
	if (soak_ok(fp) && (flags_series_covered(fp, "soak.sm_clock.mhz") ||
			    (!flags_any_series(fp, "soak.sm_clock.mhz") && flags_any_metric(fp, "soak.sm_clock.drop_pct", ""))))
		return 1;
	*why = "needs the soak bench's sm clock samples on every gpu for 90% of its seconds";
	return 0;
}

static int m_perf_decay(struct fprun *fp, const char **why)
{
	if (soak_ok(fp) && (flags_series_covered(fp, "soak.tflops") ||
			    (!flags_any_series(fp, "soak.tflops") && flags_any_metric(fp, "soak.tflops.first_min", ""))))
		return 1;
	*why = "needs the soak bench's throughput samples on every gpu for 90% of its seconds";
	return 0;
}

static int m_pcie(struct fprun *fp, const char **why)
{
	double a, b;
	const struct fp_gpu *g0 = fprun_gpu(fp, 0);
	(void)a;
	(void)b;
	if (soak_ok(fp) && flags_series_covered(fp, "soak.pcie.gen") && g0 && !isnan(g0->pcie_gen_max) &&
	    !isnan(g0->pcie_width_max))
		return 1;
	*why = "needs pcie link samples under load (soak) on every gpu for 90% of its seconds and the inventory's "
	       "link maximum";
	return 0;
}

static int m_xid(struct fprun *fp, const char **why)
{
	if (soak_ok(fp) || fp->inv.has_xid_history)
		return 1;
	*why = "needs the soak bench (xid events are watched during it) or a readable kernel log";
	return 0;
}

static int m_contention(struct fprun *fp, const char **why)
{
	if (soak_ok(fp) || flags_any_metric(fp, "gemm.", ".tflops"))
		return 1;
	*why = "needs the soak or gemm bench";
	return 0;
}

static int m_sdc(struct fprun *fp, const char **why)
{
	if (soak_ok(fp) && flags_any_metric(fp, "soak.sdc.mismatches", ""))
		return 1;
	*why = "needs the soak bench's result comparison (soak.sdc.mismatches)";
	return 0;
}

static int m_node(struct fprun *fp, const char **why)
{
	if (fp->d.ngpu < 2)
		*why = "needs an instance with two or more gpus";
	else if (flags_any_metric(fp, "gemm.", ".tflops"))
		return 1;
	else
		*why = "needs the gemm bench's per-gpu rows";
	return 0;
}

static int m_steal(struct fprun *fp, const char **why)
{
	if (flags_any_metric(fp, "host.cpu_steal.pct", ""))
		return 1;
	*why = "needs host.cpu_steal.pct";
	return 0;
}

static int m_reference(struct fprun *fp, const char **why)
{
	if (fp->d.model && (flags_any_metric(fp, "gemm.", ".pct_of_peak") || flags_any_metric(fp, "memcpy.", ".pct_of_link")))
		return 1;
	*why = fp->d.model ? "needs gemm or memcpy metrics relative to the model's reference" :
	       "needs gpus of a model gpuvet resolves (a reference to compare with)";
	return 0;
}

static int m_host(struct fprun *fp, const char **why)
{
	if ((flags_any_metric(fp, "host.decode.images_per_s", "") || flags_any_metric(fp, "host.membw.triad.gbps", "")) &&
	    fp->d.ngpu > 0 && flags_host_need_ips(fp->d.model) > 0)
		return 1;
	*why = "needs the host bench and gpus of a model in the reference table";
	return 0;
}

/* ECC_ERRORS, ROW_REMAP_PENDING, ECC_DISABLED, VGPU, MIG, NVLINK_DEGRADED, FIRMWARE_MISMATCH: the inventory's GPUs */
static int m_inventory(struct fprun *fp, const char **why)
{
	if (fp->inv.ngpus)
		return 1;
	*why = "needs gpus in the inventory";
	return 0;
}

/*
 * The table.  What to do about each flag is one line; "%s" becomes "gpu N"
 * (or "the gpus" for an instance-wide flag); the critical line where the
 * warning one would be too mild.
 */
const struct flag_def flag_rows[] = {
	{ "THROTTLE_THERMAL", FLAG_SEV_WARNING | FLAG_SEV_CRITICAL, m_throttle,
	  "check the node's cooling (fans, inlet air, blocked airflow) before trusting %s with long jobs",
	  "drain the node and ask the provider to fix the cooling of %s or replace it" },
	{ "THROTTLE_POWER", FLAG_SEV_INFO | FLAG_SEV_WARNING, m_throttle,
	  "ask the provider why the power limit of %s is below the model's (nvidia-smi -q -d POWER)",
	  "ask the provider why the power limit of %s is below the model's (nvidia-smi -q -d POWER)" },
	{ "THROTTLE_HW", FLAG_SEV_WARNING | FLAG_SEV_CRITICAL, m_throttle,
	  "ask the provider to check the board and power supply of %s",
	  "drain the node and ask the provider to check the power delivery of %s or replace it" },
	{ "CLOCK_DECAY", FLAG_SEV_WARNING | FLAG_SEV_CRITICAL, m_clock_decay,
	  "rerun with a longer soak; if the clock keeps falling, ask the provider to check the cooling of %s",
	  "drain the node and ask the provider to check the cooling and power of %s" },
	{ "PERF_DECAY", FLAG_SEV_WARNING | FLAG_SEV_CRITICAL, m_perf_decay,
	  "rerun with a longer soak; if throughput keeps falling, ask the provider to check %s",
	  "drain the node and ask the provider to check %s: it loses throughput under sustained load" },
	{ "CONTENTION", FLAG_SEV_WARNING | FLAG_SEV_CRITICAL, m_contention,
	  "rerun on an idle machine; if it repeats, ask the provider whether %s is shared (time-sliced vGPU)",
	  "return the instance or ask the provider for a dedicated gpu: another tenant shares %s" },
	{ "VGPU", FLAG_SEV_WARNING, m_inventory,
	  "expect a share of a physical gpu on %s; rent a passthrough or bare-metal type for full speed",
	  "expect a share of a physical gpu on %s; rent a passthrough or bare-metal type for full speed" },
	{ "MIG", FLAG_SEV_WARNING, m_inventory,
	  "disable MIG on %s (nvidia-smi -mig 0, needs a reset) or rent an instance without partitions",
	  "disable MIG on %s (nvidia-smi -mig 0, needs a reset) or rent an instance without partitions" },
	{ "PCIE_DOWNGRADE", FLAG_SEV_CRITICAL, m_pcie,
	  "reseat or move %s, or ask the provider to check its riser and slot",
	  "drain the node and ask the provider to check the pcie slot and riser of %s" },
	{ "ECC_ERRORS", FLAG_SEV_WARNING | FLAG_SEV_CRITICAL, m_inventory,
	  "watch the error count of %s; ask the provider to replace it if it grows",
	  "drain the node and ask the provider to replace %s (uncorrectable memory errors)" },
	{ "ROW_REMAP_PENDING", FLAG_SEV_CRITICAL, m_inventory,
	  "reset %s (nvidia-smi -r) so the memory repair applies, then rerun",
	  "reset %s (nvidia-smi -r) so the memory repair applies; if remapping failed, ask the provider to replace it" },
	{ "XID", FLAG_SEV_WARNING | FLAG_SEV_CRITICAL, m_xid,
	  "look up the xid in NVIDIA's xid catalog and check the application on %s",
	  "drain the node and ask the provider to replace %s (hardware xid)" },
	{ "CPU_STEAL", FLAG_SEV_WARNING | FLAG_SEV_CRITICAL, m_steal,
	  "rent a larger or dedicated-host instance type: the hypervisor takes cpu time from %s's host",
	  "rent a dedicated-host instance type: the hypervisor takes much cpu time from %s's host" },
	{ "BELOW_REFERENCE", FLAG_SEV_WARNING, m_reference,
	  "rerun; if it repeats, compare with another instance of the type and report %s to the provider",
	  "rerun; if it repeats, compare with another instance of the type and report %s to the provider" },
	{ "DATA_CORRUPTION", FLAG_SEV_CRITICAL, m_sdc,
	  "drain the node and ask the provider to replace %s: it computed a wrong result",
	  "drain the node and ask the provider to replace %s: it computed a wrong result" },
	{ "NODE_OUTLIER", FLAG_SEV_WARNING | FLAG_SEV_CRITICAL, m_node,
	  "rerun; if %s still trails the others, ask the provider to check or replace it",
	  "drain the node and ask the provider to check or replace %s: it trails the node's other gpus" },
	{ "ECC_DISABLED", FLAG_SEV_WARNING, m_inventory,
	  "enable ECC on %s (nvidia-smi -e 1, then a reboot) or ask the provider to; without it memory errors go unseen",
	  "enable ECC on %s (nvidia-smi -e 1, then a reboot) or ask the provider to; without it memory errors go unseen" },
	{ "NVLINK_DEGRADED", FLAG_SEV_WARNING | FLAG_SEV_CRITICAL, m_inventory,
	  "watch the nvlink error counters of %s (nvidia-smi nvlink -e); ask the provider to check the link if they grow",
	  "drain the node and ask the provider to repair the nvlink of %s (links down)" },
	{ "FIRMWARE_MISMATCH", FLAG_SEV_WARNING, m_inventory,
	  "ask the provider to flash one vbios version on %s",
	  "ask the provider to flash one vbios version on %s" },
	{ "HOST_STARVED", FLAG_SEV_WARNING, m_host,
	  "the host cannot feed %s: stage data in /dev/shm or on local nvme, decode on the gpu (DALI, nvJPEG), or rent a type with more cores or memory bandwidth per gpu",
	  "the host cannot feed %s: stage data in /dev/shm or on local nvme, decode on the gpu (DALI, nvJPEG), or rent a type with more cores or memory bandwidth per gpu" },
	{ "BELOW_FLOOR", FLAG_SEV_WARNING | FLAG_SEV_CRITICAL, flags_floor_measurable,
	  "ask the provider to check the pcie slot, riser and iommu settings of %s, or the nvlink, nvswitch and "
	  "fabric manager of the node (nvidia-smi topo -m, systemctl status nvidia-fabricmanager)",
	  "drain the node: %s exchange data at pcie or host-memory speed; ask the provider to repair nvlink/nvswitch "
	  "or the fabric manager (nvidia-smi nvlink -s, systemctl status nvidia-fabricmanager)" },
	{ NULL, 0, NULL, NULL, NULL },   /* new codes go above: every field, its measured function included */
};

const struct flag_def *flags_def_find(const char *code)
{
	for (const struct flag_def *d = flag_rows; code && d->code; d++)
		if (!strcmp(d->code, code))
			return d;
	return NULL;
}

const char *flags_def_check(const struct flag_def *d)
{
	if (!d || !d->code || !*d->code)
		return "has no code";
	if (!d->severities || (d->severities & ~(unsigned)(FLAG_SEV_INFO | FLAG_SEV_WARNING | FLAG_SEV_CRITICAL)))
		return "names no severity it can be raised at";
	if (!d->warning || !d->critical || !strstr(d->warning, "%s") || !strstr(d->critical, "%s"))
		return "lacks a line of what to do (warning and critical, each naming the gpu with %s)";
	if (!d->measured)
		return "has no function saying whether its evidence was measured";
	return NULL;
}

int flags_code_known(const char *code)
{
	return flags_def_find(code) != NULL;
}

const char *flags_remediation(const char *code, const char *severity, int gpu, char *buf, size_t len)
{
	char who[32];
	const struct flag_def *d = flags_def_find(code);
	if (gpu >= 0)
		snprintf(who, sizeof who, "gpu %d", gpu);
	else
		snprintf(who, sizeof who, "the gpus");
	if (severity && !strcmp(severity, "info")) {
		/* e.g. THROTTLE_POWER info: a GPU at its full power cap under load, as it should be */
		snprintf(buf, len, "nothing: information, not a fault");
		return buf;
	}
	if (d && d->warning && d->critical) {
		snprintf(buf, len, severity && !strcmp(severity, "critical") ? d->critical : d->warning, who);
		return buf;
	}
	snprintf(buf, len, "see the flag's message and evidence");
	return buf;
}

int flags_measurable_run(struct fprun *fp, const char *code, const char **why)
{
	const struct flag_def *d = flags_def_find(code);
	*why = NULL;
	if (!d)
		return -1;
	if (flags_def_check(d)) {   /* fail closed: a row that cannot say is not measured */
		*why = "gpuvet cannot say whether this flag's evidence was measured (its row has no measured function)";
		return 0;
	}
	return d->measured(fp, why) ? 1 : 0;
}

int flags_finish(json_t *flags)
{
	json_t *f;
	size_t i;
	int outside = 0;
	json_array_foreach(flags, i, f) {
		char buf[256];
		const char *code = json_string_value(json_object_get(f, "code"));
		const char *sev = json_string_value(json_object_get(f, "severity"));
		const struct flag_def *d = flags_def_find(code);
		int rank = gv_severity_rank(sev);
		json_t *g = json_object_get(json_object_get(f, "evidence"), "gpu");
		/* a rule that raises what its row does not declare is a bug: said, and kept (fail closed) */
		if (!d || rank < 0 || !(d->severities & (1u << rank)) || flags_def_check(d))
			outside++, fprintf(stderr, "gpuvet: internal error: flag %s (%s) raised outside its row of judge/flags_table.c\n",
				code ? code : "?", sev ? sev : "?");
		json_object_set_new(f, "remediation", json_string(flags_remediation(code, sev,
			json_is_integer(g) ? (int)json_integer_value(g) : -1, buf, sizeof buf)));
	}
	return outside;
}

void flags_table_markdown(FILE *f)
{
	fputs("<!-- generated by `gpuvet help flags` from judge/flags_table.c (make docs); do not edit -->\n\n"
	      "| flag | severities | what to do (warning) | what to do (critical) |\n| --- | --- | --- | --- |\n", f);
	for (const struct flag_def *d = flag_rows; d->code; d++) {
		fprintf(f, "| %s |", d->code);
		for (int r = 0, first = 1; r < GV_SEVERITIES; r++)
			if (d->severities & (1u << r)) {
				fprintf(f, "%s%s", first ? " " : ", ", gv_severity_name(r));
				first = 0;
			}
		fputs(" | ", f);
		fprintf(f, d->warning, "*gpu N*");
		fputs(" | ", f);
		fprintf(f, d->critical, "*gpu N*");
		fputs(" |\n", f);
	}
}
