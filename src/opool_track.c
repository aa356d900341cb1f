/*
 * opool_track.c -- the poison pattern and the memory checkers' hooks (see
 * opool_track.h): the only code that fills or checks poison.
 */
#include "opool_track.h"

#include <string.h>

/* The poison pattern's bytes: 0x1deadb0b little-endian, repeated, whatever
 * the machine's byte order. */
static const unsigned char opool__poison8[8] = {0x0b, 0xdb, 0xea, 0x1d, 0x0b, 0xdb, 0xea, 0x1d};

static void opool__poison_fill(unsigned char *b, size_t n) {
    size_t k = 0;
    for (; k + 8 <= n; k += 8) memcpy(b + k, opool__poison8, 8);
    for (; k < n; k++) b[k] = opool__poison8[k & 7];
}

static bool opool__poison_intact(const unsigned char *b, size_t n) {
    size_t k = 0;
    for (; k + 8 <= n; k += 8)
        if (memcmp(b + k, opool__poison8, 8) != 0) return false;
    for (; k < n; k++)
        if (b[k] != opool__poison8[k & 7]) return false;
    return true;
}

void opool__track_on_free(void *obj, size_t size, size_t keep, bool poison) {
    if (poison) {
        /* a slot's padding was hidden while it was live: open it all to fill it */
        opool__mem_defined(obj, size);
        opool__poison_fill((unsigned char *)obj + keep, size - keep);
    }
    opool__mem_noaccess(obj, size);
}

bool opool__track_on_reuse(void *obj, size_t size, size_t keep, size_t live, bool poison) {
    bool intact = true;
    if (poison) {
        opool__mem_defined(obj, size);
        intact = opool__poison_intact((const unsigned char *)obj + keep, size - keep);
        opool__mem_noaccess(obj, size); /* the padding stays hidden while live */
    }
    /* the object's bytes are whatever they were: undefined to a checker */
    opool__mem_undefined(obj, live);
    return intact;
}
