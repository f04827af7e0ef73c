// SPDX-License-Identifier: GPL-2.0
/*
 * fractos selftest: a space's contacts ("Contacts" in the uAPI header).
 *
 * A provider space P makes the contact Request; a client space C holds it
 * and names it as a contact with SPACE_CONTACT.  When C goes away with the
 * contact still named - closed, exited, killed by SIGKILL or by a crash -
 * P receives exactly one invocation, the Request's own immediates followed
 * by a struct fractos_contact_note saying why; before the events of the
 * monitors of C's objects.  A contact removed first, a Request revoked by
 * then: nothing, and the totals say which.  Bad input gets the documented
 * errnos, and nothing is left (the live counter "contacts").
 */
#define _GNU_SOURCE
#include <sys/resource.h>
#include "fos_proc.h"

#define TAG	0xc0ffee

static long total(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/class/misc/fractos/totals/%s", name);
	return read_long(path);
}

/* fdinfo's "fractos-contacts:" line of @fd, or -1. */
static long fdinfo_contacts(int fd)
{
	char path[64], line[128];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "fractos-contacts: %ld", &v) == 1)
			break;
	fclose(f);
	return v;
}

static int contact(int fd, __u32 op, __u32 cid, __u32 *id)
{
	struct fractos_space_contact a = { .op = op, .cid = cid };
	int r;

	if (op == FRACTOS_CONTACT_DEL)
		a.id = *id;
	r = ioctl(fd, FRACTOS_IOC_SPACE_CONTACT, &a);
	if (!r && op == FRACTOS_CONTACT_ADD && id)
		*id = a.id;
	return r;
}

static int add(int fd, __u32 cid, __u32 *id)
{
	return contact(fd, FRACTOS_CONTACT_ADD, cid, id);
}

static int del(int fd, __u32 id)
{
	return contact(fd, FRACTOS_CONTACT_DEL, 0, &id);
}

static __u32 node_id(int fd)
{
	struct fractos_space_info i = { 0 };

	if (ioctl(fd, FRACTOS_IOC_SPACE_INFO, &i))
		tap_bail("space_info");
	return i.node;
}

/*
 * A client space holding provider @p's Request @r (moved in as @rc), with
 * it named as a contact (id in @id).
 */
static int client(int p, __u32 r, __u32 *rc, __u32 *id)
{
	int c = dev_open();

	if (cap_move(p, r, c, rc))
		tap_bail("move the Request");
	if (add(c, *rc, id))
		tap_bail("contact add");
	return c;
}

/*
 * The note @m should be: @pre immediates of the Request's own, then a
 * note with @reason, @sig, @id and this node.
 */
static int note_is(const struct msg *m, const void *pre, __u32 pre_len,
		   __u32 reason, __u32 sig, __u32 id, __u32 node)
{
	struct fractos_contact_note n;

	if (m->type != FRACTOS_MSG_REQUEST || m->tag != TAG || m->ncaps ||
	    m->imm_len != pre_len + sizeof(n) || memcmp(m->imm, pre, pre_len))
		return 0;
	memcpy(&n, m->imm + pre_len, sizeof(n));
	if (n.reason != reason || n.signal != sig || n.id != id ||
	    n.node != node || n.reserved) {
		tap_diag("note: reason %u signal %u id %u node %u reserved %llu",
			 n.reason, n.signal, n.id, n.node,
			 (unsigned long long)n.reserved);
		return 0;
	}
	return 1;
}

static int nothing_within(int fd, int ms)
{
	static struct msg m;

	return recv_ms(fd, &m, ms) == -1 && errno == ETIMEDOUT;
}

