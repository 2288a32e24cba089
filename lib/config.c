/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <libconfig.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

#define RING_PAGES_MAX 65536u
#define MAX_IOCBS_MAX 65536u
#define PID_MAX_LIMIT 4194304 /* PID_MAX_LIMIT on 64-bit */

struct parse {
        const char *path;
        char *error;
        size_t error_size;
};

static int fail(const struct parse *p, const config_setting_t *s, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static int fail(const struct parse *p, const config_setting_t *s, const char *fmt, ...) {
        int n;
        const char *file = s && config_setting_source_file(s) ? config_setting_source_file(s) : p->path;
        unsigned line = s ? config_setting_source_line(s) : 0;
        if (line)
                n = snprintf(p->error, p->error_size, "%s:%u: ", file, line);
        else
                n = snprintf(p->error, p->error_size, "%s: ", file);
        if (n >= 0 && (size_t) n < p->error_size) {
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(p->error + n, p->error_size - (size_t) n, fmt, ap);
                va_end(ap);
        }
        return -EINVAL;
}

const char *comm_pattern_problem(const char *s, bool *ret_is_glob) {
        size_t len = strlen(s);
        bool glob = false, in_class = false;
        if (len == 0)
                return "is empty";
        if (len > GLOB_MAX)
                return "is longer than 63 characters";
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char) s[i];
                if (c < 0x20 || c >= 0x7f)
                        return "holds a control or non-ASCII character";
                if (c == '"' || c == '\\')
                        return "holds a quote or backslash, which the kernel's filter cannot take";
                if (c == '*' || c == '?')
                        glob = true;
                else if (c == '[') {
                        if (in_class)
                                return "is not a valid glob: '[' inside a [...] class";
                        in_class = glob = true;
                } else if (c == ']') {
                        if (!in_class)
                                return "is not a valid glob: ']' without '['";
                        in_class = false;
                }
        }
        if (in_class)
                return "is not a valid glob: '[' is never closed";
        if (!glob && len > COMM_MAX)
                return "is longer than 15 characters and can never match: the kernel keeps only 15";
        *ret_is_glob = glob;
        return NULL;
}

static int get_uint(const struct parse *p, const config_setting_t *s, unsigned min, unsigned max, bool pow2,
                    unsigned *ret) {
        int type = config_setting_type(s);
        if (type != CONFIG_TYPE_INT && type != CONFIG_TYPE_INT64)
                return fail(p, s, "%s must be an integer", config_setting_name(s));
        long long v = config_setting_get_int64(s);
        if (v < (long long) min || v > (long long) max)
                return fail(p, s, "%s = %lld is out of range (%u to %u)", config_setting_name(s), v, min, max);
        if (pow2 && (v & (v - 1)) != 0)
                return fail(p, s, "%s = %lld must be a power of two", config_setting_name(s), v);
        *ret = (unsigned) v;
        return 0;
}

static int parse_watch_entry(const struct parse *p, const config_setting_t *g, struct watch *w) {
        if (config_setting_type(g) != CONFIG_TYPE_GROUP)
                return fail(p, g, "each watch entry must be a group such as { comm = \"name\"; }");
        *w = (struct watch) { .line = config_setting_source_line(g) };
        bool have = false;
        for (int i = 0; i < config_setting_length(g); i++) {
                const config_setting_t *s = config_setting_get_elem(g, (unsigned) i);
                const char *name = config_setting_name(s);
                if (have)
                        return fail(p, s, "a watch entry takes one of comm or pid, not both");
                have = true;
                if (strcmp(name, "comm") == 0) {
                        if (config_setting_type(s) != CONFIG_TYPE_STRING)
                                return fail(p, s, "comm must be a string");
                        const char *v = config_setting_get_string(s);
                        bool glob;
                        const char *why = comm_pattern_problem(v, &glob);
                        if (why)
                                return fail(p, s, "comm \"%s\" %s", v, why);
                        w->kind = glob ? WATCH_COMM_GLOB : WATCH_COMM;
                        snprintf(w->comm, sizeof(w->comm), "%s", v);
                } else if (strcmp(name, "pid") == 0) {
                        unsigned pid;
                        int r = get_uint(p, s, 1, PID_MAX_LIMIT, false, &pid);
                        if (r < 0)
                                return r;
                        w->kind = WATCH_PID;
                        w->pid = (pid_t) pid;
                } else
                        return fail(p, s, "unknown key '%s' in a watch entry (known: comm, pid)", name);
        }
        if (!have)
                return fail(p, g, "empty watch entry: give comm or pid");
        return 0;
}

