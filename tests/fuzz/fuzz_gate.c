/*
 * fuzz_gate.c - the metamorphic test of the gate (issue 52) driven by the
 * fuzzer: its bytes pick the capture, the degradation, the runs stored
 * first and each hostile "harmless" mutation (tests/unit/gate_meta.h); a
 * degraded capture stored last and judged as a plain `gpuvet accept`
 * judges must never be ACCEPTED (abort when it is).  The captures are read
 * from tests/fixtures/gpu/ under the working directory (make runs it from
 * the repository root).  The seeded walk of the same cases runs in `make
 * test` (tests/unit/test_gate_metamorphic.c).
 */
#include "tests/unit/gate_meta.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct gm_world w;
	static int ready;
	if (!ready) {
		if (gm_init(&w, "tests/fixtures/gpu"))
			abort();   /* no capture here: nothing would be tested */
		ready = 1;
	}
	struct gm_src src = { .data = data, .size = size };
	struct gm_case c;
	int rc = gm_run_case(&w, &src, &c);
	if (rc)
		abort();   /* said on stderr: the capture, its degradation and the mutations */
	return 0;
}
