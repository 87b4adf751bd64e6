/* cloud.c - see cloud.h */
#include "runners/cloud.h"
#include "common/util.h"

#include <ctype.h>
#include <curl/curl.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define CLOUD_AWS_BASE      "http://169.254.169.254"
#define CLOUD_ALIBABA_BASE  "http://100.100.100.200"
#define CLOUD_CONNECT_MS    300
#define CLOUD_TOTAL_MS      1000
#define CLOUD_MAX_BODY      4096    /* metadata values are short; anything longer is not one */
#define CLOUD_MAX_REQS      16      /* 2 services x (token + 4 values) in flight at most */

enum cloud_field { F_TYPE = 0, F_REGION, F_ZONE, F_ID, F_COUNT };

struct cloud_svc {
	const char *name;                 /* "aws", "alibaba" */
	const char *base;
	const char *token_ttl_header;     /* sent with the token PUT */
	const char *token_header;         /* sent with each GET */
	const char *paths[F_COUNT];
	char token[256];
	int gets_started;
	int unreachable;                  /* the token PUT failed at the transport level */
	char val[F_COUNT][96];
};

struct cloud_req {
	struct cloud_req **slot;          /* its place in the live table */
	struct cloud_svc *svc;
	int field;                        /* -1: the token PUT */
	CURL *h;
	struct curl_slist *hdrs;
	char body[CLOUD_MAX_BODY + 1];
	size_t len;
	int overflow;
};

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static size_t req_write(char *ptr, size_t size, size_t nmemb, void *arg)
{
	struct cloud_req *r = arg;
	size_t n = size * nmemb;
	if (r->len + n > CLOUD_MAX_BODY) {
		r->overflow = 1;
		return 0;   /* aborts the transfer */
	}
	memcpy(r->body + r->len, ptr, n);
	r->len += n;
	r->body[r->len] = '\0';
	return n;
}

int cloud_value_ok(const char *s, size_t len)
{
	if (len < 1 || len > 63)
		return 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!isalnum(c) && c != '.' && c != '_' && c != '-')
			return 0;
	}
	return 1;
}

