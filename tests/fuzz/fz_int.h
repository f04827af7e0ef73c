/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fosfuzz internals shared by ops.c (the grammar: ioctl and io_uring
 * calls) and procs.c (the meta-ops: processes, fds, memory): the op
 * numbers, the per-op generator, and the helpers both use.
 */
#ifndef FRACTOS_FZ_INT_H
#define FRACTOS_FZ_INT_H

#include <stdint.h>
#include "fuzz.h"

/* The generator an op seed starts: splitmix64. */
struct rng {
	uint64_t s;
};

static inline uint64_t rn(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint64_t below(struct rng *r, uint64_t n)
{
	return n ? rn(r) % n : 0;
}

static inline int chance(struct rng *r, unsigned int pct)
{
	return below(r, 100) < pct;
}

/* The operations, in the order of ops.c's table. */
enum {
	OP_SPACE_INFO, OP_MEM_CREATE, OP_DIMINISH, OP_COPY, OP_REVOKE,
	OP_REVTREE, OP_CLOSE, OP_DUP, OP_INFO, OP_EXPORT, OP_IMPORT,
	OP_REQ_CREATE, OP_INVOKE, OP_RECEIVE, OP_MON_RECV, OP_MON_DELEG,
	OP_NAME_PUB, OP_NAME_LOOKUP, OP_NAME_UNPUB, OP_SPACE_CONTACT,
	OP_MEM_GRANT,
	OP_NR_IOCTL,
	OP_RAW = OP_NR_IOCTL, OP_SPACE_OPEN, OP_SPACE_CLOSE, OP_SPACE_DUP,
	OP_CAPFD_CLOSE, OP_SEND, OP_FORK, OP_KILL, OP_REMAP, OP_POLL,
	OP_NR
};

/* ops.c */
extern unsigned char *fz_buf_rw;	/* FZ_BUF bytes, read-write */
extern struct fz_state *fz_cur_st;	/* the state of the op running */
extern char fz_cur_desc[512];		/* what it is doing, for reports */
void fz_violation(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
void fz_cids_add(struct fz_cids *c, uint32_t cid);
void fz_sp_reset(struct fz_state *st, int i);
void fz_capfd_keep(struct fz_state *st, struct rng *r, int fd);
int fz_raw_op(struct fz_state *st, struct rng *r, int s);

/* procs.c */
int fz_meta_op(struct fz_state *st, struct rng *r, unsigned int op, int s);
void fz_procs_fini(struct fz_state *st);

#endif /* FRACTOS_FZ_INT_H */
