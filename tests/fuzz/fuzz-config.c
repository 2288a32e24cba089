/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Any bytes as a configuration file, then the kernel filter built from what loads. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "config.h"
#include "watch.h"

static char path[64];

static void remove_path(void) {
        (void) unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (!path[0]) {
                snprintf(path, sizeof(path), "%s/aiotraced-fuzz-config.%d",
                         access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (int) getpid());
                atexit(remove_path); /* libFuzzer ends by exit(): every run had left its file behind */
        }
        FILE *f = fopen(path, "we");
        if (!f)
                abort();
        fwrite(data, 1, size, f);
        fclose(f);
        struct config *c = NULL;
        char error[512];
        if (config_load(path, &c, error, sizeof(error)) == 0) {
                uint32_t tids[3] = { 1, 2, 4 };
                char *filter = NULL;
                if (watch_filter(c->watch, c->n_watch, tids, 3, "common_pid", 1, &filter) == 0)
                        free(filter);
                config_free(c);
        }
        return 0;
}