static struct cloud_req *req_new(CURLM *m, struct cloud_req **live, struct cloud_svc *s, int field,
				 double deadline)
{
	struct cloud_req *r = gv_calloc(1, sizeof *r);
	char url[512];
	long left = (long)(deadline - now_ms());

	if (left < 1)
		left = 1;
	for (int i = 0; i < CLOUD_MAX_REQS && !r->slot; i++)
		if (!live[i])
			r->slot = &live[i];
	if (!r->slot) {
		free(r);
		return NULL;
	}
	r->svc = s;
	r->field = field;
	r->h = curl_easy_init();
	if (!r->h) {
		free(r);
		return NULL;
	}
	if (field < 0) {
		char h[128];
		snprintf(url, sizeof url, "%s/latest/api/token", s->base);
		snprintf(h, sizeof h, "%s: 21600", s->token_ttl_header);
		r->hdrs = curl_slist_append(NULL, h);
		curl_easy_setopt(r->h, CURLOPT_CUSTOMREQUEST, "PUT");
		curl_easy_setopt(r->h, CURLOPT_POSTFIELDS, "");
	} else {
		snprintf(url, sizeof url, "%s/latest/meta-data/%s", s->base, s->paths[field]);
		if (s->token[0]) {
			char h[384];
			snprintf(h, sizeof h, "%s: %s", s->token_header, s->token);
			r->hdrs = curl_slist_append(NULL, h);
		}
	}
	curl_easy_setopt(r->h, CURLOPT_URL, url);
	if (r->hdrs)
		curl_easy_setopt(r->h, CURLOPT_HTTPHEADER, r->hdrs);
	curl_easy_setopt(r->h, CURLOPT_NOPROXY, "*");      /* link-local: never via a proxy */
	curl_easy_setopt(r->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(r->h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(r->h, CURLOPT_PROTOCOLS_STR, "http");
	curl_easy_setopt(r->h, CURLOPT_CONNECTTIMEOUT_MS, left < CLOUD_CONNECT_MS ? left : (long)CLOUD_CONNECT_MS);
	curl_easy_setopt(r->h, CURLOPT_TIMEOUT_MS, left);
	curl_easy_setopt(r->h, CURLOPT_WRITEFUNCTION, req_write);
	curl_easy_setopt(r->h, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(r->h, CURLOPT_PRIVATE, r);
	curl_easy_setopt(r->h, CURLOPT_USERAGENT, "gpuvet/" GPUVET_VERSION);
	if (curl_multi_add_handle(m, r->h) != CURLM_OK) {
		curl_slist_free_all(r->hdrs);
		curl_easy_cleanup(r->h);
		free(r);
		return NULL;
	}
	*r->slot = r;
	return r;
}

static void req_free(CURLM *m, struct cloud_req *r)
{
	curl_multi_remove_handle(m, r->h);
	curl_easy_cleanup(r->h);
	curl_slist_free_all(r->hdrs);
	*r->slot = NULL;
	free(r);
}

static void start_gets(CURLM *m, struct cloud_req **live, struct cloud_svc *s, double deadline,
		       int *running)
{
	if (s->gets_started)
		return;
	s->gets_started = 1;
	for (int f = 0; f < F_COUNT; f++)
		if (req_new(m, live, s, f, deadline))
			(*running)++;
}

/* A finished transfer: keep the value or the token, start the GETs after a token answer. */
static void req_done(CURLM *m, struct cloud_req **live, struct cloud_req *r, CURLcode rc,
		     double deadline, int *running)
{
	struct cloud_svc *s = r->svc;
	long code = 0;
	curl_easy_getinfo(r->h, CURLINFO_RESPONSE_CODE, &code);
	if (r->field < 0) {
		if (rc == CURLE_OK && code == 200 && r->len > 0 && r->len < sizeof s->token) {
			size_t n = r->len;
			while (n && isspace((unsigned char)r->body[n - 1]))
				n--;
			int ok = n > 0;
			for (size_t i = 0; i < n; i++)
				if (!isgraph((unsigned char)r->body[i]))
					ok = 0;
			if (ok) {
				memcpy(s->token, r->body, n);
				s->token[n] = '\0';
			}
		}
		if (rc == CURLE_OK)
			start_gets(m, live, s, deadline, running);   /* with the token, or without (IMDSv1) */
		else
			s->unreachable = 1;
		gv_debug("cloud: %s token: %s, http %ld", s->name,
			 rc == CURLE_OK ? "answered" : curl_easy_strerror(rc), code);
		return;
	}
	if (rc == CURLE_OK && code == 200) {
		size_t n = r->len;
		while (n && isspace((unsigned char)r->body[n - 1]))
			n--;
		if (cloud_value_ok(r->body, n)) {
			memcpy(s->val[r->field], r->body, n);
			s->val[r->field][n] = '\0';
		}
	}
	gv_debug("cloud: %s %s: %s, http %ld", s->name, s->paths[r->field],
		 rc == CURLE_OK ? "answered" : curl_easy_strerror(rc), code);
}

static void probe_services(struct cloud_svc *svcs, int nsvc, int timeout_ms)
{
	double deadline = now_ms() + timeout_ms;
	int running = 0, still = 0;
	struct cloud_req *live[CLOUD_MAX_REQS] = { 0 };
	CURLM *m;

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return;
	m = curl_multi_init();
	if (!m) {
		curl_global_cleanup();
		return;
	}
	for (int i = 0; i < nsvc; i++)
		if (req_new(m, live, &svcs[i], -1, deadline))
			running++;
	while (running > 0) {
		double left = deadline - now_ms();
		if (left <= 0)
			break;
		if (curl_multi_perform(m, &still) != CURLM_OK)
			break;
		CURLMsg *msg;
		int q;
		while ((msg = curl_multi_info_read(m, &q))) {
			if (msg->msg != CURLMSG_DONE)
				continue;
			char *priv = NULL;
			CURLcode rc = msg->data.result;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &priv);
			struct cloud_req *r = (struct cloud_req *)(void *)priv;
			if (!r)
				continue;
			running--;
			req_done(m, live, r, rc, deadline, &running);
			req_free(m, r);
		}
		if (running <= 0)
			break;
		int wait = left < 50 ? (int)left + 1 : 50;
		if (curl_multi_poll(m, NULL, 0, wait, NULL) != CURLM_OK)
			break;
	}
	/* what is still in flight at the deadline is abandoned */
	for (int i = 0; i < CLOUD_MAX_REQS; i++)
		if (live[i])
			req_free(m, live[i]);
	curl_multi_cleanup(m);
	curl_global_cleanup();
}

/* First line of a small file, trimmed; "" when unreadable. */
static void read_line(const char *root, const char *path, char *buf, size_t size)
{
	char full[512];
	char *t;
	buf[0] = '\0';
	snprintf(full, sizeof full, "%s%s", root, path);
	t = gv_read_file(full, NULL);
	if (!t)
		return;
	size_t n = strcspn(t, "\n");
	while (n && isspace((unsigned char)t[n - 1]))
		n--;
	if (n >= size)
		n = size - 1;
	memcpy(buf, t, n);
	buf[n] = '\0';
	free(t);
}

/* Does an apt source under ROOT/etc/apt name Lambda's archive (Lambda Stack)? */
static int lambda_repo_present(const char *root)
{
	char dir[512];
	DIR *d;
	struct dirent *e;
	int found = 0;
	snprintf(dir, sizeof dir, "%s/etc/apt/sources.list.d", root);
	d = opendir(dir);
	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (!(n > 5 && !strcmp(e->d_name + n - 5, ".list")) &&
		    !(n > 8 && !strcmp(e->d_name + n - 8, ".sources")))
			continue;
		char path[1024];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		char *t = gv_read_file(path, NULL);
		if (t) {
			found = strstr(t, "archive.lambdalabs.com") != NULL;
			free(t);
		}
	}
	closedir(d);
	return found;
}

static int has_ci(const char *hay, const char *needle)
{
	return strcasestr(hay, needle) != NULL;
}

const char *cloud_guess(const struct cloud_evidence *e, char *why, size_t whylen)
{
	/* AWS Nitro: sys_vendor/board_vendor "Amazon EC2"; AWS Xen: bios "Amazon"
	 * (bios_version "4.11.amazon") or /sys/hypervisor/uuid starting "ec2" */
	if (has_ci(e->sys_vendor, "amazon ec2") || has_ci(e->board_vendor, "amazon ec2")) {
		snprintf(why, whylen, "dmi vendor '%s'", e->sys_vendor[0] ? e->sys_vendor : e->board_vendor);
		return "aws";
	}
	if (has_ci(e->bios_version, "amazon") || has_ci(e->bios_vendor, "amazon")) {
		snprintf(why, whylen, "dmi bios '%s %s'", e->bios_vendor, e->bios_version);
		return "aws";
	}
	if (!strncasecmp(e->hypervisor_uuid, "ec2", 3)) {
		snprintf(why, whylen, "xen hypervisor uuid starts with ec2");
		return "aws";
	}
	/* Alibaba ECS: sys_vendor "Alibaba Cloud", product_name "Alibaba Cloud ECS" */
	if (has_ci(e->sys_vendor, "alibaba") || has_ci(e->product_name, "alibaba cloud")) {
		snprintf(why, whylen, "dmi vendor '%s' product '%s'", e->sys_vendor, e->product_name);
		return "alibaba";
	}
	/*
	 * Lambda Cloud has no metadata service.  Its on-demand instances are
	 * virtual machines booted from the Lambda Stack image, whose apt source
	 * names archive.lambdalabs.com.  Lambda Stack alone also appears on
	 * Lambda workstations and on any machine a user installed it on, so
	 * both must hold: a VM (cpuinfo hypervisor flag), Lambda Stack, and (by
	 * the caller) no AWS/Alibaba service answering.  Anything less: unknown.
	 */
	if (e->lambda_repo && e->hypervisor_flag) {
		snprintf(why, whylen, "virtual machine with the lambda stack apt source (archive.lambdalabs.com)");
		return "lambda";
	}
	if (whylen)
		why[0] = '\0';
	return NULL;
}

static void set_str(char *dst, size_t size, const char *src)
{
	gv_strlcpy(dst, src ? src : "", size);
}

/* Local evidence: DMI (the firmware's own words), the Xen uuid, Lambda Stack's apt source. */
static void read_evidence(const char *root, int hypervisor_flag, struct cloud_evidence *e)
{
	memset(e, 0, sizeof *e);
	read_line(root, "/sys/class/dmi/id/sys_vendor", e->sys_vendor, sizeof e->sys_vendor);
	read_line(root, "/sys/class/dmi/id/product_name", e->product_name, sizeof e->product_name);
	read_line(root, "/sys/class/dmi/id/board_vendor", e->board_vendor, sizeof e->board_vendor);
	read_line(root, "/sys/class/dmi/id/bios_vendor", e->bios_vendor, sizeof e->bios_vendor);
	read_line(root, "/sys/class/dmi/id/bios_version", e->bios_version, sizeof e->bios_version);
	read_line(root, "/sys/hypervisor/uuid", e->hypervisor_uuid, sizeof e->hypervisor_uuid);
	e->lambda_repo = lambda_repo_present(root);
	e->hypervisor_flag = hypervisor_flag;
}

/* True when the firmware says nothing (no /sys/class/dmi: some containers, non-x86 boards). */
static int dmi_unreadable(const struct cloud_evidence *e)
{
	return !e->sys_vendor[0] && !e->product_name[0] && !e->board_vendor[0] && !e->bios_vendor[0] &&
	       !e->hypervisor_uuid[0];
}

/*
 * DMI first, as cloud-init's ds-identify: the metadata service of a cloud is
 * asked only when DMI names that cloud (Amazon EC2: 169.254.169.254,
 * Alibaba Cloud: 100.100.100.200), both only when DMI cannot be read, none
 * when DMI names another vendor, so a laptop, a CI runner or an
 * on-premises node sends nothing.  Lambda has no service: its heuristic.
 */
void cloud_detect(const struct cloud_opts *o, struct cloud_id *id)
{
	const char *env_no = getenv("GPUVET_NO_METADATA");
	const char *root = getenv("GPUVET_SYSROOT");
	int no_md = o->no_metadata || (env_no && *env_no && strcmp(env_no, "0"));
	int timeout = o->timeout_ms > 0 ? o->timeout_ms : CLOUD_TOTAL_MS;
	int all_overridden = o->provider && o->sku && o->region;

	memset(id, 0, sizeof *id);
	set_str(id->provider, sizeof id->provider, "unknown");
	set_str(id->source, sizeof id->source, "none");
	if (!root)
		root = "";

	struct cloud_evidence e;
	read_evidence(root, o->hypervisor_flag, &e);
	char why[sizeof id->evidence];
	const char *guess = cloud_guess(&e, why, sizeof why);
	int unreadable = dmi_unreadable(&e);
	int ask_aws = unreadable || (guess && !strcmp(guess, "aws"));
	int ask_ali = unreadable || (guess && !strcmp(guess, "alibaba"));

	if (!no_md && !all_overridden && (ask_aws || ask_ali)) {
		const char *aws = getenv("GPUVET_IMDS_AWS");
		const char *ali = getenv("GPUVET_IMDS_ALIBABA");
		struct cloud_svc svcs[2] = {
			{ .name = "aws", .base = aws && *aws ? aws : CLOUD_AWS_BASE,
			  .token_ttl_header = "X-aws-ec2-metadata-token-ttl-seconds",
			  .token_header = "X-aws-ec2-metadata-token",
			  .paths = { "instance-type", "placement/region",
				     "placement/availability-zone", "instance-id" } },
			{ .name = "alibaba", .base = ali && *ali ? ali : CLOUD_ALIBABA_BASE,
			  .token_ttl_header = "X-aliyun-ecs-metadata-token-ttl-seconds",
			  .token_header = "X-aliyun-ecs-metadata-token",
			  .paths = { "instance/instance-type", "region-id", "zone-id", "instance-id" } },
		};
		struct cloud_svc *ask = ask_aws ? &svcs[0] : &svcs[1];
		probe_services(ask, ask_aws && ask_ali ? 2 : 1, timeout);
		for (int i = 0; i < 2; i++) {
			struct cloud_svc *sv = &svcs[i];
			if (!sv->val[F_TYPE][0])
				continue;   /* a service counts only when it names the instance type */
			set_str(id->provider, sizeof id->provider, sv->name);
			set_str(id->instance_type, sizeof id->instance_type, sv->val[F_TYPE]);
			set_str(id->region, sizeof id->region, sv->val[F_REGION]);
			set_str(id->zone, sizeof id->zone, sv->val[F_ZONE]);
			set_str(id->instance_id, sizeof id->instance_id, sv->val[F_ID]);
			set_str(id->source, sizeof id->source, "imds");
			break;
		}
	}
	if (!strcmp(id->source, "none") && guess) {
		set_str(id->provider, sizeof id->provider, guess);
		set_str(id->source, sizeof id->source, "heuristic");
		set_str(id->evidence, sizeof id->evidence, why);
	}
	if (o->provider || o->sku || o->region) {
		if (o->provider && strcmp(o->provider, id->provider)) {
			/* another provider than detected: nothing detected describes it */
			id->instance_type[0] = id->region[0] = id->zone[0] = id->instance_id[0] = '\0';
			id->evidence[0] = '\0';
		}
		if (o->provider)
			set_str(id->provider, sizeof id->provider, o->provider);
		if (o->sku)
			set_str(id->instance_type, sizeof id->instance_type, o->sku);
		if (o->region)
			set_str(id->region, sizeof id->region, o->region);
		set_str(id->source, sizeof id->source, "override");
	}
}

static json_t *str_or_null(const char *s)
{
	return s && *s ? json_string(s) : json_null();
}

json_t *cloud_to_json(const struct cloud_id *id)
{
	return json_pack("{s:s, s:o, s:o, s:o, s:o, s:s, s:o}",
			 "provider", id->provider,
			 "instance_type", str_or_null(id->instance_type),
			 "region", str_or_null(id->region),
			 "zone", str_or_null(id->zone),
			 "instance_id", str_or_null(id->instance_id),
			 "source", id->source,
			 "evidence", str_or_null(id->evidence));
}
