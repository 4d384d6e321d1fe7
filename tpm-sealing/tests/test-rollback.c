/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Anti-rollback's formats and judgements that need no TPM: the anchor, the record, a superblock copy. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "disk-generation.h"
#include "exit-codes.h"
#include "fixture.h"
#include "rollback-anchor.h"
#include "rollback-record.h"

static uint8_t key_bytes[32];
static struct ba_secret key = { .data = key_bytes, .len = sizeof(key_bytes), .size = sizeof(key_bytes) };

static void fill_fsid(uint8_t fsid[BA_UUID_SIZE], uint8_t v) {
        memset(fsid, v, BA_UUID_SIZE);
}

static void test_anchor(void **state) {
        struct ba_rollback_anchor a = { .record_handle = 0x01b7a000, .counter_handle = 0x01b7a001,
                                        .counter_at_enroll = 0x0102030405060708 }, b;
        uint8_t buf[BA_ROLLBACK_ANCHOR_BYTES], other_bytes[32];
        struct ba_secret other = { .data = other_bytes, .len = 32, .size = 32 };

        (void) state;
        for (int i = 0; i < 32; i++)
                key_bytes[i] = other_bytes[i] = (uint8_t) (i + 1);
        other_bytes[0] ^= 1;
        fill_fsid(a.fsid, 0x5a);
        assert_int_equal(ba_rollback_anchor_encode(&a, &key, buf), 0);
        /* The documented layout: magic, big-endian handles and counter, UUID. */
        assert_memory_equal(buf, "BAANCH01\x01\xb7\xa0\x00\x01\xb7\xa0\x01\x01\x02\x03\x04\x05\x06\x07\x08", 24);
        assert_int_equal(ba_rollback_anchor_decode(buf, &key, &b), 0);
        assert_memory_equal(&a, &b, sizeof(a));
        /* Made with another key, or any byte changed: refused as not this key's. */
        assert_int_equal(ba_rollback_anchor_decode(buf, &other, &b), -EPERM);
        for (size_t i = 8; i < sizeof(buf); i += 7) {
                buf[i] ^= 0x10;
                assert_int_equal(ba_rollback_anchor_decode(buf, &key, &b), -EPERM);
                buf[i] ^= 0x10;
        }
        buf[0] = 'X';
        assert_int_equal(ba_rollback_anchor_decode(buf, &key, &b), -EBADMSG);
}

static void test_record(void **state) {
        struct ba_rollback_record r = { .generation = 12345, .counter = 7 }, s;
        uint8_t buf[BA_ROLLBACK_RECORD_SIZE];

        (void) state;
        fill_fsid(r.fsid, 0xa5);
        ba_rollback_record_encode(&r, buf);
        assert_memory_equal(buf, "BAGENR01", 8);
        assert_memory_equal(buf + 24, "\0\0\0\0\0\0\x30\x39", 8);
        assert_int_equal(ba_rollback_record_decode(buf, &s), 0);
        assert_memory_equal(&r, &s, sizeof(r));
        buf[47] = 1; /* the reserved tail */
        assert_int_equal(ba_rollback_record_decode(buf, &s), -EBADMSG);
        buf[47] = 0;
        buf[7] = '2';
        assert_int_equal(ba_rollback_record_decode(buf, &s), -EBADMSG);
}

/* A superblock copy for offset, fsid 0x5a..., device devid of 2, signed with the key. */
static void make_device_copy(uint8_t sb[BA_SB_SIZE], uint64_t offset, uint64_t generation, uint64_t devid) {
        memset(sb, 0, BA_SB_SIZE);
        fill_fsid(sb + 32, 0x5a);
        ba_put_le(sb + 48, offset, 8);
        ba_put_le(sb + 72, generation, 8);
        ba_put_le(sb + 136, 2, 8);     /* num_devices */
        ba_put_le(sb + 201, devid, 8); /* dev_item.devid */
        memcpy(sb + 64, BA_SB_MAGIC, 8);
        sb[196] = BA_SB_CSUM_TYPE_HMAC_SHA256;
        assert_int_equal(ba_superblock_sign(sb, key.data, key.len), 0);
}