static int parse_watch(const struct parse *p, const config_setting_t *s, struct config *c) {
        int type = config_setting_type(s);
        if (type != CONFIG_TYPE_LIST && type != CONFIG_TYPE_ARRAY)
                return fail(p, s, "watch must be a list: watch = ( { comm = \"name\"; }, { pid = 123; } );");
        int n = config_setting_length(s);
        if (n == 0)
                return 0;
        c->watch = calloc((size_t) n, sizeof(*c->watch));
        if (!c->watch)
                return -ENOMEM;
        for (int i = 0; i < n; i++) {
                int r = parse_watch_entry(p, config_setting_get_elem(s, (unsigned) i), &c->watch[i]);
                if (r < 0)
                        return r;
                c->n_watch++;
        }
        return 0;
}

/* A size: an integer of bytes, or a string with a K, M or G suffix (powers of 1024). */
static int get_size(const struct parse *p, const config_setting_t *s, uint64_t *ret) {
        uint64_t v;
        if (config_setting_type(s) == CONFIG_TYPE_INT || config_setting_type(s) == CONFIG_TYPE_INT64) {
                long long x = config_setting_get_int64(s);
                if (x <= 0)
                        return fail(p, s, "%s must be positive", config_setting_name(s));
                v = (uint64_t) x;
        } else if (config_setting_type(s) == CONFIG_TYPE_STRING) {
                const char *str = config_setting_get_string(s);
                char *end;
                errno = 0;
                unsigned long long x = strtoull(str, &end, 10);
                unsigned shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;
                if (shift)
                        end++;
                if (errno || end == str || *end || x == 0 || x > (UINT64_MAX >> shift))
                        return fail(p, s, "%s = \"%s\" is not a size (a number, then K, M or G)",
                                    config_setting_name(s), str);
                v = (uint64_t) x << shift;
        } else
                return fail(p, s, "%s must be a size: 1048576 or \"1M\"", config_setting_name(s));
        if (v < 4096)
                return fail(p, s, "%s must be at least 4096 bytes", config_setting_name(s));
        *ret = v;
        return 0;
}

/* A file mode: an integer, or an octal string ("0640"); never writable by others. */
static int get_mode(const struct parse *p, const config_setting_t *s, unsigned *ret) {
        unsigned long m;
        if (config_setting_type(s) == CONFIG_TYPE_INT)
                m = (unsigned long) config_setting_get_int(s);
        else if (config_setting_type(s) == CONFIG_TYPE_STRING) {
                char *end;
                m = strtoul(config_setting_get_string(s), &end, 8);
                if (*end || end == config_setting_get_string(s))
                        return fail(p, s, "mode must be octal, as \"0640\"");
        } else
                return fail(p, s, "mode must be octal, as \"0640\"");
        if (m > 0777 || (m & 0002))
                return fail(p, s, "mode %04lo: a trace must not be writable by others", m);
        *ret = (unsigned) m;
        return 0;
}

