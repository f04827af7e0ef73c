// SPDX-License-Identifier: GPL-2.0
/**
 * DOC: Memory mappings
 *
 * A capability fd (CAP_EXPORT) of a Memory object whose buffer is pages
 * on this node (pinned user pages, kernel pages; not a dma-buf, not
 * another node's) is a file of our own pseudo file system, whose inode is
 * that object's: every fd exported from capabilities to one object shares
 * it, and so one address_space, whose i_mmap tree lists every mapping
 * made through them.  mmap() maps whole pages of the capability's view,
 * shared only, with the view's rights; the pages are inserted as PFNs at
 * fault time (VM_PFNMAP: no GUP on them, nothing counted twice).
 *
 * Revocation takes the inode from the object (fos_object.map, under
 * fos_tree_lock, as every object field) and, once the lock is dropped and
 * before the buffer can be released, unmaps every mapping of it.  The
 * fault handler inserts under the inode's lock held shared, after
 * checking the object under fos_tree_lock; the unmap runs under it held
 * exclusive, after the object was marked revoked: so a fault either
 * inserted before the unmap, which removes it, or finds the object
 * revoked and fails with SIGBUS.  The buffer (struct fos_mem) outlives
 * every inserted page table entry: each object's inode holds a reference
 * on it, dropped after its unmap (a child's mappings may be unmapped
 * after its root's revocation released the root's own reference).
 *
 * The pseudo file system is mounted while inodes or files of it exist
 * (simple_pin_fs()), and pins the module as long: the last file's close
 * runs its dentry and superblock code after it dropped its module
 * reference.
 *
 * Lock order: mmap_lock -> inode lock (fault); inode lock -> i_mmap_rwsem
 * (unmap).
 */
#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mount.h>
#include <linux/pseudo_fs.h>
#include <linux/slab.h>
#include "fos.h"
#include "memory.h"

#define FOS_MEMMAP_MAGIC	0x666f736d	/* "fosm" */

/**
 * struct fos_objmap - the inode of an object's mappable capability fds
 * @inode: one reference, the object's; each fd holds its own (its dentry)
 * @mem: the buffer the mappings show, one reference: kept until they are
 *	unmapped
 * @dead: link on a struct fos_dead's maps once taken from the object
 */
struct fos_objmap {
	struct inode *inode;
	struct fos_mem *mem;
	struct list_head dead;
};

/* Mounted while fos_memmap_pins is not zero (simple_pin_fs()). */
static struct vfsmount *fos_memmap_mnt;
static int fos_memmap_pins;

/* /proc/PID/fd shows "fractos:[fractos-cap]", as the anon-inode fds do. */
static char *fos_memmap_dname(struct dentry *dentry, char *buf, int buflen)
{
	static const char name[] = "fractos:[fractos-cap]";

	if (buflen < (int)sizeof(name))
		return ERR_PTR(-ENAMETOOLONG);
	memcpy(buf + buflen - sizeof(name), name, sizeof(name));
	return buf + buflen - sizeof(name);
}

static const struct dentry_operations fos_memmap_dops = {
	.d_dname	= fos_memmap_dname,
};

static int fos_memmap_init_fs_context(struct fs_context *fc)
{
	struct pseudo_fs_context *ctx = init_pseudo(fc, FOS_MEMMAP_MAGIC);

	if (!ctx)
		return -ENOMEM;
	ctx->dops = &fos_memmap_dops;
	return 0;
}

/* Its superblock pins the module: see "Memory mappings". */
static struct file_system_type fos_memmap_fs = {
	.owner			= THIS_MODULE,
	.name			= "fractos",
	.init_fs_context	= fos_memmap_init_fs_context,
	.kill_sb		= kill_anon_super,
};

static int fos_memmap_pin(void)
{
	return simple_pin_fs(&fos_memmap_fs, &fos_memmap_mnt, &fos_memmap_pins);
}

static void fos_memmap_unpin(void)
{
	simple_release_fs(&fos_memmap_mnt, &fos_memmap_pins);
}

