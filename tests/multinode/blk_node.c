// SPDX-License-Identifier: GPL-2.0
/*
 * blk_node: one node's part of the 3-node storage test
 * (remote_2node.sh blk_node, on vm/run --nodes 3 --nvme SIZE).
 *
 * Node 3 is the storage node: it loads fractos_nvme.ko, attaches its NVMe
 * namespace, creates a volume and publishes Requests derived from the
 * volume's read and write Requests as "vol-rd" and "vol-wr".  Node 2
 * publishes a continuation K ("k2").  Node 1, the client, with its Memory
 * on node 1:
 *
 *  1. writes 1 MiB to the volume (its memory is staged on node 3 with one
 *     RDMA transfer, the bios write the staging buffer) and is answered by
 *     node 3 invoking node 1's done continuation;
 *  2. reads it back into another Memory with node 2's K as the
 *     continuation: node 3's completion invokes K on node 2 directly,
 *     node 2 checks the byte count and tells node 1, which checks the
 *     bytes; node 3's process sleeps in a barrier meanwhile (no user hop);
 *  3. gets EINVAL through its error continuation for an unaligned read;
 *  4. reads 4 KiB with its own continuations: node 3 sends the bytes and
 *     the continuation in one COPY (wire v15, totals/copy_then); then 128
 *     KiB: this node pulls them and invokes the continuation itself (or,
 *     into a region this node keeps for node 3, node 3 writes them);
 *  5. collects node 3's own results (its staging counter included);
 *  6. kills node 3 with 16 reads in flight (node 1's RDMA READs of the
 *     staged data, or node 3's WRITEs into a region node 1 keeps, slowed
 *     down on both nodes, debugfs fault_read_delay_ms): its
 *     monitor on "vol-rd" fires before the reads complete, "vol-rd" is
 *     revoked, and no read is answered twice.  A read whose storage
 *     node dies is answered at most once, through its error
 *     continuation: node 1 pulls the bytes and invokes the continuation
 *     the COPY carries (wire v15), and does so with the error when the
 *     pull fails before node 1 has seen node 3 die (from then on node 3's
 *     invocations are refused).  The monitor fires in any case.
 */
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "../selftests/tap.h"
#include "../selftests/fos_util.h"
#include "../selftests/fos_nl.h"
#include "../selftests/fos_req.h"
#include "../selftests/fos_blk.h"
#include "node.h"

#define TAG_DONE	0xd0
#define TAG_ERR		0xe0
#define TAG_ACK		0xac
#define TAG_REPORT	0x4e
#define TAG_K		0x4b
#define MON_RD		0x6d
#define BUF		(1 << 20)
#define VOL		(8 << 20)

/* Node 3's report to node 1. */
struct report {
	uint32_t passed, failed;
	uint64_t staged;
	int64_t copy_then;	/* node 3's totals/copy_then */
};

static int fd;

static uint32_t new_req(uint64_t tag)
{
	uint32_t cid;

	if (req_create(fd, FRACTOS_CID_INVALID, tag, NULL, 0, NULL, 0, &cid))
		tap_bail("request_create");
	return cid;
}

/* The answer of an I/O: bytes, or -errno; -1000 if none came. */
static int64_t answer(uint64_t *tag, uint64_t secs)
{
	struct fractos_blk_done d;
	struct msg m;

	fos_req_timeout_ns = secs * 1000000000ULL;
	if (receive(fd, &m))
		return -1000;
	*tag = m.tag;
	if (m.imm_len != sizeof(d))
		return -2000;
	memcpy(&d, m.imm, sizeof(d));
	return d.result;
}