static void make_copy(uint8_t sb[BA_SB_SIZE], uint64_t offset, uint64_t generation) {
        make_device_copy(sb, offset, generation, 1);
}

static void test_superblock_copy(void **state) {
        uint8_t sb[BA_SB_SIZE], fsid[BA_UUID_SIZE], other[BA_UUID_SIZE];

        (void) state;
        fill_fsid(fsid, 0x5a);
        fill_fsid(other, 0x5b);
        make_copy(sb, UINT64_C(1) << 26, 9);
        assert_int_equal(ba_sb_copy_authentic(sb, UINT64_C(1) << 26, fsid, &key), 1);
        /* A copy moved to another offset, another filesystem's, or altered: not counted. */
        assert_int_equal(ba_sb_copy_authentic(sb, 65536, fsid, &key), 0);
        assert_int_equal(ba_sb_copy_authentic(sb, UINT64_C(1) << 26, other, &key), 0);
        sb[72] ^= 1;
        assert_int_equal(ba_sb_copy_authentic(sb, UINT64_C(1) << 26, fsid, &key), 0);
}

#define PRIMARY UINT64_C(65536)
#define BACKUP (UINT64_C(1) << 26)

/* An image file of one device: its primary and backup copies at the generations given. */
static void write_device(const char *path, uint64_t devid, uint64_t primary, uint64_t backup) {
        uint8_t sb[BA_SB_SIZE];
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        assert_true(fd >= 0);
        make_device_copy(sb, PRIMARY, primary, devid);
        assert_int_equal(pwrite(fd, sb, sizeof(sb), PRIMARY), sizeof(sb));
        make_device_copy(sb, BACKUP, backup, devid);
        assert_int_equal(pwrite(fd, sb, sizeof(sb), BACKUP), sizeof(sb));
        assert_int_equal(close(fd), 0);
}

/* A filesystem of two devices: both are read, the newest copy and the oldest primary of either count. */
static void test_devices(void **state) {
        char dir[] = "/tmp/ba-test-rollback.XXXXXX", one[64], two[64];
        const char *both[] = { one, two, NULL }, *first[] = { one, NULL }, *twice[] = { one, one, NULL };
        struct ba_disk_generation g;
        uint8_t fsid[BA_UUID_SIZE];

        (void) state;
        fill_fsid(fsid, 0x5a);
        assert_non_null(mkdtemp(dir));
        snprintf(one, sizeof(one), "%s/one", dir);
        snprintf(two, sizeof(two), "%s/two", dir);
        write_device(one, 1, 12, 12);
        write_device(two, 2, 12, 14);
        assert_int_equal(ba_disk_generation_read(both, fsid, &key, 0, &g), 0);
        assert_int_equal(g.devices, 2);
        assert_int_equal(g.copies, 4);
        assert_int_equal(g.newest, 14);
        assert_int_equal(g.oldest_primary, 12);
        /* An older primary on the second device only: it is the one that counts. */
        write_device(two, 2, 9, 14);
        assert_int_equal(ba_disk_generation_read(both, fsid, &key, 0, &g), 0);
        assert_int_equal(g.oldest_primary, 9);
        /* One device missing (or one read twice under two names): the age cannot be told. */
        assert_int_equal(ba_disk_generation_read(first, fsid, &key, 0, &g), BA_EXIT_DEVICE);
        assert_int_equal(ba_disk_generation_read(twice, fsid, &key, 0, &g), BA_EXIT_DEVICE);
        assert_int_equal(unlink(one), 0);
        assert_int_equal(unlink(two), 0);
        assert_int_equal(rmdir(dir), 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_anchor),
                cmocka_unit_test(test_record),
                cmocka_unit_test(test_superblock_copy),
                cmocka_unit_test(test_devices),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
