/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libconfig.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture.h"
#include "cgroup.h"
#include "safefile.h"
#include "util.h"
#include "watch.h"

#define RING_PAGES_MAX 65536u
#define MAX_IOCBS_MAX 65536u
#define FILE_SUMMARY_MAX 1000u

struct parse {
        const char *path;
        char *error;
        size_t error_size;
};

static int fail(const struct parse *p, const config_setting_t *s, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* "FILE:LINE: what" (line 0: "FILE: what") into p->error. */
static int fail_v(const struct parse *p, const char *file, unsigned line, const char *fmt, va_list ap) {
        int n;
        if (line)
                n = snprintf(p->error, p->error_size, "%s:%u: ", file, line);
        else
                n = snprintf(p->error, p->error_size, "%s: ", file);
        if (n >= 0 && (size_t) n < p->error_size)
                vsnprintf(p->error + n, p->error_size - (size_t) n, fmt, ap);
        return -EINVAL;
}

static int fail(const struct parse *p, const config_setting_t *s, const char *fmt, ...) {
        const char *file = s && config_setting_source_file(s) ? config_setting_source_file(s) : p->path;
        va_list ap;
        va_start(ap, fmt);
        int r = fail_v(p, file, s ? config_setting_source_line(s) : 0, fmt, ap);
        va_end(ap);
        return r;
}

static int get_uint(const struct parse *p, const config_setting_t *s, const char *name, uint64_t min, uint64_t max,
                    bool pow2, uint64_t *ret) {
        int type = config_setting_type(s);
        if (type != CONFIG_TYPE_INT && type != CONFIG_TYPE_INT64)
                return fail(p, s, "%s must be an integer", name);
        long long v = config_setting_get_int64(s);
        if (v < 0 || (uint64_t) v < min || (uint64_t) v > max)
                return fail(p, s, "%s = %lld is out of range (%llu to %llu)", name, v, (unsigned long long) min,
                            (unsigned long long) max);
        if (pow2 && (v & (v - 1)) != 0)
                return fail(p, s, "%s = %lld must be a power of two", name, v);
        *ret = (uint64_t) v;
        return 0;
}

/* One key of a watch entry, as watch_keys[] says it is written and checked. */
static int parse_watch_key(const struct parse *p, const config_setting_t *s, struct watch *w) {
        const char *name = config_setting_name(s);
        const struct watch_key *k = watch_key_named(name);
        if (!k) {
                char known[256];
                watch_key_names(known, sizeof(known));
                return fail(p, s, "unknown key '%s' in a watch entry (known: %s)", name, known);
        }
        if (k->flag && (w->keys & k->flag)) { /* libconfig refuses a name twice: this is another name of it */
                const char *names[2] = { "?", "?" };
                for (size_t i = 0, n = 0; i < watch_n_keys && n < 2; i++)
                        if (watch_keys[i].flag == k->flag)
                                names[n++] = watch_keys[i].name;
                return fail(p, s, "a watch entry takes one of %s or %s, not both", names[0], names[1]);
        }
        uint8_t *at = (uint8_t *) w + k->offset;
        int r;
        switch (k->value) {
        case WATCH_VALUE_STRING: {
                if (config_setting_type(s) != CONFIG_TYPE_STRING)
                        return fail(p, s, "%s must be a string", name);
                const char *v = config_setting_get_string(s);
                if (strlen(v) >= k->size)
                        return fail(p, s, "%s \"%.40s...\" is longer than the %zu bytes it may have", name, v,
                                    k->size - 1);
                snprintf((char *) at, k->size, "%s", v);
                break;
        }
        case WATCH_VALUE_UINT: {
                uint64_t v;
                if ((r = get_uint(p, s, name, k->min, k->max, false, &v)) < 0)
                        return r;
                uint32_t v32 = (uint32_t) v;
                _Static_assert(sizeof(pid_t) == 4 && sizeof(uid_t) == 4, "watch values of 32 bits");
                memcpy(at, &v32, sizeof(v32));
                break;
        }
        case WATCH_VALUE_BOOL:
                if (config_setting_type(s) != CONFIG_TYPE_BOOL)
                        return fail(p, s, "%s must be true or false", name);
                *(bool *) at = config_setting_get_bool(s);
                break;
        }
        char why[1024];
        if (k->check && k->check(w, why, sizeof(why)) < 0)
                return fail(p, s, "%s", why);
        w->keys |= k->flag;
        return 0;
}

static int parse_watch_entry(const struct parse *p, const config_setting_t *g, struct watch *w) {
        if (config_setting_type(g) != CONFIG_TYPE_GROUP)
                return fail(p, g, "each watch entry must be a group such as { comm = \"name\"; }");
        *w = (struct watch) { .line = config_setting_source_line(g) };
        for (int i = 0; i < config_setting_length(g); i++) {
                int r = parse_watch_key(p, config_setting_get_elem(g, (unsigned) i), w);
                if (r < 0)
                        return r;
        }
        char why[256];
        if (watch_entry_check(w, why, sizeof(why)) < 0)
                return fail(p, g, "%s", why);
        return 0;
}

static int parse_watch(const struct parse *p, const config_setting_t *s, struct config *c) {
        int type = config_setting_type(s);
        if (type != CONFIG_TYPE_LIST && type != CONFIG_TYPE_ARRAY)
                return fail(p, s, "watch must be a list: watch = ( { comm = \"name\"; }, { pid = 123; } );");
        free(c->watch);
        c->watch = NULL;
        c->n_watch = 0;
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
static int get_size(const struct parse *p, const config_setting_t *s, const char *name, uint64_t min, uint64_t *ret) {
        uint64_t v;
        if (config_setting_type(s) == CONFIG_TYPE_INT || config_setting_type(s) == CONFIG_TYPE_INT64) {
                long long x = config_setting_get_int64(s);
                if (x <= 0)
                        return fail(p, s, "%s must be positive", name);
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
                        return fail(p, s, "%s = \"%s\" is not a size (a number, then K, M or G)", name, str);
                v = (uint64_t) x << shift;
        } else
                return fail(p, s, "%s must be a size: 1048576 or \"1M\"", name);
        if (v < min)
                return fail(p, s, "%s must be at least %llu bytes", name, (unsigned long long) min);
        *ret = v;
        return 0;
}

/* A file mode: an octal string ("0640"); never writable by others.  Not a number: libconfig reads 0640 as
 * decimal 640. */
static int get_mode(const struct parse *p, const config_setting_t *s, const char *name, unsigned *ret) {
        if (config_setting_type(s) != CONFIG_TYPE_STRING)
                return fail(p, s, "%s must be a string, as \"0640\": a number is read as decimal (0640 is 640)", name);
        char *end;
        unsigned long m = strtoul(config_setting_get_string(s), &end, 8);
        if (*end || end == config_setting_get_string(s))
                return fail(p, s, "%s must be octal, as \"0640\"", name);
        if (m > 0777 || (m & 0002))
                return fail(p, s, "%s %04lo: what the daemon writes must not be writable by others", name, m);
        *ret = (unsigned) m;
        return 0;
}

/* "\"a\", \"b\", \"c\"": a key's accepted strings, for its messages. */
static void list_names(const char *const *names, char *buf, size_t size) {
        size_t n = 0;
        buf[0] = 0;
        for (size_t i = 0; names[i] && n < size; i++)
                n += (size_t) snprintf(buf + n, size - n, "%s\"%s\"", i ? ", " : "", names[i]);
}

static int get_enum(const struct parse *p, const config_setting_t *s, const char *name, const char *const *names,
                    unsigned *ret) {
        const char *v = config_setting_type(s) == CONFIG_TYPE_STRING ? config_setting_get_string(s) : NULL;
        for (unsigned i = 0; v && names[i]; i++)
                if (strcmp(v, names[i]) == 0) {
                        *ret = i;
                        return 0;
                }
        char known[256];
        list_names(names, known, sizeof(known));
        if (!v)
                return fail(p, s, "%s must be a string, one of %s", name, known);
        return fail(p, s, "%s = \"%s\" is not one of %s", name, v, known);
}

/* A list of names, each at most once, as bits: bit i for names[i]. */
static int get_flags(const struct parse *p, const config_setting_t *s, const char *name, const char *const *names,
                     uint64_t min, unsigned *ret) {
        char known[128];
        list_names(names, known, sizeof(known));
        int type = config_setting_type(s);
        if (type != CONFIG_TYPE_ARRAY && type != CONFIG_TYPE_LIST)
                return fail(p, s, "%s must be a list of %s: %s = [ \"%s\" ];", name, known, name, names[0]);
        unsigned flags = 0;
        for (int i = 0; i < config_setting_length(s); i++) {
                const config_setting_t *e = config_setting_get_elem(s, (unsigned) i);
                const char *v = config_setting_type(e) == CONFIG_TYPE_STRING ? config_setting_get_string(e) : NULL;
                size_t k = 0;
                while (v && names[k] && strcmp(v, names[k]) != 0)
                        k++;
                if (!v || !names[k])
                        return fail(p, e, "%s: %s%s%s is not one of %s", name, v ? "\"" : "",
                                    v ? v : "an entry that is not a string", v ? "\"" : "", known);
                if (flags & (1u << k))
                        return fail(p, e, "%s: \"%s\" is listed twice", name, v);
                flags |= 1u << k;
        }
        if ((uint64_t) config_setting_length(s) < min)
                return fail(p, s, "%s must name at least one of %s", name, known);
        *ret = flags;
        return 0;
}

static const char *const capture_names[] = { [CAPTURE_AUTO] = "auto", [CAPTURE_BPF] = "bpf",
                                             [CAPTURE_REMOTE_READ] = "remote-read", NULL };
static const char *const sink_names[] = { [SINK_AUTO] = "auto", [SINK_STDOUT] = "stdout", [SINK_JOURNAL] = "journal",
                                          [SINK_FILE] = "file", NULL };
static const char *const format_names[] = { [OUTPUT_TEXT] = "text", [OUTPUT_JSON] = "json", NULL };
/* by bit: RECORD_*, SUMMARY_BY_* */
static const char *const record_names[] = { "syscalls", "requests", "summary", NULL };
static const char *const summary_by_names[] = { "process", "file", NULL };

#define FIELD(f) .offset = offsetof(struct config, f), .size = sizeof(((struct config *) 0)->f)

const struct config_key config_keys[] = {
        { "watch", KEY_WATCH, FIELD(watch), .reload = RELOAD_LIVE, .apply = APPLY_WATCH },
        { "capture", KEY_ENUM, FIELD(capture), .names = capture_names, .reload = RELOAD_RESTART, .def = CAPTURE_AUTO },
        { "records", KEY_FLAGS, FIELD(records), .names = record_names, .reload = RELOAD_LIVE, .apply = APPLY_RECORDS,
          .def = RECORD_REQUESTS | RECORD_SUMMARY },
        { "summary_interval", KEY_UINT, FIELD(summary_interval), 1, 86400, .reload = RELOAD_LIVE,
          .apply = APPLY_RECORDS, .def = 60 },
        { "summary_by", KEY_FLAGS, FIELD(summary_by), 1, .names = summary_by_names, .reload = RELOAD_LIVE,
          .apply = APPLY_RECORDS, .def = SUMMARY_BY_PROCESS },
        { "summary_files", KEY_UINT, FIELD(summary_files), 1, FILE_SUMMARY_MAX, .reload = RELOAD_LIVE,
          .apply = APPLY_RECORDS, .def = 20 },
        { "stuck_after", KEY_UINT, FIELD(stuck_after), 0, 86400, .reload = RELOAD_LIVE, .apply = APPLY_RECORDS,
          .def = 10 },
        { "io_uring", KEY_BOOL, FIELD(io_uring), .reload = RELOAD_LIVE, .apply = APPLY_URING, .def = true },
        { "ring_memory", KEY_SIZE, FIELD(ring_memory), 64u << 10, UINT64_MAX, .reload = RELOAD_RESTART,
          .def = 256ull << 20 },
        { "ring_pages", KEY_UINT, FIELD(ring_pages), 1, RING_PAGES_MAX, .pow2 = true, .unset = "from ring_memory",
          .reload = RELOAD_RESTART },
        { "max_iocbs_per_call", KEY_UINT, FIELD(max_iocbs_per_call), 1, MAX_IOCBS_MAX, .reload = RELOAD_RESTART,
          .def = 256 },
        { "drain_interval_ms", KEY_UINT, FIELD(drain_interval_ms), 1, 60000, .reload = RELOAD_LIVE,
          .apply = APPLY_DRAIN, .def = 100 },
        { "max_inflight", KEY_UINT, FIELD(max_inflight), 16, 16u << 20, .reload = RELOAD_RESTART, .def = 65536 },
        { "max_inflight_per_process", KEY_UINT, FIELD(max_inflight_per_process), 1, 16u << 20,
          .reload = RELOAD_RESTART, .def = 65536 },
        { "priority_boost", KEY_UINT, FIELD(priority_boost), 0, 20, .reload = RELOAD_RESTART, .def = 4 },
        { "output.sink", KEY_ENUM, FIELD(output.sink), .names = sink_names, .reload = RELOAD_OUTPUT, .def = SINK_AUTO },
        { "output.format", KEY_ENUM, FIELD(output.format), .names = format_names, .reload = RELOAD_OUTPUT,
          .def = OUTPUT_TEXT },
        { "output.json_message", KEY_BOOL, FIELD(output.json_message), .reload = RELOAD_OUTPUT },
        { "output.path", KEY_PATH, FIELD(output.path), .reload = RELOAD_OUTPUT },
        { "output.max_size", KEY_SIZE, FIELD(output.max_size), 4096, UINT64_MAX, .reload = RELOAD_OUTPUT,
          .def = 64ull << 20 },
        { "output.keep", KEY_UINT, FIELD(output.keep), 1, 1000, .reload = RELOAD_OUTPUT, .def = 5 },
        { "output.mode", KEY_MODE, FIELD(output.mode), .reload = RELOAD_OUTPUT, .def = 0640 },
        { "output.queue_kib", KEY_UINT, FIELD(output.queue_kib), 64, 1u << 20, .reload = RELOAD_OUTPUT, .def = 16384 },
        { "metrics.path", KEY_PATH, FIELD(metrics.path), .reload = RELOAD_LIVE, .apply = APPLY_METRICS },
        { "metrics.mode", KEY_MODE, FIELD(metrics.mode), .reload = RELOAD_LIVE, .apply = APPLY_METRICS, .def = 0640 },
        /* the daemon joins the group at start, while it may */
        { "metrics.group", KEY_GROUP, FIELD(metrics.group), .reload = RELOAD_RESTART },
};
const size_t config_n_keys = ELEMENTSOF(config_keys);

static void store_uint(const struct config_key *k, struct config *c, uint64_t v) {
        uint8_t *at = (uint8_t *) c + k->offset;
        if (k->size == sizeof(uint64_t))
                memcpy(at, &v, sizeof(v));
        else {
                unsigned u = (unsigned) v;
                _Static_assert(sizeof(enum capture_mode) == sizeof(unsigned), "enums are stored as unsigned");
                memcpy(at, &u, sizeof(u));
        }
}

/* -1: no such group. */
static gid_t group_gid(const char *name) {
        struct group gr, *found = NULL;
        char buf[4096];
        return getgrnam_r(name, &gr, buf, sizeof(buf), &found) == 0 && found ? found->gr_gid : (gid_t) -1;
}

static int parse_key(const struct parse *p, const struct config_key *k, const config_setting_t *s, struct config *c) {
        uint64_t v = 0;
        unsigned u = 0;
        int r;
        switch (k->type) {
        case KEY_WATCH:
                return parse_watch(p, s, c);
        case KEY_FLAGS:
                r = get_flags(p, s, k->name, k->names, k->min, &u);
                v = u;
                break;
        case KEY_UINT:
                r = get_uint(p, s, k->name, k->min, k->max, k->pow2, &v);
                break;
        case KEY_SIZE:
                r = get_size(p, s, k->name, k->min, &v);
                break;
        case KEY_BOOL:
                if (config_setting_type(s) != CONFIG_TYPE_BOOL)
                        return fail(p, s, "%s must be true or false", k->name);
                *(bool *) ((uint8_t *) c + k->offset) = config_setting_get_bool(s);
                return 0;
        case KEY_ENUM:
                r = get_enum(p, s, k->name, k->names, &u);
                v = u;
                break;
        case KEY_MODE:
                r = get_mode(p, s, k->name, &u);
                v = u;
                break;
        case KEY_PATH: {
                const char *str = config_setting_type(s) == CONFIG_TYPE_STRING ? config_setting_get_string(s) : NULL;
                if (!str || str[0] != '/' || strlen(str) >= k->size)
                        return fail(p, s, "%s must be an absolute path (at most %zu bytes)", k->name, k->size - 1);
                snprintf((char *) c + k->offset, k->size, "%s", str);
                return 0;
        }
        case KEY_GROUP: {
                const char *str = config_setting_type(s) == CONFIG_TYPE_STRING ? config_setting_get_string(s) : NULL;
                if (!str || !str[0] || strlen(str) >= k->size)
                        return fail(p, s, "%s must be the name of a group (at most %zu bytes)", k->name, k->size - 1);
                if (group_gid(str) == (gid_t) -1)
                        return fail(p, s, "%s \"%s\": no such group on this host", k->name, str);
                snprintf((char *) c + k->offset, k->size, "%s", str);
                return 0;
        }
        default:
                return -EINVAL;
        }
        if (r >= 0)
                store_uint(k, c, v);
        return r;
}

/* The keys of a group ("output"), or the top level (group NULL), as "a, b, c". */
static void list_keys(const char *group, char *buf, size_t size) {
        size_t n = 0, glen = group ? strlen(group) : 0;
        const char *last_group = NULL;
        buf[0] = 0;
        for (size_t i = 0; i < config_n_keys && n < size; i++) {
                const char *name = config_keys[i].name, *dot = strchr(name, '.');
                const char *shown;
                size_t len;
                if (group) {
                        if (!dot || (size_t) (dot - name) != glen || strncmp(name, group, glen) != 0)
                                continue;
                        shown = dot + 1;
                        len = strlen(shown);
                } else if (dot) {
                        /* a group, once */
                        if (last_group && strncmp(last_group, name, (size_t) (dot - name) + 1) == 0)
                                continue;
                        last_group = name;
                        shown = name;
                        len = (size_t) (dot - name);
                } else {
                        shown = name;
                        len = strlen(name);
                }
                n += (size_t) snprintf(buf + n, size - n, "%s%.*s", n ? ", " : "", (int) len, shown);
        }
}

static const struct config_key *find_key(const char *group, const char *name) {
        for (size_t i = 0; i < config_n_keys; i++) {
                const char *full = config_keys[i].name, *dot = strchr(full, '.');
                if (group ? dot && strlen(group) == (size_t) (dot - full) && strncmp(full, group, (size_t) (dot - full)) == 0 &&
                                    strcmp(dot + 1, name) == 0
                          : !dot && strcmp(full, name) == 0)
                        return &config_keys[i];
        }
        return NULL;
}

static bool is_group(const char *name) {
        size_t len = strlen(name);
        for (size_t i = 0; i < config_n_keys; i++)
                if (strncmp(config_keys[i].name, name, len) == 0 && config_keys[i].name[len] == '.')
                        return true;
        return false;
}

static int parse_settings(const struct parse *p, const char *group, const config_setting_t *parent, struct config *c) {
        for (int i = 0; i < config_setting_length(parent); i++) {
                const config_setting_t *s = config_setting_get_elem(parent, (unsigned) i);
                const char *name = config_setting_name(s);
                const struct config_key *k = find_key(group, name);
                int r;
                if (k)
                        r = parse_key(p, k, s, c);
                else if (!group && is_group(name)) {
                        if (config_setting_type(s) != CONFIG_TYPE_GROUP)
                                return fail(p, s, "%s must be a group: %s = { ... };", name, name);
                        r = parse_settings(p, name, s, c);
                } else {
                        char known[512];
                        list_keys(group, known, sizeof(known));
                        return group ? fail(p, s, "unknown key '%s.%s' (known: %s)", group, name, known)
                                     : fail(p, s, "unknown key '%s' (known: %s)", name, known);
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

bool config_key_equal(const struct config_key *k, const struct config *a, const struct config *b) {
        const uint8_t *x = (const uint8_t *) a + k->offset, *y = (const uint8_t *) b + k->offset;
        switch (k->type) {
        case KEY_WATCH:
                if (a->n_watch != b->n_watch)
                        return false;
                for (size_t i = 0; i < a->n_watch; i++) {
                        const struct watch *v = &a->watch[i], *w = &b->watch[i];
                        if (v->keys != w->keys || v->comm_glob != w->comm_glob || v->children != w->children ||
                            v->pid != w->pid || v->uid != w->uid || strcmp(v->comm, w->comm) != 0 ||
                            strcmp(v->unit, w->unit) != 0 || strcmp(v->cgroup, w->cgroup) != 0 ||
                            strcmp(v->exe, w->exe) != 0)
                                return false;
                }
                return true;
        case KEY_PATH:
        case KEY_GROUP:
                return strcmp((const char *) x, (const char *) y) == 0;
        default:
                return memcmp(x, y, k->size) == 0;
        }
}

void config_key_format(const struct config_key *k, const struct config *c, char *buf, size_t size) {
        const uint8_t *at = (const uint8_t *) c + k->offset;
        unsigned u = 0;
        uint64_t v = 0;
        if (k->size == sizeof(unsigned))
                memcpy(&u, at, sizeof(u));
        else if (k->size == sizeof(uint64_t))
                memcpy(&v, at, sizeof(v));
        switch (k->type) {
        case KEY_WATCH:
                snprintf(buf, size, "(%zu entries)", c->n_watch);
                break;
        case KEY_FLAGS: {
                size_t n = (size_t) snprintf(buf, size, "[");
                for (unsigned i = 0; k->names[i] && n < size; i++)
                        if (u & (1u << i))
                                n += (size_t) snprintf(buf + n, size - n, " \"%s\"", k->names[i]);
                if (n < size)
                        snprintf(buf + n, size - n, " ]");
                break;
        }
        case KEY_UINT:
                if (u == 0 && k->unset)
                        snprintf(buf, size, "unset (%s)", k->unset);
                else
                        snprintf(buf, size, "%u", u);
                break;
        case KEY_SIZE:
                snprintf(buf, size, "%llu", (unsigned long long) v);
                break;
        case KEY_BOOL:
                snprintf(buf, size, "%s", *(const bool *) at ? "true" : "false");
                break;
        case KEY_ENUM:
                snprintf(buf, size, "\"%s\"", k->names[u]);
                break;
        case KEY_MODE:
                snprintf(buf, size, "\"%04o\"", u);
                break;
        case KEY_PATH:
                snprintf(buf, size, "\"%s\"", (const char *) at);
                break;
        case KEY_GROUP:
                snprintf(buf, size, "\"%s\"", *(const char *) at ? (const char *) at : c->metrics.gid != (gid_t) -1
                         ? METRICS_GROUP_DEFAULT : "root's");
                break;
        }
}

void config_key_copy(const struct config_key *k, struct config *to, const struct config *from) {
        if (k->type != KEY_WATCH)
                memcpy((uint8_t *) to + k->offset, (const uint8_t *) from + k->offset, k->size);
}

void config_changes(const struct config *running, const struct config *loaded, struct config_changes *ret) {
        *ret = (struct config_changes) { .apply = APPLY_WATCH };
        for (size_t i = 0; i < config_n_keys; i++) {
                const struct config_key *k = &config_keys[i];
                if (config_key_equal(k, loaded, running))
                        continue;
                if (k->reload == RELOAD_LIVE)
                        ret->apply |= k->apply;
                else if (k->reload == RELOAD_OUTPUT)
                        ret->new_output = true;
                else if (ret->n_kept < CONFIG_KEYS_MAX)
                        ret->kept[ret->n_kept++] = k;
        }
}

#define CONFIG_SIZE_MAX (1u << 20)

/* The whole file, checked first: a regular file (a directory or a FIFO is refused, and opening never waits for a
 * writer), and only root (or the daemon's own user) may have written it, since it decides what a root daemon
 * reads of other processes. */
static int read_config_file(const struct parse *p, const char *path, char **ret) {
        _cleanup_(closep) int fd = -1;
        /* a link on the way is followed only where no other user could have made it: the file it names may be
         * root's, but which file that is would be theirs to choose */
        int r = safe_file_open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY, &fd);
        if (r == -EXDEV) {
                snprintf(p->error, p->error_size, "%s: is reached through a symbolic link that another user could "
                         "have made: refused", path);
                return r;
        }
        if (r < 0) {
                snprintf(p->error, p->error_size, "%s: cannot open: %s", path, strerror(-r));
                return r;
        }
        struct stat st;
        if (fstat(fd, &st) < 0) {
                r = -errno;
                snprintf(p->error, p->error_size, "%s: cannot stat: %s", path, strerror(-r));
                return r;
        }
        if (!S_ISREG(st.st_mode)) {
                snprintf(p->error, p->error_size, "%s: is %s, not a file: refused", path,
                         S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO"
                         : S_ISSOCK(st.st_mode)                                      ? "a socket"
                                                                                     : "a device");
                return -EINVAL;
        }
        if (st.st_mode & S_IWOTH) {
                snprintf(p->error, p->error_size, "%s: is writable by others (mode %04o): refused; chmod o-w it",
                         path, (unsigned) (st.st_mode & 07777));
                return -EPERM;
        }
        if ((st.st_mode & S_IWGRP) && st.st_gid != 0) {
                snprintf(p->error, p->error_size, "%s: is writable by group %u (mode %04o): refused; chmod g-w it",
                         path, (unsigned) st.st_gid, (unsigned) (st.st_mode & 07777));
                return -EPERM;
        }
        if (st.st_uid != 0 && st.st_uid != geteuid()) {
                snprintf(p->error, p->error_size, "%s: is owned by uid %u, not root: refused; chown root it", path,
                         (unsigned) st.st_uid);
                return -EPERM;
        }
        if (st.st_size > CONFIG_SIZE_MAX) {
                snprintf(p->error, p->error_size, "%s: is larger than %u bytes: refused", path, CONFIG_SIZE_MAX);
                return -EFBIG;
        }
        _cleanup_(freep) char *text = malloc(CONFIG_SIZE_MAX + 1);
        if (!text)
                return -ENOMEM;
        size_t len = 0;
        for (;;) {
                ssize_t n = read(fd, text + len, CONFIG_SIZE_MAX - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        r = -errno;
                        snprintf(p->error, p->error_size, "%s: cannot read: %s", path, strerror(-r));
                        return r;
                }
                if (n == 0 || (len += (size_t) n) == CONFIG_SIZE_MAX)
                        break;
        }
        if (memchr(text, 0, len)) {
                snprintf(p->error, p->error_size, "%s: holds a NUL byte: not a config file", path);
                return -EINVAL;
        }
        text[len] = 0;
        *ret = TAKE_PTR(text);
        return 0;
}

static int fail_at(const struct parse *p, unsigned line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail_at(const struct parse *p, unsigned line, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        int r = fail_v(p, p->path, line, fmt, ap);
        va_end(ap);
        return r;
}

static bool ident_char(char c) {
        return isalnum((unsigned char) c) || c == '_' || c == '-' || c == '*';
}

/* What libconfig 1.5 would take wrongly without a word, found in the text: an @include (it would read a file
 * nobody checked), and an integer written without L past 32 bits, of which libconfig keeps the low 32 (pid =
 * 4294967297 would watch pid 1). */
static int scan_text(const struct parse *p, const char *text) {
        unsigned line = 1;
        for (const char *s = text; *s;) {
                if (*s == '\n') {
                        line++;
                        s++;
                } else if (*s == '#' || (s[0] == '/' && s[1] == '/')) {
                        s += strcspn(s, "\n");
                } else if (s[0] == '/' && s[1] == '*') {
                        for (s += 2; *s && !(s[0] == '*' && s[1] == '/'); s++)
                                line += *s == '\n';
                        s += *s ? 2 : 0;
                } else if (*s == '"') {
                        for (s++; *s && *s != '"'; s++) {
                                line += *s == '\n';
                                if (*s == '\\' && s[1])
                                        s++;
                        }
                        s += *s ? 1 : 0;
                } else if (strncmp(s, "@include", 8) == 0) {
                        return fail_at(p, line, "@include is refused: the one file is checked as a whole (owner, "
                                                "mode), and the files it would include would not be");
                } else if (isdigit((unsigned char) *s) ||
                           ((*s == '-' || *s == '+') && isdigit((unsigned char) s[1]))) {
                        const char *start = s;
                        s += *s == '-' || *s == '+';
                        bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
                        const char *digits = hex ? s + 2 : s;
                        const char *end = digits;
                        while (hex ? isxdigit((unsigned char) *end) : isdigit((unsigned char) *end))
                                end++;
                        if (!hex && (*end == '.' || *end == 'e' || *end == 'E')) {
                                s = end + 1; /* a float: libconfig takes it whole, and a key refuses it */
                                continue;
                        }
                        bool big = *end == 'L';
                        errno = 0;
                        unsigned long long v = strtoull(digits, NULL, hex ? 16 : 10);
                        bool fits = errno == 0 && (big ? v <= (unsigned long long) INT64_MAX
                                                   : hex ? v <= UINT32_MAX : v <= (unsigned long long) INT32_MAX + (*start == '-'));
                        if (!fits)
                                return fail_at(p, line, "%.*s is too large for %s, which libconfig would cut to its low "
                                               "bits%s", (int) (end - start), start,
                                               big ? "any integer" : "an integer without L",
                                               big ? "" : "; with an L (as 8589934592L) it is read whole");
                        s = end;
                        while (*s == 'L')
                                s++;
                } else if (ident_char(*s)) {
                        while (ident_char(*s))
                                s++; /* a name: its digits are no number */
                } else
                        s++;
        }
        return 0;
}

/* What the watch list may hold where it is applied: the capture's maps (unless it is never used), and the
 * kernel's filter of one page (where the capture is never used; with "auto", start says so if it must fall
 * back, and --check-config warns). */
static int check_watch_limits(const struct parse *p, const config_setting_t *s, const struct config *c) {
        unsigned pids = 0, names = 0, globs = 0, keys = 0, cgroups = 0;
        for (size_t i = 0; i < c->n_watch; i++) {
                const struct watch *w = &c->watch[i];
                cgroups += !!(w->keys & WATCH_KEY_CGROUP);
                pids += !!(w->keys & WATCH_KEY_PID);
                names += (w->keys & WATCH_KEY_COMM) && !w->comm_glob;
                globs += (w->keys & WATCH_KEY_COMM) && w->comm_glob;
                keys += !!(w->keys & WATCH_KEY_UID) + !!(w->keys & WATCH_KEY_UNIT) + !!(w->keys & WATCH_KEY_EXE);
        }
        if (cgroups > CGROUP_PATTERNS_MAX)
                return fail(p, s, "the watch list has %u cgroup entries: at most %d (the cgroup tree is searched for "
                            "all of them as cgroups come)", cgroups, CGROUP_PATTERNS_MAX);
        if (c->capture != CAPTURE_REMOTE_READ &&
            (pids > CAPTURE_MAX_IDS || names > CAPTURE_MAX_NAMES || globs > CAPTURE_MAX_GLOBS ||
             keys > CAPTURE_MAX_KEYS))
                return fail(p, s, "the watch list has %u pids, %u exact names, %u globs and %u users, units and "
                            "executables: the in-kernel capture takes at most %d, %d, %d and %d", pids, names, globs,
                            keys, CAPTURE_MAX_IDS, CAPTURE_MAX_NAMES, CAPTURE_MAX_GLOBS, CAPTURE_MAX_KEYS);
        unsigned combined = watch_combined_entries(c->watch, c->n_watch);
        if (c->capture != CAPTURE_REMOTE_READ && combined > CAPTURE_MAX_COMBINED)
                return fail(p, s, "the watch list has %u entries that combine keys or follow children: the in-kernel "
                            "capture takes at most %d", combined, CAPTURE_MAX_COMBINED);
        if (c->capture == CAPTURE_REMOTE_READ && !watch_comms_fit_filter(c->watch, c->n_watch))
                return fail(p, s, "with capture = \"remote-read\" the watch list's comm patterns make a kernel filter "
                            "longer than the %d bytes the kernel takes", FILTER_MAX);
        return 0;
}

const char *capture_mode_name(enum capture_mode m) {
        return m < ELEMENTSOF(capture_names) - 1 ? capture_names[m] : "?";
}

int config_ring_pages(const struct config *c, size_t n_cpus, size_t page_size, unsigned *ret_pages) {
        if (c->ring_pages) {
                *ret_pages = c->ring_pages;
                return 0;
        }
        uint64_t share = c->ring_memory / MAX(n_cpus, (size_t) 1) / page_size;
        if (share < RING_PAGES_FLOOR)
                return -ENOSPC;
        unsigned pages = RING_PAGES_FLOOR;
        while (pages < RING_PAGES_CEILING && pages * 2ull <= share)
                pages *= 2;
        *ret_pages = pages;
        return 0;
}

int config_load(const char *path, struct config **ret, char *error, size_t error_size) {
        char dummy[1];
        struct parse p = { .path = path, .error = error ? error : dummy, .error_size = error ? error_size : 1 };
        _cleanup_(config_freep) struct config *c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        for (size_t i = 0; i < config_n_keys; i++) {
                const struct config_key *k = &config_keys[i];
                if (k->type == KEY_BOOL)
                        *(bool *) ((uint8_t *) c + k->offset) = k->def != 0;
                else if (k->type != KEY_WATCH && k->type != KEY_PATH && k->type != KEY_GROUP)
                        store_uint(k, c, k->def);
        }

        _cleanup_(freep) char *text = NULL;
        int r = read_config_file(&p, path, &text);
        if (r >= 0)
                r = scan_text(&p, text);
        if (r < 0)
                return r;
        config_t cfg;
        config_init(&cfg);
        if (config_read_string(&cfg, text) != CONFIG_TRUE) {
                snprintf(p.error, p.error_size, "%s:%d: %s", path, config_error_line(&cfg), config_error_text(&cfg));
                r = -EINVAL;
        } else
                r = parse_settings(&p, NULL, config_root_setting(&cfg), c);
        if (r >= 0)
                r = check_watch_limits(&p, config_lookup(&cfg, "watch"), c);
        if (r >= 0 && c->output.sink == SINK_FILE && !c->output.path[0])
                r = fail(&p, config_lookup(&cfg, "output"), "output.sink = \"file\" needs output.path");
        c->metrics.gid = group_gid(c->metrics.group[0] ? c->metrics.group : METRICS_GROUP_DEFAULT);
        config_destroy(&cfg);
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

bool config_summed_in_kernel(const struct config *c) {
        return c->records == RECORD_SUMMARY && !(c->summary_by & SUMMARY_BY_FILE);
}
