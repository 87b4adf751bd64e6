/*
 * fabric.c - libfabric loaded at run time and one RDM endpoint (benches/fabric.h).
 *
 * The library: $GPUVET_LIBFABRIC, else "libfabric.so.1" from the loader's
 * path, opened once per process and never closed (its providers register
 * exit handlers).  The provider: fi_getinfo for FI_EP_RDM + FI_MSG, the
 * first entry by preference efa, verbs (through ofi_rxm), tcp (through
 * ofi_rxm on libfabric 1.17), or the one GPUVET_FABRIC_PROVIDER names (its
 * whole name or its first part: "tcp" takes "tcp;ofi_rxm"); then that
 * provider's endpoint on src_ip when it has one (fabric_choose).  The pair measurement is benches/fabric_pair.c.
 */
#include "benches/fabric_int.h"
#include "common/util.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct fabric_lib lib;
static char lib_error[320];
static pthread_once_t lib_once = PTHREAD_ONCE_INIT;
static char lib_name[256];

static void lib_load(void)
{
	const char *name = getenv("GPUVET_LIBFABRIC");
	if (!name || !*name)
		name = "libfabric.so.1";
	gv_strlcpy(lib_name, name, sizeof lib_name);
	void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		snprintf(lib_error, sizeof lib_error, "cannot load libfabric (%s): %s", name, e ? e : "unknown error");
		return;
	}
	static const char *const names[] = { "fi_getinfo", "fi_freeinfo", "fi_dupinfo", "fi_fabric",
					     "fi_strerror", "fi_version" };
	void *p[6];
	for (int i = 0; i < 6; i++) {
		p[i] = dlsym(h, names[i]);
		if (!p[i]) {
			snprintf(lib_error, sizeof lib_error, "libfabric (%s) has no %s", name, names[i]);
			return;
		}
	}
	/* function pointers from dlsym's void *, as POSIX allows */
	memcpy(&lib.getinfo, &p[0], sizeof p[0]);
	memcpy(&lib.freeinfo, &p[1], sizeof p[1]);
	memcpy(&lib.dupinfo, &p[2], sizeof p[2]);
	memcpy(&lib.fabric, &p[3], sizeof p[3]);
	memcpy(&lib.strerror, &p[4], sizeof p[4]);
	memcpy(&lib.version, &p[5], sizeof p[5]);
}

const char *fabric_strerr(const struct fabric *f, int rc)
{
	const char *s = f && f->lib && f->lib->strerror ? f->lib->strerror(rc < 0 ? -rc : rc) : NULL;
	return s ? s : "unknown libfabric error";
}

uint64_t fabric_fnv(const char *s)
{
	return gv_hash_str(s);
}

int fabric_prov_rank(const char *name, const char *forced)
{
	size_t first = strcspn(name, ";");
	if (forced && *forced)
		return !strcmp(name, forced) || (strlen(forced) == first && !strncmp(name, forced, first)) ? 0 : -1;
	static const char *const pref[] = { "efa", "verbs", "tcp" };
	for (int i = 0; i < 3; i++)
		if (strlen(pref[i]) == first && !strncmp(name, pref[i], first))
			return i;
	return -1;
}

/* The best entry of the list, or NULL; names lists every provider seen. */
static struct fi_info *prov_pick(struct fi_info *list, const char *forced, char *names, size_t nlen)
{
	struct fi_info *best = NULL;
	int best_rank = 99;
	names[0] = '\0';
	for (struct fi_info *i = list; i; i = i->next) {
		const char *n = i->fabric_attr && i->fabric_attr->prov_name ? i->fabric_attr->prov_name : "";
		if (!strstr(names, n) && strlen(names) + strlen(n) + 3 < nlen) {
			if (names[0])
				strcat(names, ", ");
			strcat(names, n);
		}
		int r = fabric_prov_rank(n, forced);
		if (r >= 0 && r < best_rank) {
			best = i;
			best_rank = r;
		}
	}
	return best;
}

static struct fi_info *fabric_hints(void)
{
	struct fi_info *h = lib.dupinfo(NULL);
	if (!h)
		return NULL;
	h->caps = FI_MSG;
	h->ep_attr->type = FI_EP_RDM;
	h->mode = FI_CONTEXT | FI_CONTEXT2;
	h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_VIRT_ADDR;
	return h;
}

