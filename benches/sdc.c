/* sdc.c - the host-side comparison of soak checksums; see sdc.h. */
#include "benches/sdc.h"

#include <string.h>

unsigned long long sdc_checksum_host(const void *buf, size_t bytes)
{
	const unsigned char *b = buf;
	size_t nw = bytes / 4;
	unsigned long long s = 0;
	for (size_t i = 0; i < nw; i++) {
		unsigned w;
		memcpy(&w, b + 4 * i, 4);
		s += sdc_term(w, i);
	}
	for (size_t k = 0; k < bytes % 4; k++)
		s += sdc_term(b[4 * nw + k], nw + k);
	return s;
}

int sdc_due(unsigned long long iter)
{
	return iter % SDC_EVERY == 0;
}

int sdc_slot(unsigned long long iter)
{
	return (int)((iter / SDC_EVERY) % SDC_RING);
}

int sdc_record(struct sdc_state *s, unsigned long long iter, unsigned long long sum, double t)
{
	s->checked++;
	if (!s->have_ref) {
		s->ref = sum;
		s->have_ref = 1;
		return 0;
	}
	if (sum == s->ref)
		return 0;
	if (s->kept < SDC_KEEP) {
		s->iters[s->kept] = iter;
		s->at_s[s->kept] = t;
		s->kept++;
	}
	s->mismatches++;
	return 1;
}
