// SPDX-License-Identifier: GPL-2.0
/*
 * The per-node name service: publish, lookup, unpublish, visibility,
 * lifetime (names vanish with their object) and bad input.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/fractos.h>
#include "tap.h"

static int open_space(void)
{
	int fd = open(FRACTOS_DEVICE, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		tap_bail("open " FRACTOS_DEVICE);
	return fd;
}

static __u32 mem_create(int sp, void *buf, size_t len, __u32 perms)
{
	struct fractos_memory_create a = {
		.addr = (uintptr_t)buf, .len = len, .perms = perms,
	};

	if (ioctl(sp, FRACTOS_IOC_MEMORY_CREATE, &a))
		tap_bail("memory_create");
	return a.cid;
}

static int name_op(int sp, unsigned long cmd, const char *name, __u32 *cid,
		   __u32 flags, __u32 node)
{
	struct fractos_name a = {
		.cid = cid ? *cid : 0, .flags = flags,
		.name = (uintptr_t)name, .name_len = strlen(name), .node = node,
	};
	int ret = ioctl(sp, cmd, &a);

	if (!ret && cid)
		*cid = a.cid;
	return ret;
}

static int publish(int sp, const char *name, __u32 cid, __u32 flags)
{
	return name_op(sp, FRACTOS_IOC_NAME_PUBLISH, name, &cid, flags, 0);
}

static int lookup(int sp, const char *name, __u32 *cid)
{
	return name_op(sp, FRACTOS_IOC_NAME_LOOKUP, name, cid, 0, 0);
}

static int unpublish(int sp, const char *name)
{
	return name_op(sp, FRACTOS_IOC_NAME_UNPUBLISH, name, NULL, 0, 0);
}

static long live(const char *what)
{
	char path[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/misc/fractos/live/%s", what);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static int cap_info(int sp, __u32 cid, struct fractos_cap_info *i)
{
	memset(i, 0, sizeof(*i));
	i->cid = cid;
	return ioctl(sp, FRACTOS_IOC_CAP_INFO, i);
}

/* Run @fn in a child with effective uid @uid; returns its exit status. */
static int as_uid(uid_t uid, int (*fn)(void *), void *arg)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		tap_bail("fork");
	if (!pid) {
		if (setresuid(uid, uid, uid))
			_exit(100);
		_exit(fn(arg));
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* Child: look @arg up in a fresh space, return the errno (0: found). */
static int child_lookup(void *arg)
{
	int sp = open(FRACTOS_DEVICE, O_RDWR);
	__u32 cid = 0;

	if (sp < 0)
		return 101;
	if (lookup(sp, arg, &cid))
		return errno;
	return 0;
}

static unsigned int read_param(const char *p)
{
	char path[128];
	unsigned int v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/fractos/parameters/%s", p);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%u", &v) != 1)
		tap_bail("read %s", path);
	fclose(f);
	return v;
}

static void write_param(const char *p, unsigned int v)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/fractos/parameters/%s", p);
	f = fopen(path, "w");
	if (!f || fprintf(f, "%u\n", v) < 0 || fclose(f))
		tap_bail("write %s", path);
}

