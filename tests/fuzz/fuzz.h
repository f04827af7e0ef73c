/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fosfuzz: a grammar fuzzer of the fractos uAPI (see fosfuzz.c).
 *
 * A *program* is a list of 64-bit op seeds.  Each seed is interpreted
 * against the state of the process running it (its spaces, the cids it has
 * seen, its capability fds, its children): the seed picks the operation and
 * every argument, so a program replays the same calls as long as the
 * kernel answers the same way.  Programs run in a fresh worker process; the
 * driver checks the invariants between programs.
 */
#ifndef FRACTOS_FUZZ_H
#define FRACTOS_FUZZ_H

#include <stdint.h>
#include <sys/types.h>
#include <liburing.h>

#define FZ_MAX_OPS	512	/* ops in one program */
#define FZ_NSP		3	/* spaces per process */
#define FZ_NCID		24	/* remembered cids per list */
#define FZ_NCAPFD	8	/* capability fds held */
#define FZ_NKIDS	8	/* forked children alive at once */
#define FZ_BUF		(64 * 1024)

/* Exit status of a worker that saw a documented-errno violation. */
#define FZ_EXIT_VIOLATION	3
#define FZ_EXIT_SETUP		4

struct fz_prog {
	unsigned int n;
	uint64_t op[FZ_MAX_OPS];
};

/* A ring of recently seen cids (most recent overwrite the oldest). */
struct fz_cids {
	uint32_t v[FZ_NCID];
	unsigned int n, next;
};

/* The state a sequence of ops runs against (one per process). */
struct fz_state {
	int sp[FZ_NSP];			/* space fds, -1 when closed */
	struct fz_cids any[FZ_NSP];	/* every cid a call returned */
	struct fz_cids mem[FZ_NSP];	/* Memory cids */
	struct fz_cids req[FZ_NSP];	/* Request cids */
	int capfd[FZ_NCAPFD];		/* exported capability fds */
	int sock;			/* to the peer process, or -1 */
	pid_t peer;
	pid_t kids[FZ_NKIDS];
	struct io_uring ring;
	int ring_ok;
	int is_child;			/* a forked child or the peer */
	const char *who;		/* "worker", "child", "peer" */
};

/* Counts of every process of a run (MAP_SHARED, set up by the driver). */
struct fz_stats {
	unsigned long ops;		/* calls made */
	unsigned long errs;		/* calls that failed (documented errno) */
	unsigned long uring;		/* calls through io_uring */
	unsigned long forks;		/* children forked */
	unsigned long kills;		/* children and peers SIGKILLed */
	unsigned long sends;		/* fds passed over SCM_RIGHTS */
	unsigned long op_calls[32];	/* per op of ops.c's table */
	unsigned long op_ok[32];
};

extern struct fz_stats *fz_stats;
#define FZ_COUNT(f) do { if (fz_stats) __atomic_add_fetch(&fz_stats->f, 1, __ATOMIC_RELAXED); } while (0)

/* Settings shared by the driver and the workers. */
struct fz_opts {
	int loopback;		/* fabric_loopback: remote paths */
	uint32_t peer;		/* another node running fosfuzz, or 0 */
	uint32_t node;		/* this node's id */
	int kcov;		/* KCOV collection on */
	int verbose;		/* print every op */
	uid_t uid;		/* unprivileged uid the workers run as */
	unsigned long memlock;	/* their RLIMIT_MEMLOCK */
};

extern struct fz_opts fz_opts;

/* ops.c */
void fz_state_init(struct fz_state *st, const char *who);
void fz_state_populate(struct fz_state *st);
int fz_run_op(struct fz_state *st, uint64_t seed);
void fz_state_fini(struct fz_state *st);
void fz_ops_init(void);
const char *fz_op_name(uint64_t seed);
const char *fz_op_index_name(unsigned int i);
unsigned int fz_op_count(void);

/* kcov.c */
int fz_kcov_open(void);
void fz_kcov_enable(void);
void fz_kcov_collect(void);
void fz_kcov_setup_shared(uint64_t text_start, uint64_t text_len);
unsigned long fz_kcov_covered(void);
unsigned long fz_kcov_new(void);
void fz_kcov_reset_new(void);

#endif /* FRACTOS_FUZZ_H */
