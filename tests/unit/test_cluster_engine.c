/*
 * test_cluster_engine.c - who a rank is, from the engine that started it
 * (runners/cluster_engine.c): Slurm's hostlist's first host, the default
 * rendezvous each engine implies, and the refusals (one line each).
 */
#include "runners/cluster_int.h"
#include "tests/unit/t.h"

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

TEST_MAIN(T(first_host), T(engines))