int main(void)
{
	long names0 = live("names");
	struct fractos_cap_info info;
	struct fractos_name bad;
	char *buf, *view_buf;
	__u32 mem, view, got, got2, imp;
	char longname[FRACTOS_NAME_MAX + 2];
	unsigned int max_names;
	int a, b, c;

	tap_plan(43);
	buf = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	view_buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED || view_buf == MAP_FAILED)
		tap_bail("mmap");
	memset(buf, 'x', 8192);

	a = open_space();
	b = open_space();
	c = open_space();
	mem = mem_create(a, buf, 8192, FRACTOS_PERM_ALL);
	{
		/* A revtree child, so that revoking the view spares @mem. */
		struct fractos_cap_arg rt = { .cid = mem };
		struct fractos_memory_diminish d = {
			.offset = 4096, .len = 1000,
			.drop_perms = FRACTOS_PERM_WRITE,
		};

		if (ioctl(a, FRACTOS_IOC_CAP_CREATE_REVTREE, &rt))
			tap_bail("create_revtree");
		d.cid = rt.new_cid;
		if (ioctl(a, FRACTOS_IOC_MEMORY_DIMINISH, &d))
			tap_bail("diminish");
		view = d.new_cid;
	}

	/* Publish and look up: the view and rights come through exactly. */
	tap_errno(publish(a, "svc.view", view, 0), 0, "owner publishes a view");
	tap_eq(live("names"), names0 + 1, "names counter counts it");
	tap_errno(lookup(b, "svc.view", &got), 0, "another space looks it up");
	tap_errno(cap_info(b, got, &info), 0, "looked-up cid has info");
	tap_ok(info.type == FRACTOS_OBJ_MEMORY && info.offset == 4096 &&
	       info.len == 1000 && info.perms == FRACTOS_PERM_READ,
	       "view and rights preserved (off %llu len %llu perms %u)",
	       (unsigned long long)info.offset,
	       (unsigned long long)info.len, info.perms);
	tap_errno(lookup(b, "svc.view", &got2), 0, "lookup again");
	tap_ok(got2 != got, "each lookup installs a new cid");
	tap_errno(publish(a, "svc.view", mem, 0), EEXIST,
		  "publishing a taken name: EEXIST");

	/* Only the object's creator publishes or unpublishes. */
	tap_errno(publish(b, "b.name", got, 0), EPERM,
		  "publishing an object created elsewhere: EPERM");
	tap_errno(unpublish(b, "svc.view"), EPERM,
		  "unpublishing another space's name: EPERM");
	{
		struct fractos_cap_export e = { .cid = view };
		struct fractos_cap_import im = {};

		if (ioctl(a, FRACTOS_IOC_CAP_EXPORT, &e))
			tap_bail("export");
		im.fd = e.fd;
		if (ioctl(c, FRACTOS_IOC_CAP_IMPORT, &im))
			tap_bail("import");
		close(e.fd);
		imp = im.cid;
	}
	tap_errno(publish(c, "c.name", imp, 0), EPERM,
		  "publishing an imported capability: EPERM");

	/* Visibility: same euid by default, anybody with WORLD. */
	tap_eq(as_uid(65534, child_lookup, "svc.view"), ENOENT,
	       "other uid cannot see a same-uid name");
	tap_errno(publish(a, "svc.world", mem, FRACTOS_NAME_WORLD), 0,
		  "publish world-visible");
	tap_eq(as_uid(65534, child_lookup, "svc.world"), 0,
	       "other uid sees a world name");
	tap_eq(as_uid(65534, child_lookup, "no.such.name"), ENOENT,
	       "unknown name: ENOENT");

	/* Node selection: this node works, another is unreachable for now. */
	tap_errno(name_op(b, FRACTOS_IOC_NAME_LOOKUP, "svc.world", &got2,
			  FRACTOS_NAME_NODE, read_param("node_id")), 0,
		  "lookup on this node by id");
	tap_errno(name_op(b, FRACTOS_IOC_NAME_LOOKUP, "svc.world", &got2,
			  FRACTOS_NAME_NODE, read_param("node_id") + 1),
		  EHOSTUNREACH, "lookup on another node: EHOSTUNREACH");

	/* Unpublish: gone for lookups; the caps already handed out live on. */
	tap_errno(unpublish(a, "svc.world"), 0, "owner unpublishes");
	tap_errno(lookup(b, "svc.world", &got2), ENOENT,
		  "unpublished name: ENOENT");
	tap_errno(unpublish(a, "svc.world"), ENOENT,
		  "unpublishing twice: ENOENT");
	tap_errno(cap_info(b, got, &info), 0, "looked-up cap still held");
	tap_ok(!(info.info_flags & FRACTOS_INFO_REVOKED),
	       "unpublish does not revoke");

	/* Names vanish with their object. */
	{
		struct fractos_cap_arg r = { .cid = view };

		tap_errno(ioctl(a, FRACTOS_IOC_CAP_REVOKE, &r), 0,
			  "revoke the published view");
	}
	tap_errno(lookup(b, "svc.view", &got2), ENOENT,
		  "name of a revoked object: ENOENT");
	tap_eq(live("names"), names0, "names counter back to baseline");
	tap_errno(cap_info(b, got, &info), 0, "cap_info on the old lookup");
	tap_ok(info.info_flags & FRACTOS_INFO_REVOKED,
	       "looked-up capability is revoked with the object");
	tap_errno(publish(a, "svc.view", mem, 0), 0,
		  "the name is free again after revocation");
	close(a);	/* the publisher goes away: its objects are revoked */
	tap_errno(lookup(b, "svc.view", &got2), ENOENT,
		  "publisher gone: its names are gone");

	/* Bad input. */
	a = open_space();
	mem = mem_create(a, buf, 4096, FRACTOS_PERM_ALL);
	tap_errno(publish(a, "", mem, 0), EINVAL, "empty name: EINVAL");
	memset(longname, 'n', sizeof(longname));
	longname[FRACTOS_NAME_MAX + 1] = 0;
	tap_errno(publish(a, longname, mem, 0), EINVAL,
		  "name longer than FRACTOS_NAME_MAX: EINVAL");
	longname[FRACTOS_NAME_MAX] = 0;
	tap_errno(publish(a, longname, mem, 0), 0,
		  "name of exactly FRACTOS_NAME_MAX bytes");
	tap_errno(publish(a, "has space", mem, 0), EINVAL,
		  "byte outside 0x21..0x7e: EINVAL");
	memset(&bad, 0, sizeof(bad));
	bad.cid = mem;
	bad.name = 16;
	bad.name_len = 4;
	tap_errno(ioctl(a, FRACTOS_IOC_NAME_PUBLISH, &bad), EFAULT,
		  "bad name pointer: EFAULT");
	bad.name = (uintptr_t)"ok.name";
	bad.name_len = 7;
	bad.flags = 0x80;
	tap_errno(ioctl(a, FRACTOS_IOC_NAME_PUBLISH, &bad), EINVAL,
		  "unknown flag: EINVAL");
	bad.flags = FRACTOS_NAME_NODE;
	tap_errno(ioctl(a, FRACTOS_IOC_NAME_PUBLISH, &bad), EINVAL,
		  "lookup-only flag on publish: EINVAL");
	bad.flags = 0;
	bad.reserved[1] = 1;
	tap_errno(ioctl(a, FRACTOS_IOC_NAME_PUBLISH, &bad), EINVAL,
		  "non-zero reserved: EINVAL");
	bad.reserved[1] = 0;
	bad.node = 3;
	tap_errno(ioctl(a, FRACTOS_IOC_NAME_LOOKUP, &bad), EINVAL,
		  "node without FRACTOS_NAME_NODE: EINVAL");
	bad.node = 0;
	bad.cid = 12345;
	tap_errno(ioctl(a, FRACTOS_IOC_NAME_PUBLISH, &bad), EBADF,
		  "unknown cid: EBADF");

	/* The node-wide limit. */
	max_names = read_param("max_names");
	write_param("max_names", live("names") + 2);
	tap_errno(publish(a, "lim.1", mem, 0), 0, "below max_names");
	tap_errno(publish(a, "lim.2", mem, 0), 0, "at max_names");
	tap_errno(publish(a, "lim.3", mem, 0), ENOSPC,
		  "past max_names: ENOSPC");
	write_param("max_names", max_names);
	close(a);
	close(b);
	close(c);
	tap_eq(live("names"), names0, "every name gone with its spaces");
	munmap(buf, 8192);
	munmap(view_buf, 4096);
	return tap_finish();
}
