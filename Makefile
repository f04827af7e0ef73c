# SPDX-License-Identifier: GPL-2.0
#
# fractos top-level build.
#
#   make                 kernel/fractos.ko (for KDIR) and the userspace parts
#   make module          only the module, in place (kernel/fractos.ko)
#   make kmod KVER=6.12  the module for one Debian kernel, in build/<release>/
#   make userspace       libcaladan, fractctl, the demo, benchmarks, selftests
#   make unit            host unit tests (no module, no VM)
#   make check           static checks, unit tests, the packages (make packaging),
#                        the guest selftests on 6.1 and 6.12, the multi-node suite;
#                        FULL=1: the long tests at their own sizes (CHECK_ENV)
#   make multinode       the multi-node transport tests (2 and 3 guests)
#   make demo            boot a guest and run the demos
#   make sparse|w1|checkpatch   static checks of the module
#   make kernel-doc      the module's kernel-doc comments, and Documentation/'s
#                        kernel-doc directives (part of make static)
#   make debug-kernel    build (once, cached) the debug kernel: KASAN, lockdep,
#                        kmemleak, UBSAN, KFENCE, fault injection, KCOV
#   make check-debug     the guest selftests and the multi-node suite in it
#   make check-debug-ci  CI's part of it (scaled-down selftests, no multi-node)
#   make check-debug-short  a few selftests in it (CI when time is short)
#   make robustness      the robustness figures (debug kernel): Documentation/testing.rst
#   make fuzz            the uAPI fuzzer in a guest: DURATION=S (600), KVER=
#                        6.1|6.12|debug (6.1), SEED=N, LOOPBACK=1 (tests/fuzz/)
#   make install         the module (for KDIR), libcaladan, fractctl and the
#                        daemons, man pages, udev rule, systemd units:
#                        PREFIX=/usr/local DESTDIR= (make uninstall undoes it)
#   make deb             the Debian packages, into build/deb/ (lintian-clean)
#   make fresh-check     (root) build and boot as a fresh Debian 12 machine would:
#                        a debootstrapped root with only what vm/install-deps
#                        installs (vm/fresh-check; COMMITTED=1: HEAD's files)
#   make man-check       fractos(4) is what tools/man/gen-fractos4.py writes
#   make clean
#
# KDIR= picks a kernel build tree; KVER=6.1|6.12 is a shorthand for the
# newest Debian linux-headers-<KVER>.*-amd64, unpacked by vm/guest-kernels
# (in $(FRACTOS_KERNELS)) or else installed in /usr/src.  The default is
# the running kernel's build tree when it exists, else the newest of those.

KVERS ?= 6.1 6.12
FRACTOS_KERNELS ?= /var/cache/fractos/kernels

