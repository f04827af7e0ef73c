// SPDX-License-Identifier: GPL-2.0
/*
 * fractos_testbar: a dma-buf exporter over QEMU's ivshmem-plain BAR, the
 * shape of GPU VRAM for fractos' tests (see testbar.h): its memory has no
 * struct pages, its kernel mapping is I/O memory, and its dynamic buffers
 * move when asked.  Test code: bound to the ivshmem device only, root
 * only, not installed by the packages.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/io.h>
#include <linux/iosys-map.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include "testbar.h"

MODULE_IMPORT_NS(DMA_BUF);

#define TESTBAR_BAR	2	/* ivshmem-plain's shared memory */

/* The one ivshmem device bound, set once at probe (one device only). */
static struct testbar {
	struct pci_dev *pdev;
	phys_addr_t phys;
	u64 size;
	void __iomem *va;
} tb;

/**
 * struct testbar_buf - one exported range
 * @off: where it is in the BAR; changed by a move, under the dma-buf's
 *	reservation lock for dynamic buffers
 * @len: bytes
 * @pins: pin() calls not yet unpinned, under the reservation lock
 */
struct testbar_buf {
	u64 off;
	u64 len;
	unsigned int pins;
};

static int testbar_attach(struct dma_buf *dmabuf,
			  struct dma_buf_attachment *attach)
{
	/* A BAR has no struct pages: only peer-to-peer importers. */
	return attach->peer2peer ? 0 : -EOPNOTSUPP;
}

static struct sg_table *testbar_map(struct dma_buf_attachment *attach,
				    enum dma_data_direction dir)
{
	struct testbar_buf *buf = attach->dmabuf->priv;
	struct sg_table *sgt;
	dma_addr_t addr;
	int ret;

	sgt = kzalloc(sizeof(*sgt), GFP_KERNEL);
	if (!sgt)
		return ERR_PTR(-ENOMEM);
	ret = sg_alloc_table(sgt, 1, GFP_KERNEL);
	if (ret)
		goto err_free;
	addr = dma_map_resource(attach->dev, tb.phys + buf->off, buf->len, dir,
				DMA_ATTR_SKIP_CPU_SYNC);
	ret = dma_mapping_error(attach->dev, addr);
	if (ret)
		goto err_table;
	sg_dma_address(sgt->sgl) = addr;
	sg_dma_len(sgt->sgl) = buf->len;
	return sgt;

err_table:
	sg_free_table(sgt);
err_free:
	kfree(sgt);
	return ERR_PTR(ret);
}

static void testbar_unmap(struct dma_buf_attachment *attach,
			  struct sg_table *sgt, enum dma_data_direction dir)
{
	dma_unmap_resource(attach->dev, sg_dma_address(sgt->sgl),
			   sg_dma_len(sgt->sgl), dir, DMA_ATTR_SKIP_CPU_SYNC);
	sg_free_table(sgt);
	kfree(sgt);
}

static void testbar_release(struct dma_buf *dmabuf)
{
	kfree(dmabuf->priv);
}

/* I/O memory, no struct pages: what a GPU driver's VRAM export gives. */
static int testbar_vmap(struct dma_buf *dmabuf, struct iosys_map *map)
{
	struct testbar_buf *buf = dmabuf->priv;

	iosys_map_set_vaddr_iomem(map, tb.va + buf->off);
	return 0;
}

static int testbar_mmap(struct dma_buf *dmabuf, struct vm_area_struct *vma)
{
	struct testbar_buf *buf = dmabuf->priv;

	vma->vm_page_prot = pgprot_writecombine(vma->vm_page_prot);
	return vm_iomap_memory(vma, tb.phys + buf->off, buf->len);
}

static int testbar_pin(struct dma_buf_attachment *attach)
{
	struct testbar_buf *buf = attach->dmabuf->priv;

	dma_resv_assert_held(attach->dmabuf->resv);
	buf->pins++;
	return 0;
}

static void testbar_unpin(struct dma_buf_attachment *attach)
{
	struct testbar_buf *buf = attach->dmabuf->priv;

	dma_resv_assert_held(attach->dmabuf->resv);
	buf->pins--;
}

static const struct dma_buf_ops testbar_static_ops = {
	.attach = testbar_attach,
	.map_dma_buf = testbar_map,
	.unmap_dma_buf = testbar_unmap,
	.release = testbar_release,
	.vmap = testbar_vmap,
	.mmap = testbar_mmap,
};

/* The vmap does not pin: a move while mapped is what tests ask for. */
static const struct dma_buf_ops testbar_dynamic_ops = {
	.attach = testbar_attach,
	.pin = testbar_pin,
	.unpin = testbar_unpin,
	.map_dma_buf = testbar_map,
	.unmap_dma_buf = testbar_unmap,
	.release = testbar_release,
	.vmap = testbar_vmap,
	.mmap = testbar_mmap,
};

/* Attachments only, as the NVIDIA driver's VRAM exports. */
static const struct dma_buf_ops testbar_nomap_ops = {
	.attach = testbar_attach,
	.map_dma_buf = testbar_map,
	.unmap_dma_buf = testbar_unmap,
	.release = testbar_release,
};

static bool testbar_range_ok(u64 off, u64 len)
{
	return len && PAGE_ALIGNED(off) && PAGE_ALIGNED(len) &&
	       off < tb.size && len <= tb.size - off;
}

