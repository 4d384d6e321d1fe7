/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The disk after a power cut, from a dm-log-writes log: a copy of the device
 * as it was when logging began, with the writes the kernel completed before
 * its Nth cache flush.  What completed after that flush was still in the
 * disk's volatile cache and is lost.  dm-log-writes records a write when it
 * completes and a flush when the flush completes, after the writes it made
 * durable, so the log's order is the order in which writes became durable.
 *
 *   log-replay --flushes LOG      print the number of flushes LOG holds
 *   log-replay LOG N IMAGE [odd|torn=OFFSET]
 *                                 apply to IMAGE the writes that the first
 *                                 N flushes made durable (N = 0: none), or
 *                                 every write, flushed or not, for "all";
 *                                 with "odd" also the 1st, 3rd, 5th ... of
 *                                 the writes the next flush would have made
 *                                 durable: a cache that wrote out of order;
 *                                 with "torn=OFFSET" the first 2 KiB at
 *                                 OFFSET of the last of them that wrote
 *                                 there (a superblock): a torn write
 *
 * The log format is the kernel's (drivers/md/dm-log-writes.c): a superblock
 * in sector 0, then one sector per entry, each write entry followed by its
 * data.  Marks are skipped; discards are refused, since what a discarded
 * range reads back as depends on the disk (btrfstune never discards).
 * Exit status: 0 done, 1 a malformed log or an I/O error, 2 usage.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOG_MAGIC 0x6a736677736872ULL
#define LOG_VERSION 1
#define LOG_FLUSH (1U << 0)
#define LOG_DISCARD (1U << 2)
#define LOG_MARK (1U << 3)
#define TORN_BYTES 2048

struct log_super {
	uint64_t magic;
	uint64_t version;
	uint64_t nr_entries;
	uint32_t sectorsize;
} __attribute__((packed));

struct log_entry {
	uint64_t sector;
	uint64_t nr_sectors;
	uint64_t flags;
	uint64_t data_len;
} __attribute__((packed));

struct replay {
	int log;
	off_t log_size;
	uint32_t sectorsize;
	uint64_t nr_entries;
	int image;		/* -1: only count */
	off_t image_size;
	bool all;		/* every write, or those of the first @want flushes */
	uint64_t want;
	bool odd;		/* and every other write the next flush would keep */
	long long tear_at;	/* and 2 KiB of the last of them there; -1: none */
	struct log_entry torn;	/* that write, and its data's offset in the log */
	off_t torn_data;
	uint64_t flushes;
};

static int fail(const char *what, const char *path)
{
	if (path)
		fprintf(stderr, "log-replay: %s %s: %s\n", what, path, strerror(errno));
	else
		fprintf(stderr, "log-replay: %s\n", what);
	return 1;
}

static int read_exact(int fd, void *buf, size_t len, off_t off)
{
	ssize_t n = pread(fd, buf, len, off);

	if (n < 0)
		return fail("cannot read", "the log");
	if ((size_t)n != len)
		return fail("the log ends inside an entry: truncated?", NULL);
	return 0;
}

static int open_log(struct replay *r, const char *path)
{
	struct log_super s;
	struct stat st;

	r->log = open(path, O_RDONLY | O_CLOEXEC);
	if (r->log < 0 || fstat(r->log, &st) < 0)
		return fail("cannot open", path);
	r->log_size = st.st_size;
	if (read_exact(r->log, &s, sizeof(s), 0))
		return 1;
	if (le64toh(s.magic) != LOG_MAGIC || le64toh(s.version) != LOG_VERSION)
		return fail("not a dm-log-writes log (magic or version), or the target was never removed", NULL);
	r->sectorsize = le32toh(s.sectorsize);
	if (r->sectorsize < 512 || r->sectorsize > 65536 || (r->sectorsize & (r->sectorsize - 1)))
		return fail("the log's sector size is not a power of two from 512 to 65536", NULL);
	r->nr_entries = le64toh(s.nr_entries);
	return 0;
}

/* Copy the data of a write entry, at log offset @data, to the image. */
static int apply_write(struct replay *r, const struct log_entry *e, off_t data)
{
	size_t len = e->nr_sectors * r->sectorsize;
	char *buf;
	int ret = 0;

	if (e->sector > (uint64_t)r->image_size / r->sectorsize ||
	    e->nr_sectors > (uint64_t)r->image_size / r->sectorsize - e->sector)
		return fail("a logged write lies beyond the end of the image: not the logged device's copy?", NULL);
	buf = malloc(len);
	if (!buf)
		return fail("out of memory", NULL);
	if (read_exact(r->log, buf, len, data))
		ret = 1;
	else if (pwrite(r->image, buf, len, (off_t)(e->sector * r->sectorsize)) != (ssize_t)len)
		ret = fail("cannot write", "the image");
	free(buf);
	return ret;
}

/*
 * The entry at log offset *@off into @e, its data's offset into *@data;
 * moves *@off past both.
 */