/* The object's mappings go: unmap them all, then drop the inode. */
static void fos_objmap_free(struct fos_objmap *map)
{
	struct inode *inode = map->inode;

	inode_lock(inode);
	unmap_mapping_range(inode->i_mapping, 0, 0, 1);
	inode_unlock(inode);
	iput(inode);
	/* No page table entry shows the buffer any more: it may go. */
	fos_mem_put(map->mem);
	kfree(map);
	fos_memmap_unpin();
	fos_live_add(FOS_LIVE_MEMMAPS, -1);
}

/**
 * fos_memmap_take_locked - a revoked or freed object gives its mappings up
 * @obj: the object, under fos_tree_lock
 * @dead: where they go, unmapped by fos_dead_release()
 */
void fos_memmap_take_locked(struct fos_object *obj, struct fos_dead *dead)
{
	lockdep_assert_held(&fos_tree_lock);
	if (!obj->map)
		return;
	list_add_tail(&obj->map->dead, &dead->maps);
	obj->map = NULL;
}

/* fos_dead_release(): unmap what was taken (before any buffer goes). */
void fos_memmap_release(struct list_head *maps)
{
	struct fos_objmap *map, *tmp;

	might_sleep();
	list_for_each_entry_safe(map, tmp, maps, dead) {
		list_del(&map->dead);
		fos_objmap_free(map);
	}
}

/*
 * The buffer behind @cap, if it can be mapped (pages on this node, not a
 * dma-buf), with a reference; else NULL.
 */
static struct fos_mem *fos_memmap_mem(const struct fos_cap *cap)
{
	struct fos_mem *mem;

	if (cap->obj->type != FRACTOS_OBJ_MEMORY || cap->obj->proxy)
		return NULL;
	mem = fos_obj_get_mem(cap->obj);
	if (IS_ERR(mem))
		return NULL;
	if (!mem->pages || mem->dmabuf) {
		fos_mem_put(mem);
		return NULL;
	}
	return mem;
}

/*
 * The inode of @obj's mappings, made on first use (with @mem, a reference
 * the caller gives up); a reference, or NULL.  The caller holds a pin.
 */
static struct inode *fos_memmap_inode(struct fos_object *obj,
				      struct fos_mem *mem)
{
	struct fos_objmap *new;
	struct inode *inode = NULL;

	new = kzalloc(sizeof(*new), GFP_KERNEL_ACCOUNT);
	if (!new)
		goto out_mem;
	new->inode = alloc_anon_inode(fos_memmap_mnt->mnt_sb);
	if (IS_ERR(new->inode))
		goto out_new;
	new->mem = mem;
	mem = NULL;
	spin_lock_bh(&fos_tree_lock);
	if (!obj->revoked) {
		if (!obj->map) {
			obj->map = new;
			new = NULL;
			fos_live_add(FOS_LIVE_MEMMAPS, 1);
		}
		inode = obj->map->inode;
		ihold(inode);
	}
	spin_unlock_bh(&fos_tree_lock);
	if (!new) {
		/* The object's map holds a pin of its own. */
		WARN_ON_ONCE(fos_memmap_pin());
		return inode;
	}
	mem = new->mem;
	iput(new->inode);
out_new:
	kfree(new);
out_mem:
	if (mem)
		fos_mem_put(mem);
	return inode;
}

/**
 * fos_memmap_file - the file of a new capability fd, if it can be mapped
 * @cap: the fd's capability (becomes the file's private data)
 * @fops: the capability fds' operations
 *
 * Return: a file on the object's inode, opened read-write when @cap may
 * write; NULL when @cap cannot be mapped (the caller makes an anon-inode
 * file), or an ERR_PTR.
 */
