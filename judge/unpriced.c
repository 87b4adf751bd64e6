/*
 * unpriced.c - the catalog's types without a price in the asked market,
 * found in one pass over its prices ordered by type (judge/unpriced.h):
 * a type whose rows have all passed without one in the market is handed on
 * with why, in the words rank and cost both list it with.  It calls only the
 * price catalog: cost_more.c and the rank files call down to it.
 */
#include "judge/unpriced.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void unpriced_why(const char *market, const char *region, const char *provider, char *why, size_t n)
{
	if (!strcmp(market, "spot") && !strcmp(provider, "lambda"))
		snprintf(why, n, "no spot price (lambda sells no spot instances)");
	else if (!strcmp(market, "spot") && (!strcmp(provider, "aws") || !strcmp(provider, "alibaba")))
		snprintf(why, n, "no spot price (%s: gpuvet prices update --provider %s with %s credentials, or gpuvet "
			 "prices import FILE)", !strcmp(provider, "aws") ? "none in the shipped snapshot" : "gpuvet ships none",
			 provider, !strcmp(provider, "aws") ? "AWS" : "Alibaba Cloud");
	else if (!strcmp(market, "spot"))
		snprintf(why, n, "no spot price (gpuvet prices import FILE)");
	else
		snprintf(why, n, "no %s price%s%s (gpuvet prices import FILE)", market, region ? " in " : "",
			 region ? region : "");
}

#define MAX_MARKETS 3   /* on_demand, spot, reserved (price_rec.market) */

struct walk {
	const char *market, *region;
	price_row_fn row_fn;
	unpriced_type_fn type_fn;
	void *ud;
	struct price_rec cur;   /* the type whose rows are passing: its first row */
	int cur_priced;         /* it has a row in market */
	char other[MAX_MARKETS][sizeof ((struct price_rec *)0)->market];   /* the markets it has a price in, in the order met */
	size_t nother;
	int stopped;
};

/* Appends to the string in buf (cut at size, never past it). */
static void __attribute__((format(printf, 3, 4))) append(char *buf, size_t size, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;
	if (n + 1 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, size - n, fmt, ap);
	va_end(ap);
}

/* "; the catalog has a spot price only (--market spot)", "; the catalog has spot and reserved prices only
   (--market spot or reserved)" */
static void say_markets(const struct walk *w, char *why, size_t size)
{
	size_t m = w->nother;
	const char *first = w->other[0];
	append(why, size, "; the catalog has %s%s", m > 1 ? "" : first[0] && strchr("aeiou", first[0]) ? "an " : "a ", first);
	for (size_t i = 1; i < m; i++)
		append(why, size, "%s%s", i + 1 < m ? ", " : " and ", w->other[i]);
	append(why, size, " price%s only (--market %s", m > 1 ? "s" : "", first);
	for (size_t i = 1; i < m; i++)
		append(why, size, "%s%s", i + 1 < m ? ", " : " or ", w->other[i]);
	append(why, size, ")");
}

/* The type whose rows passed: handed on when none was in market. */
static int finish(struct walk *w)
{
	if (!w->cur.provider[0] || w->cur_priced)
		return 0;
	char why[400];
	unpriced_why(w->market, w->region, w->cur.provider, why, sizeof why);
	if (w->nother)
		say_markets(w, why, sizeof why);
	return w->type_fn(w->ud, &w->cur, why);
}

static void note_market(struct walk *w, const char *market)
{
	for (size_t i = 0; i < w->nother; i++)
		if (!strcmp(w->other[i], market))
			return;
	if (w->nother < MAX_MARKETS)
		snprintf(w->other[w->nother++], sizeof w->other[0], "%s", market);
}

static int take_row(void *ud, const struct price_row *r)
{
	struct walk *w = ud;
	const struct price_rec *p = &r->rec;
	if (strcmp(p->provider, w->cur.provider) || strcmp(p->instance_type, w->cur.instance_type)) {
		if ((w->stopped = finish(w)))
			return w->stopped;
		w->cur = *p;
		w->cur_priced = 0;
		w->nother = 0;
	}
	if (strcmp(p->market, w->market)) {
		note_market(w, p->market);
		return 0;
	}
	w->cur_priced = 1;
	return w->row_fn ? (w->stopped = w->row_fn(w->ud, r)) : 0;
}

int unpriced_walk(sqlite3 *db, const struct price_filter *f, price_row_fn row_fn, unpriced_type_fn type_fn, void *ud,
		  char *err, size_t errlen)
{
	struct walk w = { .market = f->market ? f->market : "on_demand", .region = f->region, .row_fn = row_fn,
			  .type_fn = type_fn, .ud = ud };
	struct price_filter every = *f;
	every.market = NULL;   /* a type's rows of every market pass together: which it has is the why */
	if (catalog_prices(db, &every, PRICE_ORDER_TYPE, take_row, &w, err, errlen) < 0)
		return -1;
	if (!w.stopped)
		finish(&w);
	return 0;
}
