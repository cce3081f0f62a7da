/* A stand-in for Windows' bcryptprimitives.dll, for Wine 8.0 (Debian 12), which lacks its
 * `ProcessPrng`: Rust's standard library imports it for every random number (HashMap seeds,
 * tempfile names), so without it no Rust program starts there. It asks BCryptGenRandom for the
 * same system randomness. Built by .ci/wine-smoke with mingw-w64 and copied into the test's own
 * Wine prefix; never part of a2c. */
#include <windows.h>
#include <bcrypt.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG chunk = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!BCRYPT_SUCCESS(BCryptGenRandom(NULL, data, chunk, BCRYPT_USE_SYSTEM_PREFERRED_RNG)))
            return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}
