/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small helpers shared by the fractos selftests: open a space, create a
 * Memory, thin ioctl wrappers, the live counters and module parameters.
 *
 * Every wrapper returns what ioctl() returns (0, or -1 with errno set) and
 * writes its out value (cid, fd) only on success.  Keep this file small and
 * stable: several test programs include it.
 */
#ifndef FRACTOS_FOS_UTIL_H
#define FRACTOS_FOS_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>
#include <sys/wait.h>
#include <linux/fractos.h>

#define FOS_LIVE_DIR	"/sys/class/misc/fractos/live/"
#define FOS_PARAM_DIR	"/sys/module/fractos/parameters/"

static inline int fos_open(void)
{
	return open(FRACTOS_DEVICE, O_RDWR | O_CLOEXEC);
}

static inline int fos_mem_create(int fd, const void *addr, uint64_t len,
				 uint32_t perms, uint32_t *cid)
{
	struct fractos_memory_create a = {
		.addr = (uintptr_t)addr, .len = len, .perms = perms,
	};
	int ret = ioctl(fd, FRACTOS_IOC_MEMORY_CREATE, &a);

	if (!ret && cid)
		*cid = a.cid;
	return ret;
}

static inline int fos_diminish(int fd, uint32_t cid, uint32_t drop_perms,
			       uint64_t offset, uint64_t len, uint32_t *new_cid)
{
	struct fractos_memory_diminish a = {
		.cid = cid, .drop_perms = drop_perms, .offset = offset,
		.len = len,
	};
	int ret = ioctl(fd, FRACTOS_IOC_MEMORY_DIMINISH, &a);

	if (!ret && new_cid)
		*new_cid = a.new_cid;
	return ret;
}

/* memory_copy; *copied (if given) receives the copied field on success. */
static inline int fos_copy(int fd, uint32_t src, uint64_t soff, uint32_t dst,
			   uint64_t doff, uint64_t len, uint64_t *copied)
{
	struct fractos_memory_copy a = {
		.src = src, .dst = dst, .src_offset = soff, .dst_offset = doff,
		.len = len,
	};
	int ret = ioctl(fd, FRACTOS_IOC_MEMORY_COPY, &a);

	if (!ret && copied)
		*copied = a.copied;
	return ret;
}

/* CAP_REVOKE, CAP_CLOSE, CAP_DUP, CAP_CREATE_REVTREE. */
static inline int fos_cap_op(int fd, unsigned long cmd, uint32_t cid,
			     uint32_t *new_cid)
{
	struct fractos_cap_arg a = { .cid = cid };
	int ret = ioctl(fd, cmd, &a);

	if (!ret && new_cid)
		*new_cid = a.new_cid;
	return ret;
}

static inline int fos_revoke(int fd, uint32_t cid)
{
	return fos_cap_op(fd, FRACTOS_IOC_CAP_REVOKE, cid, NULL);
}

static inline int fos_close(int fd, uint32_t cid)
{
	return fos_cap_op(fd, FRACTOS_IOC_CAP_CLOSE, cid, NULL);
}

static inline int fos_dup(int fd, uint32_t cid, uint32_t *new_cid)
{
	return fos_cap_op(fd, FRACTOS_IOC_CAP_DUP, cid, new_cid);
}

static inline int fos_revtree(int fd, uint32_t cid, uint32_t *new_cid)
{
	return fos_cap_op(fd, FRACTOS_IOC_CAP_CREATE_REVTREE, cid, new_cid);
}

static inline int fos_info(int fd, uint32_t cid, struct fractos_cap_info *i)
{
	memset(i, 0, sizeof(*i));
	i->cid = cid;
	return ioctl(fd, FRACTOS_IOC_CAP_INFO, i);
}

static inline int fos_space_info(int fd, struct fractos_space_info *i)
{
	memset(i, 0, sizeof(*i));
	return ioctl(fd, FRACTOS_IOC_SPACE_INFO, i);
}

/* Export @cid as a new fd, stored in *capfd. */
static inline int fos_export(int fd, uint32_t cid, uint32_t flags, int *capfd)
{
	struct fractos_cap_export a = { .cid = cid, .flags = flags };
	int ret = ioctl(fd, FRACTOS_IOC_CAP_EXPORT, &a);

	if (!ret && capfd)
		*capfd = a.fd;
	return ret;
}

static inline int fos_import(int fd, int capfd, uint32_t *cid)
{
	struct fractos_cap_import a = { .fd = capfd };
	int ret = ioctl(fd, FRACTOS_IOC_CAP_IMPORT, &a);

	if (!ret && cid)
		*cid = a.cid;
	return ret;
}

/* Number of capabilities in the space, or -1. */
static inline long fos_ncaps(int fd)
{
	struct fractos_space_info i;

	return fos_space_info(fd, &i) ? -1 : (long)i.ncaps;
}

/* Read one decimal value from a sysfs file; -1 if it cannot be read. */
static inline long long fos_read_ll(const char *path)
{
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* A live counter: "spaces", "objects", "caps", "memories", ... */
static inline long long fos_live(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), FOS_LIVE_DIR "%s", name);
	return fos_read_ll(path);
}

/* A running total of the module (/sys/class/misc/fractos/totals/). */
static inline long long fos_total(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/class/misc/fractos/totals/%s", name);
	return fos_read_ll(path);
}

