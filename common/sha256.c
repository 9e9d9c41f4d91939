/*
 * SHA-256 through libcrypto's EVP one-shot interface; cordon implements
 * no hash itself.  Pure: touches only the buffers it is handed.
 */
#include <errno.h>
#include <stdint.h>

#include <openssl/evp.h>

#include "sha256.h"
#include "util.h"

int
sha256(const void *buf, size_t len, uint8_t out[SHA256_LEN])
{
	unsigned int outlen = 0;

	if (buf == NULL) {
		if (len != 0) {
			errno = EINVAL;
			return -1;
		}
		buf = "";
	}
	if (EVP_Digest(buf, len, out, &outlen, EVP_sha256(), NULL) != 1 ||
	    outlen != SHA256_LEN) {
		errno = EIO;
		return -1;
	}
	return 0;
}

int
sha256_hex(const void *buf, size_t len, char out[SHA256_HEX_LEN + 1])
{
	uint8_t md[SHA256_LEN];

	if (sha256(buf, len, md) == -1)
		return -1;
	hex_encode(md, sizeof(md), out);
	return 0;
}
