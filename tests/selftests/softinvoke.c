// SPDX-License-Identifier: GPL-2.0
/*
 * softinvoke: invocations from another node delivered in the receive
 * softirq (fabric_rx_softirq=1, fos_invoke_recv_atomic() in
 * kernel/remote/owner.c), through the node's connection to itself
 * (fabric_loopback=1, as remote.c).  The program turns the parameter on
 * for its own connection and puts it back.
 *
 * - Plain calls are delivered there (totals/softirq_invokes counts them)
 *   and answered from there; so are calls without an answer, whose put
 *   of the target's export (counted for the loop) is left to a work item.
 * - Order: calls with and without an answer, a share of them deferred at
 *   random to process context (debugfs fault_rx_defer_pct), arrive in the
 *   order they were made (sequence numbers in the immediates).
 * - The target is dropped and imported again between calls, so that the
 *   export table's entries come and go under the lookups.
 * - The target is revoked while a child calls it: every call that was
 *   answered 0 was delivered, the rest fail with EKEYREVOKED.
 * - The middle of a chain of derived Requests is revoked while a child
 *   calls its last one: no message ever comes without the middle's
 *   arguments (a revoked derived Request must not deliver its parent's).
 * Prints TAP.
 */
#include <sys/wait.h>
#include "tap.h"
#include "fos_util.h"
#include "fos_nl.h"
#include "fos_req.h"

#define SOFTIRQ_PARAM FOS_PARAM_DIR "fabric_rx_softirq"

static long long qmax = -1;
static uint32_t self_id;
static long long softirq_was = -1;

static void restore(void)
{
	fos_set_debugfs("fault_rx_defer_pct", 0);
	fos_set_param("fabric_loopback", 0);
	if (qmax > 0)
		fos_set_param("max_queue", qmax);
	fos_nl_node_del(self_id);
	fos_set_param_ll("fabric_rx_softirq", softirq_was);
}

/* Receive one message; its sequence number after @prefix, or -1. */
static long long recv_seq(int prov, const char *prefix)
{
	size_t plen = strlen(prefix);
	struct msg m;
	uint32_t seq;

	if (receive(prov, &m))
		return -1;
	close_all(prov, &m);
	if (m.imm_len != plen + sizeof(seq) || memcmp(m.imm, prefix, plen))
		return -2;
	memcpy(&seq, m.imm + plen, sizeof(seq));
	return seq;
}

static void plain(int prov, int cli)
{
	long long t0 = fos_total("softirq_invokes");
	uint32_t r = ~0U, c = ~0U, i;
	int ret = 0, good = 0;

	tap_eq(client_request(prov, cli, 7, "p", &r, &c), 0,
	       "plain: the client holds a Request");
	for (i = 0; i < 20 && !ret; i++) {
		ret = invoke(cli, c, &i, sizeof(i), NULL, 0);
		good += !ret && recv_seq(prov, "p") == i;
	}
	tap_ok(!ret && good == 20, "plain: 20 calls answered 0 and delivered");
	tap_eq(fos_total("softirq_invokes") - t0, 20,
	       "plain: all 20 delivered in the receive softirq");

	/*
	 * Without an answer, looped back: delivered there too.  Each call
	 * counted an export of the target for the loop (the client holds
	 * it through a capability fd, with no export of its own), and that
	 * is put later by a work item: once those puts ran, no export is
	 * left although the Request lives on.
	 */
	t0 = fos_total("softirq_invokes");
	good = 0;
	for (i = 0; i < 20 && !ret; i++)
		ret = invoke_flags(cli, c, FRACTOS_INVOKE_NOACK, &i, sizeof(i),
				   NULL, 0);
	for (i = 0; i < 20 && !ret; i++)
		good += recv_seq(prov, "p") == i;
	tap_ok(!ret && good == 20, "plain: 20 calls without an answer delivered");
	tap_eq(fos_total("softirq_invokes") - t0, 20,
	       "plain: all 20 of them in the receive softirq");
	fos_close(cli, c);
	tap_eq(fos_live_settle("exports", 0), 0,
	       "plain: no export left once the calls' puts ran");
	fos_revoke(prov, r);
	fos_close(prov, r);
}

/*
 * @n calls in batches of @batch, each with an answer or without one at
 * random, half of those that could be delivered in softirq deferred.
 */
