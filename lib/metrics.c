/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "util.h"

const uint64_t metrics_latency_bound_ns[METRICS_LATENCY_BOUNDS] = {
        10000,     25000,     50000,     100000,     250000,     500000,     1000000,
        2500000,   5000000,   10000000,  25000000,   50000000,   100000000,  250000000,
        500000000, 1000000000, 2500000000, 5000000000, 10000000000,
};
static const char *const bound_labels[METRICS_LATENCY_BOUNDS] = {
        "1e-05", "2.5e-05", "5e-05", "0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01",
        "0.025", "0.05",    "0.1",   "0.25",   "0.5",     "1",      "2.5",   "5",      "10",
};

void metrics_init(struct metrics *m) {
        memset(m, 0, sizeof(*m));
        struct metrics_program *other = &m->programs[METRICS_MAX_PROGRAMS];
        snprintf(other->comm, sizeof(other->comm), "other");
}

static struct metrics_program *program_of(struct metrics *m, const char *comm, const char *unit) {
        for (size_t i = 0; i < m->n_programs; i++) {
                struct metrics_program *p = &m->programs[i];
                if (strncmp(p->comm, comm, sizeof(p->comm)) == 0 && strcmp(p->unit, unit) == 0)
                        return p;
        }
        if (m->n_programs == METRICS_MAX_PROGRAMS)
                return &m->programs[METRICS_MAX_PROGRAMS];
        struct metrics_program *p = &m->programs[m->n_programs++];
        *p = (struct metrics_program) { .seen = m->writes };
        snprintf(p->comm, sizeof(p->comm), "%.15s", comm);
        snprintf(p->unit, sizeof(p->unit), "%s", unit);
        return p;
}

static bool interval_had_any(const struct proc_interval *iv) {
        for (unsigned i = 0; i < REQ_OPS; i++)
                if (iv->submitted[i] || iv->completed[i])
                        return true;
        return iv->abandoned || iv->stale || iv->unmatched || iv->unknown;
}

void metrics_add_summary(struct metrics *m, const struct proc_summary *s) {
        struct metrics_program *p = program_of(m, s->comm, s->unit ? s->unit : "");
        if (interval_had_any(s->iv))
                p->seen = m->writes;
        const struct proc_interval *iv = s->iv;
        for (unsigned i = 0; i < REQ_OPS; i++) {
                p->submitted[i] += iv->submitted[i];
                p->completed[i] += iv->completed[i];
                p->punted[i] += iv->punted[i];
        }
        p->polled += iv->polled;
        p->errors += iv->errors;
        p->bytes_read += iv->bytes_read;
        p->bytes_written += iv->bytes_written;
        p->cancelled += iv->cancelled;
        p->abandoned += iv->abandoned;
        p->unresolved += iv->stale + iv->unmatched + iv->unknown;
        /* A log-linear bucket goes under the first boundary its lowest value is within: a count is never short
         * of the exact one, and over it only by latencies within the bucket's width (1/64) above the bound. */
        const struct histogram *h = s->latency;
        unsigned bound = 0;
        for (unsigned b = 0; b < HIST_BUCKETS && bound < METRICS_LATENCY_BOUNDS; b++) {
                if (!h->buckets[b])
                        continue;
                uint64_t low, high;
                histogram_bucket_range(b, &low, &high);
                while (bound < METRICS_LATENCY_BOUNDS && low > metrics_latency_bound_ns[bound])
                        bound++;
                if (bound < METRICS_LATENCY_BOUNDS)
                        p->latency_le[bound] += h->buckets[b];
        }
        p->latency_count += h->count;
        p->latency_sum_ns += h->sum;
}

static void add_in_flight(void *userdata, const char *comm, const char *unit, uint32_t in_flight, uint32_t stuck) {
        struct metrics *m = userdata;
        if (in_flight) {
                struct metrics_program *p = program_of(m, comm, unit);
                p->in_flight += in_flight;
                p->stuck += stuck;
                p->seen = m->writes;
        }
}

void metrics_set_in_flight(struct metrics *m, struct tracker *t) {
        for (size_t i = 0; i <= METRICS_MAX_PROGRAMS; i++)
                m->programs[i].in_flight = m->programs[i].stuck = 0;
        tracker_foreach_process(t, add_in_flight, m);
}

/* A label value: backslash, quote and newline escaped as the format asks; other control bytes and bytes past
 * ASCII (a comm is any 15 bytes, not always UTF-8) as '?'. */