static long testbar_export(struct fos_testbar_export __user *uarg)
{
	DEFINE_DMA_BUF_EXPORT_INFO(exp);
	struct fos_testbar_export a;
	struct testbar_buf *buf;
	struct dma_buf *dmabuf;
	int fd;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if ((a.flags & ~(FOS_TESTBAR_DYNAMIC | FOS_TESTBAR_NOMAP)) ||
	    a.flags == (FOS_TESTBAR_DYNAMIC | FOS_TESTBAR_NOMAP))
		return -EINVAL;
	if (!testbar_range_ok(a.offset, a.len))
		return -ERANGE;
	buf = kzalloc(sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	buf->off = a.offset;
	buf->len = a.len;
	if (a.flags & FOS_TESTBAR_DYNAMIC)
		exp.ops = &testbar_dynamic_ops;
	else if (a.flags & FOS_TESTBAR_NOMAP)
		exp.ops = &testbar_nomap_ops;
	else
		exp.ops = &testbar_static_ops;
	exp.size = a.len;
	exp.flags = O_RDWR;
	exp.priv = buf;
	dmabuf = dma_buf_export(&exp);
	if (IS_ERR(dmabuf)) {
		kfree(buf);
		return PTR_ERR(dmabuf);
	}
	fd = dma_buf_fd(dmabuf, O_CLOEXEC);
	if (fd < 0) {
		dma_buf_put(dmabuf);	/* releases @buf */
		return fd;
	}
	a.fd = fd;
	/* The fd is the caller's now: a failed copy leaves it open. */
	if (copy_to_user(uarg, &a, sizeof(a)))
		return -EFAULT;
	return 0;
}

/* Copy @len bytes within the BAR, through a kernel buffer. */
static int testbar_copy(u64 to, u64 from, u64 len)
{
	void *tmp = kvmalloc(len, GFP_KERNEL);

	if (!tmp)
		return -ENOMEM;
	memcpy_fromio(tmp, tb.va + from, len);
	memcpy_toio(tb.va + to, tmp, len);
	kvfree(tmp);
	return 0;
}

static long testbar_move(const struct fos_testbar_move __user *uarg)
{
	struct fos_testbar_move a;
	struct testbar_buf *buf;
	struct dma_buf *dmabuf;
	int ret;

	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (a.flags)
		return -EINVAL;
	dmabuf = dma_buf_get(a.fd);
	if (IS_ERR(dmabuf))
		return PTR_ERR(dmabuf);
	ret = -EINVAL;
	if (dmabuf->ops != &testbar_dynamic_ops)
		goto out;
	buf = dmabuf->priv;
	ret = -ERANGE;
	if (!testbar_range_ok(a.offset, buf->len))
		goto out;
	/* Not onto itself: the old range is poisoned after the copy. */
	ret = -EINVAL;
	if (a.offset < buf->off + buf->len && buf->off < a.offset + buf->len)
		goto out;
	ret = dma_resv_lock_interruptible(dmabuf->resv, NULL);
	if (ret)
		goto out;
	if (buf->pins) {
		ret = -EBUSY;
	} else {
		/* The importers stop using the old place before it changes. */
		dma_buf_move_notify(dmabuf);
		ret = testbar_copy(a.offset, buf->off, buf->len);
		if (!ret) {
			memset_io(tb.va + buf->off, FOS_TESTBAR_POISON,
				  buf->len);
			buf->off = a.offset;
		}
	}
	dma_resv_unlock(dmabuf->resv);
out:
	dma_buf_put(dmabuf);
	return ret;
}

static long testbar_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	struct fos_testbar_info info = { .size = tb.size };

	switch (cmd) {
	case FOS_TESTBAR_INFO:
		return copy_to_user(uarg, &info, sizeof(info)) ? -EFAULT : 0;
	case FOS_TESTBAR_EXPORT:
		return testbar_export(uarg);
	case FOS_TESTBAR_MOVE:
		return testbar_move(uarg);
	}
	return -ENOTTY;
}

static const struct file_operations testbar_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = testbar_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice testbar_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "fractos_testbar",
	.fops = &testbar_fops,
	.mode = 0600,
};

static int testbar_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	int ret;

	if (tb.pdev)
		return -EBUSY;
	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	ret = pcim_iomap_regions(pdev, BIT(TESTBAR_BAR), KBUILD_MODNAME);
	if (ret)
		return ret;
	tb.phys = pci_resource_start(pdev, TESTBAR_BAR);
	tb.size = pci_resource_len(pdev, TESTBAR_BAR);
	tb.va = pcim_iomap_table(pdev)[TESTBAR_BAR];
	tb.pdev = pdev;
	ret = misc_register(&testbar_misc);
	if (ret) {
		tb.pdev = NULL;
		return ret;
	}
	dev_info(&pdev->dev, "BAR %d: %llu bytes at %pa\n", TESTBAR_BAR,
		 tb.size, &tb.phys);
	return 0;
}

/* Exported buffers pin the module (dma_buf_export()'s owner): none left. */
static void testbar_remove(struct pci_dev *pdev)
{
	misc_deregister(&testbar_misc);
	tb.pdev = NULL;
}

static const struct pci_device_id testbar_ids[] = {
	{ PCI_DEVICE(PCI_VENDOR_ID_REDHAT_QUMRANET, 0x1110) },	/* ivshmem */
	{ }
};
MODULE_DEVICE_TABLE(pci, testbar_ids);

static struct pci_driver testbar_driver = {
	.name = KBUILD_MODNAME,
	.id_table = testbar_ids,
	.probe = testbar_probe,
	.remove = testbar_remove,
	/* Buffers use the BAR's mapping: no unbind from sysfs under them. */
	.driver.suppress_bind_attrs = true,
};
module_pci_driver(testbar_driver);

MODULE_DESCRIPTION("fractos tests: a dma-buf exporter over an ivshmem BAR");
MODULE_LICENSE("GPL");
