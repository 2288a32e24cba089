/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Any bytes as iocbs and io_events, and as the comm and a file's path, through the decoders and every
 * formatter: calls, requests and summaries. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aio_decode.h"
#include "util.h"
#include "format_journal.h"
#include "format_json.h"
#include "format_text.h"

/* with the message: what the members are made of is formatted too */
static const struct line_format json_format = {
        .format = OUTPUT_JSON, .json_message = true, .max_iocbs_per_call = 4,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static struct outbuf out, text;
        if (size < 1 + 16 + IOCB_SIZE + IO_EVENT_SIZE)
                return 0;
        struct iocb_info cbs[2] = {};
        struct event_info evs[2] = {};
        char comm[17] = "";
        memcpy(comm, data + 1, 16);
        const uint8_t *p = data + 17;
        iocb_decode(&cbs[0], p);
        cbs[0].iov_state = (enum mem_state) (data[0] % _MEM_STATE_MAX);
        cbs[1] = (struct iocb_info) { .addr_state = (enum mem_state) ((data[0] >> 3) % _MEM_STATE_MAX) };
        io_event_decode(&evs[0], p + IOCB_SIZE);
        evs[0].data_mismatch = data[0] & 1;
        evs[1].state = (enum mem_state) ((data[0] >> 5) % _MEM_STATE_MAX);
        struct aio_call call = {
                .syscall = (enum aio_syscall) (data[0] % _AIO_SYSCALL_MAX), .pid = 1, .tid = 2,
                .enter_time = 1, .exit_time = 2, .enter_seen = data[0] & 2, .ret = (int64_t) (int8_t) data[2],
                .n_wanted = 5, .n_items = 2, .iocbs = cbs, .events = evs, .aux_state = MEM_OK,
        };
        memcpy(call.comm, comm, sizeof(call.comm)); /* no NUL within, at times: the formats stop at 16 */
        memcpy(call.args, p, sizeof(call.args));
        memcpy(&call.cancel_iocb, &cbs[0], sizeof(cbs[0]));
        struct entry e = { .kind = ENTRY_CALL, .time = 3, .call = &call };
        outbuf_reset(&out);
        format_text(&out, &e, 4);
        format_json(&out, &text, &e, &json_format);
        format_journal(&out, &e, 4);

        /* a request on a file whose path is the input's tail, in whatever state and kind the first byte says */
        size_t plen = size - 17;
        struct path_str *path = malloc(sizeof(*path) + plen + 1);
        if (!path)
                return 0;
        *path = (struct path_str) { .refs = 1, .len = (uint32_t) plen };
        memcpy(path->s, p, plen);
        path->s[plen] = 0;
        struct request r = {
                .pid = 1, .submit_tid = 2, .reap_tid = 3, .ctx = call.args[0], .iocb = call.args[1],
                .data = cbs[0].data, .submit_time = cbs[0].data, .end_time = evs[0].data, .offset = cbs[0].offset,
                .nbytes = cbs[0].nbytes, .nbytes_known = data[0] & 4, .submit_known = data[0] & 8,
                .has_result = data[0] & 16, .opcode = cbs[0].opcode, .reqprio = cbs[0].reqprio,
                .rw_flags = cbs[0].rw_flags, .flags = cbs[0].flags, .fd = cbs[0].fd, .path = path,
                .path_state = (enum path_state) (data[2] % _PATH_STATE_MAX), .res = evs[0].res, .res2 = evs[0].res2,
                .event_data = evs[0].obj, .kind = (enum request_kind) (data[0] % _REQ_KIND_MAX),
                .end = (enum request_end) (data[2] % _END_MAX),
        };
        memcpy(r.comm, comm, sizeof(r.comm));
        r.comm[15] = 0;
        e = (struct entry) { .kind = ENTRY_REQUEST, .time = 4, .request = &r };
        format_text(&out, &e, 4);
        format_json(&out, &text, &e, &json_format);
        format_journal(&out, &e, 4);
        path_str_unref(path);

        /* a summary whose counts and latencies are the input's */
        static struct histogram h;
        histogram_reset(&h);
        struct proc_interval iv = {};
        memcpy(&iv, p, MIN(sizeof(iv) - sizeof(bool), (size_t) IOCB_SIZE));
        for (size_t i = 0; i + 8 <= plen; i += 8) {
                uint64_t v;
                memcpy(&v, p + i, 8);
                histogram_add(&h, v);
        }
        struct proc_summary sum = { .pid = 1, .comm = comm, .start = cbs[0].data, .end = evs[0].data, .iv = &iv,
                                    .inflight = data[2], .latency = &h, .last = data[0] & 1 };
        e = (struct entry) { .kind = ENTRY_SUMMARY, .time = 5, .summary = &sum };
        format_text(&out, &e, 4);
        format_json(&out, &text, &e, &json_format);
        format_journal(&out, &e, 4);
        outbuf_reset(&out);
        json_string(&out, (const char *) data, size);
        return 0;
}
