/* test_catalog_choose.c - which stored price a type is priced at (pricing/catalog_choose.c) */
#include "pricing/catalog.h"
#include "results/store.h"
#include "common/util.h"
#include "tests/unit/t.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *prices_csv =
	"provider,instance_type,region,zone,market,price,unit,currency,captured_at,source\n"
	"aws,p5.48xlarge,us-east-1,,on_demand,55.04,hour,USD,2026-11-25,catalog:aws\n"
	"aws,p5.48xlarge,us-east-2,,on_demand,55.04,hour,USD,2026-11-25,catalog:aws\n"
	"aws,p5.48xlarge,eu-west-2,,on_demand,71.552,hour,USD,2026-11-25,catalog:aws\n"
	"aws,p5.48xlarge,us-east-1,use1-az1,spot,20,hour,USD,2026-11-25,catalog:aws\n"
	"aws,p5.48xlarge,us-east-1,use1-az2,spot,12,hour,USD,2026-11-25,catalog:aws\n"
	"aws,p5.48xlarge,us-east-1,use1-az3,spot,30,hour,USD,2026-11-25,catalog:aws\n"
	"aws,p5.48xlarge,us-east-1,use1-az4,spot,25,hour,USD,2026-11-25,catalog:aws\n"
	"aws,p5.48xlarge,us-east-2,use2-az1,spot,11,hour,USD,2026-11-25,catalog:aws\n"
	"aws,p5.48xlarge,eu-west-2,euw2-az1,spot,15,hour,USD,2020-01-01,catalog:aws\n"
	"lambda,gpu_8x_h100_sxm5,,,on_demand,31.92,hour,USD,2026-11-21,catalog:lambda\n";

static void test_choose_region_market_and_note(void)
{
	char *path = gv_asprintf("%s/test_choose_%d.db", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	char err[512];
	struct store *s;
	struct price_choice ch;
	long rows = 0;
	CHECK(store_open(path, &s) == STORE_OK);
	sqlite3 *db = store_db(s);
	CHECK(catalog_import_buffer(db, "p.csv", prices_csv, strlen(prices_csv), "catalog:aws", "m", &rows, err,
				    sizeof err) == 0);
	/* spot in a region: its lowest zone, and the median of its four zones (the lower middle) */
	CHECK(catalog_choose_price(db, "aws", "p5.48xlarge", "spot", "us-east-1", 0, &ch, err, sizeof err) == 0);
	CHECK(ch.found && !ch.elsewhere && ch.zones == 4 && ch.note[0] == '\0');
	CHECK_STR(ch.row.rec.zone, "use1-az2");
	CHECK_NEAR(ch.row.usd_per_hour, 12, 0);
	CHECK_NEAR(ch.median_usd_per_hour, 20, 0);
	CHECK_STR(ch.median_zone, "use1-az1");
	/* no region: the cheapest region, named */
	CHECK(catalog_choose_price(db, "aws", "p5.48xlarge", "spot", NULL, 0, &ch, err, sizeof err) == 0);
	CHECK_STR(ch.row.rec.region, "us-east-2");
	/* a region without a price: the cheapest other one, and the note says so */
	CHECK(catalog_choose_price(db, "aws", "p5.48xlarge", "on_demand", "eu-west-1", 0, &ch, err, sizeof err) == 0);
	CHECK(ch.found && ch.elsewhere && isnan(ch.median_usd_per_hour));
	CHECK_STR(ch.row.rec.region, "us-east-1");
	CHECK_STR(ch.note, "priced at us-east-1; no price in eu-west-1");
	CHECK(catalog_choose_price(db, "aws", "p5.48xlarge", "spot", "ap-south-1", 0, &ch, err, sizeof err) == 0);
	CHECK_STR(ch.note, "priced at us-east-2; no spot price in ap-south-1");
	/* --max-age: the 2020 spot price of eu-west-2 is not considered */
	CHECK(catalog_choose_price(db, "aws", "p5.48xlarge", "spot", "eu-west-2", 90, &ch, err, sizeof err) == 0);
	CHECK(ch.elsewhere && !strcmp(ch.row.rec.region, "us-east-2"));
	/* a price with no region holds in every one; an unknown type has none */
	CHECK(catalog_choose_price(db, "lambda", "gpu_8x_h100_sxm5", "on_demand", "us-west-1", 0, &ch, err,
				   sizeof err) == 0);
	CHECK(ch.found && !ch.elsewhere && ch.row.rec.region[0] == '\0');
	CHECK(catalog_choose_price(db, "aws", "p9.huge", "on_demand", NULL, 0, &ch, err, sizeof err) == 0 && !ch.found);
	/* an import wins over the shipped catalog, however dear */
	const char *deal = "provider,instance_type,region,market,price,unit,currency,captured_at\n"
			   "aws,p5.48xlarge,us-east-1,on_demand,60,hour,USD,2026-11-20\n";
	CHECK(catalog_import_buffer(db, "deal.csv", deal, strlen(deal), "import:deal.csv", "m", &rows, err,
				    sizeof err) == 0);
	CHECK(catalog_choose_price(db, "aws", "p5.48xlarge", "on_demand", "us-east-1", 0, &ch, err, sizeof err) == 0);
	CHECK_NEAR(ch.row.usd_per_hour, 60, 0);
	CHECK_STR(ch.row.rec.source, "import:deal.csv");
	store_close(s);
	unlink(path);
	free(path);
}

TEST_MAIN(T(test_choose_region_market_and_note))
