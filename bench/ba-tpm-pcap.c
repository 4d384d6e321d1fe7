/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ba-tpm-pcap: list the TPM commands in a capture made by tpm2-tss's pcap
 * TCTI (TCTI_PCAP_FILE): pcapng, link type IPv4, every command a TCP
 * segment to port 2321 and every response one from it.
 *
 *   ba-tpm-pcap FILE
 *
 * Prints one line per command, "N CODE NAME RC TPM_MS CLIENT_MS", by the
 * capture's timestamps: TPM_MS from the command to its response (the TPM,
 * its driver and the resource manager), CLIENT_MS from the previous
 * response to this command (the client's own work: marshalling, session
 * HMACs, parameter encryption, the salt's ECDH); then a summary line
 * "commands=N span_ms=X tpm_ms=X client_ms=X rsa_primary=0|1".  A
 * CreatePrimary names the algorithm of its template, e.g.
 * CreatePrimary(ECC).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TPM_PORT 2321
#define MAX_BLOCK (16 * 1024 * 1024)

static const struct {
        uint32_t code;
        const char *name;
} names[] = {
        { 0x120, "EvictControl" },      { 0x131, "CreatePrimary" },  { 0x13c, "PCR_Event" },
        { 0x143, "SelfTest" },          { 0x144, "Startup" },        { 0x14e, "NV_Read" },
        { 0x153, "Create" },            { 0x157, "Load" },           { 0x15e, "Unseal" },
        { 0x161, "ContextLoad" },       { 0x162, "ContextSave" },    { 0x165, "FlushContext" },
        { 0x167, "LoadExternal" },      { 0x169, "NV_ReadPublic" },  { 0x16b, "PolicyAuthValue" },
        { 0x173, "ReadPublic" },        { 0x176, "StartAuthSession" }, { 0x17a, "GetCapability" },
        { 0x17b, "GetRandom" },         { 0x17c, "GetTestResult" },  { 0x17e, "PCR_Read" },
        { 0x17f, "PolicyPCR" },         { 0x180, "PolicyRestart" },  { 0x182, "PCR_Extend" },
        { 0x189, "PolicyGetDigest" },   { 0x18a, "TestParms" },
};

static uint32_t le32(const uint8_t *p) {
        return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

static uint32_t be32(const uint8_t *p) {
        return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | (uint32_t) p[3];
}

static uint16_t be16(const uint8_t *p) {
        return (uint16_t) (p[0] << 8 | p[1]);
}

static const char *cc_name(uint32_t cc) {
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if (names[i].code == cc)
                        return names[i].name;
        return "other";
}

/* The algorithm of a CreatePrimary's public template, or 0 if unreadable. */
static uint16_t primary_alg(const uint8_t *cmd, uint32_t len) {
        uint32_t off = 10 + 4, auth;

        if (len < off + 4)
                return 0;
        auth = be32(cmd + off);
        off += 4 + auth;
        if (len < off + 2)
                return 0;
        off += 2 + be16(cmd + off); /* inSensitive */
        if (len < off + 4)
                return 0;
        return be16(cmd + off + 2); /* inPublic.size, then publicArea.type */
}

struct state {
        unsigned commands;
        int pending;
        uint32_t cc;
        double sent, first, last, tpm, client;
        int rsa_primary;
};

static void on_segment(struct state *s, double ts, int to_tpm, const uint8_t *p, uint32_t len) {
        uint16_t tag;

        if (len < 10)
                return;
        tag = be16(p);
        if (tag != 0x8001 && tag != 0x8002)
                return; /* a continuation of a longer message */
        if (to_tpm) {
                s->cc = be32(p + 6);
                s->sent = ts;
                s->pending = 1;
                if (s->commands++ == 0)
                        s->first = s->last = ts;
                s->client += ts - s->last;
                if (s->cc == 0x131) {
                        uint16_t alg = primary_alg(p, len);

                        s->rsa_primary |= alg == 0x0001;
                        printf("%u 0x%08" PRIx32 " CreatePrimary(%s)", s->commands, s->cc,
                               alg == 0x0001 ? "RSA" : alg == 0x0023 ? "ECC" : "other");
                } else {
                        printf("%u 0x%08" PRIx32 " %s", s->commands, s->cc, cc_name(s->cc));
                }
        } else if (s->pending) {
                printf(" 0x%08" PRIx32 " %.3f %.3f\n", be32(p + 6), (ts - s->sent) * 1e3,
                       (s->sent - s->last) * 1e3);
                s->tpm += ts - s->sent;
                s->pending = 0;
                s->last = ts;
        }
}

/* An Enhanced Packet Block's body: IPv4, TCP, then the TPM bytes. */
static void on_packet(struct state *s, const uint8_t *b, uint32_t len, double tsres) {
        uint32_t caplen, ihl, thl;
        const uint8_t *ip, *tcp;
        double ts;

        if (len < 20)
                return;
        ts = (double) (((uint64_t) le32(b + 4) << 32) | le32(b + 8)) * tsres;
        caplen = le32(b + 12);
        if (caplen > len - 20)
                return;
        ip = b + 20;
        if (caplen < 20 || (ip[0] >> 4) != 4)
                return;
        ihl = (uint32_t) (ip[0] & 0x0f) * 4;
        if (caplen < ihl + 20 || ip[9] != 6)
                return;
        tcp = ip + ihl;
        thl = (uint32_t) (tcp[12] >> 4) * 4;
        if (caplen < ihl + thl)
                return;
        on_segment(s, ts, be16(tcp + 2) == TPM_PORT, tcp + thl, caplen - ihl - thl);
}

int main(int argc, char **argv) {
        struct state s = { 0 };
        uint8_t head[8], *body;
        double tsres = 1e-6; /* pcapng default; the TCTI writes no if_tsresol */
        FILE *f;

        if (argc != 2) {
                fputs("usage: ba-tpm-pcap FILE\n", stderr);
                return 2;
        }
        f = fopen(argv[1], "rb");
        if (!f) {
                perror(argv[1]);
                return 1;
        }
        while (fread(head, 1, 8, f) == 8) {
                uint32_t type = le32(head), total = le32(head + 4);

                if (total < 12 || total > MAX_BLOCK || total % 4) {
                        fprintf(stderr, "ba-tpm-pcap: %s: bad block length %" PRIu32 "\n", argv[1], total);
                        return 1;
                }
                body = malloc(total - 8);
                if (!body || fread(body, 1, total - 8, f) != total - 8) {
                        fprintf(stderr, "ba-tpm-pcap: %s: truncated block\n", argv[1]);
                        return 1;
                }
                if (type == 0x0a0d0d0a && le32(body) != 0x1a2b3c4d) {
                        fprintf(stderr, "ba-tpm-pcap: %s: not a little-endian pcapng file\n", argv[1]);
                        return 1;
                }
                if (type == 6)
                        on_packet(&s, body, total - 12, tsres);
                free(body);
        }
        fclose(f);
        if (s.pending)
                printf(" none - -\n");
        if (s.commands == 0) {
                fprintf(stderr, "ba-tpm-pcap: %s holds no TPM command\n", argv[1]);
                return 1;
        }
        printf("commands=%u span_ms=%.3f tpm_ms=%.3f client_ms=%.3f rsa_primary=%d\n", s.commands,
               (s.last - s.first) * 1e3, s.tpm * 1e3, s.client * 1e3, s.rsa_primary);
        return 0;
}