static int storage(void)
{
	struct fractos_blk_mgmt a = { .op = FRACTOS_BLK_CREATE, .size = VOL };
	struct fos_blk_dev dev = { 0 };
	uint32_t mgmt, ok, caps[1], rd, wr, drd, dwr, rep, id = 0;
	struct report r = { 0 };
	const char *nvme, *why;
	struct msg m;

	nvme = fos_blk_setup(&why);
	if (!nvme)
		tap_bail("%s", why);
	tap_eq(fos_blk_attach(nvme, "ssd", 0, 1, &id), 0, "node 3: attach %s", nvme);
	{
		struct fractos_name n = { .name = (uintptr_t)"ssd", .name_len = 3 };

		tap_errno(ioctl(fd, FRACTOS_IOC_NAME_LOOKUP, &n), 0,
			  "node 3: look the management Request up");
		mgmt = n.cid;
	}
	ok = new_req(TAG_DONE);
	caps[0] = ok;
	tap_errno(invoke(fd, mgmt, &a, sizeof(a), caps, 1), 0, "node 3: CREATE a volume");
	tap_ok(!receive(fd, &m) && m.ncaps == 2 &&
	       ((struct fractos_blk_reply *)m.imm)->status == 0,
	       "node 3: its read and write Requests");
	rd = m.caps[0];
	wr = m.caps[1];
	/* Ours to publish: derived, with nothing added. */
	tap_errno(req_create(fd, rd, 0, NULL, 0, NULL, 0, &drd), 0, "node 3: derive vol-rd");
	tap_errno(req_create(fd, wr, 0, NULL, 0, NULL, 0, &dwr), 0, "node 3: derive vol-wr");
	tap_errno(publish(fd, drd, "vol-rd"), 0, "node 3: publish vol-rd");
	tap_errno(publish(fd, dwr, "vol-wr"), 0, "node 3: publish vol-wr");

	node_barrier("blk", "ready", 300);
	/* Node 1's I/O runs now, without this process. */
	node_barrier("blk", "io-done", 300);
	tap_eq(fos_blk_get(id, &dev), 0, "node 3: LIST");
	r.staged = dev.stats[FRACTOS_BLK_STAT_STAGED];
	tap_ok(r.staged >= 2 && dev.stats[FRACTOS_BLK_STAT_READS] >= 1 &&
	       dev.stats[FRACTOS_BLK_STAT_WRITES] >= 1,
	       "node 3: %llu I/Os staged for node 1's memory",
	       (unsigned long long)r.staged);
	tap_eq(node_lookup_wait(fd, 1, "report", &rep), 0, "node 3: look up node 1's report");
	r.copy_then = fos_total("copy_then");
	r.passed = tap_count - tap_failed;
	r.failed = tap_failed;
	tap_errno(invoke(fd, rep, &r, sizeof(r), NULL, 0), 0, "node 3: report");
	/*
	 * Node 1 kills this guest with reads in flight: the bytes go by this
	 * node's RDMA WRITEs into a region node 1 keeps for them (kept
	 * regions, "Kept regions" in kernel/remote/kept.c), or by node 1's
	 * READs; both are slowed down.
	 */
	fos_set_debugfs("fault_read_delay_ms", 1000);
	node_barrier("blk", "report", 300);
	/* Node 1 kills this guest. */
	pause();
	return 0;
}

static int continuation(void)
{
	uint32_t k = new_req(TAG_K), ack;
	struct fractos_blk_done d;
	struct msg m;
	int ret;

	tap_errno(publish(fd, k, "k2"), 0, "node 2: publish K");
	tap_eq(node_lookup_wait(fd, 1, "ack", &ack), 0, "node 2: look up node 1's ack");
	node_barrier("blk", "ready", 300);
	fos_req_timeout_ns = 120000000000ULL;
	ret = receive(fd, &m);
	tap_ok(!ret && m.tag == TAG_K && m.imm_len == sizeof(d),
	       "node 2: node 3's completion invokes K here");
	memcpy(&d, m.imm, sizeof(d));
	tap_eq(d.result, BUF, "node 2: with the byte count");
	tap_errno(invoke(fd, ack, &d, sizeof(d), NULL, 0), 0, "node 2: tell node 1");
	node_barrier("blk", "io-done", 300);
	node_barrier("blk", "report", 300);
	/* Node 1 says when node 3 is gone. */
	ret = receive(fd, &m);
	tap_ok(!ret && m.tag == TAG_K && m.imm_len == 4 && !memcmp(m.imm, "stop", 4),
	       "node 2: node 1 says stop");
	return 0;
}