static void test_bad_input(void)
{
	struct fractos_space_contact a;
	char buf[64];
	__u32 r, mem, id, ids[FRACTOS_MAX_CONTACTS], i;
	int p = dev_open(), ok;

	if (req_new(p, NONE, TAG, NULL, 0, NULL, 0, &r) ||
	    mem_new(p, buf, sizeof(buf), FRACTOS_PERM_ALL, &mem))
		tap_bail("setup");

	memset(&a, 0, sizeof(a));
	a.cid = r;
	tap_errno(ioctl(p, FRACTOS_IOC_SPACE_CONTACT, &a), EINVAL, "op 0 -> EINVAL");
	a.op = 5;
	tap_errno(ioctl(p, FRACTOS_IOC_SPACE_CONTACT, &a), EINVAL, "op 5 -> EINVAL");
	a.op = FRACTOS_CONTACT_ADD;
	a.flags = 1;
	tap_errno(ioctl(p, FRACTOS_IOC_SPACE_CONTACT, &a), EINVAL, "flags -> EINVAL");
	a.flags = 0;
	a.reserved[1] = 1;
	tap_errno(ioctl(p, FRACTOS_IOC_SPACE_CONTACT, &a), EINVAL, "reserved -> EINVAL");
	a.reserved[1] = 0;
	a.id = 1;
	tap_errno(ioctl(p, FRACTOS_IOC_SPACE_CONTACT, &a), EINVAL,
		  "ADD with an id -> EINVAL");
	a.op = FRACTOS_CONTACT_DEL;
	a.cid = 7;	/* any cid but 0 (r may be 0) */
	tap_errno(ioctl(p, FRACTOS_IOC_SPACE_CONTACT, &a), EINVAL,
		  "DEL with a cid -> EINVAL");
	tap_errno(add(p, 9999, &id), EBADF, "ADD of an unknown cid -> EBADF");
	tap_errno(add(p, mem, &id), EOPNOTSUPP, "ADD of a Memory -> EOPNOTSUPP");
	tap_errno(del(p, 1), ENOENT, "DEL of an id never added -> ENOENT");
	tap_errno(del(p, 0), ENOENT, "DEL of id 0 -> ENOENT");
	tap_ok(fdinfo_contacts(p) == 0,
	       "fdinfo: fractos-contacts 0");

	ok = 1;
	for (i = 0; i < FRACTOS_MAX_CONTACTS; i++)
		ok &= !add(p, r, &ids[i]) && ids[i] == i + 1;
	tap_ok(ok, "%u contacts, ids 1..%u", FRACTOS_MAX_CONTACTS,
	       FRACTOS_MAX_CONTACTS);
	tap_ok(live("contacts") >= FRACTOS_MAX_CONTACTS,
	       "live/contacts counts them (%ld)", live("contacts"));
	tap_errno(add(p, r, &id), ENOSPC, "one more -> ENOSPC");
	tap_ok(fdinfo_contacts(p) == 8,
	       "fdinfo: fractos-contacts 8");
	tap_errno(del(p, 3), 0, "DEL 3");
	tap_errno(del(p, 3), ENOENT, "DEL 3 again -> ENOENT");
	ok = !add(p, r, &id) && id == 3;
	tap_ok(ok, "ADD takes the lowest free id, 3 (%u)", id);
	for (i = 1; i <= FRACTOS_MAX_CONTACTS; i++)
		del(p, i);
	tap_errno(cap_revoke(p, r), 0, "revoke the Request");
	tap_errno(add(p, r, &id), EKEYREVOKED, "ADD of a revoked Request -> EKEYREVOKED");
	close(p);
	tap_ok(live("contacts") == 0, "no contact left (%ld)", live("contacts"));
}

/* Closing the client's last fd: one note, CLOSED, after the own imms. */
static void test_close(void)
{
	static struct msg m;
	const char own[] = "own";
	long notes0 = total("contact_notes");
	__u32 r, rc, id;
	int p = dev_open(), c;

	if (req_new(p, NONE, TAG, own, sizeof(own), NULL, 0, &r))
		tap_bail("req_new");
	c = client(p, r, &rc, &id);
	tap_ok(id == 1, "close: the contact's id is 1 (%u)", id);
	tap_ok(nothing_within(p, 100), "close: nothing while the client lives");
	/* the contact holds the Request, not the cid */
	tap_errno(cap_close(c, rc), 0, "close: the client closes its cid");
	close(c);
	tap_ok(!recv_ms(p, &m, 2000) &&
	       note_is(&m, own, sizeof(own), FRACTOS_CONTACT_CLOSED, 0, id,
		       node_id(p)),
	       "close: one note, the Request's immediates then CLOSED, id %u",
	       id);
	tap_ok(nothing_within(p, 200), "close: exactly one");
	tap_ok(total("contact_notes") == notes0 + 1,
	       "close: totals/contact_notes +1 (%ld -> %ld)", notes0,
	       total("contact_notes"));
	close(p);
}

/*
 * Nothing told: the contact removed before the end (@revoke 0: no note
 * counted either), or its Request revoked by the provider (@revoke 1:
 * counted as lost).
 */
