/*
 * fuzz_objstore_text.c - the objstore bench's text parsers
 * (platform/objstore_util.c): object URLs, URL masking, the AWS shared
 * credentials format, Content-Range and S3 XML.  The first byte picks the
 * parser; the rest is its input.  Masking must never let a password or a
 * query string through.
 */
#include "platform/objstore_util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	char *s = malloc(size);
	if (!s)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = 0;
	switch (data[0] % 5) {
	case 0: {
		struct os_target t;
		char err[512];
		if (objstore_parse_target(s, "http://127.0.0.1:9000/", "us-east-1", &t, err,
					  sizeof err) == 0) {
			if (!t.url || !t.display)
				abort();
			objstore_target_free(&t);
		}
		if (objstore_parse_target(s, NULL, NULL, &t, err, sizeof err) == 0)
			objstore_target_free(&t);
		break;
	}
	case 1: {
		char *m = objstore_mask_url(s);
		/* no query string or fragment survives masking: at most "?***" */
		const char *mq = strpbrk(m, "?#");
		if (mq && strcmp(mq, "?***"))
			abort();
		/* whatever preceded an '@' before the path is gone */
		const char *sch = strstr(m, "://");
		const char *auth = sch ? sch + 3 : m;
		const char *at = strchr(auth, '@');
		size_t alen = strcspn(auth, sch ? "/?#" : "?#");
		if (at && at < auth + alen && (at - auth != 3 || strncmp(auth, "***", 3)))
			abort();
		free(m);
		char *e = objstore_uri_encode(s, data[0] & 8);
		free(e);
		break;
	}
	case 2: {
		char *v = objstore_ini_get(s, "default", "aws_access_key_id");
		free(v);
		v = objstore_ini_get(s, "profile x", "region");
		free(v);
		break;
	}
	case 3:
		(void)objstore_content_range_total(s);
		break;
	default: {
		char out[256];
		(void)objstore_xml_text(s, size - 1, "Code", out, sizeof out);
		(void)objstore_xml_text(s, size - 1, "UploadId", out, sizeof out);
		break;
	}
	}
	free(s);
	return 0;
}
