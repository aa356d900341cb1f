/*
 * redirect.h -- file descriptor 2 pointed at another descriptor for a while, to capture
 * what the default reports print on stderr (POSIX, Windows and emscripten; tests only).
 *
 * POSIX: dup and dup2; Windows: _dup and _dup2. Emscripten's dup reopens the descriptor's path (fd
 * 2 has none) and its dup2 closes node's own fd 2 when it replaces it, so under emscripten the
 * runtime's table of streams is edited instead, on the main thread that owns it: fd 2's entry
 * becomes fd's (the same stream: one file position) until stderr_redirect_end.
 */
#ifndef OPOOL_TEST_REDIRECT_H
#define OPOOL_TEST_REDIRECT_H

#include <stdbool.h>
#include <stdio.h>

#if defined(__EMSCRIPTEN__)
#include <emscripten/em_macros.h> /* EMSCRIPTEN_KEEPALIVE, which em_js.h uses */
#include <emscripten/em_js.h>
#if defined(__EMSCRIPTEN_PTHREADS__)
#include <emscripten/threading.h>
#endif

/* JavaScript, run on the thread that owns the file system (EM_ASM needs -std=gnu*). */
EM_JS(int, redirect_js_begin, (int fd), {
    if (!FS.streams[fd]) return 0;
    Module["opoolSavedStderr"] = FS.streams[2];
    FS.streams[2] = FS.streams[fd];
    return 1;
})
EM_JS(void, redirect_js_end, (void), { FS.streams[2] = Module["opoolSavedStderr"]; })
#elif defined(_WIN32)
#include <io.h>
#define dup _dup
#define dup2 _dup2
#define close _close
#else
#include <unistd.h>
#endif

typedef struct stderr_redirect {
    int saved;
} stderr_redirect;

/* fd 2 writes to fd from now on; false (nothing changed) if that cannot be done. */
static inline bool stderr_redirect_begin(stderr_redirect *r, int fd) {
    fflush(stderr);
#if defined(__EMSCRIPTEN_PTHREADS__)
    r->saved = emscripten_sync_run_in_main_runtime_thread(EM_FUNC_SIG_II, redirect_js_begin, fd);
    return r->saved != 0;
#elif defined(__EMSCRIPTEN__)
    r->saved = redirect_js_begin(fd);
    return r->saved != 0;
#else
    r->saved = dup(2);
    if (r->saved < 0) return false;
    if (dup2(fd, 2) < 0) {
        close(r->saved);
        return false;
    }
    return true;
#endif
}

/* fd 2 is stderr again. */
static inline void stderr_redirect_end(stderr_redirect *r) {
    fflush(stderr);
#if defined(__EMSCRIPTEN_PTHREADS__)
    (void)r;
    emscripten_sync_run_in_main_runtime_thread(EM_FUNC_SIG_V, redirect_js_end);
#elif defined(__EMSCRIPTEN__)
    (void)r;
    redirect_js_end();
#else
    dup2(r->saved, 2);
    close(r->saved);
#endif
}

#endif /* OPOOL_TEST_REDIRECT_H */
