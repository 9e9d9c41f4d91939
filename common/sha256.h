/*
 * SHA-256 through libcrypto's EVP interface; cordon hashes nothing itself.
 */
#ifndef CORDON_SHA256_H
#define CORDON_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN     32
#define SHA256_HEX_LEN 64

int sha256(const void *buf, size_t len, uint8_t out[SHA256_LEN]);
/* Lowercase hex, NUL-terminated: out must hold 65 bytes. */
int sha256_hex(const void *buf, size_t len, char out[SHA256_HEX_LEN + 1]);

#endif
