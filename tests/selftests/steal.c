// SPDX-License-Identifier: GPL-2.0
/*
 * fractos selftest: memory steal (FRACTOS_CONTACT_STEAL, "Contacts" in the
 * uAPI header).
 *
 * A provider space P (the standby) makes a contact Request; a client space
 * C, held by a child process alone, names it as a contact, creates two
 * Memory objects over its own pages and marks one for the contact.  When
 * the child is killed, P's note carries the marked Memory after the
 * Request's own capability: P now owns it, its bytes are the child's, the
 * capability P held to it before still works, and the unmarked one is
 * revoked.  A child that exits, or takes its mark back, or revoked the
 * Memory itself, hands nothing over.  Bad marks get the documented errnos.
 */
#define _GNU_SOURCE
#include <sys/resource.h>
#include "fos_proc.h"

#define TAG	0x57ea1
#define LEN	8192

static long total(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/class/misc/fractos/totals/%s", name);
	return read_long(path);
}

/* fdinfo's "fractos-stealable:" line of @fd, or -1. */
static long fdinfo_stealable(int fd)
{
	char path[64], line[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "fractos-stealable: %ld", &v) == 1)
			break;
	fclose(f);
	return v;
}

static int contact(int fd, __u32 op, __u32 cid, __u32 id, __u32 *out)
{
	struct fractos_space_contact a = { .op = op, .cid = cid, .id = id };
	int r = ioctl(fd, FRACTOS_IOC_SPACE_CONTACT, &a);

	if (!r && out)
		*out = a.id;
	return r;
}

static int steal(int fd, __u32 id, __u32 mem)
{
	return contact(fd, FRACTOS_CONTACT_STEAL, mem, id, NULL);
}

static int unsteal(int fd, __u32 id, __u32 mem)
{
	return contact(fd, FRACTOS_CONTACT_UNSTEAL, mem, id, NULL);
}

static int same_object(int fa, __u32 a, int fb, __u32 b)
{
	struct fractos_cap_info ia, ib;

	return !cap_info(fa, a, &ia) && !cap_info(fb, b, &ib) &&
	       !memcmp(&ia.oid, &ib.oid, sizeof(ia.oid));
}

