# SPDX-License-Identifier: GPL-2.0
#
# NVIDIA's RDMA stack (MLNX_OFED, DOCA-OFED) replaces the kernel's ib_core,
# rdma_cm and friends with its own modules: a module built against the
# kernel's headers would then not load ("disagrees about version of
# symbol").  When that stack's build tree is present (OFA_DIR, found in its
# usual places unless given), build against its headers (first in the
# include path, with its compat header, as its own modules are) and its
# Module.symvers.  Included by every Kbuild of the tree (modpost reads the
# top one for KBUILD_EXTRA_SYMBOLS).  Built for, not tested here: the tests
# run on the kernel's own (inbox) stack.
OFA_DIR ?= $(firstword $(wildcard /usr/src/ofa_kernel/$(SRCARCH)/$(KERNELRELEASE) \
	/usr/src/ofa_kernel/default))
ifneq ($(wildcard $(OFA_DIR)/Module.symvers),)
NOSTDINC_FLAGS += -I$(OFA_DIR)/include -I$(OFA_DIR)/include/uapi \
	$(if $(wildcard $(OFA_DIR)/include/linux/compat-2.6.h),-include $(OFA_DIR)/include/linux/compat-2.6.h)
KBUILD_EXTRA_SYMBOLS += $(OFA_DIR)/Module.symvers
endif