static int fabric_getinfo(const char *node, struct fi_info **list)
{
	uint32_t hv = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION), lv = lib.version();
	struct fi_info *hints = fabric_hints();
	*list = NULL;
	if (!hints)
		return -FI_ENOMEM;
	int rc = lib.getinfo(lv < hv ? lv : hv, node, NULL, node ? FI_SOURCE : 0, hints, list);
	lib.freeinfo(hints);
	return rc;
}

/*
 * The provider by preference into f->info.  It is chosen among every endpoint the node has: efa
 * and verbs name their devices, not the address the ranks meet on (on most clusters an Ethernet
 * address, not IPoIB).  Then, with src_ip, that provider's endpoint on src_ip when it has one (tcp:
 * the interface of that address, so a node in a network namespace uses its own veth, not lo).
 */
static int fabric_choose(struct fabric *f, const char *src_ip, char *err, size_t errlen)
{
	struct fi_info *list = NULL, *bound = NULL;
	int rc = fabric_getinfo(NULL, &list);
	const char *forced = getenv("GPUVET_FABRIC_PROVIDER");
	if (rc)
		return gv_errf(err, errlen, "libfabric %s: no RDM endpoint: %s", f->version, fabric_strerr(f, rc));
	char names[256];
	struct fi_info *pick = prov_pick(list, forced, names, sizeof names);
	if (!pick) {
		lib.freeinfo(list);
		if (forced && *forced)
			return gv_errf(err, errlen, "libfabric %s: no provider %s for an RDM endpoint (found: %s)",
				    f->version, forced, names);
		return gv_errf(err, errlen, "libfabric %s: no efa, verbs or tcp provider for an RDM endpoint (found: %s)",
			    f->version, names);
	}
	if (src_ip && fabric_getinfo(src_ip, &bound) == 0)
		for (struct fi_info *b = bound; b; b = b->next)
			if (b->fabric_attr && b->fabric_attr->prov_name &&
			    !strcmp(b->fabric_attr->prov_name, pick->fabric_attr->prov_name)) {
				pick = b;
				break;
			}
	f->info = lib.dupinfo(pick);
	lib.freeinfo(list);
	if (bound)
		lib.freeinfo(bound);
	if (!f->info)
		return gv_errf(err, errlen, "libfabric: out of memory");
	gv_strlcpy(f->provider, f->info->fabric_attr->prov_name, sizeof f->provider);
	f->mr_local = (f->info->domain_attr->mr_mode & FI_MR_LOCAL) != 0;
	return 0;
}

/*
 * How completions are waited for: GPUVET_FABRIC_WAIT=poll reads the queue in a loop (yielding the
 * CPU between empty reads), as fi_pingpong, perftest and nccl-tests do: the lowest latency, one
 * core busy per side.  =sleep sleeps in the queue's wait object until a completion (where the
 * provider has one: tcp, verbs; efa has none and polls): a wake-up more of latency (about 8 us
 * on a 2-core VM), no core taken, which is what a host running several ranks on few cores needs.
 * Unset: poll with 4 or more CPUs online, else sleep.
 */
static int fabric_want_sleep(void)
{
	const char *w = getenv("GPUVET_FABRIC_WAIT");
	if (w && !strcmp(w, "poll"))
		return 0;
	if (w && !strcmp(w, "sleep"))
		return 1;
	return sysconf(_SC_NPROCESSORS_ONLN) < 4;
}

#define FABRIC_TRY(call, what) do { int rc_ = (call); if (rc_) \
	return gv_errf(err, errlen, "libfabric %s (%s): %s: %s", f->version, f->provider, what, fabric_strerr(f, rc_)); \
	} while (0)

