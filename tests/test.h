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

/* The cases of a test program, registered where they are defined (as systemd's TEST()):
 *     TEST(name) { ... }
 * and run in the order they appear by TEST_MAIN("test-x"), or TEST_MAIN_WITH("test-x", setup, teardown) where
 * the cases need something made first (setup returns 0, or an exit status: 77 to skip). */
struct test_entry {
        const char *name;
        void (*fn)(void);
        unsigned line;
};
#define TESTS_MAX 64
static struct test_entry tests_registered[TESTS_MAX];
static unsigned tests_n;

static inline void test_register(const char *name, void (*fn)(void), unsigned line) {
        if (tests_n < TESTS_MAX)
                tests_registered[tests_n++] = (struct test_entry) { name, fn, line };
        else
                abort(); /* raise TESTS_MAX */
}

#define TEST(name)                                                                              \
        static void test_##name(void);                                                          \
        __attribute__((constructor)) static void test_register_##name(void) {                   \
                test_register(#name, test_##name, __LINE__);                                   \
        }                                                                                       \
        static void test_##name(void)

static inline int test_by_line(const void *a, const void *b) {
        const struct test_entry *x = a, *y = b;
        return (x->line > y->line) - (x->line < y->line);
}

static inline int test_result(const char *name);

static inline int tests_run(const char *program, int (*setup)(void), void (*teardown)(void)) {
        int r = setup ? setup() : 0;
        if (r != 0)
                return r;
        qsort(tests_registered, tests_n, sizeof(tests_registered[0]), test_by_line);
        for (unsigned i = 0; i < tests_n; i++) {
                unsigned before = test_failures;
                test_case = tests_registered[i].name;
                tests_registered[i].fn();
                printf("%s %s\n", test_failures == before ? "ok  " : "FAIL", tests_registered[i].name);
                test_case = "main";
        }
        if (teardown)
                teardown();
        return test_result(program);
}

#define TEST_MAIN(program)                                  \
        int main(void) {                                    \
                return tests_run(program, NULL, NULL);      \
        }
#define TEST_MAIN_WITH(program, setup, teardown)            \
        int main(void) {                                    \
                return tests_run(program, setup, teardown); \
        }

/* A scratch directory of the program's own, test_dir: made before its cases, removed whole after. */
static char test_dir[32];

static inline int test_dir_make(void) {
        snprintf(test_dir, sizeof(test_dir), "/tmp/aiotraced-test.XXXXXX");
        return mkdtemp(test_dir) ? 0 : 99;
}

static inline void test_dir_remove(void) {
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", test_dir);
        if (system(cmd) != 0)
                test_failures++;
}

#define TEST_MAIN_IN_DIR(program) TEST_MAIN_WITH(program, test_dir_make, test_dir_remove)

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
