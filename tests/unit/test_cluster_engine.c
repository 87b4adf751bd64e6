/*
 * test_cluster_engine.c - who a rank is, from the engine that started it
 * (runners/cluster_engine.c): Slurm's hostlist's first host, the default
 * rendezvous each engine implies, and the refusals (one line each).  Slurm's
 * host lists whole (the rank-th host, platform/hostlist.h), the host a rank
 * runs on, the default --deadline and a wait cut by it (#56).
 */
#include "runners/cluster_int.h"
#include "tests/unit/t.h"
#include "platform/hostlist.h"
#include "common/cluster.h"

#include <stdlib.h>
#include <string.h>

static void first_host(void)
{
	static const char *const good[][2] = {
		{ "gpu07", "gpu07" }, { "gpu[07-09,12]", "gpu07" }, { "gpu[07-09],cpu1", "gpu07" },
		{ "rack[1-2]-node[001-004]", "rack1-node001" }, { "a,b,c", "a" }, { "p5-[3]", "p5-3" },
		{ "ip-10-0-1-[17,19]", "ip-10-0-1-17" },
	};
	static const char *const bad[] = { "", ",a", "[1-2]", "gpu[", "gpu[x]", "gpu 1", "gpu]" };
	char out[64];
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		CHECK(cluster_first_host(good[i][0], out, sizeof out) == 0);
		CHECK_STR(out, good[i][1]);
	}
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		CHECK(cluster_first_host(bad[i], out, sizeof out) == -1);
	CHECK(cluster_first_host("a-very-long-host-name", out, 8) == -1);   /* never cut short */
}

static void clear_env(void)
{
	static const char *const vars[] = { "SLURM_PROCID", "SLURM_NTASKS", "SLURM_NPROCS", "SLURM_JOB_NODELIST",
					    "SLURM_NODELIST", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
					    "OMPI_MCA_orte_hnp_uri", "JOB_COMPLETION_INDEX" };
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
		unsetenv(vars[i]);
}

static void engines(void)
{
	struct cluster_engine e;
	char err[256];
	clear_env();
	CHECK(cluster_engine_detect(0, &e, err, sizeof err) == -1 && strstr(err, "no rank here"));
	setenv("SLURM_PROCID", "2", 1);
	setenv("SLURM_NTASKS", "4", 1);
	setenv("SLURM_JOB_NODELIST", "gpu[07-10]", 1);
	CHECK(cluster_engine_detect(0, &e, err, sizeof err) == 0);
	CHECK_STR(e.name, "slurm");
	CHECK(e.rank == 2 && e.size == 4 && e.listen_any);
	CHECK_STR(e.rendezvous, "gpu07:29517");
	CHECK(cluster_engine_detect(8, &e, err, sizeof err) == -1 && strstr(err, "--size 8 but slurm says 4"));
	setenv("SLURM_PROCID", "4", 1);
	CHECK(cluster_engine_detect(0, &e, err, sizeof err) == -1 && strstr(err, "(4, 4)"));
	setenv("SLURM_PROCID", "x", 1);
	CHECK(cluster_engine_detect(0, &e, err, sizeof err) == -1);
	clear_env();
	setenv("OMPI_COMM_WORLD_RANK", "1", 1);
	setenv("OMPI_COMM_WORLD_SIZE", "3", 1);
	CHECK(cluster_engine_detect(0, &e, err, sizeof err) == 0 && !e.rendezvous[0]);   /* no mpirun uri: none */
	setenv("OMPI_MCA_orte_hnp_uri", "2021523456.0;tcp://192.0.2.2,10.0.0.2:54913;tcp6://[fd00::2]:60753", 1);
	CHECK(cluster_engine_detect(0, &e, err, sizeof err) == 0);
	CHECK_STR(e.name, "mpi");
	CHECK_STR(e.rendezvous, "192.0.2.2:29517");
	CHECK(e.rank == 1 && e.size == 3);
	clear_env();
	setenv("JOB_COMPLETION_INDEX", "5", 1);
	CHECK(cluster_engine_detect(0, &e, err, sizeof err) == -1 && strstr(err, "--size N"));
	CHECK(cluster_engine_detect(4, &e, err, sizeof err) == -1 && strstr(err, "under --size 4"));
	CHECK(cluster_engine_detect(8, &e, err, sizeof err) == 0 && e.rank == 5 && e.size == 8 && !e.rendezvous[0]);
	CHECK_STR(e.name, "kubernetes");
	clear_env();
}