struct file *fos_memmap_file(struct fos_cap *cap,
			     const struct file_operations *fops)
{
	struct inode *inode;
	struct fos_mem *mem;
	struct file *file;

	mem = fos_memmap_mem(cap);
	if (!mem)
		return NULL;
	/* (the mount stays while this call uses it) */
	if (fos_memmap_pin()) {
		fos_mem_put(mem);
		return NULL;
	}
	inode = fos_memmap_inode(cap->obj, mem);
	if (!inode) {
		file = NULL;
		goto out;
	}
	/* A file's f_op pins its module; alloc_file_pseudo() does not. */
	__module_get(fops->owner);
	file = alloc_file_pseudo(inode, fos_memmap_mnt, "[fractos-cap]",
				 cap->perms & FRACTOS_PERM_WRITE ?
				 O_RDWR : O_RDONLY, fops);
	if (IS_ERR(file)) {
		module_put(fops->owner);
		iput(inode);
		goto out;
	}
	file->private_data = cap;
out:
	fos_memmap_unpin();
	return file;
}

static vm_fault_t fos_memmap_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct fos_cap *cap = vma->vm_file->private_data;
	struct inode *inode = file_inode(vma->vm_file);
	vm_fault_t ret = VM_FAULT_SIGBUS;
	struct fos_mem *mem;
	u64 idx;

	if (vmf->pgoff >= cap->len >> PAGE_SHIFT)
		return VM_FAULT_SIGBUS;
	inode_lock_shared(inode);
	mem = fos_obj_get_mem(cap->obj);
	if (!IS_ERR(mem)) {
		idx = ((mem->first_off + cap->off) >> PAGE_SHIFT) + vmf->pgoff;
		if (idx < mem->npages)
			ret = vmf_insert_pfn(vma, vmf->address,
					     page_to_pfn(mem->pages[idx]));
		fos_mem_put(mem);
	}
	inode_unlock_shared(inode);
	return ret;
}

static const struct vm_operations_struct fos_memmap_vm_ops = {
	.fault	= fos_memmap_fault,
};

static void fos_vma_flags(struct vm_area_struct *vma, vm_flags_t set,
			  vm_flags_t clear)
{
#ifdef FOS_HAVE_VM_FLAGS_SET
	vm_flags_mod(vma, set, clear);
#else
	vma->vm_flags = (vma->vm_flags | set) & ~clear;
#endif
}

/**
 * fos_memmap_mmap - mmap() of a capability fd
 * @file: the fd's file
 * @vma: the new mapping
 *
 * Return: 0; -ENODEV for a capability that cannot be mapped (no Memory,
 * another node's, a dma-buf, or an fd made when its object could not
 * be); -EINVAL for a private mapping or a view that does not start on a
 * page; -EACCES for exec, or rights the view lacks; -ENXIO past the
 * view's last whole page; -EKEYREVOKED.
 */
int fos_memmap_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct fos_cap *cap = file->private_data;
	vm_flags_t clear = VM_MAYEXEC;
	u64 pages = cap->len >> PAGE_SHIFT;
	struct fos_mem *mem;
	bool aligned;

	if (file->f_path.dentry->d_sb->s_type != &fos_memmap_fs)
		return -ENODEV;
	/* (a shared mapping of a read-only fd has VM_MAYSHARE only) */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	if ((vma->vm_flags & VM_EXEC) || !(cap->perms & FRACTOS_PERM_READ) ||
	    ((vma->vm_flags & VM_WRITE) && !(cap->perms & FRACTOS_PERM_WRITE)))
		return -EACCES;
	if (!(cap->perms & FRACTOS_PERM_WRITE))
		clear |= VM_MAYWRITE;
	if (vma->vm_pgoff >= pages || vma_pages(vma) > pages - vma->vm_pgoff)
		return -ENXIO;
	mem = fos_obj_get_mem(cap->obj);
	if (IS_ERR(mem))
		return PTR_ERR(mem);
	aligned = !((mem->first_off + cap->off) & ~PAGE_MASK);
	fos_mem_put(mem);
	if (!aligned)
		return -EINVAL;
	fos_vma_flags(vma, VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP, clear);
	vma->vm_ops = &fos_memmap_vm_ops;
	return 0;
}
