/*
 * test_sdc.c - the host side of the soak's silent-data-corruption check
 * (benches/sdc.h): the checksum's definition (the device kernel sums the
 * same sdc_term), which results are compared, and the compare step driven
 * on the soak worker's schedule (4 GEMMs in flight, collected when the
 * oldest completes, the last ones after the loop).  The flag raised from
 * what the soak reports is tested in test_flags_real.c on the real captures.
 */
#include "benches/sdc.h"
#include "tests/unit/t.h"

#include <stdint.h>
#include <stdlib.h>

static void test_checksum_sees_every_change(void)
{
	unsigned char buf[4 * 64 + 3];
	for (size_t i = 0; i < sizeof buf; i++)
		buf[i] = (unsigned char)(i * 37 + 11);
	unsigned long long ref = sdc_checksum_host(buf, sizeof buf);
	CHECK(ref == sdc_checksum_host(buf, sizeof buf));
	int missed = 0;
	/* every single bit flip, in the words and in the trailing bytes */
	for (size_t i = 0; i < sizeof buf; i++)
		for (int b = 0; b < 8; b++) {
			buf[i] ^= (unsigned char)(1u << b);
			missed += sdc_checksum_host(buf, sizeof buf) == ref;
			buf[i] ^= (unsigned char)(1u << b);
		}
	CHECK(missed == 0);
	/* two words that trade places */
	unsigned char t[4];
	memcpy(t, buf, 4);
	memcpy(buf, buf + 8, 4);
	memcpy(buf + 8, t, 4);
	CHECK(sdc_checksum_host(buf, sizeof buf) != ref);
	/* a zeroed result (a kernel that never ran) */
	unsigned char z[sizeof buf] = { 0 };
	CHECK(sdc_checksum_host(z, sizeof z) != ref);
}

static void test_record(void)
{
	struct sdc_state s;
	memset(&s, 0, sizeof s);
	CHECK(sdc_record(&s, 0, 42, 0.1) == 0);      /* the first is the reference */
	CHECK(sdc_record(&s, 8, 42, 0.2) == 0);
	CHECK(sdc_record(&s, 16, 43, 0.3) == 1);
	CHECK(sdc_record(&s, 24, 42, 0.4) == 0);
	CHECK(s.checked == 4 && s.mismatches == 1 && s.kept == 1 && s.iters[0] == 16);
	CHECK_NEAR(s.at_s[0], 0.3, 1e-12);
	for (unsigned long long i = 0; i < 100; i++)
		sdc_record(&s, 32 + 8 * i, 7, 1.0);
	CHECK(s.mismatches == 101 && s.kept == SDC_KEEP);   /* counted all, kept the first ones */
}

/*
 * The soak worker's schedule with a fake device: GEMM i's "checksum" lands in its ring slot when
 * enqueued and is read when GEMM i completes (i + 3 enqueued, or after the loop).  Every due
 * GEMM is compared exactly once, and a corrupted one is found with its iteration.
 */
static void test_worker_schedule(void)
{
	enum { DEPTH = 4 };
	for (unsigned long long total = 0; total < 70; total++) {
		unsigned long long ring[SDC_RING], i = 0;
		struct sdc_state s;
		memset(&s, 0, sizeof s);
		const unsigned long long bad = 40;
		for (; i < total; i++) {
			if (sdc_due(i))
				ring[sdc_slot(i)] = i == bad ? 0xdead : 0x5eed;
			if (i >= DEPTH - 1) {
				unsigned long long j = i - (DEPTH - 1);
				if (sdc_due(j))
					sdc_record(&s, j, ring[sdc_slot(j)], 0);
			}
		}
		for (unsigned long long j = i >= DEPTH - 1 ? i - (DEPTH - 1) : 0; j < i; j++)
			if (sdc_due(j))
				sdc_record(&s, j, ring[sdc_slot(j)], 0);
		CHECK(s.checked == (total + SDC_EVERY - 1) / SDC_EVERY);
		CHECK(s.mismatches == (total > bad ? 1u : 0u));
		if (total > bad)
			CHECK(s.iters[0] == bad);
	}
	CHECK(SDC_RING * SDC_EVERY > 4);   /* a slot is never reused while its GEMM is in flight */
}

TEST_MAIN(T(test_checksum_sees_every_change), T(test_record), T(test_worker_schedule))
