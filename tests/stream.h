/*
 * stream.h -- an in-memory byte stream for opool_save and opool_load: writes
 * grow it (or come up short after fail_after bytes, to test short writes),
 * reads consume it from pos.
 */
#ifndef OPOOL_TEST_STREAM_H
#define OPOOL_TEST_STREAM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct stream {
    unsigned char *data;
    size_t size, cap, pos;
    size_t fail_after; /* write: accept this many bytes in all, then come up short */
    int writes;
    int writes_after_short; /* calls made after one came up short */
    bool short_seen;
} stream;

static inline size_t stream_write(void *ctx, const void *data, size_t n) {
    stream *s = (stream *)ctx;
    s->writes++;
    if (s->short_seen) s->writes_after_short++;
    size_t room = s->fail_after > s->size ? s->fail_after - s->size : 0;
    size_t k = n < room ? n : room;
    if (s->size + k > s->cap) {
        size_t cap = s->cap ? s->cap : 256;
        while (cap < s->size + k) cap *= 2;
        unsigned char *d = (unsigned char *)realloc(s->data, cap);
        if (d == NULL) return 0;
        s->data = d;
        s->cap = cap;
    }
    if (k) memcpy(s->data + s->size, data, k);
    s->size += k;
    if (k < n) s->short_seen = true;
    return k;
}

static inline size_t stream_read(void *ctx, void *data, size_t n) {
    stream *s = (stream *)ctx;
    size_t k = s->size - s->pos < n ? s->size - s->pos : n;
    if (k) memcpy(data, s->data + s->pos, k);
    s->pos += k;
    return k;
}

static inline stream stream_new(void) {
    stream s;
    memset(&s, 0, sizeof s);
    s.fail_after = SIZE_MAX;
    return s;
}

static inline stream stream_of(const unsigned char *data, size_t size) {
    stream s = stream_new();
    s.data = (unsigned char *)data;
    s.size = size;
    return s;
}

static inline void stream_free(stream *s) {
    free(s->data);
    s->data = NULL;
    s->size = s->cap = s->pos = 0;
}

#endif /* OPOOL_TEST_STREAM_H */
