// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fractos-gpud: linked into "make portable" builds only.  The static
 * libstdc++ of g++ 12 calls arc4random(), which glibc has since 2.36;
 * this one lets the binaries run where glibc is older (a GPU machine
 * on another distribution).
 */
#include <stdint.h>
#include <sys/random.h>

#ifdef __cplusplus
extern "C" uint32_t arc4random(void);	/* g++ compiles this file as C++ */
#endif

uint32_t arc4random(void)
{
	uint32_t v = 0;

	while (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v))
		;
	return v;
}