static void order(int prov, int cli, uint32_t n, uint32_t batch)
{
	long long t0 = fos_total("softirq_invokes"), soft;
	long long refused = fos_total("noack_refused");
	uint32_t r = ~0U, c = ~0U, seq = 0, acked = 0, i;
	int ret = 0, bad = 0;

	tap_eq(client_request(prov, cli, 8, "o", &r, &c), 0,
	       "order: the client holds a Request");
	tap_eq(fos_set_debugfs("fault_rx_defer_pct", 50), 0,
	       "order: fault_rx_defer_pct=50");
	srand(getpid());
	while (seq < n && !ret) {
		uint32_t first = seq;

		for (i = 0; i < batch && seq < n && !ret; i++, seq++) {
			int noack = rand() & 1;

			acked += !noack;
			ret = invoke_flags(cli, c, noack ? FRACTOS_INVOKE_NOACK : 0,
					   &seq, sizeof(seq), NULL, 0);
		}
		for (i = first; i < seq; i++) {
			long long got = recv_seq(prov, "o");

			if (got != i) {
				tap_diag("order: expected %u, got %lld", i, got);
				bad++;
				break;
			}
		}
	}
	if (ret)
		tap_diag("order: call %u failed: %s", seq - 1, strerror(errno));
	fos_set_debugfs("fault_rx_defer_pct", 0);
	soft = fos_total("softirq_invokes") - t0;
	tap_ok(!ret && !bad && seq == n,
	       "order: %u calls (%u answered) delivered in the order made", n,
	       acked);
	tap_ok(soft > 0 && soft < n,
	       "order: %lld of the %u in softirq, the rest deferred", soft, n);
	tap_eq(fos_total("noack_refused") - refused, 0,
	       "order: no call without an answer was refused");
	fos_revoke(prov, r);
	fos_close(prov, r);
	fos_close(cli, c);
}

/* Import, call 20 times, drop: 10 rounds, the export coming and going. */
static void churn(int prov, int cli)
{
	uint32_t r = ~0U, c = ~0U, seq = 0, round, i;
	int capfd = -1, ret, bad = 0;

	ret = req_create(prov, FRACTOS_CID_INVALID, 9, "c", 1, NULL, 0, &r) ||
	      fos_export(prov, r, 0, &capfd);
	tap_eq(ret, 0, "churn: a Request and its capability fd");
	fos_set_debugfs("fault_rx_defer_pct", 20);
	for (round = 0; round < 10 && !ret; round++) {
		ret = fos_import(cli, capfd, &c);
		for (i = 0; i < 20 && !ret; i++, seq++) {
			ret = invoke(cli, c, &seq, sizeof(seq), NULL, 0);
			bad += !ret && recv_seq(prov, "c") != seq;
		}
		fos_close(cli, c);
	}
	fos_set_debugfs("fault_rx_defer_pct", 0);
	tap_ok(!ret && !bad && seq == 200,
	       "churn: 10 rounds of import, 20 calls, drop: all 200 delivered in order");
	close(capfd);
	fos_revoke(prov, r);
	fos_close(prov, r);
	tap_eq(fos_live_settle("exports", 0), 0, "churn: no export left");
}

/*
 * A child calls @target until a call fails; the parent receives @before
 * messages, then revokes @victim (in space @vfd), then takes what is
 * left.  Every call answered 0 must have been delivered with @prefix.
 */
