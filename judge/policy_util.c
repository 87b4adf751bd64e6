/*
 * policy_util.c - the YAML helpers every file that parses a part of a
 * policy calls (policy.c, its `cluster:` section in policy_cluster.c): a
 * node's text, a key given twice, a mapping pair, a plain number, and the
 * error that names the line.  Declared in policy_int.h; it calls no other
 * policy file, so the parts call down into it, never back into policy.c.
 */
#include "judge/policy_int.h"
#include "common/ident.h"
#include "common/util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <yaml.h>

const char *policy_scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

int policy_perr(struct pctx *c, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[256], shown[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	ident_escape(msg, shown, sizeof shown); /* a key or value from the file may hold escapes */
	snprintf(c->err, c->errlen, "line %lu: %s", n ? (unsigned long)n->start_mark.line + 1 : 1UL, shown);
	return -1;
}

/* A key given twice in one mapping is refused, not silently the last one. */
int policy_dup_keys(struct pctx *c, yaml_node_t *map)
{
	if (map->type != YAML_MAPPING_NODE)
		return 0;
	for (yaml_node_pair_t *a = map->data.mapping.pairs.start; a < map->data.mapping.pairs.top; a++) {
		const char *ka = policy_scalar(yaml_document_get_node(c->doc, a->key));
		for (yaml_node_pair_t *b = map->data.mapping.pairs.start; ka && b < a; b++) {
			const char *kb = policy_scalar(yaml_document_get_node(c->doc, b->key));
			if (kb && !strcmp(ka, kb))
				return policy_perr(c, yaml_document_get_node(c->doc, a->key), "'%s' given twice", ka);
		}
	}
	return 0;
}

/* A mapping pair's key and value nodes; the key's text, NULL when it is not a plain scalar. */
const char *policy_pair_kv(struct pctx *c, yaml_node_pair_t *pair, yaml_node_t **k, yaml_node_t **v)
{
	*k = yaml_document_get_node(c->doc, pair->key);
	*v = yaml_document_get_node(c->doc, pair->value);
	return policy_scalar(*k);
}

/*
 * A plain decimal number: a quoted "5" is text in YAML, and 0x10, inf or
 * 1e400 are not what a person writing a threshold means.
 */
int policy_get_number(struct pctx *c, const yaml_node_t *n, const char *key, double *out)
{
	const char *s = policy_scalar(n);
	int plain = n && n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	if (!s || !plain || strspn(s, "0123456789.-+eE") != strlen(s) || gv_parse_double(s, out) || !isfinite(*out))
		return policy_perr(c, n, "'%s' must be a plain decimal number (as 40 or 0.75, unquoted)", key);
	return 0;
}
