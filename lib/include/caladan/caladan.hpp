// SPDX-License-Identifier: LGPL-2.1-or-later
/**
 * @file caladan.hpp
 * libcaladan: a thin C++20 layer over the /dev/fractos ioctl interface.
 *
 * Design (in the spirit of liburing):
 *  - One function per kernel operation, named after it; every function that
 *    talks to the kernel makes exactly the one ioctl its name says (plus, for
 *    space::open, the open(2)).  Nothing is cached, retried or batched.
 *  - Errors are values: result<T> holds either a T or a std::error_code in
 *    std::system_category() carrying the errno the kernel returned.  The
 *    library never throws, except result<T>::value() on an error result
 *    and space::from_fd() when it cannot allocate (std::bad_alloc).
 *  - Every kernel resource has an owner: unique_fd closes its fd, a space
 *    and what is made on it share its /dev/fractos fd, cap closes its cid
 *    (FRACTOS_IOC_CAP_CLOSE).
 *
 * Lifetime rules:
 *  - A cap shares the ownership of its space's fd (space_ref) with the
 *    space, and so do a message (it owns caps), a request_builder, a lease
 *    and a ring (ring.hpp): the file closes, dropping the space's caps and
 *    revoking what it created, when the last of them goes.  So a cap that
 *    outlives its space object still closes its own cid, never one of
 *    another file that took the fd's number.
 *  - A Memory object's buffer must stay mapped while the object is in use
 *    (the kernel pins the pages; unmapping just stops aliasing them).
 *  - Caps are never shared between spaces: passing a cap of another space
 *    where a space is given fails with EXDEV before reaching the kernel.
 *
 * The API at a glance:
 *
 *     space sp = space::open().value();             // one /dev/fractos open
 *     cap mem = memory_create(sp, buf, len, perm::all).value();
 *     cap ro  = memory_diminish(mem, 0, 64, perm::write).value();
 *     cap kid = ro.create_revtree().value();         // individually revocable
 *     unique_fd fd = kid.export_fd().value();        // send_fd()/recv_fd()
 *     cap imp = import_fd(sp, fd.get()).value();
 *     memory_copy(sp, src, dst, {.len = 64});        // third-party copy
 *     kid.revoke();                                  // EKEYREVOKED for all
 *
 *     cap req = sp.request().set_tag(1).create().value();    // provider side
 *     sp.request(req).set_imm(x).set_cap(mem).invoke();      // client side
 *     cap k = sp.request(req).set_cap(cont).derive().value(); // continuation
 *     message m = sp.receive().value();     // also receive(timeout), try_receive()
 *     monitor_receive(mem, cookie);         // a message when mem is revoked
 *     name_publish(req, "svc"); name_lookup(sp, "svc");
 *
 *     // Bifröst: lend mem for one call, revoked when the reply arrives
 *     message r = sp.request(req).lease(mem).call_with_lease(1s).value();
 *
 *     // io_uring: see caladan/ring.hpp (ring::prep_*, submit, reap)
 *
 * Header-only parts: result<T>, perm, the value structs.  The rest lives in
 * libcaladan.a / libcaladan.so (ring.hpp needs -luring).
 */
#ifndef CALADAN_CALADAN_HPP
#define CALADAN_CALADAN_HPP

/*
 * The API by feature; include this header, not its parts: error.hpp
 * (result<T>), fd.hpp, types.hpp, space.hpp (spaces, caps, Memory),
 * request.hpp (Requests, messages, monitors, the builder, continuations),
 * name.hpp, lease.hpp.  ring.hpp (io_uring), blk.hpp, fs.hpp and sysfs.hpp
 * are included on their own.
 */
#include <caladan/error.hpp>
#include <caladan/fd.hpp>
#include <caladan/types.hpp>
#include <caladan/space.hpp>
#include <caladan/request.hpp>
#include <caladan/name.hpp>
#include <caladan/lease.hpp>

#define CALADAN_VERSION_MAJOR 0
#define CALADAN_VERSION_MINOR 1
#define CALADAN_VERSION_PATCH 0
#define CALADAN_VERSION "0.1.0"

/* The library is built with -fvisibility=hidden: what is declared here
 * is its API, exported (libcaladan.map, libcaladan.symbols). */
#pragma GCC visibility push(default)

namespace caladan {

/// The library's version string at run time (CALADAN_VERSION at build time).
const char *version() noexcept;

} // namespace caladan

#pragma GCC visibility pop

#endif // CALADAN_CALADAN_HPP