static int parse_output(const struct parse *p, const config_setting_t *g, struct config *c) {
        if (config_setting_type(g) != CONFIG_TYPE_GROUP)
                return fail(p, g, "output must be a group: output = { sink = \"stdout\"; format = \"text\"; };");
        for (int i = 0; i < config_setting_length(g); i++) {
                const config_setting_t *s = config_setting_get_elem(g, (unsigned) i);
                const char *name = config_setting_name(s);
                const char *v = config_setting_type(s) == CONFIG_TYPE_STRING ? config_setting_get_string(s) : NULL;
                if (strcmp(name, "sink") == 0) {
                        if (!v)
                                return fail(p, s, "output.sink must be a string");
                        if (strcmp(v, "stdout") == 0)
                                c->sink = SINK_STDOUT;
                        else if (strcmp(v, "journal") == 0)
                                c->sink = SINK_JOURNAL;
                        else if (strcmp(v, "file") == 0)
                                c->sink = SINK_FILE;
                        else
                                return fail(p, s, "output.sink \"%s\" is not available in this version "
                                                  "(known: journal, file, stdout)", v);
                } else if (strcmp(name, "format") == 0) {
                        if (!v)
                                return fail(p, s, "output.format must be a string");
                        if (strcmp(v, "text") == 0)
                                c->format = OUTPUT_TEXT;
                        else if (strcmp(v, "json") == 0)
                                c->format = OUTPUT_JSON;
                        else
                                return fail(p, s, "output.format \"%s\" is not available (known: text, json)", v);
                } else if (strcmp(name, "json_message") == 0) {
                        if (config_setting_type(s) != CONFIG_TYPE_BOOL)
                                return fail(p, s, "output.json_message must be true or false");
                        c->json_message = config_setting_get_bool(s);
                } else if (strcmp(name, "path") == 0) {
                        if (!v || v[0] != '/' || strlen(v) >= sizeof(c->path))
                                return fail(p, s, "output.path must be an absolute path (at most %zu bytes)",
                                            sizeof(c->path) - 1);
                        snprintf(c->path, sizeof(c->path), "%s", v);
                } else if (strcmp(name, "max_size") == 0) {
                        int r = get_size(p, s, &c->max_size);
                        if (r < 0)
                                return r;
                } else if (strcmp(name, "keep") == 0) {
                        int r = get_uint(p, s, 1, 1000, false, &c->keep);
                        if (r < 0)
                                return r;
                } else if (strcmp(name, "mode") == 0) {
                        int r = get_mode(p, s, &c->mode);
                        if (r < 0)
                                return r;
                } else if (strcmp(name, "queue_kib") == 0) {
                        int r = get_uint(p, s, 64, 1u << 20, false, &c->queue_kib);
                        if (r < 0)
                                return r;
                } else
                        return fail(p, s, "unknown key 'output.%s' (known: sink, format, json_message, path, max_size, "
                                          "keep, mode, queue_kib)", name);
        }
        if (c->sink == SINK_FILE && !c->path[0])
                return fail(p, g, "output.sink = \"file\" needs output.path");
        return 0;
}

static int parse_capture(const struct parse *p, const config_setting_t *s, struct config *c) {
        static const char *const names[] = {
                [CAPTURE_AUTO] = "auto", [CAPTURE_BPF] = "bpf", [CAPTURE_REMOTE_READ] = "remote-read",
        };
        const char *v = config_setting_type(s) == CONFIG_TYPE_STRING ? config_setting_get_string(s) : NULL;
        for (size_t i = 0; v && i < ELEMENTSOF(names); i++)
                if (strcmp(v, names[i]) == 0) {
                        c->capture = (enum capture_mode) i;
                        return 0;
                }
        return fail(p, s, "capture must be one of \"auto\", \"bpf\", \"remote-read\"");
}

static int parse_records(const struct parse *p, const config_setting_t *s, struct config *c) {
        static const struct {
                const char *name;
                unsigned bit;
        } kinds[] = { { "syscalls", RECORD_SYSCALLS }, { "requests", RECORD_REQUESTS }, { "summary", RECORD_SUMMARY } };
        int type = config_setting_type(s);
        if (type != CONFIG_TYPE_ARRAY && type != CONFIG_TYPE_LIST)
                return fail(p, s, "records must be a list: records = [ \"syscalls\", \"requests\", \"summary\" ];");
        c->records = 0;
        for (int i = 0; i < config_setting_length(s); i++) {
                const config_setting_t *e = config_setting_get_elem(s, (unsigned) i);
                const char *v = config_setting_type(e) == CONFIG_TYPE_STRING ? config_setting_get_string(e) : NULL;
                size_t k = 0;
                while (v && k < ELEMENTSOF(kinds) && strcmp(v, kinds[k].name) != 0)
                        k++;
                if (!v || k == ELEMENTSOF(kinds))
                        return fail(p, e, "records: %s%s%s is not one of \"syscalls\", \"requests\", \"summary\"",
                                    v ? "\"" : "", v ? v : "an entry that is not a string", v ? "\"" : "");
                c->records |= kinds[k].bit;
        }
        return 0;
}

const char *capture_mode_name(enum capture_mode m) {
        return m == CAPTURE_BPF ? "bpf" : m == CAPTURE_REMOTE_READ ? "remote-read" : "auto";
}