static void test_untold(int revoke, const char *what)
{
	long notes0 = total("contact_notes"), lost0 = total("contact_notes_lost");
	__u32 r, rc, id;
	int p = dev_open(), c;

	if (req_new(p, NONE, TAG, NULL, 0, NULL, 0, &r))
		tap_bail("req_new");
	c = client(p, r, &rc, &id);
	tap_errno(revoke ? cap_revoke(p, r) : del(c, id), 0,
		  "%s: %s", what, revoke ? "the provider revokes its Request" : "DEL");
	close(c);
	tap_ok(nothing_within(p, 500), "%s: no note after the close", what);
	tap_ok(total("contact_notes") == notes0 &&
	       total("contact_notes_lost") == lost0 + revoke,
	       "%s: totals contact_notes %ld -> %ld, contact_notes_lost %ld -> %ld",
	       what, notes0, total("contact_notes"), lost0,
	       total("contact_notes_lost"));
	close(p);
}

/*
 * A child holds the client space alone, names the contact, then ends by
 * @how: 0 exit(3), else that signal (raised, or SIGKILL from us).
 */
static void test_child(int how, __u32 reason, __u32 sig, const char *what)
{
	static struct msg m;
	__u32 r, rc, id;
	int p = dev_open(), c, up[2], down[2], st;
	char b;
	pid_t pid;

	if (req_new(p, NONE, TAG, NULL, 0, NULL, 0, &r) || pipe(up) || pipe(down))
		tap_bail("setup");
	c = client(p, r, &rc, &id);
	pid = fork();
	if (pid < 0)
		tap_bail("fork");
	if (!pid) {
		struct rlimit no_core = { 0, 0 };

		setrlimit(RLIMIT_CORE, &no_core);
		close(p);
		/* Once the parent closed its copy, ours is the last. */
		if (write(up[1], "x", 1) != 1 || read(down[0], &b, 1) != 1)
			_exit(1);
		if (!how)
			exit(3);
		if (how != SIGKILL)
			raise(how);
		pause();
		_exit(0);
	}
	close(c);		/* the child holds the last reference */
	if (read(up[0], &b, 1) != 1 || write(down[1], "x", 1) != 1)
		tap_bail("child");
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
	if (how == SIGKILL)
		kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	tap_ok(!recv_ms(p, &m, 2000) &&
	       note_is(&m, NULL, 0, reason, sig, id, node_id(p)),
	       "%s: one note, reason %u, signal %u", what, reason, sig);
	tap_ok(nothing_within(p, 200), "%s: exactly one", what);
	close(p);
}

/*
 * The note comes before the events of the monitors on the client's own
 * objects: the provider learns why before it learns what went.
 */
static void test_order(void)
{
	static struct msg m;
	char buf[64];
	__u32 r, rc, id, mem, mp;
	int p = dev_open(), c;

	if (req_new(p, NONE, TAG, NULL, 0, NULL, 0, &r))
		tap_bail("req_new");
	c = client(p, r, &rc, &id);
	if (mem_new(c, buf, sizeof(buf), FRACTOS_PERM_ALL, &mem) ||
	    cap_move(c, mem, p, &mp))
		tap_bail("the client's Memory");
	tap_errno(monitor(p, FRACTOS_IOC_MONITOR_RECEIVE, mp, 0x77), 0,
		  "order: the provider watches the client's Memory");
	close(c);
	tap_ok(!recv_ms(p, &m, 2000) && m.type == FRACTOS_MSG_REQUEST &&
	       m.tag == TAG, "order: the note first (type %u)", m.type);
	tap_ok(!recv_ms(p, &m, 2000) &&
	       m.type == FRACTOS_MSG_MONITOR_RECEIVE && m.tag == 0x77,
	       "order: then the monitor's event (type %u)", m.type);
	close(p);
}

/* The provider's own space with itself as contact: no trouble. */
static void test_self(void)
{
	__u32 r, id;
	int p = dev_open();

	if (req_new(p, NONE, TAG, NULL, 0, NULL, 0, &r))
		tap_bail("req_new");
	tap_errno(add(p, r, &id), 0, "self: a space names its own Request");
	close(p);
	tap_ok(live("contacts") == 0 && live("messages") == 0,
	       "self: closed with nothing left");
}

int main(void)
{
	tap_plan(44);
	test_bad_input();
	test_close();
	test_untold(0, "removed");
	test_untold(1, "revoked");
	test_child(0, FRACTOS_CONTACT_CLOSED, 0, "exit(3)");
	test_child(SIGKILL, FRACTOS_CONTACT_KILLED, SIGKILL, "SIGKILL");
	test_child(SIGSEGV, FRACTOS_CONTACT_KILLED, SIGSEGV, "SIGSEGV");
	test_order();
	test_self();
	return tap_finish();
}
