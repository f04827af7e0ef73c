/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A tiny kselftest-style TAP harness for the fractos selftests.
 *
 *   int main(void)
 *   {
 *           tap_plan(3);
 *           tap_ok(x == 1, "x is one");
 *           tap_errno(ioctl(fd, CMD, &arg), EINVAL, "bad flags");
 *           tap_skip("needs root");
 *           return tap_finish();
 *   }
 *
 * Every check prints one "ok N - name" or "not ok N - name" line; failures
 * print the expected and the actual result as a "#" diagnostic.
 * tap_finish() prints a summary and returns the exit status (0 if every
 * check passed and the plan was met, 1 otherwise).  tap_bail() aborts the
 * whole program with "Bail out!".
 */
#ifndef FRACTOS_TAP_H
#define FRACTOS_TAP_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_planned = -1, tap_count, tap_failed, tap_skipped;

static inline void tap_plan(int n)
{
	tap_planned = n;
	printf("TAP version 13\n1..%d\n", n);
	fflush(stdout);
}

/* The plan comes last, when the number of checks depends on the run. */
static inline void tap_plan_late(void)
{
	tap_planned = -2;
	printf("TAP version 13\n");
	fflush(stdout);
}

static inline void tap_vresult(int ok, const char *fmt, va_list ap)
{
	tap_count++;
	if (!ok)
		tap_failed++;
	printf("%sok %d - ", ok ? "" : "not ", tap_count);
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
}

static inline int __attribute__((format(printf, 2, 3)))
tap_ok(int ok, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tap_vresult(ok, fmt, ap);
	va_end(ap);
	return ok;
}

static inline void __attribute__((format(printf, 1, 2)))
tap_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static inline void __attribute__((format(printf, 1, 2)))
tap_skip(const char *fmt, ...)
{
	va_list ap;

	tap_count++;
	tap_skipped++;
	printf("ok %d # SKIP ", tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static inline void __attribute__((format(printf, 1, 2), noreturn))
tap_bail(const char *fmt, ...)
{
	va_list ap;

	printf("Bail out! ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" (errno %d: %s)\n", errno, strerror(errno));
	fflush(stdout);
	exit(1);
}

/*
 * Check that a syscall-style expression (returns -1 and sets errno on
 * failure) fails with exactly @err, or succeeds when @err is 0.
 */
#define tap_errno(expr, err, ...) ({					\
	long __r;							\
	int __e, __ok;							\
	errno = 0;							\
	__r = (long)(expr);						\
	__e = __r < 0 ? errno : 0;					\
	__ok = (err) ? (__r == -1 && __e == (err)) : (__r >= 0);	\
	tap_ok(__ok, __VA_ARGS__);					\
	if (!__ok)							\
		tap_diag("  %s: expected %s, got ret %ld errno %d (%s)", \
			 #expr, (err) ? strerror(err) : "success",	\
			 __r, __e, __e ? strerror(__e) : "none");	\
	__ok;								\
})

/* Compare two integers, printing both on failure. */
#define tap_eq(a, b, ...) ({						\
	long long __a = (long long)(a), __b = (long long)(b);		\
	int __ok = __a == __b;						\
	tap_ok(__ok, __VA_ARGS__);					\
	if (!__ok)							\
		tap_diag("  %s == %lld, expected %s == %lld",		\
			 #a, __a, #b, __b);				\
	__ok;								\
})

/*
 * What a program killed once it reported must report: its failures so
 * far, and one more if the @left checks still to run (its report's own
 * included) do not complete its plan, which its tap_finish() would have
 * counted.
 */
static inline int tap_failed_final(int left)
{
	return tap_failed + (tap_planned >= 0 &&
			     tap_count + left != tap_planned);
}

static inline int tap_finish(void)
{
	if (tap_planned >= 0 && tap_planned != tap_count) {
		tap_diag("planned %d tests but ran %d", tap_planned, tap_count);
		tap_failed++;
	}
	if (tap_planned == -2)
		printf("1..%d\n", tap_count);
	printf("# Totals: pass:%d fail:%d skip:%d\n",
	       tap_count - tap_failed - tap_skipped, tap_failed, tap_skipped);
	fflush(stdout);
	return tap_failed ? 1 : 0;
}

#endif /* FRACTOS_TAP_H */