int config_load(const char *path, struct config **ret, char *error, size_t error_size) {
        char dummy[1];
        struct parse p = { .path = path, .error = error ? error : dummy, .error_size = error ? error_size : 1 };
        _cleanup_(config_freep) struct config *c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        *c = (struct config) {
                .ring_pages = 512,
                .max_iocbs_per_call = 256,
                .drain_interval_ms = 100,
                .max_inflight = 65536,
                .max_inflight_per_process = 65536,
                .records = RECORD_REQUESTS | RECORD_SUMMARY,
                .summary_interval = 60,
                .format = OUTPUT_TEXT,
                .queue_kib = 16384,
                .max_size = 64ull << 20,
                .keep = 5,
                .mode = 0640,
        };

        FILE *f = fopen(path, "re");
        if (!f) {
                int r = -errno;
                snprintf(p.error, p.error_size, "%s: cannot open: %s", path, strerror(-r));
                return r;
        }
        /* It decides what a root daemon reads of other processes: only root (or the daemon's own user) may
         * have written it. */
        struct stat st;
        int r = fstat(fileno(f), &st) < 0 ? -errno : 0;
        if (r < 0)
                snprintf(p.error, p.error_size, "%s: cannot stat: %s", path, strerror(-r));
        else if (st.st_mode & S_IWOTH) {
                snprintf(p.error, p.error_size, "%s: is writable by others (mode %04o): refused; chmod o-w it", path,
                         (unsigned) (st.st_mode & 07777));
                r = -EPERM;
        } else if (st.st_uid != 0 && st.st_uid != geteuid()) {
                snprintf(p.error, p.error_size, "%s: is owned by uid %u, not root: refused; chown root it", path,
                         (unsigned) st.st_uid);
                r = -EPERM;
        }
        if (r < 0) {
                fclose(f);
                return r;
        }
        config_t cfg;
        config_init(&cfg);
        if (config_read(&cfg, f) != CONFIG_TRUE) {
                const char *file = config_error_file(&cfg) ? config_error_file(&cfg) : path;
                if (config_error_type(&cfg) == CONFIG_ERR_FILE_IO)
                        snprintf(p.error, p.error_size, "%s: cannot read: %s", file, strerror(errno));
                else
                        snprintf(p.error, p.error_size, "%s:%d: %s", file, config_error_line(&cfg),
                                 config_error_text(&cfg));
                r = -EINVAL;
                goto out;
        }
        const config_setting_t *root = config_root_setting(&cfg);
        for (int i = 0; r >= 0 && i < config_setting_length(root); i++) {
                const config_setting_t *s = config_setting_get_elem(root, (unsigned) i);
                const char *name = config_setting_name(s);
                if (strcmp(name, "watch") == 0)
                        r = parse_watch(&p, s, c);
                else if (strcmp(name, "ring_pages") == 0)
                        r = get_uint(&p, s, 1, RING_PAGES_MAX, true, &c->ring_pages);
                else if (strcmp(name, "max_iocbs_per_call") == 0)
                        r = get_uint(&p, s, 1, MAX_IOCBS_MAX, false, &c->max_iocbs_per_call);
                else if (strcmp(name, "drain_interval_ms") == 0)
                        r = get_uint(&p, s, 1, 60000, false, &c->drain_interval_ms);
                else if (strcmp(name, "max_inflight") == 0)
                        r = get_uint(&p, s, 16, 16u << 20, false, &c->max_inflight);
                else if (strcmp(name, "max_inflight_per_process") == 0)
                        r = get_uint(&p, s, 1, 16u << 20, false, &c->max_inflight_per_process);
                else if (strcmp(name, "records") == 0)
                        r = parse_records(&p, s, c);
                else if (strcmp(name, "summary_interval") == 0)
                        r = get_uint(&p, s, 1, 86400, false, &c->summary_interval);
                else if (strcmp(name, "output") == 0)
                        r = parse_output(&p, s, c);
                else if (strcmp(name, "capture") == 0)
                        r = parse_capture(&p, s, c);
                else
                        r = fail(&p, s,
                                 "unknown key '%s' (known: watch, capture, records, summary_interval, ring_pages, "
                                 "max_iocbs_per_call, drain_interval_ms, max_inflight, max_inflight_per_process, "
                                 "output)",
                                 name);
        }
out:
        config_destroy(&cfg);
        fclose(f);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(c);
        return 0;
}

void config_free(struct config *c) {
        if (!c)
                return;
        free(c->watch);
        free(c);
}

void config_freep(struct config **c) {
        config_free(*c);
}
