/*
 * test_gate_metamorphic.c - the metamorphic test of the gate (issue 52;
 * tests/unit/gate_meta.h): every real capture degraded every way is not
 * accepted unmutated (the premise), then seeded random cases of degraded
 * captures under combinations of hostile "harmless" mutations are never
 * accepted.
 *
 *   test_gate_metamorphic [SEED [CASES]]   (defaults: 52 and 300, which
 *   tests/test_unit.py runs; tests/integration/test_gate_metamorphic.py runs
 *   thousands more under other seeds)
 *
 * Run from the repository root (the captures are read from
 * tests/fixtures/gpu/).  A failing case is said with its seed and number,
 * its capture, degradation and mutations.
 */
#include "tests/unit/gate_meta.h"
#include "tests/unit/t.h"

#include <errno.h>

static struct gm_world world;
static unsigned long seed = 52, cases = 300;

/* Each capture, each degradation, no mutation: never accepted (else the mutations prove nothing). */
static void test_every_degraded_capture_is_not_accepted(void)
{
	for (size_t cap = 0; cap < world.ncaps; cap++)
		for (int d = 0; d < GM_NDEGRADE; d++) {
			struct store *s;
			if (d == GM_H2D_FLEET && !gm_clean_accepted(&world, cap))
				continue;
			CHECK(store_open(":memory:", &s) == STORE_OK);
			for (int i = 0; d == GM_H2D_FLEET && i < 3; i++) {
				json_t *c = gm_fresh(&world, cap);
				json_object_set_new(json_object_get(c, "run"), "instance_type", json_string(GM_SKU));
				int64_t id = gm_put(s, c);
				CHECK(id > 0 && gm_judge(&world, s, id, world.def) == 0);
			}
			json_t *fp = gm_fresh(&world, cap);
			gm_degrade(fp, (enum gm_degrade)d);
			json_object_set_new(json_object_get(fp, "run"), "instance_type", json_string(GM_SKU));
			int64_t id = gm_put(s, fp);
			int v = id > 0 ? gm_judge(&world, s, id, world.def) : 2;
			if (v == 0 || v == 2)
				fprintf(stderr, "%s degraded %s: %s\n", world.names[cap], gm_degrade_names[d],
					v ? "import refused" : "ACCEPT");
			CHECK(v == 1 || v == 3);
			store_close(s);
		}
}

static void test_no_mutation_of_a_degraded_capture_is_accepted(void)
{
	unsigned long accepted = 0, refused = 0, judged = 0;
	for (unsigned long k = 0; k < cases; k++) {
		struct gm_src src = { .state = seed * 1000003ull + k };
		struct gm_case c;
		int rc = gm_run_case(&world, &src, &c);
		if (rc)
			fprintf(stderr, "  (seed %lu, case %lu)\n", seed, k);
		CHECK(rc == 0);
		accepted += rc != 0;
		refused += !c.imported;
		judged += c.imported;
	}
	printf("seed %lu: %lu cases, %lu refused at import, %lu judged, %lu accepted\n", seed, cases, refused, judged,
	       accepted);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		seed = strtoul(argv[1], NULL, 10);
	if (argc > 2)
		cases = strtoul(argv[2], NULL, 10);
	if (gm_init(&world, "tests/fixtures/gpu")) {
		fprintf(stderr, "run from the repository root\n");
		return 1;
	}
	world.verbose = getenv("GATE_META_VERBOSE") != NULL;   /* every case said, not only an accepted one */
	t_fn tests[] = { test_every_degraded_capture_is_not_accepted, test_no_mutation_of_a_degraded_capture_is_accepted };
	const char *names[] = { "every_degraded_capture_is_not_accepted", "no_mutation_of_a_degraded_capture_is_accepted" };
	int failed = 0;
	for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
		t_cur_failed = 0;
		tests[i]();
		failed += t_cur_failed;
		printf("%s %s\n", t_cur_failed ? "FAIL" : "ok  ", names[i]);
	}
	gm_fini(&world);
	printf("%d passed, %d failed\n", (int)(sizeof tests / sizeof tests[0]) - failed, failed);
	return failed != 0;
}
