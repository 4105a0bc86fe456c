/*
 * The OpenSSL peer of the report, compiled against a recent OpenSSL built
 * from source (build.rs). Only the mdu_ossl_* functions stay global: the
 * OpenSSL inside is made local to one object, so it does not meet the
 * system OpenSSL that the rest of the binary links.
 */
#include <stddef.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

/* In libcrypto on x86_64: nonzero when the AVX-512 XTS code runs here. */
int aesni_xts_avx512_eligible(void);

/* An EVP context for `name` (e.g. "AES-256-XTS") keyed with `key`, no
 * padding; `enc` 1 encrypts, 0 decrypts. NULL on failure. */
void *mdu_ossl_new(const char *name, const unsigned char *key, int enc)
{
    EVP_CIPHER *cipher = EVP_CIPHER_fetch(NULL, name, NULL);
    EVP_CIPHER_CTX *ctx;

    if (cipher == NULL)
        return NULL;
    ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL || !EVP_CipherInit_ex2(ctx, cipher, key, NULL, enc, NULL)) {
        EVP_CIPHER_CTX_free(ctx);
        EVP_CIPHER_free(cipher);
        return NULL;
    }
    EVP_CIPHER_free(cipher);
    EVP_CIPHER_CTX_set_padding(ctx, 0);
    return ctx;
}

/* One message of `len` bytes under `iv` (16 bytes): the IV is set, then
 * one update. 1 when all `len` bytes came out, 0 otherwise. */
int mdu_ossl_crypt(void *ctx, const unsigned char *iv, const unsigned char *src,
                   unsigned char *dst, size_t len)
{
    int out = 0;

    if (len > 0x7fffffff)
        return 0;
    if (!EVP_CipherInit_ex2(ctx, NULL, NULL, iv, -1, NULL))
        return 0;
    if (!EVP_CipherUpdate(ctx, dst, &out, src, (int)len))
        return 0;
    return (size_t)out == len;
}

void mdu_ossl_free(void *ctx)
{
    EVP_CIPHER_CTX_free(ctx);
}

/* "OpenSSL 3.x.y <date>". */
const char *mdu_ossl_version(void)
{
    return OpenSSL_version(OPENSSL_VERSION);
}

/* Whether OpenSSL's AVX-512 XTS path (aesni-xts-avx512) is eligible on
 * this CPU, by OpenSSL's own test. */
int mdu_ossl_xts_avx512(void)
{
    return aesni_xts_avx512_eligible() != 0;
}
