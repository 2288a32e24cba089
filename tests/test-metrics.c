/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The Prometheus metrics from summaries built by hand: counts per program (comm and unit, never pid) that add up
 * across processes and never go backwards, the bound on programs, label escaping, the latency histogram within
 * the log-linear histogram's error of the exact counts, and the file replaced whole. */
#include "metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "test.h"

static struct histogram lat;

static struct proc_summary summary(uint32_t pid, const char *comm, const char *unit, struct proc_interval *iv) {
        return (struct proc_summary) { .pid = pid, .comm = comm, .unit = unit, .iv = iv, .latency = &lat };
}

static char *format(const struct metrics *m) {
        static struct outbuf b;
        outbuf_reset(&b);
        struct metrics_daemon d = { .records = 10, .lost = 1, .ring_bytes = 4096 };
        metrics_format(m, &d, &b);
        outbuf_putc(&b, 0);
        return b.data;
}

TEST(counts) {
        static struct metrics m;
        metrics_init(&m);
        histogram_reset(&lat);
        histogram_add(&lat, 20000);  /* 20 us */
        histogram_add(&lat, 3000000); /* 3 ms */
        struct proc_interval a = { .bytes_read = 8192, .bytes_written = 512, .errors = 1, .abandoned = 1, .unmatched = 2 };
        a.submitted[IOCB_CMD_PREAD] = 2;
        a.submitted[IOCB_CMD_PWRITE] = 2;
        a.completed[IOCB_CMD_PREAD] = 2;
        a.completed[IOCB_CMD_PWRITE] = 1;
        struct proc_summary s = summary(100, "mariadbd", "mariadb.service", &a);
        metrics_add_summary(&m, &s);
        char *t = format(&m);
        CHECK_CONTAINS(t, "# TYPE aiotraced_requests_submitted_total counter\n"
                          "aiotraced_requests_submitted_total{comm=\"mariadbd\",unit=\"mariadb.service\",op=\"pread\"} 2\n"
                          "aiotraced_requests_submitted_total{comm=\"mariadbd\",unit=\"mariadb.service\",op=\"pwrite\"} 2\n");
        CHECK_CONTAINS(t, "aiotraced_requests_completed_total{comm=\"mariadbd\",unit=\"mariadb.service\",op=\"pwrite\"} 1\n");
        CHECK_CONTAINS(t, "aiotraced_read_bytes_total{comm=\"mariadbd\",unit=\"mariadb.service\"} 8192\n");
        CHECK_CONTAINS(t, "aiotraced_written_bytes_total{comm=\"mariadbd\",unit=\"mariadb.service\"} 512\n");
        CHECK_CONTAINS(t, "aiotraced_request_errors_total{comm=\"mariadbd\",unit=\"mariadb.service\"} 1\n");
        CHECK_CONTAINS(t, "aiotraced_requests_abandoned_total{comm=\"mariadbd\",unit=\"mariadb.service\"} 1\n");
        CHECK_CONTAINS(t, "aiotraced_requests_unresolved_total{comm=\"mariadbd\",unit=\"mariadb.service\"} 2\n");
        CHECK_CONTAINS(t, "aiotraced_request_latency_seconds_bucket{comm=\"mariadbd\",unit=\"mariadb.service\","
                          "le=\"1e-05\"} 0\n");
        CHECK_CONTAINS(t, "le=\"2.5e-05\"} 1\n");
        CHECK_CONTAINS(t, "le=\"0.0025\"} 1\n");
        CHECK_CONTAINS(t, "le=\"0.005\"} 2\n");
        CHECK_CONTAINS(t, "le=\"+Inf\"} 2\n");
        CHECK_CONTAINS(t, "aiotraced_request_latency_seconds_sum{comm=\"mariadbd\",unit=\"mariadb.service\"} 0.003020000\n");
        CHECK_CONTAINS(t, "aiotraced_request_latency_seconds_count{comm=\"mariadbd\",unit=\"mariadb.service\"} 2\n");
        CHECK_CONTAINS(t, "aiotraced_records_read_total 10\n");
        CHECK_CONTAINS(t, "aiotraced_records_lost_total 1\n");
        CHECK_CONTAINS(t, "# TYPE aiotraced_ring_memory_bytes gauge\naiotraced_ring_memory_bytes 4096\n");
        CHECK(strstr(t, "pid") == NULL);
        CHECK(strstr(t, "comm=\"other\"") == NULL); /* nothing there: no series */

        CASE("another process of the same program, after the first ended: the counts go on");
        struct proc_summary s2 = summary(200, "mariadbd", "mariadb.service", &a);
        metrics_add_summary(&m, &s2);
        t = format(&m);
        CHECK_CONTAINS(t, "{comm=\"mariadbd\",unit=\"mariadb.service\",op=\"pread\"} 4\n");
        CHECK_CONTAINS(t, "aiotraced_read_bytes_total{comm=\"mariadbd\",unit=\"mariadb.service\"} 16384\n");
        CHECK_CONTAINS(t, "aiotraced_request_latency_seconds_count{comm=\"mariadbd\",unit=\"mariadb.service\"} 4\n");
        /* the same name in another unit is another program */
        struct proc_summary s3 = summary(300, "mariadbd", "", &a);
        metrics_add_summary(&m, &s3);
        t = format(&m);
        CHECK_CONTAINS(t, "aiotraced_read_bytes_total{comm=\"mariadbd\",unit=\"\"} 8192\n");
        CHECK_EQ(m.n_programs, 2);
}