newest_headers = $(lastword $(shell ls -d $(1)/linux-headers-$(2)*-amd64 2>/dev/null | sort -V))
headers_for = $(or $(call newest_headers,$(FRACTOS_KERNELS)/*/usr/src,$(1)),$(call newest_headers,/usr/src,$(1)))

ifneq ($(KVER),)
override KDIR := $(call headers_for,$(KVER).)
else ifneq ($(wildcard /lib/modules/$(shell uname -r)/build),)
KDIR ?= /lib/modules/$(shell uname -r)/build
else
KDIR ?= $(call headers_for,)
endif

# kernel release of a headers tree: /usr/src/linux-headers-6.1.0-27-amd64 -> 6.1.0-27-amd64
krel = $(patsubst linux-headers-%,%,$(notdir $(1)))

CHECKPATCH := build/checkpatch/scripts/checkpatch.pl
KERNELDOC := build/kernel-doc/scripts/kernel-doc
KSRC := Kbuild $(filter-out %.mod.c,$(wildcard kernel/*.c kernel/*.h kernel/*/*.c kernel/*/*.h uapi/linux/*.h \
	adaptors/*/*.c adaptors/*/*.h tests/exporter/*.c tests/exporter/*.h)) kernel/Kbuild kernel/ofed.mk \
	$(wildcard adaptors/*/Kbuild) tests/exporter/Kbuild
KDIRS := kernel/fabric kernel/remote uapi/linux $(patsubst %/Kbuild,%,$(wildcard adaptors/*/Kbuild)) tests/exporter
# Test modules (tests/exporter/: a dma-buf exporter over a BAR) are built
# for the guests and the checks, never by "make module" or the packages.
TESTMODS := FRACTOS_TEST_MODULES=m

.PHONY: all module kmod kmods userspace unit check selftests multinode demo sparse w1 htmldocs \
	checkpatch kernel-doc static clean deps debug-kernel check-debug check-debug-ci check-debug-short \
	fuzz robustness install uninstall install-module install-user man-check deb packaging \
	fresh-check FORCE

all: module userspace

# As root, install what is missing; otherwise list it and fail.
deps:
	@if [ "$$(id -u)" = 0 ]; then vm/install-deps; else vm/install-deps --check; fi

# A kernel whose modules carry BTF and whose headers ship vmlinux (6.12)
# runs pahole on each module: say so rather than fail in kbuild when
# dwarves is missing.
need_pahole = grep -qs '^CONFIG_DEBUG_INFO_BTF_MODULES=y' $(1)/.config && test -f $(1)/vmlinux && \
	! command -v pahole >/dev/null && \
	{ echo "$(1): its modules need BTF, made by pahole: install dwarves (vm/install-deps)" >&2; exit 1; }; :

module:
	@test -n "$(KDIR)" || { echo "no kernel headers found: run vm/install-deps" >&2; exit 1; }
	@$(call need_pahole,$(KDIR))
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

# An out-of-place build per kernel, so that 6.1 and 6.12 modules coexist:
# the sources are mirrored into build/<release>/ and built there.
kmod:
	@test -n "$(KDIR)" || { echo "no kernel headers for KVER=$(KVER)" >&2; exit 1; }
	@$(call need_pahole,$(KDIR))
	@d=build/$(call krel,$(KDIR)); mkdir -p $(addprefix $$d/,$(KDIRS)); \
	grep -qs "^$(KDIR)$$" $$d/.kdir || { rm -rf $$d; mkdir -p $(addprefix $$d/,$(KDIRS)); \
		echo "$(KDIR)" > $$d/.kdir; }; \
	for f in $(KSRC); do cmp -s $$f $$d/$$f || cp $$f $$d/$$f; done; \
	$(MAKE) -C $(KDIR) M=$(CURDIR)/$$d $(TESTMODS) modules

kmods:
	@for v in $(KVERS); do $(MAKE) --no-print-directory kmod KVER=$$v || exit 1; done

userspace:
	$(MAKE) -C lib
	$(MAKE) -C lib/examples
	$(MAKE) -C tools
	$(MAKE) -C tests/selftests
	$(MAKE) -C tests/multinode
	$(MAKE) -C tests/fuzz
	$(MAKE) -C adaptors/fs
	$(MAKE) -C adaptors/gpu

unit:
	$(MAKE) -C lib check
	$(MAKE) -C tools check
	$(MAKE) -C adaptors/fs check
	$(MAKE) -C adaptors/gpu check

# The Debian packages and DKMS as a user gets them, and one guest with the
# DKMS-built module and the packages' binaries (tests/packaging/run.sh).
packaging:
	@echo "=== packaging: make deb, DKMS for $(KVERS), the packages in a guest ==="
	@tests/packaging/run.sh

# make check's sizes of the tests whose length is a parameter, so that CI
# (.ci/run: 90 minutes in all) fits on a host twice as slow as usual:
# module_cycle 10 load cycles (50), exitrace 50 provider deaths (200),
# the fuzzer 30 + 20 s, then 20 + 10 s with low limits (60 + 30, 30 +
# 20); on several nodes killchain 50 iterations (200) and the fuzzer 30 s
# a node (60).  FULL=1 runs each at its own default (the figures of
# Documentation/testing.rst).
CHECK_ENV := CYCLES=10 FOS_TEST_ARGS_exitrace='-i 50' FUZZ_DURATION=30 \
	FUZZ_LOOPBACK_DURATION=20 FUZZ_LOWLIMIT_DURATION=20 FUZZ_LOWLIMIT_LOOPBACK_DURATION=10
MULTINODE_CHECK_ENV := KC_ITER=50 FUZZ_DURATION=30

# Guest selftests on every kernel of KVERS; the module for each is built first.
selftests: userspace kmods
	@rc=0; for v in $(KVERS); do \
		echo "=== selftests on $$v$(if $(FULL), (full size)) ==="; \
		vm/run --kernel $$v --nvme 256M --bar 4M --timeout $${VM_TIMEOUT:-1500} --log build/vm-$$v.log \
			--save build/fuzz -- env $(if $(FULL),,$(CHECK_ENV)) tests/selftests/run_all.sh || rc=1; \
	done; exit $$rc

# The multi-node transport suite (tests/multinode/suite.sh) on every kernel;
# the services' tests on several nodes (fs, membership, the pipeline and
# its kills) on the first kernel of KVERS only, unless FULL=1: they run the
# daemons over the kernel paths that the selftests and the transport's
# tests already run on both; pipeline1 (the pipeline's time ratios on one
# guest, a figure more than a check) with FULL=1 only.
multinode: userspace kmods
	@rc=0; first=1; for v in $(KVERS); do \
		MULTINODE_ENV="$(if $(FULL),,$(MULTINODE_CHECK_ENV))" \
		MULTINODE_APPS=$(if $(FULL),1,$$first) MULTINODE_FIGURES=$(FULL) \
		tests/multinode/suite.sh $$v || rc=1; \
		first=0; \
	done; exit $$rc

# A fresh Debian 12 machine (vm/fresh-check): in a debootstrapped root with
# nothing but what vm/install-deps installs, make userspace, kmods and deb,
# and one guest.  Its roots are cached in /var/cache/fractos/fresh-root.
fresh-check:
	@vm/fresh-check $(if $(COMMITTED),--committed)

# Stops at the first stage that fails; ends with one total line either way.
check: deps
	@mkdir -p build; rm -f build/check.rc; \
	{ $(MAKE) --no-print-directory static && \
	  $(MAKE) --no-print-directory unit && \
	  $(MAKE) --no-print-directory packaging && \
	  $(MAKE) --no-print-directory selftests && \
	  $(MAKE) --no-print-directory multinode; echo $$? > build/check.rc; } 2>&1 | \
		tee build/check.log; \
	rc=$$(cat build/check.rc 2>/dev/null || echo 1); tests/tally.sh build/check.log $$rc; exit $$rc

# The debug kernel (vm/debug-kernel, vm/debug.config), built once per
# configuration and cached in $(FRACTOS_DEBUG_CACHE) or build/debug-kernel/.
debug-kernel:
	@vm/debug-kernel >/dev/null

# The guest selftests and the multi-node suite on the debug kernel: any
# KASAN, lockdep, UBSAN or KFENCE report, BUG or WARNING, and any kmemleak
# object allocated by the module fails the run (vm/run).  In it, failnth
# fails every allocation of every operation in turn and the fuzz run is
# KCOV-guided.  The selftests whose size is a parameter are scaled down
# as in CI (the debug kernel runs them 5 to 10 times slower): 128 Ki caps
# instead of the million, exitrace with 5000 objects and 20 provider
# deaths of 200 objects each, killany 100 times, the fuzzer 120 + 60 s,
# then 120 + 60 s with every limit low (--low-limits), limitrace 2 s a case,
# blkstress 90 s (600 s with DEBUG_FULL=1).
# DEBUG_FULL=1: at full size but exitrace's provider deaths: 100 of them
# (2000 objects each did not finish in 30 minutes, nor did 200 deaths:
# 150 in 30 minutes on 2026-11-25); about 90 minutes for the selftests.
DEBUG_VM_MEM ?= 4096
DEBUG_FULL_ENV := FOS_TEST_ARGS_exitrace='-i 100 -p 200' FOS_TEST_ARGS_blkstress='-t 600'
DEBUG_CI_ENV := FOS_BIG_CAPS=131072 FOS_TEST_ARGS_exitrace='-n 5000 -i 20 -p 200' \
	FOS_TEST_ARGS_killany='-i 100' FUZZ_DURATION=120 FUZZ_LOOPBACK_DURATION=60 \
	FUZZ_LOWLIMIT_DURATION=120 FUZZ_LOWLIMIT_LOOPBACK_DURATION=60 \
	FOS_TEST_ARGS_limitrace='-t 2' FOS_TEST_ARGS_blkstress='-t 90'
check-debug: deps userspace debug-kernel
	@echo "=== selftests on the debug kernel$(if $(DEBUG_FULL), (full size), (sizes as in CI)) ==="
	@rc=0; \
	vm/run --kernel debug --nvme 256M --bar 4M --mem $(DEBUG_VM_MEM) \
		--timeout $${VM_TIMEOUT:-$(if $(DEBUG_FULL),5400,3000)} \
		--log build/vm-debug.log --save build/fuzz -- \
		env TEST_TIMEOUT=$${TEST_TIMEOUT:-1800} \
		$(if $(DEBUG_FULL),$(DEBUG_FULL_ENV),$(DEBUG_CI_ENV)) \
		tests/selftests/run_all.sh $(DEBUG_TESTS) || rc=1; \
	tests/multinode/suite.sh debug || rc=1; \
	exit $$rc

# CI's debug stage (.ci/run) when the time left allows: check-debug's
# selftests (sizes as in CI), without the multi-node suite.
check-debug-ci: deps userspace debug-kernel
	@echo "=== selftests on the debug kernel (CI's subset) ==="
	@vm/run --kernel debug --nvme 256M --bar 4M --mem $(DEBUG_VM_MEM) --timeout $${VM_TIMEOUT:-3000} \
		--log build/vm-debug.log --save build/fuzz -- \
		env $(DEBUG_CI_ENV) tests/selftests/run_all.sh

# When CI has less time left than check-debug-ci needs (.ci/run): a few
# selftests on the debug kernel, those of the newest code first (~8 min).
DEBUG_SHORT_TESTS ?= test_softirq.sh memmap grant steal contact limitrace blk blkstress caladan_blk caladan_fs \
	remote request caps
check-debug-short: deps userspace debug-kernel
	@echo "=== selftests on the debug kernel (CI's short subset: $(DEBUG_SHORT_TESTS)) ==="
	@vm/run --kernel debug --nvme 256M --bar 4M --mem $(DEBUG_VM_MEM) --timeout $${VM_TIMEOUT:-1200} \
		--log build/vm-debug.log --save build/fuzz -- \
		tests/selftests/run_all.sh $(DEBUG_SHORT_TESTS)

# The robustness figures (Documentation/testing.rst): on the debug kernel, DURATION seconds
# of KCOV-guided fuzzing (then 120 s with fabric_loopback), failnth,
# killany 200 times, exitrace (scaled as in CI) and remote (the copies
# through rxe); the summary lines at the end.
robustness: deps userspace debug-kernel
	@{ vm/run --kernel debug --mem $(DEBUG_VM_MEM) --timeout $$(( $(DURATION) + 3600 )) \
		--log build/vm-robustness.log --save build/fuzz -- \
		env FUZZ_DURATION=$(DURATION) FUZZ_LOOPBACK_DURATION=120 \
		TEST_TIMEOUT=$$(( $(DURATION) + 1800 )) \
		FOS_TEST_ARGS_exitrace='-n 5000 -i 20 -p 200' \
		tests/selftests/run_all.sh test_fuzz.sh failnth killany exitrace remote; \
		echo $$? > build/robustness.rc; } 2>&1 | tee build/robustness.out; \
	echo "=== figures"; \
	grep -E '^# (fosfuzz: seed .*programs|failnth:|killany:|death loop|fractos:)' build/robustness.out; \
	exit $$(cat build/robustness.rc)

# A longer fuzz run than make check's (tests/selftests/test_fuzz.sh).
DURATION ?= 600
fuzz: deps userspace
	@tests/fuzz/run --kernel $(or $(KVER),6.1) --duration $(DURATION) \
		$(if $(SEED),--seed $(SEED)) $(if $(LOOPBACK),--loopback)

# The one-guest demo, then the face-verification pipeline on three guests
# (tests/multinode/pipeline.sh): its checks and its costs per batch.
demo: deps userspace kmods
	vm/run --kernel $(firstword $(KVERS)) --nvme 256M --timeout 600 -- tools/demo.sh
	@echo "=== the face-verification pipeline on three guests (storage, GPU, application)"
	@vm/run --kernel $(firstword $(KVERS)) --nodes 3 --smp 1 --nvme 64M --timeout 600 \
		--log build/demo-pipeline.log -- tests/multinode/run.sh pipeline 2>&1 | \
		grep -aE '^\[n[0-9]\] (ok|not ok|# facever|# fractos:)'

w1:
	$(MAKE) -C $(KDIR) M=$(CURDIR) $(TESTMODS) W=1 modules

sparse:
	$(MAKE) -C $(KDIR) M=$(CURDIR) $(TESTMODS) C=2 modules

# checkpatch.pl ships in linux-source-6.1's tarball, not in the headers.
$(CHECKPATCH):
	@test -r /usr/src/linux-source-6.1.tar.xz || { echo "linux-source-6.1 missing: run vm/install-deps" >&2; exit 1; }
	mkdir -p build/checkpatch
	tar -xJf /usr/src/linux-source-6.1.tar.xz -C build/checkpatch --strip-components=1 \
		--wildcards '*/scripts/checkpatch.pl' '*/scripts/spelling.txt' '*/scripts/const_structs.checkpatch'
	touch $@

# Tracepoint headers are written in the TRACE_EVENT() idiom, whose layout
# --strict's parenthesis checks do not understand (the kernel's own
# include/trace/events/ trip them too): they get the default checks.
checkpatch: $(CHECKPATCH)
	$(CHECKPATCH) --strict --no-tree --terse --show-types \
		--ignore SPDX_LICENSE_TAG,FILE_PATH_CHANGES \
		-f $(filter-out %Kbuild %fos_trace.h %remote/trace.h,$(KSRC))
	$(CHECKPATCH) --no-tree --terse --show-types \
		--ignore SPDX_LICENSE_TAG,FILE_PATH_CHANGES -f kernel/fabric/fos_trace.h kernel/remote/trace.h

# kernel-doc, like checkpatch.pl, ships in linux-source-6.1's tarball.
$(KERNELDOC):
	@test -r /usr/src/linux-source-6.1.tar.xz || { echo "linux-source-6.1 missing: run vm/install-deps" >&2; exit 1; }
	mkdir -p build/kernel-doc
	tar -xJf /usr/src/linux-source-6.1.tar.xz -C build/kernel-doc --strip-components=1 \
		--wildcards '*/scripts/kernel-doc'
	touch $@

# Every kernel-doc comment of the module's sources (the files checkpatch
# reads) is well formed: 6.1's kernel-doc with -v, which adds the checks
# newer kernels group under -Wall (a Return: section, a short description,
# no text before the sections); any warning fails.  Then every
# ".. kernel-doc::" directive of Documentation/ names a file, and DOC
# sections and identifiers, that exist (tools/check-docs.py).
kernel-doc: $(KERNELDOC)
	@out=$$(perl $(KERNELDOC) -none -v $(filter %.c %.h,$(KSRC)) 2>&1 | grep -v ': info: '); \
	[ -z "$$out" ] || { echo "$$out" >&2; echo "kernel-doc: fix the comments above" >&2; exit 1; }
	@python3 tools/check-docs.py --kernel-doc $(KERNELDOC) Documentation/*.rst

# Documentation/ as HTML (build/htmldocs/index.html): Sphinx with the
# kernel-doc directive of Documentation/sphinx/kernel_doc.py; any warning,
# of Sphinx or of kernel-doc, fails.
htmldocs: $(KERNELDOC)
	@command -v sphinx-build >/dev/null || { echo "sphinx-build missing: run vm/install-deps" >&2; exit 1; }
	FOS_KERNELDOC=$(CURDIR)/$(KERNELDOC) sphinx-build -W --keep-going -E -q -b html \
		-d build/htmldocs/.doctrees Documentation build/htmldocs

static: w1 sparse checkpatch kernel-doc htmldocs man-check

# fractos(4) is generated from the uAPI header and the module parameters:
# the checked-in page must be what the generator writes now; fractctl(8)
# documents every command; one version everywhere (module, DKMS, package,
# library).
man-check:
	@python3 tools/man/gen-fractos4.py | cmp -s - tools/man/fractos.4 || \
		{ echo "tools/man/fractos.4 is stale: python3 tools/man/gen-fractos4.py > tools/man/fractos.4" >&2; exit 1; }
	@v=$$(sed -n 's/^#define FOS_VERSION "\(.*\)"/\1/p' kernel/fos.h); \
	for w in "dkms.conf:$$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)" \
		 "debian/changelog:$$(sed -n '1s/.*(\(.*\)).*/\1/p' debian/changelog)" \
		 "libcaladan:$$(sed -n 's/^#define CALADAN_VERSION "\(.*\)"/\1/p' lib/include/caladan/caladan.hpp)"; do \
		[ "$${w#*:}" = "$$v" ] || { echo "version $${w#*:} in $${w%%:*}, $$v in kernel/fos.h" >&2; exit 1; }; \
	done
	@for c in $$(tools/fractctl help 2>/dev/null | sed -n 's/^COMMAND := { \(.*\) | help }/\1/p' | tr -d '|'); do \
		grep -q "^\.SS \"*$$c" tools/man/fractctl.8 || \
			{ echo "tools/man/fractctl.8 does not document \"fractctl $$c\"" >&2; exit 1; }; \
	done

# ---- install ----------------------------------------------------------
# Debian 12's layout with PREFIX=/usr (the packages: udev rules and units
# in /lib); /usr/local otherwise, where udev and systemd read /etc.
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
SYSCONFDIR ?= /etc
ifeq ($(PREFIX),/usr)
SYSLIBDIR ?= /lib
else
SYSLIBDIR ?= $(SYSCONFDIR)
endif
UDEVRULESDIR ?= $(SYSLIBDIR)/udev/rules.d
SYSTEMDUNITDIR ?= $(SYSLIBDIR)/systemd/system
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
MANPAGES := tools/man/fractos.4 tools/man/fractctl.8 tools/man/fractos.conf.5 tools/man/fractos-membershipd.8 \
	tools/man/fractos-fs.1 tools/man/fractos-bench.1 tools/man/fractos-blkbench.1 \
	adaptors/fs/fractos-fsd.8 adaptors/gpu/fractos-gpud.8 lib/libcaladan.3

# The module for KDIR into /lib/modules/<release>/updates, then depmod
# (not into a DESTDIR: the package's postinst does that).  Secure Boot:
# MODULE_SIGN_KEY=key.pem MODULE_SIGN_CERT=cert.der (a Machine Owner Key
# enrolled with mokutil --import) signs the installed modules; without
# them they are left unsigned (kbuild would look for the distribution's
# own key, which is not on the host).
MODULE_SIGN_HASH ?= sha256
install-module: module
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_PATH=$(DESTDIR) INSTALL_MOD_DIR=updates \
		CONFIG_MODULE_SIG_ALL= modules_install
	@d=$(DESTDIR)/lib/modules/$(call krel,$(realpath $(KDIR)))/updates; \
	if [ -n "$(MODULE_SIGN_KEY)" ]; then \
		for m in $$d/kernel/fractos.ko $$d/adaptors/nvme/fractos_nvme.ko; do \
			$(KDIR)/scripts/sign-file $(MODULE_SIGN_HASH) $(MODULE_SIGN_KEY) \
				$(MODULE_SIGN_CERT) $$m || exit 1; echo "  SIGNED  $$m"; \
		done; \
	fi
	$(if $(DESTDIR),,depmod $(call krel,$(realpath $(KDIR))))

install: install-module install-user

# Everything but the module (the Debian packages: the module is fractos-dkms).
DOCDIR ?= $(PREFIX)/share/doc/fractos
install-user:
	$(MAKE) -C lib install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	$(MAKE) -C tools install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) BINDIR=$(BINDIR) SBINDIR=$(SBINDIR)
	$(MAKE) -C adaptors/fs install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) SBINDIR=$(SBINDIR)
	$(MAKE) -C adaptors/gpu install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) SBINDIR=$(SBINDIR)
	@set -e; for m in $(MANPAGES); do \
		s=$${m##*.}; install -d $(DESTDIR)$(MANDIR)/man$$s; \
		install -m 644 $$m $(DESTDIR)$(MANDIR)/man$$s/; \
	done
	install -d $(DESTDIR)$(UDEVRULESDIR) $(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(BASHCOMPDIR) \
		$(DESTDIR)$(DOCDIR)/examples
	install -m 644 tools/system/60-fractos.rules $(DESTDIR)$(UDEVRULESDIR)/
	@set -e; for u in fractos.service fractos-fsd@.service fractos-membershipd.service; do \
		sed 's|/usr/sbin/|$(SBINDIR)/|g' tools/system/$$u > $(DESTDIR)$(SYSTEMDUNITDIR)/$$u; \
		chmod 644 $(DESTDIR)$(SYSTEMDUNITDIR)/$$u; \
	done
	install -m 644 tools/system/fractctl.bash-completion $(DESTDIR)$(BASHCOMPDIR)/fractctl
	@# configuration examples: /etc is the admin's (fractos.service runs
	@# once /etc/fractos/fractos.conf exists)
	install -m 644 tools/system/fractos.conf tools/system/fractos.modprobe.conf \
		tools/system/fractos-membershipd.default \
		lib/examples/hello-service.cpp lib/examples/hello-client.cpp \
		$(DESTDIR)$(DOCDIR)/examples/

# The Debian packages (fractos-dkms, fractos-tools, libcaladan-dev) from a
# copy of the tracked files, into build/deb/; lintian must find no error.
deb:
	@rm -rf build/deb && mkdir -p build/deb/src
	@git ls-files -z --cached --others --exclude-standard | \
		xargs -0 sh -c 'for f; do [ -e "$$f" ] && printf "%s\0" "$$f"; done' sh | \
		tar --null -T - -c | tar -x -C build/deb/src
	cd build/deb/src && dpkg-buildpackage -us -uc -b > ../build.log 2>&1 || \
		{ tail -n 30 ../build.log; exit 1; }
	@rc=0; lintian --fail-on error build/deb/*.changes > build/deb/lintian.log 2>&1 || rc=$$?; \
	cat build/deb/lintian.log; ls build/deb/*.deb; \
	[ $$rc = 0 ] || { echo "make deb: lintian found errors" >&2; exit 1; }

uninstall:
	rm -f $(DESTDIR)/lib/modules/$(call krel,$(realpath $(KDIR)))/updates/kernel/fractos.ko \
		$(DESTDIR)/lib/modules/$(call krel,$(realpath $(KDIR)))/updates/adaptors/nvme/fractos_nvme.ko
	$(if $(DESTDIR),,-depmod $(call krel,$(realpath $(KDIR))))
	$(MAKE) -C lib uninstall PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	$(MAKE) -C tools uninstall PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) BINDIR=$(BINDIR) SBINDIR=$(SBINDIR)
	$(MAKE) -C adaptors/fs uninstall PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) SBINDIR=$(SBINDIR)
	rm -f $(foreach m,$(MANPAGES),$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(m)))/$(notdir $(m)))
	rm -f $(DESTDIR)$(UDEVRULESDIR)/60-fractos.rules $(DESTDIR)$(BASHCOMPDIR)/fractctl \
		$(DESTDIR)$(SYSTEMDUNITDIR)/fractos.service $(DESTDIR)$(SYSTEMDUNITDIR)/fractos-fsd@.service \
		$(DESTDIR)$(SYSTEMDUNITDIR)/fractos-membershipd.service
	rm -rf $(DESTDIR)$(DOCDIR)

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null
	$(MAKE) -C lib clean
	$(MAKE) -C lib/examples clean
	$(MAKE) -C tools clean
	-$(MAKE) -C tests/selftests clean
	-$(MAKE) -C tests/fuzz clean
	-$(MAKE) -C tests/multinode clean
	@# build/debug-kernel/ (a 20-minute build) stays: rm -rf it by hand.
	-find build -mindepth 1 -maxdepth 1 ! -name debug-kernel -exec rm -rf {} +