static void hostlists(void)
{
	static const struct { const char *list; long count; long n; const char *host; } good[] = {
		{ "gpu[07-09,12]", 4, 3, "gpu12" }, { "gpu[07-09,12]", 4, 2, "gpu09" }, { "gpu[8-10]", 3, 2, "gpu10" },
		{ "rack[1-2]-node[001-004]", 8, 5, "rack2-node002" }, { "a,b,c", 3, 2, "c" },
		{ "gpu[07-09],cpu1", 4, 3, "cpu1" }, { "198.18.0.[1-4]", 4, 1, "198.18.0.2" },
		{ "n[098-101]", 4, 3, "n101" }, { "x", 1, 0, "x" },
	};
	char out[64];
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		CHECK(hostlist_count(good[i].list) == good[i].count);
		CHECK(hostlist_nth(good[i].list, good[i].n, out, sizeof out) == 0);
		CHECK_STR(out, good[i].host);
		CHECK(hostlist_nth(good[i].list, good[i].count, out, sizeof out) == -1);   /* past the end */
	}
	static const char *const bad[] = { "", ",a", "a,", "a,,b", "[1-2]", "gpu[", "gpu[x]", "gpu 1", "gpu]",
					   "n[9-1]", "n[1-]", "n[1,]", "n[]", "n[1-2", "n[[1]]" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		CHECK(hostlist_count(bad[i]) == -1 && hostlist_nth(bad[i], 0, out, sizeof out) == -1);
	CHECK(hostlist_count("n[1-999999999]") == -1);   /* over HOSTLIST_MAX: not expanded */
	CHECK(hostlist_resolves_to("127.0.0.1", "127.0.0.1", out, sizeof out) == 1);
	CHECK(hostlist_resolves_to("127.0.0.1", "198.18.0.5", out, sizeof out) == 0 && !strcmp(out, "127.0.0.1"));
	CHECK(hostlist_resolves_to("", "127.0.0.1", out, sizeof out) == -1);
}

static void rank_hosts(void)
{
	struct cluster_engine e = { .size = 4, .nodelist = "gpu[07-10]" };
	char out[64];
	CHECK(cluster_rank_host(&e, 3, out, sizeof out) == 0);
	CHECK_STR(out, "gpu10");
	e.nodelist = "gpu[07-08]";   /* two tasks a node: which host a rank is on is not said */
	CHECK(cluster_rank_host(&e, 1, out, sizeof out) == -1);
	e.nodelist = NULL;
	CHECK(cluster_rank_host(&e, 1, out, sizeof out) == -1);
}

static void deadlines(void)
{
	/* W + 2 (F + 60) + 10 R + 3 (P + 15) + (4 P + 15) + 60, docs/cluster.md: 1,024 nodes on `all` at the quick profile */
	CHECK(cluster_default_deadline(30, 120, 30, 3) == 120 + 180 + 30 + 135 + 135 + 60);
	CHECK(cluster_default_deadline(1000000000, 86400, 3600, 1023) == 30 * 86400);   /* capped at 30 days */
	struct gv_cluster *c = gv_cluster_new(2);
	struct cluster_xchg x = { .c = c };
	CHECK(cluster_budget_ms(&x, 5000) == 5000);   /* no deadline: the wait asked */
	x.deadline_at = bench_now() + 20;
	x.reserve_s = 10;
	int b = cluster_budget_ms(&x, 60000);
	CHECK(b > 9000 && b <= 10000);   /* what is left before the reserve */
	CHECK(cluster_budget_ms(&x, 3000) == 3000);
	x.deadline_at = bench_now() - 1;
	CHECK(cluster_budget_ms(&x, 3000) == 0);
	gv_cluster_free(c);
}

TEST_MAIN(T(first_host), T(engines), T(hostlists), T(rank_hosts), T(deadlines))
