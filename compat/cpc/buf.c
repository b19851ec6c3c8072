/* libcpc's buffers: one 64-bit value per request of a set, the time of
 * the sample and its tick, and the arithmetic between buffers. */
#include "cpc_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

CPC_EXPORT cpc_buf_t *cpc_buf_create(cpc_t *cpc, cpc_set_t *set)
{
	if (!cpc__set_valid(cpc, set)) {
		errno = EINVAL;
		return NULL;
	}
	cpc_buf_t *buf = calloc(1, sizeof(*buf));
	if (buf)
		buf->data = calloc(set->nreq ? (size_t)set->nreq : 1, sizeof(uint64_t));
	if (!buf || !buf->data) {
		if (buf)
			free(buf);
		errno = ENOMEM;
		return NULL;
	}
	buf->n = set->nreq;
	sigset_t saved;
	cpc__lock(cpc, &saved);
	buf->next = cpc->bufs;
	cpc->bufs = buf;
	cpc__unlock(cpc, &saved);
	return buf;
}

CPC_EXPORT int cpc_buf_destroy(cpc_t *cpc, cpc_buf_t *buf)
{
	sigset_t saved;
	cpc__lock(cpc, &saved);
	cpc_buf_t **pp = &cpc->bufs;
	while (*pp && *pp != buf)
		pp = &(*pp)->next;
	bool found = *pp != NULL;
	if (found)
		*pp = buf->next;
	cpc__unlock(cpc, &saved);
	if (!found)
		return cpc__fail(EINVAL);
	free(buf->data);
	free(buf);
	return 0;
}

CPC_EXPORT int cpc_buf_get(cpc_t *cpc, cpc_buf_t *buf, int index, uint64_t *val)
{
	(void)cpc;
	if (index < 0 || index >= buf->n)
		return cpc__fail(EINVAL);
	*val = buf->data[index];
	return 0;
}

CPC_EXPORT int cpc_buf_set(cpc_t *cpc, cpc_buf_t *buf, int index, uint64_t val)
{
	(void)cpc;
	if (index < 0 || index >= buf->n)
		return cpc__fail(EINVAL);
	buf->data[index] = val;
	return 0;
}

CPC_EXPORT hrtime_t cpc_buf_hrtime(cpc_t *cpc, cpc_buf_t *buf)
{
	(void)cpc;
	return buf->hrtime;
}

CPC_EXPORT uint64_t cpc_buf_tick(cpc_t *cpc, cpc_buf_t *buf)
{
	(void)cpc;
	return (uint64_t)((double)buf->tick * cpc__tsc_hz() / 1e9);
}

CPC_EXPORT void cpc_buf_sub(cpc_t *cpc, cpc_buf_t *ds, cpc_buf_t *a, cpc_buf_t *b)
{
	(void)cpc;
	if (a->n != ds->n || b->n != ds->n)
		return;
	ds->hrtime = a->hrtime > b->hrtime ? a->hrtime : b->hrtime;
	ds->tick = a->tick - b->tick;
	for (int i = 0; i < ds->n; i++)
		ds->data[i] = a->data[i] - b->data[i];
}

CPC_EXPORT void cpc_buf_add(cpc_t *cpc, cpc_buf_t *ds, cpc_buf_t *a, cpc_buf_t *b)
{
	(void)cpc;
	if (a->n != ds->n || b->n != ds->n)
		return;
	ds->hrtime = a->hrtime > b->hrtime ? a->hrtime : b->hrtime;
	ds->tick = a->tick + b->tick;
	for (int i = 0; i < ds->n; i++)
		ds->data[i] = a->data[i] + b->data[i];
}

CPC_EXPORT void cpc_buf_copy(cpc_t *cpc, cpc_buf_t *ds, cpc_buf_t *src)
{
	(void)cpc;
	if (ds->n != src->n)
		return;
	memcpy(ds->data, src->data, (size_t)ds->n * sizeof(uint64_t));
	ds->hrtime = src->hrtime;
	ds->tick = src->tick;
}

CPC_EXPORT void cpc_buf_zero(cpc_t *cpc, cpc_buf_t *buf)
{
	(void)cpc;
	memset(buf->data, 0, (size_t)buf->n * sizeof(uint64_t));
	buf->hrtime = 0;
	buf->tick = 0;
}