TEST(bound_and_labels) {
        static struct metrics m;
        metrics_init(&m);
        histogram_reset(&lat);
        struct proc_interval a = {};
        a.submitted[IOCB_CMD_PREAD] = 1;
        char comm[16];
        for (int i = 0; i < METRICS_MAX_PROGRAMS + 3; i++) {
                snprintf(comm, sizeof(comm), "p%d", i);
                struct proc_summary s = summary((uint32_t) i + 1, comm, "", &a);
                metrics_add_summary(&m, &s);
        }
        char *t = format(&m);
        CHECK_EQ(m.n_programs, METRICS_MAX_PROGRAMS);
        CHECK_CONTAINS(t, "{comm=\"p63\",unit=\"\",op=\"pread\"} 1\n");
        CHECK(strstr(t, "comm=\"p64\"") == NULL);
        CHECK_CONTAINS(t, "{comm=\"other\",unit=\"\",op=\"pread\"} 3\n");

        CASE("while every series is taken, the idle programs go after a few writes; the busy ones stay");
        metrics_init(&m);
        for (int i = 0; i < METRICS_MAX_PROGRAMS; i++) {
                snprintf(comm, sizeof(comm), "junk%d", i);
                struct proc_summary s = summary((uint32_t) i + 1, comm, "", &a);
                metrics_add_summary(&m, &s);
        }
        /* seen before the first write, idle at the next METRICS_IDLE_WRITES: let go at the last of them */
        for (int w = 0; w <= METRICS_IDLE_WRITES; w++) {
                struct proc_summary busy = summary(1000, "junk0", "", &a); /* one of them stays busy */
                metrics_add_summary(&m, &busy);
                struct proc_summary late = summary(2000, "mariadbd", "", &a);
                metrics_add_summary(&m, &late);
                t = format(&m);
                CHECK(strstr(t, "comm=\"mariadbd\"") == NULL); /* no room yet: counted in "other" */
                CHECK(strstr(t, "comm=\"junk63\"") != NULL);   /* what is there stays until idle long enough */
                CHECK_EQ(metrics_written(&m), (size_t) (w < METRICS_IDLE_WRITES ? 0 : METRICS_MAX_PROGRAMS - 1));
        }
        CHECK_EQ(m.n_programs, 1u);
        struct proc_summary late = summary(2000, "mariadbd", "", &a);
        metrics_add_summary(&m, &late);
        t = format(&m);
        CHECK(strstr(t, "{comm=\"mariadbd\",unit=\"\",op=\"pread\"} 1\n") != NULL);
        CHECK(strstr(t, "{comm=\"junk0\",unit=\"\",op=\"pread\"} 5\n") != NULL);
        CHECK(strstr(t, "{comm=\"other\",unit=\"\",op=\"pread\"} 4\n") != NULL);
        CHECK(strstr(t, "comm=\"junk63\"") == NULL);
        CHECK(strstr(t, "aiotraced_program_series_let_go_total 63\n") != NULL);
        /* with room, an idle program keeps its series: no counter starts again from 0 */
        for (int w = 0; w < 2 * METRICS_IDLE_WRITES; w++)
                CHECK_EQ(metrics_written(&m), 0u);
        CHECK(strstr(format(&m), "{comm=\"mariadbd\",unit=\"\",op=\"pread\"} 1\n") != NULL);

        CASE("label values escaped; bytes past ASCII as '?'");
        metrics_init(&m);
        struct proc_summary s = summary(1, "a\"b\\c\nd\xc3\xa9", "x\\x2d.service", &a);
        metrics_add_summary(&m, &s);
        t = format(&m);
        CHECK_CONTAINS(t, "{comm=\"a\\\"b\\\\c\\nd??\",unit=\"x\\\\x2d.service\",op=\"pread\"} 1\n");
}

static uint64_t exact_le(const uint64_t *v, size_t n, double bound) {
        uint64_t c = 0;
        for (size_t i = 0; i < n; i++)
                c += (double) v[i] <= bound;
        return c;
}

TEST(latency_error) {
        static struct metrics m;
        static uint64_t v[20000];
        metrics_init(&m);
        histogram_reset(&lat);
        srand(11);
        for (size_t i = 0; i < ELEMENTSOF(v); i++) {
                /* from 1 us to 33 s, as many in each power of two, and some exactly on the boundaries */
                uint64_t base = 1000ull << (rand() % 25);
                v[i] = i % 50 == 0 ? metrics_latency_bound_ns[i / 50 % METRICS_LATENCY_BOUNDS]
                                   : base + (uint64_t) rand() % base;
                histogram_add(&lat, v[i]);
        }
        struct proc_interval a = {};
        struct proc_summary s = summary(1, "fio", "", &a);
        metrics_add_summary(&m, &s);
        const struct metrics_program *p = &m.programs[0];
        uint64_t cumulative = 0;
        for (unsigned k = 0; k < METRICS_LATENCY_BOUNDS; k++) {
                cumulative += p->latency_le[k];
                double le = (double) metrics_latency_bound_ns[k];
                uint64_t low = exact_le(v, ELEMENTSOF(v), le), high = exact_le(v, ELEMENTSOF(v), le * (1 + 1.0 / 64));
                if (cumulative < low || cumulative > high) {
                        fprintf(stderr, "le %.0f ns: %lu, exact %lu to %lu\n", le, (unsigned long) cumulative,
                                (unsigned long) low, (unsigned long) high);
                        test_failures++;
                }
        }
        CHECK_EQ(p->latency_count, ELEMENTSOF(v));
        uint64_t sum = 0;
        for (size_t i = 0; i < ELEMENTSOF(v); i++)
                sum += v[i];
        CHECK_EQ(p->latency_sum_ns, sum);
}

TEST_MAIN("test-metrics")
