// SPDX-License-Identifier: GPL-2.0
/*
 * lost_node: contacts told of node loss (kill.sh, vm/run --nodes 2; "Node
 * loss" under "Contacts" in the uAPI header).
 *
 *   lost_node serve SECS   node 1: publishes a Request C as "lost.c" and
 *                          receives what comes through it for up to SECS
 *                          seconds: first the note of node 2's killed
 *                          child (FRACTOS_CONTACT_KILLED, id 1), then,
 *                          once node 2 is powered off, one note saying
 *                          FRACTOS_CONTACT_NODE_LOST for node 2's contact
 *                          2, and nothing else in the 3 s after it
 *   lost_node arm          node 2: a child names C as contact 1 of a space
 *                          of its own and is killed (its own note, then
 *                          its arming ends); then this process names C as
 *                          contacts 1 and 2 and removes 1, so that only
 *                          contact 2 stays armed on node 1, and waits to
 *                          be powered off
 *
 * Each mode prints "# lost: ..." lines and exits 0 when it holds.
 */
#include <signal.h>
#include <sys/wait.h>
#include "../selftests/tap.h"
#include "../selftests/fos_util.h"
#include "../selftests/fos_nl.h"
#include "../selftests/fos_req.h"
#include "node.h"

#define TAG_C	0x1057

static int contact(int fd, uint32_t op, uint32_t cid, uint32_t *id)
{
	struct fractos_space_contact a = { .op = op, .cid = cid,
					   .id = op == FRACTOS_CONTACT_ADD ?
						 0 : *id };
	int ret = ioctl(fd, FRACTOS_IOC_SPACE_CONTACT, &a);

	if (!ret && op == FRACTOS_CONTACT_ADD)
		*id = a.id;
	return ret;
}

/* Receive one note within @secs: 1 and @n filled, 0 (timeout), -1. */
static int note(int fd, int secs, struct fractos_contact_note *n)
{
	struct msg m;

	fos_req_timeout_ns = secs * 1000000000ull;
	if (receive(fd, &m))
		return errno == ETIMEDOUT ? 0 : -1;
	close_all(fd, &m);
	if (m.imm_len != sizeof(*n)) {
		printf("# lost: a message of %u bytes\n", m.imm_len);
		return -1;
	}
	memcpy(n, m.imm, sizeof(*n));
	printf("# lost: note reason=%u signal=%u id=%u node=%u stolen=%u\n",
	       n->reason, n->signal, n->id, n->node, n->stolen);
	return 1;
}

static int serve(int fd, int secs)
{
	struct fractos_contact_note n;
	uint32_t c;
	int ok;

	if (req_create(fd, FRACTOS_CID_INVALID, TAG_C, NULL, 0, NULL, 0, &c) ||
	    publish(fd, c, "lost.c"))
		return printf("# lost: C: %s\n", strerror(errno)), 1;
	printf("# lost: ready\n");
	fflush(stdout);
	ok = note(fd, secs, &n) == 1 && n.reason == FRACTOS_CONTACT_KILLED &&
	     n.signal == SIGKILL && n.id == 1 && n.node == 2;
	if (!ok)
		return printf("# lost: no note of the killed child\n"), 1;
	ok = note(fd, secs, &n) == 1 &&
	     n.reason == FRACTOS_CONTACT_NODE_LOST && n.signal == 0 &&
	     n.id == 2 && n.node == 2 && n.stolen == 0;
	if (!ok)
		return printf("# lost: no note of node 2's loss\n"), 1;
	if (note(fd, 3, &n) != 0)
		return printf("# lost: a note too many\n"), 1;
	return 0;
}

static int arm(int fd)
{
	uint32_t c, id1, id2;
	int pfd[2], st = 0;
	pid_t pid;
	char b;

	if (pipe(pfd))
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		int cfd = fos_open();
		uint32_t cc, id;

		if (cfd < 0 || node_lookup_wait(cfd, 1, "lost.c", &cc) ||
		    contact(cfd, FRACTOS_CONTACT_ADD, cc, &id) || id != 1 ||
		    write(pfd[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	if (read(pfd[0], &b, 1) != 1)
		return printf("# lost: the child could not name C\n"), 1;
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	if (node_lookup_wait(fd, 1, "lost.c", &c) ||
	    contact(fd, FRACTOS_CONTACT_ADD, c, &id1) ||
	    contact(fd, FRACTOS_CONTACT_ADD, c, &id2) ||
	    contact(fd, FRACTOS_CONTACT_DEL, 0, &id1))
		return printf("# lost: contacts: %s\n", strerror(errno)), 1;
	printf("# lost: ready: contact %u of ours armed on node 1 (%u removed)\n",
	       id2, id1);
	fflush(stdout);
	sleep(600);
	return 0;
}

int main(int argc, char **argv)
{
	int fd;

	if (argc < 2)
		return 2;
	fd = fos_open();
	if (fd < 0)
		return printf("# lost: open: %s\n", strerror(errno)), 1;
	if (!strcmp(argv[1], "serve") && argc > 2)
		return serve(fd, atoi(argv[2]));
	if (!strcmp(argv[1], "arm"))
		return arm(fd);
	return 2;
}
