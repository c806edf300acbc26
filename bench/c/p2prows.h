/*
 * p2prows.h - the point-to-point rows (issue 15) that rmabench.c (over MPI)
 * and p2plimit.c (the plain-C limit) measure, and the answers they check.
 * bench/cmd/rmabench (shmrun) has the same rows and the same formulas
 * (p2p.go).
 *
 * Ranks pair as (r, r^1): with 8 ranks four pairs run at once (the OSU
 * multi-pair method); a rank without a partner idles. Every row is timed
 * from the first rank's start to the last rank's end and reported per
 * message:
 *   - pingpong_SIZE: the even rank Sends, the odd rank Recvs and Sends back
 *     (blocking calls); a round trip is two messages, so the figure is the
 *     one-way latency, half a round trip (osu_latency);
 *   - bw_SIZE, msgrate_8: a window of P2P_WINDOW Isends from the even rank,
 *     P2P_WINDOW Irecvs posted by the odd one, Waitall on both, then a 0-byte
 *     ack from the receiver to the sender (osu_bw); the figure is the time
 *     per message, so bandwidth is SIZE / time and the message rate 1 / time;
 *   - msgrate_8_persistent: msgrate_8 with persistent requests, made once
 *     (MPI_Send_init, MPI_Recv_init), each window started by MPI_Startall
 *     and completed by MPI_Waitall.
 *
 * Answers: every message carries a stamp (its operation's sequence number,
 * the pair, its slot and its direction) in its first and last 8 bytes; the
 * receiver checks it after every message (two loads, the same in every
 * runtime). After the timed batches one more operation sends a full pattern
 * into a poisoned buffer and checks every byte and the received count.
 * Wrong answers are counted and reported like the collective rows'
 * ("INFO check NAME ok|WRONG").
 */
#ifndef P2PROWS_H
#define P2PROWS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum p2p_method {
	P2P_PINGPONG,
	P2P_WINDOW,
	P2P_PERSIST, /* P2P_WINDOW with persistent requests */
};

struct p2p_row {
	const char *name;
	enum p2p_method method;
	size_t bytes; /* per message */
};

#define P2P_WINDOW_LEN 64 /* messages in flight per window (osu_bw's 64) */
#define P2P_TAG_DATA 1
#define P2P_TAG_ACK 2

static const struct p2p_row p2p_rows[] = {
	{"pingpong_0", P2P_PINGPONG, 0},
	{"pingpong_8", P2P_PINGPONG, 8},
	{"pingpong_4k", P2P_PINGPONG, 4096},
	{"pingpong_8k", P2P_PINGPONG, 8192},
	{"pingpong_64k", P2P_PINGPONG, 65536},
	{"pingpong_1m", P2P_PINGPONG, 1 << 20},
	{"pingpong_4m", P2P_PINGPONG, 4 << 20},
	{"pingpong_16m", P2P_PINGPONG, 16 << 20},
	{"bw_64k", P2P_WINDOW, 65536},
	{"bw_1m", P2P_WINDOW, 1 << 20},
	{"msgrate_8", P2P_WINDOW, 8},
	{"msgrate_8_persistent", P2P_PERSIST, 8},
};
#define NP2P ((int)(sizeof p2p_rows / sizeof p2p_rows[0]))

/* Messages per timed operation: a round trip, or a window. */
static inline int p2p_per_op(const struct p2p_row *row)
{
	return row->method == P2P_PINGPONG ? 2 : P2P_WINDOW_LEN;
}

/* Buffers per side: a window whose messages fit in a page together gets a
 * slot per message (each checked on its own); a larger one sends one
 * buffer P2P_WINDOW_LEN times into one receive buffer, as osu_bw does, so
 * the buffers stay in cache the same way in every runtime. */
static inline int p2p_slots(const struct p2p_row *row)
{
	return row->method != P2P_PINGPONG && row->bytes * P2P_WINDOW_LEN <= 4096 ? P2P_WINDOW_LEN
										  : 1;
}

/* Bytes from one slot to the next (a whole number of 8-byte words). */
static inline size_t p2p_stride(const struct p2p_row *row)
{
	return (row->bytes + 7) & ~(size_t)7;
}

/* The stamp of the message in slot i of operation seq (from 1) of pair
 * (ranks 2*pair, 2*pair+1), sent by the even rank (dir 0) or the odd one
 * (dir 1). Never 0. */
static inline uint64_t p2p_stamp(int64_t seq, int pair, int i, int dir)
{
	return (uint64_t)seq << 24 | (uint64_t)(pair & 0xffff) << 8 | (uint64_t)i << 1 |
	       (uint64_t)dir;
}

/* Write the stamp into the first and last 8 bytes of a message (nothing
 * for messages shorter than 8 bytes). */
static inline void p2p_put_stamp(char *buf, size_t len, uint64_t v)
{
	if (len < 8)
		return;
	memcpy(buf, &v, 8);
	memcpy(buf + len - 8, &v, 8);
}

static inline int p2p_stamp_ok(const char *buf, size_t len, uint64_t v)
{
	uint64_t a, b;
	if (len < 8)
		return 1;
	memcpy(&a, buf, 8);
	memcpy(&b, buf + len - 8, 8);
	return a == v && b == v;
}

/* Byte j of the full pattern of slot i of pair's message in direction dir,
 * and the poison a receive buffer holds before the checked operation
 * (every byte differs from the pattern's). */
static inline unsigned char p2p_pattern(size_t j, int pair, int i, int dir)
{
	return (unsigned char)(j * 131 + j / 251 + (size_t)pair * 7 + (size_t)i * 3 + (size_t)dir * 5 + 1);
}

static inline void p2p_fill(char *buf, size_t len, int pair, int i, int dir)
{
	for (size_t j = 0; j < len; j++)
		buf[j] = (char)p2p_pattern(j, pair, i, dir);
}

static inline void p2p_poison(char *buf, size_t len, int pair, int i, int dir)
{
	for (size_t j = 0; j < len; j++)
		buf[j] = (char)~p2p_pattern(j, pair, i, dir);
}

/* Check a fully patterned message: 0 if right, else 1 after an "INFO check
 * NAME WRONG" line naming the first wrong byte. */
static inline int p2p_verify(const char *name, int rank, const char *buf, size_t len, int pair,
			     int i, int dir)
{
	for (size_t j = 0; j < len; j++) {
		unsigned char want = p2p_pattern(j, pair, i, dir);
		if ((unsigned char)buf[j] != want) {
			printf("INFO check %s WRONG on rank %d: slot %d byte %zu of %zu is %u, want %u\n",
			       name, rank, i, j, len, (unsigned char)buf[j], want);
			fflush(stdout);
			return 1;
		}
	}
	return 0;
}

/* Say once per row and rank that a stamp was wrong; count every one. */
static inline void p2p_stamp_wrong(const char *name, int rank, long *wrong, const char *buf,
				   size_t len, uint64_t v)
{
	if (!(*wrong)++) {
		uint64_t a = 0, b = 0;
		memcpy(&a, buf, 8);
		memcpy(&b, buf + len - 8, 8);
		printf("INFO check %s WRONG on rank %d: stamp %#llx ... %#llx, want %#llx\n", name,
		       rank, (unsigned long long)a, (unsigned long long)b, (unsigned long long)v);
		fflush(stdout);
	}
}

#endif
