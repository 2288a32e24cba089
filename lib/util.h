/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _likely_(x) __builtin_expect(!!(x), 1)
#define _always_inline_ inline __attribute__((always_inline))
/* a name looked up in a constant table: a call whose result goes unused can be dropped */
#define _const_ __attribute__((const))
#define _pure_ __attribute__((pure))
#define _unlikely_(x) __builtin_expect(!!(x), 0)
#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* A device number as the kernel encodes it inside (major << 20 | minor), as BPF programs read it. */
static inline uint32_t kernel_dev(dev_t d) {
        return (uint32_t) (major(d) << 20 | minor(d));
}

/* A short name from one of aiotraced's tables, with its length: formatters copy it without a strlen.  WORD()
 * refuses to compile a name too long to keep its NUL. */
#define WORD_SIZE 24
struct word {
        char s[WORD_SIZE - 1];
        uint8_t len;
};
#define WORD(str) { .s = "" str, .len = sizeof(str) - 1 + 0 * sizeof(char[sizeof(str) <= WORD_SIZE - 1 ? 1 : -1]) }

/* Room for one more element of `size` after the n in *array, whose room is *cap elements: doubled when full,
 * from `first`.  0, or -ENOMEM with the array and *cap as they were. */
static inline int array_room(void **array, size_t *cap, size_t n, size_t size, size_t first) {
        if (n < *cap)
                return 0;
        size_t want = *cap ? 2 * *cap : first;
        void *p = realloc(*array, want * size);
        if (!p)
                return -ENOMEM;
        *array = p;
        *cap = want;
        return 0;
}
#define ARRAY_ROOM(array, cap, n, first) array_room((void **) &(array), &(cap), (n), sizeof(*(array)), (first))

static inline void freep(void *p) {
        free(*(void **) p);
}

static inline void fclosep(FILE **f) {
        if (*f)
                fclose(*f);
}

static inline void closep(int *fd) {
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
        }
}

/* CLOCK_MONOTONIC in ns: the clock of the rings' samples. */
static inline uint64_t now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

/* Takes ownership: returns the value and leaves NULL/-1 behind, for handing a cleanup'd local to a ret_ pointer. */
#define TAKE_PTR(p) ({ __typeof__(p) _p = (p); (p) = NULL; _p; })
#define TAKE_FD(fd) ({ int _fd = (fd); (fd) = -1; _fd; })

/* Unaligned little-endian-agnostic loads: raw sample payloads sit 4 bytes past an 8-byte boundary. */
static inline uint64_t load_u64(const void *p) {
        uint64_t v;
        memcpy(&v, p, sizeof(v));
        return v;
}

static inline uint32_t load_u32(const void *p) {
        uint32_t v;
        memcpy(&v, p, sizeof(v));
        return v;
}

static inline uint16_t load_u16(const void *p) {
        uint16_t v;
        memcpy(&v, p, sizeof(v));
        return v;
}

/* Field of `size` bytes (1, 2, 4 or 8) at `offset`, zero-extended; 0 when it lies outside the record. */
static inline uint64_t load_field(const uint8_t *data, size_t len, unsigned offset, unsigned size) {
        if (offset > len || size > len - offset)
                return 0;
        switch (size) {
        case 8:
                return load_u64(data + offset);
        case 4:
                return load_u32(data + offset);
        case 2:
                return load_u16(data + offset);
        case 1:
                return data[offset];
        default:
                return 0;
        }
}

static inline uint64_t hash_u64(uint64_t x) {
        /* splitmix64 finaliser: cheap and spreads sequential tids and pointers well */
        x ^= x >> 30;
        x *= 0xbf58476d1ce4e5b9ULL;
        x ^= x >> 27;
        x *= 0x94d049bb133111ebULL;
        x ^= x >> 31;
        return x;
}

/* "EINVAL" for 22; "E123" style for what the C library does not name, written into buf. */
const char *errno_name(int err, char buf[static 16]);
