/*
 * objstore_put.c - the object-store bench's PUT measurement (s3:// only;
 * objstore.c has the GET and the bench row): a multipart upload of a
 * random object beside the one read, completed with its leading parts, then
 * deleted; on any failure the upload is aborted, so nothing is left behind.
 */
#include "benches/objstore_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CreateMultipartUpload: 1 the upload is open, 0 not measured (read-only credentials, said), -1 failed. */
static int os_put_create(struct os_state *s, double phase_end)
{
	struct os_req create = { .kind = OS_CREATE };
	if (!os_single(s, &create, phase_end, "put")) {
		char code[64];
		os_s3_code(&create, code, sizeof code);
		free(create.body);
		if (create.http == 403 && !strcmp(code, "AccessDenied")) {
			/* read-only credentials, common for training data: GET is the measurement */
			bench_log(s->ctx, "put not measured: %s", s->first_error);
			s->errors--;
			return 0;
		}
		bench_reason(s->ctx, "%s", s->first_error);
		return -1;
	}
	s->put_state = 1; /* an upload is open: abort it if anything fails */
	int got_id = create.body &&
		     !objstore_xml_text(create.body, create.bodylen, "UploadId", s->upload_id,
					sizeof s->upload_id) && s->upload_id[0];
	free(create.body);
	if (!got_id) {
		bench_reason(s->ctx, "CreateMultipartUpload %s: no UploadId in the answer", s->t.display);
		return -1;
	}
	return 1;
}

/* CompleteMultipartUpload's body for the first k parts (each ETag escaped); their bytes into *bytes. */
static char *os_complete_xml(const struct os_req *parts, int k, long long *bytes)
{
	/* each <Part> is its fixed text, the part number and an escaped ETag (< 400) */
	size_t cap = 128 + (size_t)k * 512, w = 0;
	char *xml = malloc(cap);
	if (!xml)
		abort();
	*bytes = 0;
	w += (size_t)snprintf(xml + w, cap - w, "<CompleteMultipartUpload>");
	for (int i = 0; i < k; i++) {
		char esc[400];
		size_t e = 0;
		for (const char *p = parts[i].etag; *p && e + 7 < sizeof esc; p++) {
			if (*p == '&') { memcpy(esc + e, "&amp;", 5); e += 5; }
			else if (*p == '<') { memcpy(esc + e, "&lt;", 4); e += 4; }
			else if (*p == '>') { memcpy(esc + e, "&gt;", 4); e += 4; }
			else esc[e++] = *p;
		}
		esc[e] = 0;
		w += (size_t)snprintf(xml + w, cap - w, "<Part><PartNumber>%d</PartNumber><ETag>%s</ETag></Part>",
				      parts[i].part, esc);
		*bytes += parts[i].len;
	}
	snprintf(xml + w, cap - w, "</CompleteMultipartUpload>");
	return xml;
}

/* Completes the upload with the leading k parts and reports objstore.put.gbps; a BENCH_ status. */
static int os_put_complete(struct os_state *s, const struct os_req *parts, int k, long long part, int uploaded,
			   double t0)
{
	long long done_bytes;
	char *xml = os_complete_xml(parts, k, &done_bytes);
	struct os_req complete = { .kind = OS_COMPLETE, .postdata = xml };
	int cok = os_single(s, &complete, s->hard_deadline, "put"), status = BENCH_OK;
	free(complete.body);
	if (!cok) {
		bench_reason(s->ctx, "%s", s->first_error);
		status = BENCH_FAIL;
	} else {
		double secs = bench_now() - t0;   /* the PUT time runs to the completion, not to the last part */
		char disp[600], params[1024];
		os_json_safe(s->t.display, disp, sizeof disp);
		snprintf(params, sizeof params,
			 "{\"url\":\"%s\",\"part_bytes\":%lld,\"parts\":%d,\"concurrency\":%d,"
			 "\"bytes\":%lld,\"seconds\":%.3f,\"http\":\"1.1\"}",
			 disp, part, k, s->conc, done_bytes, secs);
		bench_metric(s->ctx, "objstore.put.gbps", -1, (double)done_bytes / secs / 1e9, "GB/s", params);
		bench_log(s->ctx, "put: %d parts uploaded, the first %d completed, %lld bytes in %.2f s", uploaded, k,
			  done_bytes, secs);
		s->put_state = 2; /* completed: the object exists */
	}
	free(xml);
	return status;
}