/* Fabric, domain, queues, address vector, endpoint, its address. */
static int fabric_endpoint(struct fabric *f, char *err, size_t errlen)
{
	struct fi_cq_attr cq = { .size = 256, .format = FI_CQ_FORMAT_MSG, .wait_obj = FI_WAIT_UNSPEC };
	struct fi_av_attr av = { .type = f->info->domain_attr->av_type != FI_AV_UNSPEC ? f->info->domain_attr->av_type
										       : FI_AV_TABLE };
	FABRIC_TRY(lib.fabric(f->info->fabric_attr, &f->fab, NULL), "fi_fabric");
	FABRIC_TRY(fi_domain(f->fab, f->info, &f->dom, NULL), "fi_domain");
	/* a queue that can sleep (tcp, verbs) leaves the CPU to the peer on a shared host; else polled (efa) */
	f->cq_wait = fabric_want_sleep() && fi_cq_open(f->dom, &cq, &f->cq, NULL) == 0;
	cq.wait_obj = FI_WAIT_NONE;
	if (!f->cq_wait)
		FABRIC_TRY(fi_cq_open(f->dom, &cq, &f->cq, NULL), "fi_cq_open");
	FABRIC_TRY(fi_av_open(f->dom, &av, &f->av, NULL), "fi_av_open");
	FABRIC_TRY(fi_endpoint(f->dom, f->info, &f->ep, NULL), "fi_endpoint");
	FABRIC_TRY(fi_ep_bind(f->ep, &f->av->fid, 0), "fi_ep_bind av");
	FABRIC_TRY(fi_ep_bind(f->ep, &f->cq->fid, FI_TRANSMIT | FI_RECV), "fi_ep_bind cq");
	FABRIC_TRY(fi_enable(f->ep), "fi_enable");
	unsigned char name[256];
	size_t len = sizeof name;
	FABRIC_TRY(fi_getname(&f->ep->fid, name, &len), "fi_getname");
	if (len > sizeof name)
		return gv_errf(err, errlen, "libfabric (%s): an endpoint name of %zu bytes", f->provider, len);
	for (size_t i = 0; i < len; i++)
		snprintf(f->addr + 2 * i, 3, "%02x", name[i]);
	f->hash = fabric_fnv(f->addr);
	return 0;
}

int fabric_open(const char *src_ip, struct fabric **out, char *err, size_t errlen)
{
	*out = NULL;
	pthread_once(&lib_once, lib_load);
	if (lib_error[0])
		return gv_errf(err, errlen, "%s", lib_error);
	struct fabric *f = gv_calloc(1, sizeof *f);
	f->lib = &lib;
	uint32_t v = lib.version();
	snprintf(f->version, sizeof f->version, "%u.%u", FI_MAJOR(v), FI_MINOR(v));
	if (src_ip && !*src_ip)
		src_ip = NULL;
	if (fabric_choose(f, src_ip, err, errlen) || fabric_endpoint(f, err, errlen)) {
		fabric_close(f);
		return -1;
	}
	*out = f;
	return 0;
}

const char *fabric_provider(const struct fabric *f) { return f ? f->provider : ""; }
const char *fabric_addr(const struct fabric *f) { return f ? f->addr : ""; }
const char *fabric_lib_version(const struct fabric *f) { return f ? f->version : ""; }
const char *fabric_wait(const struct fabric *f) { return !f ? "" : f->cq_wait ? "sleep" : "poll"; }

