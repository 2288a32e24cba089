/* SPDX-License-Identifier: GPL-2.0-or-later */
/* File summaries on requests made by hand: each file's counts, the top files by requests and the rest as one
 * other line, requests without a known file, the bound on the files kept apart, and a fresh start each
 * interval. */
#include "file_summary.h"

#include "config.h"
#include "test.h"

#define MAX_LINES 1100

struct line {
        char path[64]; /* "": the other line */
        uint32_t other_files;
        uint64_t without_path, requests, unverified, completed, bytes_read, bytes_written, errors, abandoned, lat_count, lat_max;
        uint64_t start, end;
        bool last;
};

static struct line lines[MAX_LINES];
static size_t n_lines;

static void on_summary(void *userdata, const struct file_summary *s) {
        (void) userdata;
        if (n_lines == MAX_LINES)
                return;
        struct line *l = &lines[n_lines++];
        *l = (struct line) { .other_files = s->other_files, .without_path = s->without_path,
                             .requests = s->requests, .unverified = s->unverified, .bytes_read = s->iv->bytes_read,
                             .bytes_written = s->iv->bytes_written, .errors = s->iv->errors,
                             .abandoned = s->iv->abandoned, .lat_count = s->latency->count,
                             .lat_max = s->latency->max, .start = s->start, .end = s->end, .last = s->last };
        for (unsigned i = 0; i < REQ_OPS; i++)
                l->completed += s->iv->completed[i];
        if (s->path)
                snprintf(l->path, sizeof(l->path), "%.*s", (int) s->path_len, s->path);
}

static struct path_str *path_new(const char *s) {
        size_t len = strlen(s);
        struct path_str *p = malloc(sizeof(*p) + len + 1);
        if (!p)
                abort();
        p->refs = 1;
        p->len = (uint32_t) len;
        memcpy(p->s, s, len + 1);
        return p;
}

/* One request ended: a pread (opcode 0) or pwrite (1) of res bytes, latency lat. */
static void end(struct file_tallies *f, struct path_str *path, enum path_state state, uint16_t op, int64_t res,
                uint64_t lat) {
        struct request r = { .submit_known = true, .has_result = true, .kind = REQ_COMPLETED, .opcode = op,
                             .res = res, .submit_time = 1000, .end_time = 1000 + lat, .path = path,
                             .path_state = state };
        file_tallies_add(f, &r);
}