int os_put_phase(struct os_state *s)
{
	char rnd[17];
	snprintf(rnd, sizeof rnd, "%016llx", os_rand(s));
	s->put_key = os_aprintf("%s.gpuvet-put-%s", s->t.key, rnd);
	char *ek = objstore_uri_encode(s->put_key, 1);
	s->put_url = os_aprintf("%s/%s", s->t.base, ek);
	free(ek);
	double phase_end = bench_now() + s->plan.put_s + s->plan.low_speed_s;
	int open = os_put_create(s, phase_end);
	if (open <= 0)
		return open == 0 ? BENCH_OK : BENCH_FAIL;

	long long part = s->range < OS_MIN_PART ? OS_MIN_PART : s->range;
	int n = (int)(s->plan.put_bytes / part);
	if (n < 2)
		n = 2;
	if (n > OS_MAX_PARTS)
		n = OS_MAX_PARTS;
	struct os_req *parts = calloc((size_t)n, sizeof *parts);
	s->upload_len = (size_t)part;
	s->upload_buf = malloc(s->upload_len);
	if (!parts || !s->upload_buf)
		abort();
	for (size_t i = 0; i + 8 <= s->upload_len; i += 8) {
		unsigned long long r = os_rand(s);
		memcpy(s->upload_buf + i, &r, 8);
	}
	for (int i = 0; i < n; i++) {
		parts[i].kind = OS_PART;
		parts[i].part = i + 1;
		parts[i].len = part;
	}
	double t0, t1;
	long long bytes;   /* parts after a failed one are uploaded but not completed */
	int ok = os_run_requests(s, parts, n, s->conc, bench_now() + s->plan.put_s, phase_end, &t0, &t1, &bytes, "put");
	/* the parts to complete: the leading run of successful parts */
	int k = 0, status;
	while (k < n && parts[k].ok)
		k++;
	if (k == 0) {
		bench_reason(s->ctx, "%s", s->first_error[0] ? s->first_error : "no part uploaded before the deadline");
		status = BENCH_FAIL;
	} else {
		status = os_put_complete(s, parts, k, part, ok, t0);
	}
	os_reqs_free(parts, n);
	return status;
}

/* Removes what the PUT phase left: the test object, or the unfinished upload. */
void os_put_cleanup(struct os_state *s)
{
	if (!s->put_url || !s->put_state)
		return;
	/* a short, separate allowance: cleaning up matters even when time is short */
	double until = bench_now() + 10;
	if (until > s->hard_deadline + 4)
		until = s->hard_deadline + 4;
	char saved[sizeof s->first_error];
	memcpy(saved, s->first_error, sizeof saved);
	int saved_errors = s->errors;
	double saved_deadline = s->hard_deadline;
	s->hard_deadline = until;
	struct os_req q = { .kind = s->put_state == 1 ? OS_ABORT : OS_DELETE };
	int ok = os_single(s, &q, until, "cleanup");
	free(q.body);
	if (!ok && q.kind == OS_ABORT) {
		/* the completion may have gone through with its answer lost */
		struct os_req d = { .kind = OS_DELETE };
		ok = os_single(s, &d, until, "cleanup");
		free(d.body);
	}
	if (!ok)
		bench_log(s->ctx, "could not remove the upload test object %s: %s", s->put_key,
			  s->first_error);
	s->hard_deadline = saved_deadline;
	s->errors = saved_errors; /* cleanup is not part of the measurement */
	memcpy(s->first_error, saved, sizeof saved);
}

