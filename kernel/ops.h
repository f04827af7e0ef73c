/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fractos: the operation table (ops.c) and its front doors, the ioctl
 * (ops.c) and io_uring (uring.c): the decoded call every operation handler
 * is given, and the handlers, one family per file.
 */
#ifndef FRACTOS_OPS_H
#define FRACTOS_OPS_H

#include <linux/compiler.h>
#include <linux/string.h>
#include <linux/types.h>
#include <linux/fractos.h>
#include "fos.h"

struct file;
struct io_uring_cmd;

/*
 * Every front door (the ioctl, uring_cmd of io_uring) decodes its command
 * into a struct fos_call and runs it with fos_call_user().
 */
union fos_args {
	struct fractos_space_info space_info;
	struct fractos_memory_create memory_create;
	struct fractos_memory_diminish memory_diminish;
	struct fractos_memory_copy memory_copy;
	struct fractos_cap_arg cap;
	struct fractos_cap_info cap_info;
	struct fractos_cap_export cap_export;
	struct fractos_cap_import cap_import;
	struct fractos_request_create request_create;
	struct fractos_request_invoke request_invoke;
	struct fractos_request_receive request_receive;
	struct fractos_monitor monitor;
	struct fractos_name name;
	struct fractos_space_contact space_contact;
	struct fractos_memory_grant memory_grant;
};

/**
 * struct fos_call - one decoded operation
 * @args: the operation's struct, zero-extended to the kernel's size
 * @new_cid: set by operations that installed a cid, so that the front door
 *	can close it again if the result cannot be written back
 * @new_cap: what was installed at @new_cid (no reference: compared only,
 *	so that the front door never closes a capability another thread of
 *	the space put at that cid meanwhile)
 * @pending_file: CAP_EXPORT: the file to install at @pending_fd on success
 * @pending_fd: CAP_EXPORT: the reserved descriptor
 * @pending_delegated: CAP_EXPORT: the file's capability is a new
 *	delegation (fos_obj_delegate() returned 1)
 * @nowait: do not wait; return -EAGAIN where the operation would sleep
 *	for an event (see fos_call_user())
 * @out_on_error: write @args back even though the handler failed (used by
 *	REQUEST_RECEIVE's EMSGSIZE to report the sizes it needs)
 * @new_contact: SPACE_CONTACT's ADD: the id it added, removed again if the
 *	result cannot be written back
 * @new_contact_ptr: what was added at @new_contact (compared only, as
 *	@new_cap)
 */
struct fos_call {
	union fos_args args;
	u32 new_cid;
	struct fos_cap new_cap;
	struct file *pending_file;
	int pending_fd;
	bool pending_delegated;
	bool nowait;
	bool out_on_error;
	u32 new_contact;
	const void *new_contact_ptr;
};

/* ops.c */
int fos_call_user(struct fos_space *s, unsigned int cmd, void __user *uarg,
		  bool nowait);
long fos_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

/* An operation installed @cap at @cid (see &fos_call.new_cid). */
static inline void fos_call_new_cid(struct fos_call *c, u32 cid,
				    const struct fos_cap *cap)
{
	c->new_cid = cid;
	c->new_cap = *cap;
}

/* uring.c */
int fos_uring_cmd(struct io_uring_cmd *ioucmd, unsigned int issue_flags);

/* Operation handlers, one family per file: the table's rows (ops.c). */
/* space.c */
int fos_op_space_info(struct fos_space *s, struct fos_call *c);
int fos_op_cap_revoke(struct fos_space *s, struct fos_call *c);
int fos_op_cap_create_revtree(struct fos_space *s, struct fos_call *c);
int fos_op_cap_close(struct fos_space *s, struct fos_call *c);
int fos_op_cap_dup(struct fos_space *s, struct fos_call *c);
int fos_op_cap_info(struct fos_space *s, struct fos_call *c);
/* capfd.c */
int fos_op_cap_export(struct fos_space *s, struct fos_call *c);
int fos_op_cap_import(struct fos_space *s, struct fos_call *c);
/* memory.c */
int fos_op_memory_create(struct fos_space *s, struct fos_call *c);
int fos_op_memory_diminish(struct fos_space *s, struct fos_call *c);
int fos_op_memory_copy(struct fos_space *s, struct fos_call *c);
/* request.c */
int fos_op_request_create(struct fos_space *s, struct fos_call *c);
int fos_op_request_invoke(struct fos_space *s, struct fos_call *c);
/* queue.c */
int fos_op_request_receive(struct fos_space *s, struct fos_call *c);
/* monitor.c */
int fos_op_monitor_receive(struct fos_space *s, struct fos_call *c);
int fos_op_monitor_delegate(struct fos_space *s, struct fos_call *c);
/* name.c */
int fos_op_name_publish(struct fos_space *s, struct fos_call *c);
int fos_op_name_lookup(struct fos_space *s, struct fos_call *c);
int fos_op_name_unpublish(struct fos_space *s, struct fos_call *c);
/* contact.c */
int fos_op_space_contact(struct fos_space *s, struct fos_call *c);
/* memgrant.c */
int fos_op_memory_grant(struct fos_space *s, struct fos_call *c);
void fos_contact_undo(struct fos_space *s, u32 id, const void *ptr);

/* Helpers for argument checks. */
static inline bool fos_mem_is_zero(const void *p, size_t n)
{
	return !memchr_inv(p, 0, n);
}

#endif /* FRACTOS_OPS_H */
