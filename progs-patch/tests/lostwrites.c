/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A power cut for the btrfs-progs tests, as an LD_PRELOAD library.  Writes
 * to one file, the device, are durable only once an fsync() of it returns,
 * as on a disk with a volatile write cache.  At the Nth fsync() the process
 * "loses power" before the flush: the writes since the previous fsync() are
 * undone (all, or those the cache had not yet written, see LOSTWRITES_KEEP),
 * and it exits with status 137, as if killed.  The page cache of the host
 * plays no part: what is undone is gone from the file.
 *
 *   LOSTWRITES_FILE=PATH    the device (writes to other files are untouched)
 *   LOSTWRITES_CRASH_AT=N   lose power at its Nth fsync (from 1); unset: never
 *   LOSTWRITES_KEEP=odd     writes 1, 3, 5 ... since the last flush landed, the
 *                           others were lost: the cache wrote them out of order
 *   LOSTWRITES_TEAR=OFFSET  the last lost write at OFFSET (a superblock) is
 *                           torn: its first 2048 bytes landed, not the rest
 *   LOSTWRITES_COUNT=PATH   at exit, the number of fsyncs seen, into PATH
 *
 * Only pwrite()/pwrite64() and fsync()/fdatasync() are watched: they are
 * all btrfs-progs uses on a device.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TORN_BYTES 2048

struct undo {
	off_t offset;
	size_t len;
	unsigned char *old;
};

static struct {
	bool ready;
	dev_t dev;
	ino_t ino;
	unsigned long crash_at;
	bool keep_odd;
	long long tear_at;
	const char *count_path;
	unsigned long fsyncs;
	struct undo *log;
	size_t nr;
	size_t cap;
} lw = { .tear_at = -1 };

static ssize_t (*real_pwrite64)(int, const void *, size_t, off_t);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);

static void die(const char *what)
{
	fprintf(stderr, "lostwrites: %s\n", what);
	_exit(99);
}

static void write_count(void)
{
	FILE *f;

	if (!lw.count_path)
		return;
	f = fopen(lw.count_path, "w");
	if (!f)
		die("cannot write LOSTWRITES_COUNT");
	fprintf(f, "%lu\n", lw.fsyncs);
	fclose(f);
}

static void setup(void)
{
	const char *path = getenv("LOSTWRITES_FILE");
	const char *crash = getenv("LOSTWRITES_CRASH_AT");
	const char *keep = getenv("LOSTWRITES_KEEP");
	const char *tear = getenv("LOSTWRITES_TEAR");
	struct stat st;

	if (lw.ready)
		return;
	real_pwrite64 = dlsym(RTLD_NEXT, "pwrite64");
	real_fsync = dlsym(RTLD_NEXT, "fsync");
	real_fdatasync = dlsym(RTLD_NEXT, "fdatasync");
	if (!real_pwrite64 || !real_fsync || !real_fdatasync)
		die("cannot find pwrite64, fsync or fdatasync in libc");
	if (!path || stat(path, &st))
		die("LOSTWRITES_FILE must name an existing file");
	lw.dev = st.st_dev;
	lw.ino = st.st_ino;
	lw.crash_at = crash ? strtoul(crash, NULL, 10) : 0;
	lw.keep_odd = keep && !strcmp(keep, "odd");
	if (tear)
		lw.tear_at = strtoll(tear, NULL, 10);
	lw.count_path = getenv("LOSTWRITES_COUNT");
	if (lw.count_path && atexit(write_count))
		die("cannot register the count at exit");
	lw.ready = true;
}

static bool is_device(int fd)
{
	struct stat st;

	return !fstat(fd, &st) && st.st_dev == lw.dev && st.st_ino == lw.ino;
}

/* What the range held before this write, to put it back on a power cut. */
static void remember(int fd, off_t offset, size_t len)
{
	struct undo *u;
	ssize_t got;

	if (lw.nr == lw.cap) {
		lw.cap = lw.cap ? lw.cap * 2 : 64;
		lw.log = realloc(lw.log, lw.cap * sizeof(*lw.log));
		if (!lw.log)
			die("out of memory");
	}
	u = &lw.log[lw.nr++];
	u->offset = offset;
	u->len = len;
	u->old = calloc(1, len ? len : 1);
	if (!u->old)
		die("out of memory");
	got = pread(fd, u->old, len, offset);
	if (got < 0)
		die("cannot read what a write replaces");
	/* Past the end of the file reads as zeros, as the file will be. */
}

static void forget(void)
{
	size_t i;

	for (i = 0; i < lw.nr; i++)
		free(lw.log[i].old);
	lw.nr = 0;
}

static void undo(int fd, const struct undo *u, size_t skip)
{
	if (real_pwrite64(fd, u->old + skip, u->len - skip, u->offset + skip) !=
	    (ssize_t)(u->len - skip))
		die("cannot undo a write");
}

/* The power goes: the cache had written some writes, or none. */
static void power_cut(int fd)
{
	bool torn = false;
	size_t i = lw.nr;

	while (i--) {
		const struct undo *u = &lw.log[i];

		if (lw.keep_odd && i % 2 == 0)
			continue;
		if (!torn && u->offset == lw.tear_at && u->len > TORN_BYTES) {
			undo(fd, u, TORN_BYTES);
			torn = true;
			continue;
		}
		undo(fd, u, 0);
	}
	if (real_fsync(fd))
		die("cannot flush the undone writes");
	write_count();
	_exit(137);
}

static int flushed(int fd, int (*real)(int))
{
	setup();
	if (!is_device(fd))
		return real(fd);
	lw.fsyncs++;
	if (lw.fsyncs == lw.crash_at)
		power_cut(fd);
	forget();
	return real(fd);
}

ssize_t pwrite64(int fd, const void *buf, size_t len, off_t offset)
{
	setup();
	if (lw.crash_at && is_device(fd))
		remember(fd, offset, len);
	return real_pwrite64(fd, buf, len, offset);
}

ssize_t pwrite(int fd, const void *buf, size_t len, off_t offset)
{
	return pwrite64(fd, buf, len, offset);
}

int fsync(int fd)
{
	return flushed(fd, real_fsync);
}

int fdatasync(int fd)
{
	return flushed(fd, real_fdatasync);
}
