/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fractos: published names (name.c) - publishing and unpublishing for
 * kernel providers, lookups for them and for other nodes, and taking an
 * object's names away when it is revoked.
 */
#ifndef FRACTOS_NAME_H
#define FRACTOS_NAME_H

#include <linux/types.h>
#include <linux/uidgid.h>

struct fos_cap;
struct fos_dead;
struct fos_object;
struct fos_space;

int fos_name_get(const char *name, u32 len, kuid_t uid, struct fos_cap *out);
int fos_name_add(const struct fos_space *owner, const struct fos_cap *cap,
		 const char *name, u32 len, kuid_t uid, u32 flags);
int fos_name_remove(const struct fos_space *owner, const char *name,
		    u32 len);
void fos_name_revoke_locked(struct fos_object *obj, struct fos_dead *dead);
void fos_name_release(struct list_head *list);

#endif /* FRACTOS_NAME_H */
