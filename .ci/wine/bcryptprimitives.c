/* bcryptprimitives.dll for Wine 8 (Debian 12), which lacks it: Rust's standard library
 * seeds its hash maps with ProcessPrng from this DLL (Windows 10 and later have it).
 * Only for running the Windows build's tests under Wine (.ci/wine-tests); never shipped.
 * ProcessPrng fills the buffer from the system's generator (RtlGenRandom). */
#include <windows.h>
#include <ntsecapi.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!RtlGenRandom(data, n)) return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}