static void put_label(struct outbuf *b, const char *name, const char *value, size_t max) {
        outbuf_puts(b, name);
        outbuf_puts(b, "=\"");
        for (size_t i = 0; i < max && value[i]; i++) {
                unsigned char c = (unsigned char) value[i];
                if (c == '\\' || c == '"') {
                        outbuf_putc(b, '\\');
                        outbuf_putc(b, (char) c);
                } else if (c == '\n')
                        outbuf_puts(b, "\\n");
                else
                        outbuf_putc(b, c < 0x20 || c >= 0x7f ? '?' : (char) c);
        }
        outbuf_putc(b, '"');
}

static void put_program_labels(struct outbuf *b, const struct metrics_program *p) {
        put_label(b, "comm", p->comm, sizeof(p->comm));
        outbuf_putc(b, ',');
        put_label(b, "unit", p->unit, sizeof(p->unit));
}

static void put_family(struct outbuf *b, const char *name, const char *type, const char *help) {
        outbuf_puts(b, "# HELP ");
        outbuf_puts(b, name);
        outbuf_putc(b, ' ');
        outbuf_puts(b, help);
        outbuf_puts(b, "\n# TYPE ");
        outbuf_puts(b, name);
        outbuf_putc(b, ' ');
        outbuf_puts(b, type);
        outbuf_putc(b, '\n');
}

static void put_value(struct outbuf *b, uint64_t v) {
        outbuf_puts(b, "} ");
        outbuf_u64(b, v);
        outbuf_putc(b, '\n');
}

static bool used(const struct metrics *m, size_t i) {
        return i < m->n_programs || i == METRICS_MAX_PROGRAMS;
}

static bool other_has_any(const struct metrics_program *o) {
        for (unsigned i = 0; i < REQ_OPS; i++)
                if (o->submitted[i] || o->completed[i])
                        return true;
        return o->abandoned || o->unresolved || o->in_flight || o->latency_count;
}

/* One counter (or gauge) per program, from the field at `offset`. */
static void put_per_program(struct outbuf *b, const struct metrics *m, const char *name, const char *type,
                            const char *help, size_t offset) {
        put_family(b, name, type, help);
        for (size_t i = 0; i <= METRICS_MAX_PROGRAMS; i++) {
                const struct metrics_program *p = &m->programs[i];
                if (!used(m, i) || (i == METRICS_MAX_PROGRAMS && !other_has_any(p)))
                        continue;
                uint64_t v;
                memcpy(&v, (const uint8_t *) p + offset, sizeof(v));
                outbuf_puts(b, name);
                outbuf_putc(b, '{');
                put_program_labels(b, p);
                put_value(b, v);
        }
}

/* One counter per program and op, from the array at `offset` of each program. */
static void put_by_op(struct outbuf *b, const struct metrics *m, const char *name, const char *help, size_t offset) {
        put_family(b, name, "counter", help);
        for (size_t i = 0; i <= METRICS_MAX_PROGRAMS; i++) {
                const struct metrics_program *p = &m->programs[i];
                if (!used(m, i))
                        continue;
                for (unsigned op = 0; op < REQ_OPS; op++) {
                        uint64_t v = ((const uint64_t *) ((const char *) p + offset))[op];
                        if (!v)
                                continue;
                        outbuf_puts(b, name);
                        outbuf_putc(b, '{');
                        put_program_labels(b, p);
                        outbuf_puts(b, ",op=\"");
                        outbuf_puts(b, request_op_index_name(op));
                        outbuf_putc(b, '"');
                        put_value(b, v);
                }
        }
}

static void put_seconds(struct outbuf *b, uint64_t ns) {
        outbuf_u64(b, ns / 1000000000ull);
        outbuf_putc(b, '.');
        outbuf_frac9(b, ns % 1000000000ull);
}

static void put_latency(struct outbuf *b, const struct metrics *m) {
        const char *name = "aiotraced_request_latency_seconds";
        put_family(b, name, "histogram", "From io_submit's entry to the exit of the call that reaped it, by program.");
        for (size_t i = 0; i <= METRICS_MAX_PROGRAMS; i++) {
                const struct metrics_program *p = &m->programs[i];
                if (!used(m, i) || (i == METRICS_MAX_PROGRAMS && !other_has_any(p)))
                        continue;
                uint64_t cumulative = 0;
                for (unsigned k = 0; k <= METRICS_LATENCY_BOUNDS; k++) {
                        cumulative += k < METRICS_LATENCY_BOUNDS ? p->latency_le[k] : 0;
                        outbuf_puts(b, name);
                        outbuf_puts(b, "_bucket{");
                        put_program_labels(b, p);
                        outbuf_puts(b, ",le=\"");
                        outbuf_puts(b, k < METRICS_LATENCY_BOUNDS ? bound_labels[k] : "+Inf");
                        outbuf_putc(b, '"');
                        put_value(b, k < METRICS_LATENCY_BOUNDS ? cumulative : p->latency_count);
                }
                outbuf_puts(b, name);
                outbuf_puts(b, "_sum{");
                put_program_labels(b, p);
                outbuf_puts(b, "} ");
                put_seconds(b, p->latency_sum_ns);
                outbuf_putc(b, '\n');
                outbuf_puts(b, name);
                outbuf_puts(b, "_count{");
                put_program_labels(b, p);
                put_value(b, p->latency_count);
        }
}