static void test_bad_input(void)
{
	static char buf[FRACTOS_MAX_STEAL + 2][64];
	__u32 r, r2, id, id2, mem[FRACTOS_MAX_STEAL + 2], child, other, pm;
	int s = dev_open(), p = dev_open(), ok;
	unsigned int i;

	if (req_new(s, NONE, TAG, NULL, 0, NULL, 0, &r) ||
	    req_new(s, NONE, TAG, NULL, 0, NULL, 0, &r2) ||
	    contact(s, FRACTOS_CONTACT_ADD, r, 0, &id) ||
	    contact(s, FRACTOS_CONTACT_ADD, r2, 0, &id2))
		tap_bail("setup");
	for (i = 0; i < FRACTOS_MAX_STEAL + 2; i++)
		if (mem_new(s, buf[i], sizeof(buf[i]), FRACTOS_PERM_ALL,
			    &mem[i]))
			tap_bail("mem_new");
	if (cap_op(s, FRACTOS_IOC_CAP_CREATE_REVTREE, mem[0], &child) ||
	    mem_new(p, buf[0], sizeof(buf[0]), FRACTOS_PERM_ALL, &pm) ||
	    cap_move(p, pm, s, &other))
		tap_bail("setup");

	tap_errno(steal(s, 0, mem[0]), ENOENT, "STEAL for contact 0 -> ENOENT");
	tap_errno(steal(s, 5, mem[0]), ENOENT, "STEAL for an unknown contact -> ENOENT");
	tap_errno(steal(s, id, 9999), EBADF, "STEAL of an unknown cid -> EBADF");
	tap_errno(steal(s, id, r), EOPNOTSUPP, "STEAL of a Request -> EOPNOTSUPP");
	tap_errno(steal(s, id, child), EPERM,
		  "STEAL of a revocation-tree child -> EPERM");
	tap_errno(steal(s, id, other), EPERM,
		  "STEAL of another space's Memory -> EPERM");
	tap_errno(contact(s, 5, mem[0], id, NULL), EINVAL, "op 5 -> EINVAL");

	tap_errno(steal(s, id, mem[0]), 0, "STEAL");
	tap_errno(steal(s, id, mem[0]), EBUSY, "the same Memory again -> EBUSY");
	tap_errno(steal(s, id2, mem[0]), EBUSY,
		  "the same Memory for another contact -> EBUSY");
	ok = 1;
	for (i = 1; i < FRACTOS_MAX_STEAL; i++)
		ok &= !steal(s, id, mem[i]);
	tap_ok(ok, "%u marks for one contact", FRACTOS_MAX_STEAL);
	tap_errno(steal(s, id, mem[FRACTOS_MAX_STEAL]), ENOSPC,
		  "one more -> ENOSPC");
	tap_errno(steal(s, id2, mem[FRACTOS_MAX_STEAL]), 0,
		  "...which another contact may have");
	tap_ok(fdinfo_stealable(s) == FRACTOS_MAX_STEAL + 1,
	       "fdinfo: fractos-stealable %u (%ld)", FRACTOS_MAX_STEAL + 1,
	       fdinfo_stealable(s));

	tap_errno(unsteal(s, id2, mem[0]), ENOENT,
		  "UNSTEAL for a contact without that mark -> ENOENT");
	tap_errno(unsteal(s, 7, mem[0]), ENOENT,
		  "UNSTEAL for an unknown contact -> ENOENT");
	tap_errno(unsteal(s, id, 9999), EBADF, "UNSTEAL of an unknown cid -> EBADF");
	tap_errno(unsteal(s, id, mem[0]), 0, "UNSTEAL");
	tap_errno(unsteal(s, id, mem[0]), ENOENT, "UNSTEAL again -> ENOENT");
	tap_errno(steal(s, id2, mem[0]), 0, "then another contact may mark it");

	tap_errno(cap_revoke(s, mem[FRACTOS_MAX_STEAL + 1]), 0, "revoke a Memory");
	tap_errno(steal(s, id, mem[FRACTOS_MAX_STEAL + 1]), EKEYREVOKED,
		  "STEAL of a revoked Memory -> EKEYREVOKED");

	tap_errno(contact(s, FRACTOS_CONTACT_DEL, 0, id, NULL), 0,
		  "DEL takes the contact's marks back");
	tap_ok(fdinfo_stealable(s) == 2, "fdinfo: fractos-stealable 2 (%ld)",
	       fdinfo_stealable(s));
	close(s);
	close(p);
	tap_ok(live("contacts") == 0 && live("memories") == 0,
	       "nothing left (contacts %ld, memories %ld)", live("contacts"),
	       live("memories"));
}

/* How the child holding the client space ends, and what it did before. */
enum end {
	KILLED,		/* marked, then SIGKILL */
	EXITED,		/* marked, then exit(3) */
	UNMARKED,	/* marked, UNSTEAL, then SIGKILL */
	REVOKED,	/* marked, revoked it, then SIGKILL */
};

static const char *const end_name[] = {
	[KILLED] = "SIGKILL", [EXITED] = "exit(3)",
	[UNMARKED] = "UNSTEAL then SIGKILL", [REVOKED] = "revoked then SIGKILL",
};

/*
 * The child: two Memory objects over its own pages, the first filled with
 * a pattern and marked; P gets a capability to each (their cids in P go
 * up the pipe); then it ends as @end says.
 */
