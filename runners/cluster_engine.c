/*
 * cluster_engine.c - who this rank is, from the engine that started it
 * (runners/cluster_int.h): Slurm, OpenMPI's mpirun, or a Kubernetes
 * Indexed Job.  gpuvet never starts ranks itself.
 */
#include "runners/cluster_int.h"
#include "platform/hostlist.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A whole non-negative decimal environment variable; -1 when unset, -2 when not a number. */
static long env_num(const char *name)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return -1;
	char *end;
	errno = 0;
	long x = strtol(v, &end, 10);
	return errno || *end || x < 0 ? -2 : x;
}

int cluster_first_host(const char *hostlist, char *out, size_t outlen)
{
	return hostlist_nth(hostlist, 0, out, outlen);
}

int cluster_rank_host(const struct cluster_engine *e, int rank, char *out, size_t outlen)
{
	if (!e->nodelist || hostlist_count(e->nodelist) != e->size)
		return -1;
	return hostlist_nth(e->nodelist, rank, out, outlen);
}

/* mpirun's own address from OMPI_MCA_orte_hnp_uri ("JOBID;tcp://10.0.0.1,10.0.1.1:PORT;tcp6://..."). */
static int mpirun_host(char *out, size_t outlen)
{
	const char *u = getenv("OMPI_MCA_orte_hnp_uri");
	const char *t = u ? strstr(u, ";tcp://") : NULL;
	if (!t)
		return -1;
	t += 7;
	size_t n = strcspn(t, ",:;");
	if (!n || n >= outlen)
		return -1;
	memcpy(out, t, n);
	out[n] = 0;
	return 0;
}

static int from_slurm(struct cluster_engine *e, char *err, size_t errlen)
{
	long r = env_num("SLURM_PROCID"), sz = env_num("SLURM_NTASKS");
	if (sz == -1)
		sz = env_num("SLURM_NPROCS");
	if (r < 0 || sz < 1 || r >= sz) {
		snprintf(err, errlen, "SLURM_PROCID and SLURM_NTASKS do not give a rank under the size (%s, %s)",
			 getenv("SLURM_PROCID") ? getenv("SLURM_PROCID") : "unset",
			 getenv("SLURM_NTASKS") ? getenv("SLURM_NTASKS") : "unset");
		return -1;
	}
	snprintf(e->name, sizeof e->name, "slurm");
	e->rank = (int)r;
	e->size = (int)sz;
	const char *nl = getenv("SLURM_JOB_NODELIST") ? getenv("SLURM_JOB_NODELIST") : getenv("SLURM_NODELIST");
	char host[256];
	e->nodelist = nl;
	if (nl && !cluster_first_host(nl, host, sizeof host)) {
		snprintf(e->rendezvous, sizeof e->rendezvous, "%s:%d", host, CLUSTER_DEFAULT_PORT);
		e->listen_any = 1;
	}
	return 0;
}

static int from_mpi(struct cluster_engine *e, char *err, size_t errlen)
{
	long r = env_num("OMPI_COMM_WORLD_RANK"), sz = env_num("OMPI_COMM_WORLD_SIZE");
	if (r < 0 || sz < 1 || r >= sz) {
		snprintf(err, errlen, "OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE do not give a rank under the size");
		return -1;
	}
	snprintf(e->name, sizeof e->name, "mpi");
	e->rank = (int)r;
	e->size = (int)sz;
	char host[128];
	if (!mpirun_host(host, sizeof host)) {
		snprintf(e->rendezvous, sizeof e->rendezvous, strchr(host, ':') ? "[%s]:%d" : "%s:%d", host,
			 CLUSTER_DEFAULT_PORT);
		e->listen_any = 1;
	}
	return 0;
}

int cluster_engine_detect(int size_opt, struct cluster_engine *e, char *err, size_t errlen)
{
	memset(e, 0, sizeof *e);
	int rc;
	if (getenv("SLURM_PROCID"))
		rc = from_slurm(e, err, errlen);
	else if (getenv("OMPI_COMM_WORLD_RANK"))
		rc = from_mpi(e, err, errlen);
	else if (getenv("JOB_COMPLETION_INDEX")) {
		long r = env_num("JOB_COMPLETION_INDEX");
		if (size_opt < 1) {
			snprintf(err, errlen, "a Kubernetes Indexed Job needs '--size N' (its completions)");
			return -1;
		}
		if (r < 0 || r >= size_opt) {
			snprintf(err, errlen, "JOB_COMPLETION_INDEX is not a rank under --size %d", size_opt);
			return -1;
		}
		snprintf(e->name, sizeof e->name, "kubernetes");
		e->rank = (int)r;
		e->size = size_opt;
		rc = 0;
	} else {
		snprintf(err, errlen, "no rank here: start it with srun, mpirun or a Kubernetes Indexed Job "
			 "(SLURM_PROCID, OMPI_COMM_WORLD_RANK or JOB_COMPLETION_INDEX)");
		return -1;
	}
	if (!rc && size_opt > 0 && size_opt != e->size) {
		snprintf(err, errlen, "--size %d but %s says %d ranks", size_opt, e->name, e->size);
		return -1;
	}
	return rc;
}

int cluster_ms(double seconds)
{
	return seconds <= 0 ? 0 : seconds >= 2e6 ? 2000000000 : (int)(seconds * 1000.0);
}
