#!/bin/sh
# Runs a 32-bit x86 program of build/i686 (cmake/toolchains/i686-linux-gnu.cmake): natively
# where the kernel runs 32-bit programs (an x86 kernel, or x86-64 with its IA32 emulation:
# how 32-bit programs run on a 64-bit PC), else under qemu-i386.
#
# Why not always qemu: Debian 12's qemu-i386 (7.2) gives a thread the thread-local storage
# of another after a signal stopped it in a handler (tests/test_mt_stress.c,
# preempted_anywhere_does_not_stop_others: in the stopped thread's pthread key destructor,
# pthread_self() and pthread_getspecific() were another running thread's). opool_mt
# relies on a thread's own thread-local stripe; the same static program passes natively.
case "$(uname -m)" in
x86_64 | i?86)
    "$@"
    rc=$?
    # 126: the kernel cannot execute it (no IA32 emulation): qemu below
    [ "$rc" -ne 126 ] && exit "$rc"
    ;;
esac
exec qemu-i386 -L /usr/i686-linux-gnu "$@"