static void child(int p, int c, __u32 id, int wfd, enum end end)
{
	struct rlimit no_core = { 0, 0 };
	__u32 m1, m2, cids[2];
	char *buf;
	int i;

	setrlimit(RLIMIT_CORE, &no_core);
	buf = mmap(NULL, 2 * LEN, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		_exit(10);
	for (i = 0; i < LEN; i++)
		buf[i] = (char)(i * 7 + getpid());
	if (mem_new(c, buf, LEN, FRACTOS_PERM_ALL, &m1) ||
	    mem_new(c, buf + LEN, LEN, FRACTOS_PERM_ALL, &m2) ||
	    steal(c, id, m1))
		_exit(11);
	if (end == UNMARKED && unsteal(c, id, m1))
		_exit(12);
	{
		/* a name on it: it goes with its publisher, stolen or not */
		struct fractos_name nm = {
			.cid = m1, .name = (uintptr_t)"stolen.name",
			.name_len = strlen("stolen.name"),
		};

		if (ioctl(c, FRACTOS_IOC_NAME_PUBLISH, &nm))
			_exit(16);
	}
	if (cap_move(c, m1, p, &cids[0]) || cap_move(c, m2, p, &cids[1]))
		_exit(13);
	if (end == REVOKED && cap_revoke(c, m1))
		_exit(14);
	close(p);
	if (write(wfd, cids, sizeof(cids)) != sizeof(cids))
		_exit(15);
	if (end == EXITED)
		exit(3);
	pause();
	_exit(0);
}

static void test_end(enum end end)
{
	static struct msg m;
	static char own_buf[64], back[LEN];
	const char *what = end_name[end];
	struct fractos_contact_note n;
	struct fractos_cap_info ci;
	long stolen0 = total("stolen_memories"), mem0 = live("memories");
	__u32 own, r, rc, id, cids[2], dst;
	int p = dev_open(), c = dev_open(), pfd[2], st, i, ok;
	int expect = end == KILLED;
	char *local;
	pid_t pid;

	/* The contact Request carries one capability of its own. */
	if (mem_new(p, own_buf, sizeof(own_buf), FRACTOS_PERM_ALL, &own) ||
	    req_new(p, NONE, TAG, NULL, 0, &own, 1, &r) ||
	    cap_move(p, r, c, &rc) ||
	    contact(c, FRACTOS_CONTACT_ADD, rc, 0, &id) || pipe(pfd))
		tap_bail("setup");
	pid = fork();
	if (pid < 0)
		tap_bail("fork");
	if (!pid) {
		close(pfd[0]);
		child(p, c, id, pfd[1], end);
	}
	close(c);		/* the child holds the last reference */
	close(pfd[1]);
	if (xread(pfd[0], cids, sizeof(cids)))
		tap_bail("%s: the child failed", what);
	close(pfd[0]);
	if (end != EXITED)
		kill(pid, SIGKILL);
	waitpid(pid, &st, 0);

	ok = !recv_ms(p, &m, 2000) && m.type == FRACTOS_MSG_REQUEST &&
	     m.tag == TAG && m.imm_len == sizeof(n);
	if (ok)
		memcpy(&n, m.imm, sizeof(n));
	tap_ok(ok && n.reason == (end == EXITED ? FRACTOS_CONTACT_CLOSED :
						    FRACTOS_CONTACT_KILLED) &&
	       n.stolen == (__u32)expect && !n.reserved &&
	       m.ncaps == 1 + (__u32)expect,
	       "%s: one note, stolen %d, %d capabilities (stolen %u, ncaps %u)",
	       what, expect, 1 + expect, ok ? n.stolen : 0, m.ncaps);
	tap_ok(same_object(p, m.caps[0], p, own),
	       "%s: the Request's own capability first", what);
	tap_ok(cap_revoked(p, cids[1]) == 1,
	       "%s: the unmarked Memory is revoked", what);
	{
		struct fractos_name nm = {
			.name = (uintptr_t)"stolen.name",
			.name_len = strlen("stolen.name"),
		};

		tap_errno(ioctl(p, FRACTOS_IOC_NAME_LOOKUP, &nm), ENOENT,
			  "%s: the dead space's name on it is gone", what);
	}
	tap_ok(total("stolen_memories") == stolen0 + expect,
	       "%s: totals/stolen_memories +%d (%ld -> %ld)", what, expect,
	       stolen0, total("stolen_memories"));
	if (!expect) {
		tap_ok(cap_revoked(p, cids[0]) == 1,
		       "%s: the marked Memory is revoked with the space", what);
		goto out;
	}

	tap_ok(same_object(p, m.caps[1], p, cids[0]) &&
	       !cap_info(p, m.caps[1], &ci) &&
	       ci.type == FRACTOS_OBJ_MEMORY && ci.len == LEN &&
	       ci.perms == FRACTOS_PERM_ALL &&
	       (ci.info_flags & FRACTOS_INFO_OWNED) &&
	       !(ci.info_flags & FRACTOS_INFO_REVOKED),
	       "%s: then the marked Memory, whole, owned by the standby now",
	       what);
	tap_ok(cap_revoked(p, cids[0]) == 0,
	       "%s: the capability the standby held before still works", what);
	local = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (local == MAP_FAILED || mem_new(p, local, LEN, FRACTOS_PERM_ALL, &dst))
		tap_bail("local Memory");
	tap_errno(mem_copy(p, m.caps[1], 0, dst, 0, LEN), 0,
		  "%s: copy out of the stolen Memory", what);
	for (i = 0; i < LEN; i++)
		back[i] = (char)(i * 7 + pid);
	tap_ok(!memcmp(local, back, LEN),
	       "%s: the bytes the killed process wrote", what);
	tap_errno(mem_copy(p, dst, 0, m.caps[1], 0, 16), 0,
		  "%s: the standby writes into it", what);
	munmap(local, LEN);
out:
	close(p);
	tap_ok(live("memories") == mem0,
	       "%s: gone with the standby's space (memories %ld, was %ld)",
	       what, live("memories"), mem0);
}

/*
 * For test_fractctl.sh: a space with two contacts, the first with two
 * Memory objects marked for it, the second's Request revoked since, held
 * until stdin ends; "ready FD" on stdout first, then each contact's id
 * and its Request's name as CAP_INFO gives it.
 */
static int hold(void)
{
	static char buf[2][64];
	struct fractos_cap_info ci[2] = {};
	__u32 r[2], id[2], m[2];
	int s = dev_open(), i;
	char c;

	if (req_new(s, NONE, TAG, NULL, 0, NULL, 0, &r[0]) ||
	    contact(s, FRACTOS_CONTACT_ADD, r[0], 0, &id[0]) ||
	    mem_new(s, buf[0], sizeof(buf[0]), FRACTOS_PERM_ALL, &m[0]) ||
	    mem_new(s, buf[1], sizeof(buf[1]), FRACTOS_PERM_ALL, &m[1]) ||
	    steal(s, id[0], m[0]) || steal(s, id[0], m[1]) ||
	    req_new(s, NONE, TAG, NULL, 0, NULL, 0, &r[1]) ||
	    contact(s, FRACTOS_CONTACT_ADD, r[1], 0, &id[1]) ||
	    cap_revoke(s, r[1]))
		return 1;
	for (i = 0; i < 2; i++)
		if (cap_info(s, r[i], &ci[i]))
			return 1;
	printf("ready %d\n", s);
	for (i = 0; i < 2; i++)
		printf("contact %u %u:%u:%llu\n", id[i], ci[i].oid.node,
		       ci[i].oid.epoch, (unsigned long long)ci[i].oid.id);
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--hold"))
		return hold();
	tap_plan(25 + 11 + 3 * 7);
	test_bad_input();
	test_end(KILLED);
	test_end(EXITED);
	test_end(UNMARKED);
	test_end(REVOKED);
	return tap_finish();
}
