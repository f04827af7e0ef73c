// SPDX-License-Identifier: GPL-2.0
/*
 * charge: the messages another node queues for a space are charged to the
 * memory cgroup of the task that opened the space, as a local invoker's
 * are to the invoker's, whether the fabric delivers them from a work item
 * or from the receive softirq (fabric_rx_softirq).  Through the node's
 * connection to itself (fabric_loopback=1), in a cgroup v2 group of its
 * own (the test mounts cgroup2 if nothing is mounted there).
 *
 * For each mode: a child in the group opens the provider's space, queues
 * 600 invocations of 4000 immediate bytes each through the fabric, and
 * the group's memory.current must grow by at least half their bytes;
 * once they are received it must come back down by as much.
 * Prints TAP.
 */
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "tap.h"
#include "fos_util.h"
#include "fos_nl.h"
#include "fos_req.h"

#define CG_ROOT "/sys/fs/cgroup"
#define CG CG_ROOT "/fractos-charge"
#define NCALLS 600
#define IMM 4000

static struct in_addr self_addr;
static uint32_t self_id;
static long long softirq_was = -1;
static long long qmax = -1;

static void restore(void)
{
	fos_set_param("fabric_loopback", 0);
	if (qmax > 0)
		fos_set_param("max_queue", qmax);
	fos_nl_node_del(self_id);
	fos_set_param_ll("fabric_rx_softirq", softirq_was);
	rmdir(CG);
}

/* A cgroup v2 group with the memory controller, or -1. */
static int cgroup_setup(void)
{
	char buf[256] = "";

	if (access(CG_ROOT "/cgroup.controllers", F_OK) &&
	    mount("none", CG_ROOT, "cgroup2", 0, NULL))
		return -1;
	if (fos_read_text(CG_ROOT "/cgroup.controllers", buf, sizeof(buf)) <= 0 ||
	    !strstr(buf, "memory"))
		return -1;
	if (fos_write_text(CG_ROOT "/cgroup.subtree_control", "+memory"))
		return -1;
	if (mkdir(CG, 0755) && errno != EEXIST)
		return -1;
	return access(CG "/memory.current", R_OK);
}

/*
 * In a child moved into the group: a provider space and a client, 600
 * calls queued through the fabric, then received.  Writes the group's
 * memory.current before, with the calls queued, and after, to @fd.
 */
static void child(int fd)
{
	long long cur[3] = { -1, -1, -1 };
	uint32_t r = ~0U, c = ~0U, i;
	static char imm[IMM];
	int prov, cli;
	struct msg m;
	char pid[32];

	snprintf(pid, sizeof(pid), "%d\n", getpid());
	if (fos_write_text(CG "/cgroup.procs", pid))
		_exit(2);
	prov = fos_open();
	cli = fos_open();
	if (prov < 0 || cli < 0 || client_request(prov, cli, 5, NULL, &r, &c))
		_exit(3);
	memset(imm, 'q', sizeof(imm));
	/* One call first, so that what the path allocates once is there. */
	if (invoke(cli, c, imm, sizeof(imm), NULL, 0) || receive(prov, &m))
		_exit(4);
	cur[0] = fos_read_ll(CG "/memory.current");
	for (i = 0; i < NCALLS; i++)
		if (invoke(cli, c, imm, sizeof(imm), NULL, 0))
			_exit(5);
	cur[1] = fos_read_ll(CG "/memory.current");
	for (i = 0; i < NCALLS; i++)
		if (receive(prov, &m) || m.imm_len != IMM)
			_exit(6);
	cur[2] = fos_read_ll(CG "/memory.current");
	if (write(fd, cur, sizeof(cur)) != sizeof(cur))
		_exit(7);
	_exit(0);
}

static void one_mode(int softirq)
{
	/*
	 * Half their bytes: memory.current moves by batches of pages per
	 * CPU (the charge stock, 256 KiB), not byte by byte.
	 */
	long long cur[3] = { -1, -1, -1 }, want = (long long)NCALLS * IMM / 2;
	int pfd[2], st = -1;
	pid_t pid;

	/* The connection is made again, in the mode asked for. */
	fos_nl_node_del(self_id);
	tap_eq(fos_set_param("fabric_rx_softirq", softirq), 0,
	       "fabric_rx_softirq=%d", softirq);
	tap_ok(!fos_nl_node_add(self_id, self_addr) &&
	       fos_nl_wait_up(self_id, 30), "node %u is UP", self_id);
	if (pipe(pfd))
		tap_bail("pipe");
	pid = fork();
	if (pid < 0)
		tap_bail("fork");
	if (!pid) {
		close(pfd[0]);
		child(pfd[1]);
	}
	close(pfd[1]);
	if (read(pfd[0], cur, sizeof(cur)) != sizeof(cur))
		cur[0] = -1;
	close(pfd[0]);
	waitpid(pid, &st, 0);
	tap_ok(WIFEXITED(st) && !WEXITSTATUS(st) && cur[0] >= 0,
	       "softirq %d: %d calls of %d bytes queued and received in the group (status %d)",
	       softirq, NCALLS, IMM, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	tap_ok(cur[1] - cur[0] >= want,
	       "softirq %d: the group was charged %lld bytes for them (at least %lld)",
	       softirq, cur[1] - cur[0], want);
	tap_ok(cur[1] - cur[2] >= want,
	       "softirq %d: and uncharged %lld once they were received",
	       softirq, cur[1] - cur[2]);
}

int main(void)
{
	char buf[8] = "";

	if (access("/sys/class/misc/fractos", F_OK)) {
		printf("1..0 # SKIP fractos.ko is not loaded\n");
		return 0;
	}
	if (!fos_nl_self_addr(&self_addr)) {
		printf("1..0 # SKIP no IPv4 address on eth0\n");
		return 0;
	}
	if (fos_read_text(FOS_PARAM_DIR "fabric_rx_softirq", buf, sizeof(buf)) <= 0 ||
	    access(FOS_PARAM_DIR "fabric_loopback", F_OK)) {
		printf("1..0 # SKIP no fabric_rx_softirq or fabric_loopback\n");
		return 0;
	}
	if (cgroup_setup()) {
		printf("1..0 # SKIP no cgroup v2 memory controller\n");
		return 0;
	}
	softirq_was = atoll(buf);
	self_id = fos_param("node_id");
	qmax = fos_param("max_queue");
	atexit(restore);
	fos_set_param("max_queue", 1024);
	tap_plan(10);
	fos_set_param("fabric_loopback", 1);
	one_mode(0);
	one_mode(1);
	return tap_finish();
}