static void put_daemon(struct outbuf *b, const char *name, const char *type, const char *help, uint64_t v) {
        put_family(b, name, type, help);
        outbuf_puts(b, name);
        outbuf_putc(b, ' ');
        outbuf_u64(b, v);
        outbuf_putc(b, '\n');
}

#define PROGRAM_FIELD(f) offsetof(struct metrics_program, f)

void metrics_format(const struct metrics *m, const struct metrics_daemon *d, struct outbuf *b) {
        put_by_op(b, m, "aiotraced_requests_submitted_total", "AIO requests submitted, by program and op.",
                  offsetof(struct metrics_program, submitted));
        put_by_op(b, m, "aiotraced_requests_completed_total",
                  "AIO requests reaped (cancelled ones among them), by program and op.",
                  offsetof(struct metrics_program, completed));
        put_by_op(b, m, "aiotraced_requests_punted_total",
                  "io_uring requests handed to an io-wq worker (they would have blocked, or IOSQE_ASYNC asked), by "
                  "program and op.", offsetof(struct metrics_program, punted));
        put_per_program(b, m, "aiotraced_requests_polled_total", "counter",
                        "io_uring requests armed for poll (their file was not ready).", PROGRAM_FIELD(polled));
        put_per_program(b, m, "aiotraced_request_errors_total", "counter", "Requests that ended with an error.",
                        PROGRAM_FIELD(errors));
        put_per_program(b, m, "aiotraced_read_bytes_total", "counter", "Bytes read by completed requests.",
                        PROGRAM_FIELD(bytes_read));
        put_per_program(b, m, "aiotraced_written_bytes_total", "counter", "Bytes written by completed requests.",
                        PROGRAM_FIELD(bytes_written));
        put_per_program(b, m, "aiotraced_requests_cancelled_total", "counter", "Requests cancelled.",
                        PROGRAM_FIELD(cancelled));
        put_per_program(b, m, "aiotraced_requests_abandoned_total", "counter",
                        "Requests never reaped: context destroyed, process gone, or evicted.", PROGRAM_FIELD(abandoned));
        put_per_program(b, m, "aiotraced_requests_unresolved_total", "counter",
                        "Requests whose end could not be told exactly: stale, unmatched or unknown.",
                        PROGRAM_FIELD(unresolved));
        put_per_program(b, m, "aiotraced_requests_in_flight", "gauge", "Requests submitted and not ended yet.",
                        PROGRAM_FIELD(in_flight));
        put_per_program(b, m, "aiotraced_requests_stuck", "gauge",
                        "Requests in flight longer than stuck_after, their process alive.", PROGRAM_FIELD(stuck));
        put_latency(b, m);
        put_daemon(b, "aiotraced_records_read_total", "counter", "Records read from the rings.", d->records);
        put_daemon(b, "aiotraced_records_lost_total", "counter", "Records the kernel could not write: rings full.",
                   d->lost);
        put_daemon(b, "aiotraced_entries_dropped_total", "counter", "Entries the output could not take.", d->dropped);
        put_daemon(b, "aiotraced_values_stale_total", "counter", "Values read but not vouched for.", d->stale);
        put_daemon(b, "aiotraced_values_unreadable_total", "counter", "Values that could not be read.", d->unreadable);
        put_daemon(b, "aiotraced_calls_unread_total", "counter",
                   "Calls whose memory was not read, to keep up with the rings.", d->skipped_reads);
        put_daemon(b, "aiotraced_ring_memory_bytes", "gauge", "Memory of the rings, all CPUs.", d->ring_bytes);
        put_daemon(b, "aiotraced_program_series_let_go_total", "counter",
                   "Programs whose series were let go, idle while every program's series were taken.", m->let_go);
}

size_t metrics_written(struct metrics *m) {
        size_t gone = 0;
        if (m->n_programs == METRICS_MAX_PROGRAMS) {
                size_t kept = 0;
                for (size_t i = 0; i < m->n_programs; i++) {
                        if (m->programs[i].seen + METRICS_IDLE_WRITES <= m->writes) {
                                gone++;
                                continue;
                        }
                        if (kept != i)
                                m->programs[kept] = m->programs[i];
                        kept++;
                }
                m->n_programs = kept;
                m->let_go += gone;
        }
        m->writes++;
        return gone;
}
