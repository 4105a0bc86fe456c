/*
 * C baselines for the report: the two base64url encoders the Linux kernel
 * used for fscrypt no-key names, written from their description.
 *
 *  - mdu_c_b64url_bitstream: the 2021-2025 fscrypt encoder. It feeds every
 *    byte into a bit accumulator and emits one character whenever six or
 *    more bits are pending.
 *  - mdu_c_b64url_block: the block encoder of the generic kernel base64
 *    rework: three input bytes form one 24-bit value that yields four
 *    characters; a one- or two-byte tail yields two or three characters.
 *
 * Both write base64url without padding and return the number of characters.
 * The caller provides an output of at least ceil(4 * len / 3) bytes.
 */
#include <stddef.h>
#include <stdint.h>

static const char b64url_table[64] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

size_t mdu_c_b64url_bitstream(const uint8_t *src, size_t len, char *dst)
{
	uint32_t acc = 0;
	int bits = 0;
	char *cp = dst;
	size_t i;

	for (i = 0; i < len; i++) {
		acc = (acc << 8) | src[i];
		bits += 8;
		do {
			bits -= 6;
			*cp++ = b64url_table[(acc >> bits) & 0x3f];
		} while (bits >= 6);
	}
	if (bits)
		*cp++ = b64url_table[(acc << (6 - bits)) & 0x3f];
	return (size_t)(cp - dst);
}

size_t mdu_c_b64url_block(const uint8_t *src, size_t len, char *dst)
{
	char *cp = dst;
	uint32_t v;

	while (len >= 3) {
		v = ((uint32_t)src[0] << 16) | ((uint32_t)src[1] << 8) | src[2];
		cp[0] = b64url_table[(v >> 18) & 0x3f];
		cp[1] = b64url_table[(v >> 12) & 0x3f];
		cp[2] = b64url_table[(v >> 6) & 0x3f];
		cp[3] = b64url_table[v & 0x3f];
		cp += 4;
		src += 3;
		len -= 3;
	}
	if (len == 2) {
		v = ((uint32_t)src[0] << 16) | ((uint32_t)src[1] << 8);
		cp[0] = b64url_table[(v >> 18) & 0x3f];
		cp[1] = b64url_table[(v >> 12) & 0x3f];
		cp[2] = b64url_table[(v >> 6) & 0x3f];
		cp += 3;
	} else if (len == 1) {
		v = (uint32_t)src[0] << 16;
		cp[0] = b64url_table[(v >> 18) & 0x3f];
		cp[1] = b64url_table[(v >> 12) & 0x3f];
		cp += 2;
	}
	return (size_t)(cp - dst);
}
