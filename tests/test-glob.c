/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The glob matcher the BPF program runs, run here step by step exactly as there: kernel semantics on fixed
 * cases, and agreement with fnmatch(3) on many generated well-formed patterns. */
#include "glob_step.h"

#include <fnmatch.h>
#include <stdbool.h>
#include <stdlib.h>

#include "test.h"
#include "util.h"

static int run(const char *pat, const char *str) {
        return glob_match(pat, str);
}

static const struct {
        const char *pat, *str;
        int match;
} cases[] = {
        { "fio", "fio", 1 },           { "fio", "fio2", 0 },          { "fio", "fi", 0 },
        { "fio*", "fio", 1 },          { "fio*", "fio-worker", 1 },   { "*fio", "libfio", 1 },
        { "*fio*", "a-fio-b", 1 },     { "*", "", 1 },                { "", "", 1 },
        { "", "x", 0 },                { "?", "", 0 },                { "??", "ab", 1 },
        { "a*b*c", "aXXbYYc", 1 },     { "a*b*c", "aXXbYY", 0 },      { "*a*a*a*a*a*b", "aaaaaaaaaaaaaab", 1 },
        { "*a*a*a*a*a*b", "aaaaaaaaaaaaaaa", 0 },                     { "postgres: *", "postgres: walwr", 1 },
        { "[abc]x", "bx", 1 },         { "[abc]x", "dx", 0 },         { "[a-c]x", "cx", 1 },
        { "[!a-c]x", "dx", 1 },        { "[!a-c]x", "ax", 0 },        { "[]a]", "]", 1 },
        { "[]a]", "a", 1 },            { "[a-]", "-", 1 },            { "[", "[", 1 },
        { "[ab", "[ab", 1 },           { "[ab", "a", 0 },             { "x[0-9][0-9]", "x42", 1 },
        { "x[0-9][0-9]", "x4a", 0 },   { "*[0-9]", "worker7", 1 },    { "kworker/*", "kworker/0:1", 1 },
};

TEST(kernel_semantics) {
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                int got = run(cases[i].pat, cases[i].str);
                if (got != cases[i].match) {
                        fprintf(stderr, "glob \"%s\" on \"%s\": %d, expected %d\n", cases[i].pat, cases[i].str, got,
                                cases[i].match);
                        CHECK(false);
                }
        }
}

/* Generated: strings over a small alphabet, patterns built of literals, ?, *, and closed classes. */
TEST(against_fnmatch) {
        static const char alphabet[] = "abc-";
        srand(7);
        unsigned matched = 0, compared = 0;
        for (int n = 0; n < 200000; n++) {
                char str[16], pat[64];
                size_t sl = (size_t) (rand() % 15);
                for (size_t i = 0; i < sl; i++)
                        str[i] = alphabet[rand() % 4];
                str[sl] = 0;
                size_t pl = 0;
                int parts = rand() % 7;
                for (int k = 0; k < parts && pl < 50; k++) {
                        switch (rand() % 5) {
                        case 0:
                                pat[pl++] = '*';
                                break;
                        case 1:
                                pat[pl++] = '?';
                                break;
                        case 2:
                                pat[pl++] = '[';
                                if (rand() % 3 == 0)
                                        pat[pl++] = '!';
                                pat[pl++] = "abc"[rand() % 3];
                                if (rand() % 2) {
                                        pat[pl++] = '-';
                                        pat[pl++] = "abc"[rand() % 3];
                                }
                                pat[pl++] = ']';
                                break;
                        default:
                                pat[pl++] = alphabet[rand() % 4];
                        }
                }
                pat[pl] = 0;
                int want = fnmatch(pat, str, 0) == 0, got = run(pat, str);
                compared++;
                matched += want;
                if (got != want) {
                        fprintf(stderr, "glob \"%s\" on \"%s\": %d, fnmatch says %d\n", pat, str, got, want);
                        CHECK(false);
                        break;
                }
        }
        /* a comparison worth its count: both answers, many times */
        CHECK(matched > compared / 20 && compared - matched > compared / 20);
}

TEST_MAIN("test-glob")
