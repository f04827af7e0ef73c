#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/packaging/run.sh: the Debian packages and DKMS, as a user gets them.
#
#   1. make deb: fractos-dkms, fractos-tools, libcaladan-dev, lintian-clean;
#   2. the packages unpacked into a fresh root (build/pkgroot);
#   3. DKMS, in trees of its own (build/dkms/: nothing of the host's DKMS
#      state, /lib/modules or boot files is touched), adds the sources the
#      fractos-dkms package ships, builds and installs them for Debian's
#      6.1 and 6.12 kernels (vm/guest-kernels' headers);
#   4. the starter example built against libcaladan-dev's headers, library
#      and pkg-config file only;
#   5. a 6.1 and a 6.12 guest boot with their DKMS-built module and run
#      smoke.sh with the packages' binaries only.
# Prints TAP with a "# fractos: N passed, N failed" line.
set -u
cd "$(dirname "$0")/../.." || exit 1
repo=$PWD
n=0
failed=0
ok() {	# ok STATUS NAME...
	local st=$1; shift
	n=$((n + 1))
	if [ "$st" = 0 ]; then echo "ok $n - $*"; else echo "not ok $n - $*"; failed=$((failed + 1)); fi
}
finish() {
	echo "1..$n"
	echo "# fractos: $((n - failed)) passed, $failed failed"
	[ "$failed" = 0 ]
	exit
}
echo "TAP version 13"

make -s deb > build/packaging-deb.log 2>&1
ok $? "make deb: the three packages, lintian without errors" || { tail -n 20 build/packaging-deb.log; finish; }
for p in fractos-dkms_0.1.0_all fractos-tools_0.1.0_amd64 libcaladan-dev_0.1.0_amd64; do
	[ -s "build/deb/$p.deb" ]; ok $? "build/deb/$p.deb"
done

root=$repo/build/pkgroot
rm -rf "$root" && mkdir -p "$root"
for d in build/deb/fractos-dkms_*.deb build/deb/fractos-tools_*.deb build/deb/libcaladan-dev_*.deb; do
	dpkg-deb -x "$d" "$root" || ok 1 "unpack $d"
done
[ -x "$root/usr/sbin/fractctl" ] && [ -f "$root/usr/src/fractos-0.1.0/dkms.conf" ] &&
	[ -f "$root/usr/include/caladan/caladan.hpp" ]
ok $? "the packages unpack into a fresh root"

# DKMS in its own trees
dk=$repo/build/dkms
rm -rf "$dk" && mkdir -p "$dk/tree" "$dk/inst"
dkms_() { dkms --dkmstree "$dk/tree" --sourcetree "$root/usr/src" --installtree "$dk/inst" "$@"; }
dkms_ add -m fractos -v 0.1.0 > "$dk/add.log" 2>&1
ok $? "dkms add: the sources of fractos-dkms" || cat "$dk/add.log"
for s in 6.1 6.12; do
	kroot=$(vm/guest-kernels root "$s") || { ok 1 "no $s kernel (vm/install-deps)"; continue; }
	krel=$(basename "$kroot")
	kdir=$kroot/usr/src/linux-headers-$krel
	dkms_ build -m fractos -v 0.1.0 -k "$krel" --kernelsourcedir "$kdir" > "$dk/build-$s.log" 2>&1
	ok $? "dkms build for $krel" || tail -n 20 "$dk/build-$s.log" "$dk/tree/fractos/0.1.0/build/make.log" 2>/dev/null
	mkdir -p "$dk/inst/$krel"
	dkms_ install -m fractos -v 0.1.0 -k "$krel" --kernelsourcedir "$kdir" --no-depmod \
		> "$dk/install-$s.log" 2>&1
	ok $? "dkms install for $krel" || tail -n 20 "$dk/install-$s.log"
	# as the kernel's own modules are: 6.12's are xz-compressed
	d=$dk/inst/$krel/updates/dkms
	ko=$(ls "$d"/fractos.ko* 2>/dev/null | head -n 1)
	[ -n "$ko" ] && [ "$(modinfo -F vermagic "$ko" 2>/dev/null | cut -d' ' -f1)" = "$krel" ] &&
		ls "$d"/fractos_nvme.ko* > /dev/null 2>&1
	ok $? "$krel: fractos.ko and fractos_nvme.ko installed (${ko##*/}), vermagic $krel"
done
dkms_ status 2>/dev/null | grep -c ": installed" | grep -qx 2
ok $? "dkms status: installed for both kernels"

# the starter example against libcaladan-dev only
ex=$repo/build/pkg-example
mkdir -p "$ex"
pc="PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$root/usr/lib/x86_64-linux-gnu/pkgconfig:/usr/lib/x86_64-linux-gnu/pkgconfig:/usr/share/pkgconfig"
flags=$(env $pc pkg-config --cflags --libs caladan 2>&1)
ok $? "pkg-config caladan from libcaladan-dev: $flags"
for p in hello-service hello-client; do
	# shellcheck disable=SC2086
	g++ -std=c++20 -O2 -o "$ex/$p" "$root/usr/share/doc/libcaladan-dev/examples/$p.cpp" $flags \
		> "$ex/$p.log" 2>&1
	ok $? "$p.cpp (libcaladan-dev's example) builds with the package's headers and library" ||
		cat "$ex/$p.log"
done

# a guest of each kernel with its DKMS-built module and the packages' binaries
for s in 6.1 6.12; do
	krel=$(basename "$(vm/guest-kernels root "$s")")
	ko=$(ls "$dk/inst/$krel/updates/dkms"/fractos.ko* 2>/dev/null | head -n 1)
	vm/run --kernel "$s" --module "${ko:-missing}" --timeout 300 \
		--log "build/vm-packaging-$s.log" -- tests/packaging/smoke.sh "$root" "$ex" \
		> "$dk/smoke-$s.out" 2>&1
	rc=$?
	sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g; s/\x1bc//g' "$dk/smoke-$s.out" | grep -E '^(not )?ok ' |
		sed 's/^/  /'
	ok $rc "$krel: guest smoke test with the DKMS-built module and the packages' binaries (exit $rc)" ||
		tail -n 30 "$dk/smoke-$s.out"
done
finish
