/*
 * test.h -- the in-house test harness (one header, no dependencies).
 *
 *     TEST(free_twice_is_rejected) { ... CHECK(x); CHECK_EQ_U64(a, b); ... }
 *     int main(void) { RUN(free_twice_is_rejected); return test_summary(); }
 *
 * CHECK records a failure and goes on; REQUIRE records it and leaves the
 * test (use it before dereferencing what it checks). A test that is defined
 * but never RUN is an unused static function: -Wall names it.
 */
#ifndef OPOOL_TEST_H
#define OPOOL_TEST_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>

/* TEST_ASAN: this test is built with AddressSanitizer (its interface is in). */
#if defined(__SANITIZE_ADDRESS__) || defined(OPOOL_TEST_ASAN)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#ifdef TEST_ASAN
#include <sanitizer/asan_interface.h>
#endif

static int test__checks_failed, test__tests_failed, test__tests_run;
static const char *test__current = "(none)";

static inline void test__fail_at(const char *file, int line, const char *what, uint64_t a,
                                 uint64_t b, int with_values) {
    test__checks_failed++;
    fprintf(stderr, "%s:%d: %s: check failed: %s", file, line, test__current, what);
    if (with_values)
        fprintf(stderr, "  (0x%" PRIx64 " = %" PRIu64 " vs 0x%" PRIx64 " = %" PRIu64 ")", a, a, b,
                b);
    fputc('\n', stderr);
}

#define TEST(name) static void test_##name(void)
#define CHECK(cond) ((cond) ? (void)0 : test__fail_at(__FILE__, __LINE__, #cond, 0, 0, 0))
#define REQUIRE(cond)                                                                              \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            test__fail_at(__FILE__, __LINE__, #cond, 0, 0, 0);                                     \
            return;                                                                                \
        }                                                                                          \
    } while (0)
#define CHECK_EQ_U64(a, b)                                                                         \
    do {                                                                                           \
        uint64_t test__a = (uint64_t)(a), test__b = (uint64_t)(b);                                 \
        if (test__a != test__b)                                                                    \
            test__fail_at(__FILE__, __LINE__, #a " == " #b, test__a, test__b, 1);                  \
    } while (0)
#define CHECK_EQ_PTR(a, b) CHECK_EQ_U64((uintptr_t)(const void *)(a), (uintptr_t)(const void *)(b))

static inline void test__run_one(const char *name, void (*fn)(void)) {
    int before = test__checks_failed;
    test__current = name;
    fn();
    test__tests_run++;
    if (test__checks_failed != before) {
        test__tests_failed++;
        fprintf(stderr, "FAIL %s\n", name);
    }
    test__current = "(none)";
}
#define RUN(name) test__run_one(#name, test_##name)

/* Prints the summary line; the value to return from main. */
static inline int test_summary(void) {
    printf("%d tests, %d failed (%d failed checks)\n", test__tests_run, test__tests_failed,
           test__checks_failed);
    return test__tests_failed != 0;
}

#endif /* OPOOL_TEST_H */
