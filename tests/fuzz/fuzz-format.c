/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Any bytes as iocbs and io_events, and as the comm, through the decoders and every formatter. */
#include <stdio.h>
#include <string.h>

#include "aio_decode.h"
#include "format_journal.h"
#include "format_json.h"
#include "format_text.h"

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
                .syscall = (enum aio_syscall) (data[0] % _AIO_SYSCALL_MAX), .pid = 1, .tid = 2, .comm = comm,
                .enter_time = 1, .exit_time = 2, .enter_seen = data[0] & 2, .ret = (int64_t) (int8_t) data[2],
                .n_wanted = 5, .n_items = 2, .iocbs = cbs, .events = evs, .aux_state = MEM_OK,
        };
        memcpy(call.args, p, sizeof(call.args));
        memcpy(&call.cancel_iocb, &cbs[0], sizeof(cbs[0]));
        struct entry e = { .kind = ENTRY_CALL, .time = 3, .call = &call };
        outbuf_reset(&out);
        format_text(&out, &e, 4);
        format_json(&out, &text, &e, 4, 0);
        format_journal(&out, &text, &e, 4);
        outbuf_reset(&out);
        json_string(&out, (const char *) data, size);
        return 0;
}
