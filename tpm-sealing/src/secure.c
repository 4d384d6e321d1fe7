/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <unistd.h>

#include "log.h"
#include "secure.h"

int ba_harden_process(void) {
        struct rlimit rl = { 0, 0 };

        if (setrlimit(RLIMIT_CORE, &rl) < 0)
                return log_error_errno(errno, "Cannot disable core dumps (setrlimit RLIMIT_CORE)");
        if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
                return log_error_errno(errno, "Cannot make the process non-dumpable (prctl PR_SET_DUMPABLE)");
        return 0;
}

int ba_secret_new(struct ba_secret *s, size_t size) {
        long page = sysconf(_SC_PAGESIZE);
        size_t map_size;
        void *p;

        memset(s, 0, sizeof(*s));
        if (page <= 0)
                page = 4096;
        map_size = (size + (size_t) page - 1) / (size_t) page * (size_t) page;
        if (map_size == 0)
                map_size = (size_t) page;
        p = mmap(NULL, map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
                return -errno;
        /* Best effort: without CAP_IPC_LOCK the limit may be hit; the wipe still happens. */
        if (mlock(p, map_size) < 0)
                log_debug("mlock of a secret buffer failed: %s", strerror(errno));
        (void) madvise(p, map_size, MADV_DONTDUMP);
        s->data = p;
        s->size = size;
        s->map_size = map_size;
        return 0;
}

void ba_secret_free(struct ba_secret *s) {
        if (!s || !s->data)
                return;
        explicit_bzero(s->data, s->map_size);
        (void) munlock(s->data, s->map_size);
        (void) munmap(s->data, s->map_size);
        memset(s, 0, sizeof(*s));
}

int ba_random_bytes(void *p, size_t n) {
        uint8_t *out = p;

        while (n > 0) {
                ssize_t got = getrandom(out, n, 0);

                if (got < 0 && errno == EINTR)
                        continue;
                if (got < 0)
                        return -errno;
                out += got;
                n -= (size_t) got;
        }
        return 0;
}