static int next_entry(struct replay *r, off_t *off, struct log_entry *e, off_t *data)
{
	if (read_exact(r->log, e, sizeof(*e), *off))
		return 1;
	e->sector = le64toh(e->sector);
	e->nr_sectors = le64toh(e->nr_sectors);
	e->flags = le64toh(e->flags);
	if (e->flags & LOG_DISCARD)
		return fail("the log holds a discard, which this replay does not model", NULL);
	*data = *off + r->sectorsize;
	if (e->nr_sectors > (uint64_t)(r->log_size - *data) / r->sectorsize)
		return fail("an entry's data runs past the end of the log", NULL);
	*off = *data + (off_t)(e->nr_sectors * r->sectorsize);
	return 0;
}

/* Whether write @e wrote the TORN_BYTES at byte @at. */
static bool covers(const struct replay *r, const struct log_entry *e, long long at)
{
	uint64_t first = (uint64_t)at / r->sectorsize;
	uint64_t last = ((uint64_t)at + TORN_BYTES - 1) / r->sectorsize;

	return e->nr_sectors && e->sector <= first && last < e->sector + e->nr_sectors;
}

/* The torn write: its TORN_BYTES at tear_at landed, the rest did not. */
static int tear(struct replay *r)
{
	off_t skip = (off_t)(r->tear_at - (long long)(r->torn.sector * r->sectorsize));
	char buf[TORN_BYTES];

	if (r->tear_at > r->image_size - TORN_BYTES)
		return fail("the torn write lies beyond the end of the image", NULL);
	if (read_exact(r->log, buf, sizeof(buf), r->torn_data + skip))
		return 1;
	if (pwrite(r->image, buf, sizeof(buf), (off_t)r->tear_at) != (ssize_t)sizeof(buf))
		return fail("cannot write", "the image");
	return 0;
}

/*
 * Past the wanted flush (cut), writes were in the volatile cache: lost, or
 * with @odd the 1st, 3rd, ... of them landed, up to the next flush.  The data
 * of a flush entry is written after the flush it carries.
 */
static int replay_log(struct replay *r)
{
	off_t off = r->sectorsize, data;
	uint64_t i, unflushed = 0;
	struct log_entry e;
	bool cut = false;

	for (i = 0; i < r->nr_entries; i++) {
		if (next_entry(r, &off, &e, &data))
			return 1;
		if (e.flags & LOG_FLUSH) {
			if (cut)
				break;
			r->flushes++;
		}
		cut = cut || (!r->all && r->flushes == r->want);
		if (r->image < 0 || !e.nr_sectors || (e.flags & LOG_MARK))
			continue;
		if (cut && r->tear_at >= 0 && covers(r, &e, r->tear_at)) {
			r->torn = e;
			r->torn_data = data;
		}
		if (cut && (!r->odd || unflushed++ % 2))
			continue;
		if (apply_write(r, &e, data))
			return 1;
	}
	if (!r->all && r->flushes < r->want) {
		fprintf(stderr, "log-replay: the log holds %" PRIu64 " flushes, not %" PRIu64 "\n",
			r->flushes, r->want);
		return 1;
	}
	if (r->torn.nr_sectors && tear(r))
		return 1;
	if (r->image >= 0 && fsync(r->image) < 0)
		return fail("cannot fsync", "the image");
	return 0;
}

static int usage(void)
{
	fputs("usage: log-replay --flushes LOG\n"
	      "       log-replay LOG N|all IMAGE [odd|torn=OFFSET]\n", stderr);
	return 2;
}

/* "all" or a number of flushes. */
static int parse_want(struct replay *r, const char *arg)
{
	char *end;

	if (!strcmp(arg, "all")) {
		r->all = true;
		return 0;
	}
	errno = 0;
	r->want = strtoull(arg, &end, 10);
	return errno || end == arg || *end || arg[0] == '-' ? -1 : 0;
}

/* How the writes after the last flush wanted are lost: "odd" or "torn=OFFSET". */
static int parse_lost(struct replay *r, const char *arg)
{
	char *end;

	if (!strcmp(arg, "odd")) {
		r->odd = true;
		return 0;
	}
	if (strncmp(arg, "torn=", 5) || !isdigit((unsigned char)arg[5]))
		return -1;
	errno = 0;
	r->tear_at = strtoll(arg + 5, &end, 10);
	return errno || *end ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct replay r = { .log = -1, .image = -1, .tear_at = -1 };
	struct stat st;
	int ret;

	if (argc == 3 && !strcmp(argv[1], "--flushes")) {
		r.all = true;
		ret = open_log(&r, argv[2]) || replay_log(&r);
		if (!ret)
			printf("%" PRIu64 "\n", r.flushes);
	} else if (argc == 4 || argc == 5) {
		if (parse_want(&r, argv[2]) || (argc == 5 && (r.all || parse_lost(&r, argv[4]))))
			return usage();
		ret = open_log(&r, argv[1]);
		if (!ret) {
			r.image = open(argv[3], O_WRONLY | O_CLOEXEC);
			if (r.image < 0 || fstat(r.image, &st) < 0)
				ret = fail("cannot open", argv[3]);
			else
				r.image_size = st.st_size;
		}
		ret = ret || replay_log(&r);
	} else {
		return usage();
	}
	if (r.image >= 0)
		close(r.image);
	if (r.log >= 0)
		close(r.log);
	return ret;
}