static void revoke_while(const char *what, int prov, int cli, uint32_t target,
			 int vfd, uint32_t victim, const char *prefix)
{
	int pfd[2], st = -1, bad = 0;
	uint32_t got = 0, res[2] = { 0, 0 };
	long long seq;
	pid_t pid;

	if (pipe(pfd))
		tap_bail("pipe");
	fos_set_debugfs("fault_rx_defer_pct", 30);
	pid = fork();
	if (pid < 0)
		tap_bail("fork");
	if (!pid) {
		uint32_t n = 0, tries = 0;
		int ret = 0;

		close(pfd[0]);
		while (tries++ < 100000) {
			ret = invoke(cli, target, &n, sizeof(n), NULL, 0);
			if (ret && errno == EAGAIN) {
				usleep(1000);	/* the queue is full */
				continue;
			}
			if (ret)
				break;
			n++;
		}
		res[0] = n;
		res[1] = ret ? errno : 0;
		_exit(write(pfd[1], res, sizeof(res)) != sizeof(res));
	}
	close(pfd[1]);
	while (got < 40) {
		seq = recv_seq(prov, prefix);
		if (seq < 0)
			break;
		bad += seq != got++;
	}
	fos_revoke(vfd, victim);
	if (read(pfd[0], res, sizeof(res)) != sizeof(res))
		res[1] = ~0U;
	waitpid(pid, &st, 0);
	close(pfd[0]);
	/* What was answered 0 was queued before the revocation returned. */
	fos_req_timeout_ns = 200000000;
	while (got < res[0]) {
		seq = recv_seq(prov, prefix);
		if (seq < 0)
			break;
		bad += seq != got++;
	}
	seq = recv_seq(prov, prefix);
	fos_req_timeout_ns = 5000000000ULL;
	fos_set_debugfs("fault_rx_defer_pct", 0);
	tap_ok(WIFEXITED(st) && !WEXITSTATUS(st) && res[1] == EKEYREVOKED &&
	       got == res[0] && !bad && seq == -1 && got >= 40,
	       "%s: %u calls answered 0, %u delivered in order, then EKEYREVOKED (errno %u)",
	       what, res[0], got, res[1]);
}

int main(void)
{
	uint32_t r = ~0U, c = ~0U, d1 = ~0U, d2 = ~0U;
	struct in_addr addr;
	char buf[8] = "";
	int prov, cli;

	if (access("/sys/class/misc/fractos", F_OK)) {
		printf("1..0 # SKIP fractos.ko is not loaded\n");
		return 0;
	}
	if (!fos_nl_self_addr(&addr)) {
		printf("1..0 # SKIP no IPv4 address on eth0\n");
		return 0;
	}
	if (fos_read_text(SOFTIRQ_PARAM, buf, sizeof(buf)) <= 0 ||
	    access(FOS_PARAM_DIR "fabric_loopback", F_OK) ||
	    access("/sys/kernel/debug/fractos/fault_rx_defer_pct", W_OK)) {
		printf("1..0 # SKIP no fabric_rx_softirq, fabric_loopback or debugfs fault_rx_defer_pct\n");
		return 0;
	}
	softirq_was = atoll(buf);
	tap_plan(22);
	self_id = fos_param("node_id");
	qmax = fos_param("max_queue");
	atexit(restore);

	/* Connections made from here on poll their completions in softirq. */
	tap_eq(fos_set_param("fabric_rx_softirq", 1), 0, "fabric_rx_softirq=1");
	tap_eq(fos_nl_node_add(self_id, addr), 0, "NODE_ADD node %u (this node)",
	       self_id);
	tap_ok(fos_nl_wait_up(self_id, 30), "node %u is UP", self_id);
	fos_set_param("fabric_loopback", 1);
	fos_set_param("max_queue", 64);
	prov = fos_open();
	cli = fos_open();
	if (prov < 0 || cli < 0)
		tap_bail("open");

	plain(prov, cli);
	order(prov, cli, 400, 32);
	churn(prov, cli);

	tap_eq(client_request(prov, cli, 10, "v", &r, &c), 0,
	       "revoke: the client holds a Request");
	revoke_while("revoke the target", prov, cli, c, prov, r, "v");
	fos_close(prov, r);
	fos_close(cli, c);

	/* A chain: r ("b"), d1 derived from it ("m"), d2 from d1 ("e"). */
	tap_ok(!client_request(prov, cli, 11, "b", &r, &c) &&
	       !req_create(cli, c, 0, "m", 1, NULL, 0, &d1) &&
	       !req_create(cli, d1, 0, "e", 1, NULL, 0, &d2),
	       "chain: the client derives d1 (\"m\") and d2 (\"e\")");
	revoke_while("revoke the middle of a chain", prov, cli, d2, cli, d1,
		     "bme");
	fos_close(cli, d2);
	fos_close(cli, d1);
	fos_close(cli, c);
	fos_revoke(prov, r);
	fos_close(prov, r);

	close(cli);
	close(prov);
	tap_eq(fos_live_settle("exports", 0), 0, "no export left");
	return tap_finish();
}
