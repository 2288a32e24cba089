/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* Glob matching of a command name with the kernel's semantics (lib/glob.c, what the tracepoint filter's `~`
 * uses): `*`, `?`, `[abc]`, `[a-z]`, `[!abc]`.  Written as one step of the match at a time, so that the BPF
 * program can run it under bpf_loop() and the unit tests can run the very same code in user space. */

#include "capture.h"

#ifndef GLOB_INLINE
#define GLOB_INLINE static inline
#endif

#define GLOB_COMM_SIZE 16
/* Every step consumes a pattern character or backtracks one string position: (16 + 1) x (64 + 1) bound it. */
#define GLOB_MAX_STEPS 1200

struct glob_state {
        char pat[CAPTURE_GLOB_SIZE]; /* NUL-terminated */
        char str[GLOB_COMM_SIZE];    /* NUL-terminated */
        capture_u32 pi, si, back_pi, back_si;
        int has_back;
        int result; /* -1 while undecided, 0 no match, 1 match */
        /* inside a [...] class: one span per step */
        int in_class, class_first, class_inverted, class_match;
        capture_u32 class_k;  /* the span being looked at */
        unsigned char class_c; /* the string character being classified */
};

#define GLOB_PAT(g, i) ((unsigned char) (g)->pat[(i) & (CAPTURE_GLOB_SIZE - 1)])
#define GLOB_STR(g, i) ((unsigned char) (g)->str[(i) & (GLOB_COMM_SIZE - 1)])

GLOB_INLINE void glob_start(struct glob_state *g) {
        g->pi = g->si = g->back_pi = g->back_si = 0;
        g->has_back = g->in_class = 0;
        g->result = -1;
}

GLOB_INLINE int glob_decide(struct glob_state *g, int result) {
        g->result = result;
        return 1;
}

/* Resume after the last `*`, one string character further. */
GLOB_INLINE int glob_backtrack(struct glob_state *g, unsigned char c) {
        if (c == 0 || !g->has_back)
                return glob_decide(g, 0);
        g->pi = g->back_pi;
        g->si = ++g->back_si;
        return 0;
}

/* A '[' that never closes is a literal '['; pi is already past it. */
GLOB_INLINE int glob_class_literal(struct glob_state *g) {
        g->in_class = 0;
        return g->class_c == '[' ? 0 : glob_backtrack(g, g->class_c);
}

/* One span of a class: `a` or `a-b`; the first may be ']' itself. */
GLOB_INLINE int glob_class_step(struct glob_state *g) {
        capture_u32 k = g->class_k;
        unsigned char a = GLOB_PAT(g, k), b = a;
        if (a == ']' && !g->class_first) {
                g->in_class = 0;
                if (g->class_match == g->class_inverted)
                        return glob_backtrack(g, g->class_c);
                g->pi = k + 1;
                return 0;
        }
        g->class_first = 0;
        if (a == 0)
                return glob_class_literal(g);
        if (GLOB_PAT(g, k + 1) == '-' && GLOB_PAT(g, k + 2) != ']') {
                b = GLOB_PAT(g, k + 2);
                if (b == 0)
                        return glob_class_literal(g);
                k += 2;
        }
        if (a <= g->class_c && g->class_c <= b)
                g->class_match = 1;
        g->class_k = k + 1;
        return 0;
}

/* One step; 1 once g->result is decided. */
GLOB_INLINE int glob_step(struct glob_state *g) {
        if (g->in_class)
                return glob_class_step(g);

        unsigned char c = GLOB_STR(g, g->si);
        unsigned char d = GLOB_PAT(g, g->pi);
        g->si++;
        g->pi++;

        if (d == '?')
                return c == 0 ? glob_decide(g, 0) : 0;
        if (d == '*') {
                if (GLOB_PAT(g, g->pi) == 0)
                        return glob_decide(g, 1);
                g->has_back = 1;
                g->back_pi = g->pi;
                g->back_si = --g->si;
                return 0;
        }
        if (d == '[') {
                if (c == 0)
                        return glob_decide(g, 0);
                g->in_class = 1;
                g->class_first = 1;
                g->class_match = 0;
                g->class_c = c;
                g->class_inverted = GLOB_PAT(g, g->pi) == '!';
                g->class_k = g->pi + (capture_u32) g->class_inverted;
                return 0;
        }
        if (c == d)
                return d == 0 ? glob_decide(g, 1) : 0;
        return glob_backtrack(g, c);
}

#ifndef __bpf__
#include <stdio.h>

/* The whole match in user space, step by step as the program runs it: 1, 0, or -1 when it is not decided
 * within the steps the program has. */
static inline int glob_match(const char *pat, const char *str) {
        struct glob_state g = {};
        snprintf(g.pat, sizeof(g.pat), "%s", pat);
        snprintf(g.str, sizeof(g.str), "%s", str);
        glob_start(&g);
        for (unsigned i = 0; i < GLOB_MAX_STEPS; i++)
                if (glob_step(&g))
                        return g.result;
        return -1;
}
#endif
