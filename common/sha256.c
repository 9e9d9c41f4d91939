/*
 * SHA-256 through libcrypto; cordon implements no hash itself.  Pure:
 * touches only the buffers it is handed.
 *
 * libcrypto's SHA-256 block functions are called directly (SHA256_Init,
 * _Update, _Final), the same code and CPU dispatch as the EVP path, but
 * without OpenSSL 3's library context: EVP_Digest, or SHA256(), which
 * wraps it, loads /etc/ssl/openssl.cnf, activates the default provider
 * and builds its method store on the first call, making much of libcrypto
 * resident in every process that hashes (still so with
 * OPENSSL_INIT_NO_LOAD_CONFIG and one EVP_MD_fetch), where the block
 * functions touch only their own pages (docs/PERFORMANCE.md, idle
 * memory, has the sizes).  A confined daemon then never
 * reads OpenSSL's configuration either.  These functions are deprecated
 * in OpenSSL 3.0, not removed: OPENSSL_API_COMPAT asks for the 1.1.1
 * declarations in this file only.
 */
#define OPENSSL_API_COMPAT 10101

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <openssl/sha.h>

#include "sha256.h"
#include "util.h"

int
sha256(const void *buf, size_t len, uint8_t out[SHA256_LEN])
{
	SHA256_CTX ctx;
	int ok;

	if (buf == NULL) {
		if (len != 0) {
			errno = EINVAL;
			return -1;
		}
		buf = "";
	}
	ok = SHA256_Init(&ctx) == 1 && SHA256_Update(&ctx, buf, len) == 1 &&
	     SHA256_Final(out, &ctx) == 1;
	explicit_bzero(&ctx, sizeof(ctx));
	if (!ok) {
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