TEST(top_and_other) {
        struct file_tallies f;
        CHECK_EQ(file_tallies_init(&f), 0);
        struct path_str *a = path_new("/db/ibdata1"), *a2 = path_new("/db/ibdata1"), *b = path_new("/db/t1.ibd"),
                        *c = path_new("/db/t2.ibd"), *d = path_new("/db/t3.ibd");
        for (int i = 0; i < 3; i++)
                end(&f, a, PATH_OK, 1, 16384, 100);
        end(&f, a2, PATH_UNVERIFIED, 1, 2 << 20, 5000); /* another lookup of the same path: the same file */
        end(&f, a, PATH_OK, 1, -5, 100);                /* an error */
        for (int i = 0; i < 3; i++)
                end(&f, b, PATH_OK, 0, 4096, 200);
        end(&f, c, PATH_OK, 0, 4096, 300);
        /* the same number as c: named by path order */
        end(&f, d, PATH_OK, 0, 4096, 400);
        end(&f, NULL, PATH_GONE, 0, 4096, 10);    /* its fd closed before it was looked up */
        end(&f, d, PATH_REUSED, 0, 4096, 10);     /* the fd names another file now: not d's */
        struct request abandoned = { .submit_known = true, .kind = REQ_ABANDONED, .end = END_EXIT, .path = b,
                                     .path_state = PATH_OK };
        file_tallies_add(&f, &abandoned);
        CHECK_EQ(f.files.used, 4);
        CHECK_EQ(a->refs, 2); /* the table's own reference */

        n_lines = 0;
        file_tallies_emit(&f, 3, 100, 200, false, 0, on_summary, NULL);
        CHECK_EQ(n_lines, 4);
        CHECK_STR(lines[0].path, "/db/ibdata1");
        CHECK_EQ(lines[0].requests, 5);
        CHECK_EQ(lines[0].unverified, 1);
        CHECK_EQ(lines[0].completed, 5);
        CHECK_EQ(lines[0].bytes_written, 3 * 16384 + (2 << 20));
        CHECK_EQ(lines[0].bytes_read, 0);
        CHECK_EQ(lines[0].errors, 1);
        CHECK_EQ(lines[0].lat_count, 5);
        CHECK_EQ(lines[0].lat_max, 5000);
        CHECK_EQ(lines[0].start, 100);
        CHECK_EQ(lines[0].end, 200);
        CHECK_STR(lines[1].path, "/db/t1.ibd");
        CHECK_EQ(lines[1].requests, 4);
        CHECK_EQ(lines[1].unverified, 0);
        CHECK_EQ(lines[1].completed, 3);
        CHECK_EQ(lines[1].abandoned, 1);
        CHECK_EQ(lines[1].bytes_read, 3 * 4096);
        CHECK_STR(lines[2].path, "/db/t2.ibd");
        CHECK_EQ(lines[2].requests, 1);
        /* the other line: t3 and the two requests without a known file */
        CHECK_STR(lines[3].path, "");
        CHECK_EQ(lines[3].other_files, 1);
        CHECK_EQ(lines[3].without_path, 2);
        CHECK_EQ(lines[3].requests, 3);
        CHECK_EQ(lines[3].bytes_read, 3 * 4096);
        CHECK_EQ(lines[3].lat_count, 3);
        CHECK_EQ(lines[3].lat_max, 400);
        uint64_t total = 0;
        for (size_t i = 0; i < n_lines; i++)
                total += lines[i].requests;
        CHECK_EQ(total, 13);
        CHECK_EQ(a->refs, 1); /* released */

        /* a quiet interval: nothing said */
        n_lines = 0;
        file_tallies_emit(&f, 3, 200, 300, false, 0, on_summary, NULL);
        CHECK_EQ(n_lines, 0);
        /* the next: counted afresh, in the slots the first left */
        end(&f, b, PATH_OK, 0, 4096, 50);
        file_tallies_emit(&f, 3, 300, 400, true, 0, on_summary, NULL);
        CHECK_EQ(n_lines, 1);
        CHECK_STR(lines[0].path, "/db/t1.ibd");
        CHECK_EQ(lines[0].requests, 1);
        CHECK_EQ(lines[0].lat_count, 1);
        CHECK_EQ(lines[0].lat_max, 50);
        CHECK(lines[0].last);
        file_tallies_done(&f);
        CHECK_EQ(b->refs, 1);
        path_str_unref(a);
        path_str_unref(a2);
        path_str_unref(b);
        path_str_unref(c);
        path_str_unref(d);
}

/* More files than the table keeps apart: the first FILE_TALLIES_MAX each have a count, the requests of the
 * rest go to the other line. */
TEST(bound) {
        struct file_tallies f;
        CHECK_EQ(file_tallies_init(&f), 0);
        enum { FILES = FILE_TALLIES_MAX + 76 };
        static struct path_str *paths[FILES];
        for (int i = 0; i < FILES; i++) {
                char name[32];
                snprintf(name, sizeof(name), "/data/f%05d", i);
                paths[i] = path_new(name);
                /* the first file gets the most requests, and so on down, but for one past the bound */
                for (int k = 0; k < (i < 8 ? 10 - i : 1); k++)
                        end(&f, paths[i], PATH_OK, 0, 512, 10);
        }
        CHECK_EQ(f.files.used, FILE_TALLIES_MAX);
        n_lines = 0;
        file_tallies_emit(&f, 1000, 0, 1, false, 7, on_summary, NULL);
        CHECK_EQ(n_lines, 1001);
        CHECK_STR(lines[0].path, "/data/f00000");
        CHECK_EQ(lines[0].requests, 10);
        CHECK_STR(lines[7].path, "/data/f00007");
        CHECK_EQ(lines[7].requests, 3);
        CHECK_STR(lines[999].path, "/data/f00999");
        const struct line *o = &lines[1000];
        CHECK_STR(o->path, "");
        CHECK_EQ(o->other_files, FILE_TALLIES_MAX - 1000);
        CHECK_EQ(o->requests, FILES - 1000);
        CHECK_EQ(o->without_path, 0);
        uint64_t total = 0;
        for (size_t i = 0; i < n_lines; i++)
                total += lines[i].requests;
        CHECK_EQ(total, FILES - 8 + (10 + 9 + 8 + 7 + 6 + 5 + 4 + 3));
        file_tallies_done(&f);
        for (int i = 0; i < FILES; i++) {
                CHECK_EQ(paths[i]->refs, 1);
                path_str_unref(paths[i]);
        }
}

TEST_MAIN("test-file-summary")