static int client(void)
{
	uint32_t ack = new_req(TAG_ACK), rep = new_req(TAG_REPORT);
	uint32_t done = new_req(TAG_DONE), err = new_req(TAG_ERR);
	uint32_t rd, wr, k, src, dst, caps[3];
	struct fractos_blk_io io = { .offset = 0, .len = BUF };
	unsigned char *sp, *dp;
	struct report r;
	struct msg m;
	uint64_t tag;
	int i, n, n_done = 0;

	tap_errno(publish(fd, ack, "ack"), 0, "node 1: publish ack");
	tap_errno(publish(fd, rep, "report"), 0, "node 1: publish report");
	sp = mmap(NULL, BUF, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	dp = mmap(NULL, BUF, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fos_fill(sp, BUF, 1234);
	if (fos_mem_create(fd, sp, BUF, FRACTOS_PERM_ALL, &src) ||
	    fos_mem_create(fd, dp, BUF, FRACTOS_PERM_ALL, &dst))
		tap_bail("memory");
	node_barrier("blk", "ready", 300);
	tap_eq(node_lookup_wait(fd, 3, "vol-rd", &rd), 0, "node 1: look up vol-rd on node 3");
	tap_eq(node_lookup_wait(fd, 3, "vol-wr", &wr), 0, "node 1: look up vol-wr on node 3");
	tap_eq(node_lookup_wait(fd, 2, "k2", &k), 0, "node 1: look up K on node 2");

	caps[0] = src;
	caps[1] = done;
	caps[2] = err;
	tap_errno(invoke(fd, wr, &io, sizeof(io), caps, 3), 0,
		  "node 1: write 1 MiB of node 1's memory to node 3's volume");
	tap_eq(answer(&tag, 60), BUF, "node 1: node 3 answers with the byte count");
	tap_eq(tag, TAG_DONE, "node 1: through done");

	caps[0] = dst;
	caps[1] = k;
	tap_errno(invoke(fd, rd, &io, sizeof(io), caps, 2), 0,
		  "node 1: read it back, continuation K on node 2");
	fos_req_timeout_ns = 120000000000ULL;
	tap_ok(!receive(fd, &m) && m.tag == TAG_ACK &&
	       ((struct fractos_blk_done *)m.imm)->result == BUF,
	       "node 1: node 2 got the completion");
	tap_ok(!memcmp(sp, dp, BUF), "node 1: the bytes came back intact");

	io.offset = 1;
	caps[1] = done;
	caps[2] = err;
	tap_errno(invoke(fd, rd, &io, sizeof(io), caps, 3), 0, "node 1: an unaligned read");
	tap_eq(answer(&tag, 60), -EINVAL, "node 1: EINVAL");
	tap_eq(tag, TAG_ERR, "node 1: through the error continuation");

	/* Small, into this node's Memory, answered here: one COPY (v15). */
	memset(dp, 0, 4096);
	io.offset = 8192;
	io.len = 4096;
	tap_errno(invoke(fd, rd, &io, sizeof(io), caps, 3), 0,
		  "node 1: read 4 KiB, its continuations this node's");
	tap_eq(answer(&tag, 60), 4096, "node 1: answered with 4096");
	tap_eq(tag, TAG_DONE, "node 1: through done");
	tap_ok(!memcmp(sp + 8192, dp, 4096), "node 1: the 4 KiB are the volume's");
	memset(dp, 0, 128 << 10);
	io.offset = 65536;
	io.len = 128 << 10;
	tap_errno(invoke(fd, rd, &io, sizeof(io), caps, 3), 0,
		  "node 1: read 128 KiB, its continuations this node's");
	tap_eq(answer(&tag, 60), 128 << 10, "node 1: answered with 131072");
	tap_eq(tag, TAG_DONE, "node 1: through done");
	tap_ok(!memcmp(sp + 65536, dp, 128 << 10),
	       "node 1: the 128 KiB are the volume's");
	io.len = BUF;
	node_barrier("blk", "io-done", 300);

	fos_req_timeout_ns = 120000000000ULL;
	tap_ok(!receive(fd, &m) && m.tag == TAG_REPORT && m.imm_len == sizeof(r),
	       "node 1: node 3's report");
	memcpy(&r, m.imm, sizeof(r));
	tap_ok(r.passed >= 10 && r.failed == 0 && r.staged >= 4,
	       "node 1: node 3 passed %u, failed %u, staged %llu", r.passed, r.failed,
	       (unsigned long long)r.staged);
	tap_ok(r.copy_then == 2,
	       "node 1: node 3 sent the 4 KiB and 128 KiB reads with their continuations (copy_then %lld)",
	       (long long)r.copy_then);
	node_barrier("blk", "report", 300);

	/*
	 * Node 3 dies with reads in flight: this node's RDMA READs of the
	 * staged data wait 1 s each (debugfs fault_read_delay_ms), so the
	 * kill lands before any read can complete.
	 */
	tap_errno(monitor(fd, rd, MON_RD), 0, "node 1: monitor vol-rd");
	tap_eq(fos_set_debugfs("fault_read_delay_ms", 1000), 0,
	       "node 1: RDMA READs of this node delayed 1 s");
	io.offset = 0;
	for (i = 0; i < 16; i++)
		if (invoke(fd, rd, &io, sizeof(io), caps, 3))
			break;
	tap_eq(i, 16, "node 1: 16 reads of 1 MiB invoked");
	tap_eq(system("../../vm/ctl kill 3"), 0, "node 1: vm/ctl kill 3");
	n = 0;
	for (;;) {
		fos_req_timeout_ns = 60000000000ULL;
		if (receive(fd, &m))
			break;
		if (m.type == FRACTOS_MSG_MONITOR_RECEIVE && m.tag == MON_RD)
			break;
		n++;
		if (m.tag == TAG_DONE)
			n_done++;
	}
	tap_ok(m.type == FRACTOS_MSG_MONITOR_RECEIVE && m.tag == MON_RD,
	       "node 1: the monitor on vol-rd fires (%d reads were answered first)", n);
	tap_ok(n_done < 16,
	       "node 1: the kill caught reads in flight (%d of 16 done, %d answers)",
	       n_done, n);
	fos_set_debugfs("fault_read_delay_ms", 0);
	tap_ok(revoked(fd, rd), "node 1: vol-rd is revoked");
	tap_errno(invoke(fd, rd, &io, sizeof(io), caps, 3), EKEYREVOKED,
		  "node 1: invoking it: EKEYREVOKED");
	fos_req_timeout_ns = 2000000000ULL;
	while (!receive(fd, &m)) {
		n++;
		if (m.tag == TAG_DONE)
			n_done++;
	}
	tap_ok(n <= 16, "node 1: no read answered twice (%d answers in all, %d done)",
	       n, n_done);
	tap_errno(invoke(fd, k, "stop", 4, NULL, 0), 0, "node 1: tell node 2");
	close(fd);
	munmap(sp, BUF);
	munmap(dp, BUF);
	return 0;
}

int main(void)
{
	tap_plan_late();
	node_args();
	if (nodes != 3)
		tap_bail("blk_node needs 3 nodes");
	if (fos_nl_setup())
		tap_bail("generic netlink");
	fd = fos_open();
	if (fd < 0)
		tap_bail("open");
	peers_up();
	if (me == 3)
		storage();
	else if (me == 2)
		continuation();
	else
		client();
	return tap_finish();
}