/* Wait up to 2 s for live counter @name to read @want; its last value. */
static inline long long fos_live_settle(const char *name, long long want)
{
	long long v;
	int i;

	for (i = 0; i < 200 && (v = fos_live(name)) != want; i++)
		usleep(10000);
	return v;
}

/*
 * @len zeroed bytes of a fresh private mapping as READ|WRITE Memory in
 * space @sfd: the mapping, and its cid in *@cid; NULL if either failed.
 */
static inline unsigned char *fos_anon_mem(int sfd, size_t len, uint32_t *cid)
{
	unsigned char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (buf == MAP_FAILED)
		return NULL;
	if (fos_mem_create(sfd, buf, len, FRACTOS_PERM_ALL, cid)) {
		munmap(buf, len);
		return NULL;
	}
	return buf;
}

static inline long long fos_param(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), FOS_PARAM_DIR "%s", name);
	return fos_read_ll(path);
}

/* Write @s to a sysfs, debugfs or cgroup file (root only); 0 or -1. */
static inline int fos_write_text(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -1;
	ret = fputs(s, f) < 0 ? -1 : 0;
	if (fclose(f))
		ret = -1;
	return ret;
}

/* Write @v to a sysfs or debugfs file (root only); 0 or -1. */
static inline int fos_write_ull(const char *path, unsigned long long v)
{
	char s[32];

	snprintf(s, sizeof(s), "%llu\n", v);
	return fos_write_text(path, s);
}

/* Write a module parameter (root only); 0 or -1. */
static inline int fos_set_param(const char *name, unsigned long long v)
{
	char path[128];

	snprintf(path, sizeof(path), FOS_PARAM_DIR "%s", name);
	return fos_write_ull(path, v);
}

/* Write a signed module parameter (root only); 0 or -1. */
static inline int fos_set_param_ll(const char *name, long long v)
{
	char path[128], s[32];

	snprintf(path, sizeof(path), FOS_PARAM_DIR "%s", name);
	snprintf(s, sizeof(s), "%lld\n", v);
	return fos_write_text(path, s);
}

/*
 * Write a test knob in /sys/kernel/debug/fractos/ (root, debugfs mounted);
 * 0 or -1.
 */
static inline int fos_set_debugfs(const char *name, unsigned long long v)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/kernel/debug/fractos/%s", name);
	return fos_write_ull(path, v);
}

/* The counters the Memory/capability tests care about. */
struct fos_counts {
	long long spaces, objects, caps, memories, pinned_pages, capfds;
};

static inline void fos_counts_read(struct fos_counts *c)
{
	c->spaces = fos_live("spaces");
	c->objects = fos_live("objects");
	c->caps = fos_live("caps");
	c->memories = fos_live("memories");
	c->pinned_pages = fos_live("pinned_pages");
	c->capfds = fos_live("capfds");
}

static inline int fos_counts_equal(const struct fos_counts *a,
				   const struct fos_counts *b)
{
	return !memcmp(a, b, sizeof(*a));
}

static inline void fos_counts_print(const char *what,
				    const struct fos_counts *c)
{
	printf("# %s: spaces %lld objects %lld caps %lld memories %lld "
	       "pinned_pages %lld capfds %lld\n", what, c->spaces, c->objects,
	       c->caps, c->memories, c->pinned_pages, c->capfds);
	fflush(stdout);
}

/*
 * Wait (up to @ms milliseconds) for the counters to equal @want: a killed
 * process's files are released asynchronously.  Returns 1 if they did.
 */
static inline int fos_counts_wait(const struct fos_counts *want,
				  struct fos_counts *now, int ms)
{
	for (;;) {
		fos_counts_read(now);
		if (fos_counts_equal(want, now) || ms <= 0)
			return fos_counts_equal(want, now);
		usleep(10000);
		ms -= 10;
	}
}

static inline double fos_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Fill @buf with a pattern that differs for every @seed and position. */
static inline void fos_fill(void *buf, size_t len, unsigned int seed)
{
	unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)(i * 131 + seed * 7 + (i >> 8) + 1);
}

/* The value of "key:" in /proc/self/fdinfo/@fd, or "" (4 rotating buffers) */
static inline const char *fos_fdinfo(int fd, const char *key)
{
	static char vals[4][128];
	static unsigned int next;
	char path[64], line[256], *val = vals[next++ % 4];
	size_t kl = strlen(key);
	FILE *f;

	val[0] = 0;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return val;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, kl) && line[kl] == ':') {
			char *p = line + kl + 1;

			while (*p == '\t' || *p == ' ')
				p++;
			p[strcspn(p, "\n")] = 0;
			snprintf(val, sizeof(vals[0]), "%s", p);
			break;
		}
	}
	fclose(f);
	return val;
}

/*
 * Read the text file @path (a /proc file: a stack, a stat line) into @buf,
 * NUL-terminated; its length, or -1.
 */
static inline ssize_t fos_read_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f || !len) {
		if (f)
			fclose(f);
		return -1;
	}
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	return n;
}

/* Reap child @pid within @ms; its wait status, or -1 if it is still there. */
static inline int fos_reap_within(pid_t pid, int ms)
{
	int status;

	for (; ms > 0; ms -= 5) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		usleep(5000);
	}
	return -1;
}

#endif /* FRACTOS_FOS_UTIL_H */
