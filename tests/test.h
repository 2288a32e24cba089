/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ELEMENTS(a) (sizeof(a) / sizeof((a)[0]))

static unsigned test_failures;
static const char *test_case = "main"; /* the case running: every failure names it */

/* A case within a longer scenario: the failures from here on name it. */
#define CASE(name) (test_case = (name))

/* Run one case: its name, then ok or FAIL. */
#define RUN(fn)                                                                              \
        do {                                                                                 \
                unsigned _before = test_failures;                                            \
                test_case = #fn;                                                             \
                fn();                                                                        \
                printf("%s %s\n", test_failures == _before ? "ok  " : "FAIL", #fn);          \
                test_case = "main";                                                          \
        } while (0)

#define CHECK(cond)                                                                      \
        do {                                                                             \
                if (!(cond)) {                                                           \
                        fprintf(stderr, "%s: %s:%d: CHECK failed: %s\n", test_case, __FILE__, __LINE__, #cond); \
                        test_failures++;                                                 \
                }                                                                        \
        } while (0)

#define CHECK_EQ(a, b)                                                                                  \
        do {                                                                                            \
                uint64_t _a = (uint64_t) (a), _b = (uint64_t) (b);                                      \
                if (_a != _b) {                                                                         \
                        fprintf(stderr, "%s: %s:%d: %s == %s failed: %" PRIu64 " != %" PRIu64 "\n", test_case, \
                                __FILE__, __LINE__, #a, #b, _a, _b);                                    \
                        test_failures++;                                                                \
                }                                                                                       \
        } while (0)

#define CHECK_STR(a, b)                                                                                       \
        do {                                                                                                  \
                const char *_a = (a), *_b = (b);                                                              \
                if (!_a || !_b || strcmp(_a, _b) != 0) {                                                      \
                        fprintf(stderr, "%s: %s:%d: %s == %s failed:\n  got:  %s\n  want: %s\n", test_case, __FILE__, \
                                __LINE__, #a, #b, _a ? _a : "(null)", _b ? _b : "(null)");                    \
                        test_failures++;                                                                      \
                }                                                                                             \
        } while (0)

#define CHECK_CONTAINS(hay, needle)                                                                          \
        do {                                                                                                 \
                const char *_h = (hay), *_n = (needle);                                                      \
                if (!_h || !strstr(_h, _n)) {                                                                \
                        fprintf(stderr, "%s: %s:%d: '%s' does not contain '%s'\n", test_case, __FILE__, __LINE__,   \
                                _h ? _h : "(null)", _n);                                                     \
                        test_failures++;                                                                     \
                }                                                                                            \
        } while (0)

static inline int test_result(const char *name) {
        if (test_failures) {
                fprintf(stderr, "%s: %u checks failed\n", name, test_failures);
                return 1;
        }
        printf("%s: all checks passed\n", name);
        return 0;
}

static inline const char *fixture_dir(void) {
        static char path[4096];
        const char *src = getenv("top_srcdir");
        snprintf(path, sizeof(path), "%s/tests/fixtures/tracefs", src ? src : ".");
        return path;
}
