/*
 * ops_codes.h -- the input format of fuzz/ops.c, shared with the seed
 * generator (fuzz/gen_corpus.c) so seeds can be written as programs.
 *
 * An input is a configuration (OPS_CONFIG_BYTES bytes, plus 4 bytes of salt
 * when the salt kind is >= 8), then operations: one opcode byte (its value
 * modulo OPS_COUNT selects the operation) followed by its arguments. Reads
 * past the end give zeros, so every input is valid.
 */
#ifndef OPOOL_FUZZ_OPS_CODES_H
#define OPOOL_FUZZ_OPS_CODES_H

/* configuration byte 0: policy in the low 2 bits (% 3), then flags */
#define OPS_CFG_ZERO 0x04
#define OPS_CFG_POISON 0x08
#define OPS_CFG_RETIRE 0x10
#define OPS_CFG_INIT 0x20
#define OPS_CFG_FINI 0x40
#define OPS_CFG_ALLOCATOR 0x80 /* the counting allocator (growable pools always get it) */
/* bytes 1-5: capacity, max_capacity, object size, alignment, salt kind; byte 6: create mode */
#define OPS_CONFIG_BYTES 7

enum ops_code {
    OPS_ALLOC,          /* flags byte (bit 7: no out handle), evict choice byte */
    OPS_FREE_LIVE,      /* u16: live roster position (mod count) */
    OPS_FREE_BAD,       /* handle (see random_handle) */
    OPS_FREE_TWICE,     /* u16: live roster position */
    OPS_FREE_OBJECT,    /* kind byte, u16 */
    OPS_ALLOC_AT,       /* kind byte, u16 index, then kind-specific bytes */
    OPS_ALLOC_AT_NOMEM, /* the same, with every allocation failing */
    OPS_ALLOC_NOMEM,    /* u16 evict choice, with every allocation failing */
    OPS_LOOKUP,         /* handle, u32 index */
    OPS_CLEAR,
    OPS_SORT,
    OPS_SHRINK,
    OPS_ITERATE, /* the header's loop: free percent, alloc byte, free-other byte, u32 seed */
    OPS_BURST,   /* byte: count 1 + b % 64; bit 7: free instead of alloc */
    OPS_NULLS,   /* u64 handle */
    OPS_DESC,    /* a desc from the input (see op_desc) */
    OPS_RETAIN,  /* keep percent byte, u32 hash seed */
    OPS_COMPACT, /* handle (see random_handle), kind byte, u32: compact and expand */
    OPS_COUNT
};

#endif /* OPOOL_FUZZ_OPS_CODES_H */