int fabric_link_speed(const struct fabric *f, double *bits_per_s, char *nic, size_t niclen)
{
	const struct fid_nic *n = f && f->info ? f->info->nic : NULL;
	if (niclen)
		nic[0] = '\0';
	if (!n || !n->link_attr || !n->link_attr->speed)
		return -1;
	*bits_per_s = (double)n->link_attr->speed;
	if (n->device_attr && n->device_attr->name)
		gv_strlcpy(nic, n->device_attr->name, niclen);
	return 0;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int fabric_peer(struct fabric *f, const char *hex, fi_addr_t *fa, char *err, size_t errlen)
{
	for (int i = 0; i < f->nav; i++)
		if (!strcmp(f->av_cache[i].hex, hex)) {
			*fa = f->av_cache[i].fa;
			return 0;
		}
	size_t n = strlen(hex);
	unsigned char raw[256];
	if (n == 0 || n % 2 || n / 2 > sizeof raw)
		return gv_errf(err, errlen, "peer fabric address is not an endpoint name (%zu hex digits)", n);
	for (size_t i = 0; i < n / 2; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return gv_errf(err, errlen, "peer fabric address is not hex");
		raw[i] = (unsigned char)(hi << 4 | lo);
	}
	int rc = fi_av_insert(f->av, raw, 1, fa, 0, NULL);
	if (rc != 1)
		return gv_errf(err, errlen, "libfabric (%s): fi_av_insert of the peer: %s", f->provider,
			    rc < 0 ? fabric_strerr(f, rc) : "address refused");
	if (f->nav < FABRIC_AV_CACHE) {
		gv_strlcpy(f->av_cache[f->nav].hex, hex, sizeof f->av_cache[f->nav].hex);
		f->av_cache[f->nav++].fa = *fa;
	}
	return 0;
}

int fabric_post_rx(struct fabric *f, int i)
{
	void *desc = f->mr_local ? fi_mr_desc(f->rxmr) : NULL;
	return (int)fi_recv(f->ep, f->rx[i].buf, f->msg_bytes, desc, FI_ADDR_UNSPEC, &f->rx[i].ctx);
}

static int mr_reg(struct fabric *f, void *buf, size_t len, struct fid_mr **mr, char *err, size_t errlen)
{
	FABRIC_TRY(fi_mr_reg(f->dom, buf, len, FI_SEND | FI_RECV, 0, 0, 0, mr, NULL), "fi_mr_reg");
	return 0;
}

int fabric_buffers(struct fabric *f, size_t msg_bytes, char *err, size_t errlen)
{
	if (f->rxmem)
		return msg_bytes <= f->msg_bytes ? 0
		       : gv_errf(err, errlen, "fabric messages of %zu bytes after %zu (the size is set by the first pair)",
			      msg_bytes, f->msg_bytes);
	f->msg_bytes = msg_bytes;
	if (posix_memalign((void **)&f->rxmem, 4096, FABRIC_RX_SLOTS * msg_bytes) ||
	    posix_memalign((void **)&f->txdata, 4096, msg_bytes))
		return gv_errf(err, errlen, "out of memory for fabric buffers");
	memset(f->rxmem, 0, FABRIC_RX_SLOTS * msg_bytes);
	memset(f->txdata, 0x5a, msg_bytes);
	if (f->mr_local && (mr_reg(f, f->rxmem, FABRIC_RX_SLOTS * msg_bytes, &f->rxmr, err, errlen) ||
			    mr_reg(f, f->txdata, msg_bytes, &f->txmr, err, errlen) ||
			    mr_reg(f, f->tx, sizeof f->tx, &f->ctlmr, err, errlen)))
		return -1;
	for (int i = 0; i < FABRIC_RX_SLOTS; i++) {
		f->rx[i].buf = f->rxmem + (size_t)i * msg_bytes;
		int rc = fabric_post_rx(f, i);
		if (rc)
			return gv_errf(err, errlen, "libfabric (%s): fi_recv: %s", f->provider, fabric_strerr(f, rc));
	}
	return 0;
}

static void fid_done(struct fid *fid)
{
	if (fid)
		fi_close(fid);
}

/*
 * A fabric whose pair failed is never closed: libfabric's ofi_rxm (1.17 here; the same class of
 * teardown bug is open upstream, ofiwg/libfabric#11828) crashes in fi_close of an endpoint whose
 * connection to a peer gone dead still had traffic in flight (about one close in two, measured
 * with a namespace's link taken down mid-pair).  Its memory stays reachable from here until the
 * process exits, which a cluster run does soon after.
 */
static struct fabric *kept;

void fabric_close(struct fabric *f)
{
	if (!f)
		return;
	if (f->broken) {
		f->next_kept = kept;
		kept = f;
		return;
	}
	/* the endpoint first: it cancels what is posted on the buffers */
	fid_done(f->ep ? &f->ep->fid : NULL);
	fid_done(f->rxmr ? &f->rxmr->fid : NULL);
	fid_done(f->txmr ? &f->txmr->fid : NULL);
	fid_done(f->ctlmr ? &f->ctlmr->fid : NULL);
	fid_done(f->av ? &f->av->fid : NULL);
	fid_done(f->cq ? &f->cq->fid : NULL);
	fid_done(f->dom ? &f->dom->fid : NULL);
	fid_done(f->fab ? &f->fab->fid : NULL);
	if (f->info)
		f->lib->freeinfo(f->info);
	free(f->rxmem);
	free(f->txdata);
	free(f);
}
