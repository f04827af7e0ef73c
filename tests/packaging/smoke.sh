#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# tests/packaging/smoke.sh ROOT EXAMPLES: in a guest booted with the
# DKMS-built module (tests/packaging/run.sh), the packages' binaries from
# ROOT only: fractctl status sees the module that DKMS built (its
# srcversion), fractctl config checks the shipped example, the starter
# example built against libcaladan-dev (EXAMPLES) serves and answers, the
# man pages render.  Prints TAP.
root=$1 ex=$2
n=0
failed=0
ok() { st=$1; shift; n=$((n + 1))
	if [ "$st" = 0 ]; then echo "ok $n - $*"; else echo "not ok $n - $*"; failed=$((failed + 1)); fi; }
fc=$root/usr/sbin/fractctl

out=$("$fc" status 2>&1)
echo "$out" | grep -q "^version *0.1.0"; ok $? "the package's fractctl: module loaded, version 0.1.0"
[ "$(cat /sys/module/fractos/srcversion)" = "$(modinfo -F srcversion "$FRACTOS_KO")" ] &&
	case $FRACTOS_KO in */updates/dkms/fractos.ko*) true ;; *) false ;; esac
ok $? "the module loaded is the one DKMS built ($FRACTOS_KO)"
"$fc" -j stats | python3 -m json.tool > /dev/null; ok $? "fractctl -j stats"
"$fc" config check "$root/usr/share/doc/fractos-tools/examples/fractos.conf"
ok $? "fractctl config check of the shipped example"
"$root/usr/sbin/fractos-fsd" --help > /dev/null 2>&1; ok $? "fractos-fsd --help"
"$root/usr/sbin/fractos-gpud" --help > /dev/null 2>&1; ok $? "fractos-gpud --help"

"$ex/hello-service" pkg-hello > /tmp/svc.out 2>&1 &
svc=$!
i=0; until grep -q serving /tmp/svc.out || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done
out=$("$ex/hello-client" "from the package" pkg-hello 2>&1)
[ "$out" = "FROM THE PACKAGE" ]; ok $? "the example built against libcaladan-dev answers ($out)"
"$ex/hello-client" --stop pkg-hello; wait $svc; ok $? "and stops"

for m in man4/fractos.4 man8/fractctl.8 man5/fractos.conf.5 man3/libcaladan.3 \
	man8/fractos-gpud.8; do
	MANWIDTH=80 man -l "$root/usr/share/man/$m.gz" 2>/dev/null | grep -q "^NAME"
	ok $? "man $m renders"
done
grep -q 'GROUP="fractos"' "$root/lib/udev/rules.d/60-fractos.rules"; ok $? "the udev rule"
echo "1..$n"
[ "$failed" = 0 ]
