/*
 * jt_json.h - a jtree value (common/jtree.h) rebuilt as jansson's json_t, so
 * that a test can hold jtree to jansson with json_equal().  Test code only.
 */
#ifndef GPUVET_TEST_JT_JSON_H
#define GPUVET_TEST_JT_JSON_H

#include "common/jtree.h"

#include <jansson.h>

static json_t *jt_to_json(const struct jtree *t, uint32_t v)
{
	const struct jt_node *n = &t->nodes[v];
	switch (jt_type(t, v)) {
	case JT_NULL:
		return json_null();
	case JT_TRUE:
		return json_true();
	case JT_FALSE:
		return json_false();
	case JT_INT:
		return json_integer(n->u.i);
	case JT_REAL:
		return json_real(n->u.d);
	case JT_STR:
		return json_stringn_nocheck(t->strs + n->u.s, n->n);
	case JT_ARR: {
		json_t *a = json_array();
		uint32_t e;
		size_t i;
		jt_foreach(t, v, i, e)
			json_array_append_new(a, jt_to_json(t, e));
		return a;
	}
	case JT_OBJ: {
		json_t *o = json_object();
		uint32_t k = v + 1;
		for (uint32_t m = 0; m < n->n; m++, k = t->nodes[k + 1].end)
			json_object_setn_new_nocheck(o, t->strs + t->nodes[k].u.s, t->nodes[k].n, jt_to_json(t, k + 1));
		return o;
	}
	default:
		return NULL;
	}
}

#endif
