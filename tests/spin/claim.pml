/*
 * claim.pml: the asymmetric claim of a slot's home (docs/CONCURRENCY.md,
 * section 8): of two or three frees of one live handle, exactly one
 * succeeds, when one of them is the free through the slot's home cache,
 * which claims with plain stores while the cache is biased, and the others
 * revoke that bias (membarrier) and claim with the CAS.
 *
 * Unlike the other models, the home's memory is not sequentially
 * consistent: its plain stores go through a store buffer (a FIFO, as on
 * x86), drained one store at a time at any moment by Drain, all at once by
 * a locked instruction of its own (its CAS) and by a revoker's membarrier
 * (which runs a full barrier in every thread of the process). Its loads
 * read its own latest buffered store of the same word, else memory; so its
 * read of remote can pass its store of the claim, the store->load
 * reordering that the compiler barrier alone allows. Every other access is
 * one atomic step in one global order (the revokers' accesses are seq_cst
 * or locked in the C code, or only make them run more barriers if late).
 *
 * Shared state, for one slot and one home cache H:
 *   gen      the slot's generation (G odd: live; G + 1: freed)
 *   claim    the claim half of the slot's home word (0: none)
 *   remote   H's state: BIASED, REVOKING (marked, barrier maybe not run),
 *            REVOKED (marked and a barrier run after)
 *   bvar[], bval[], bn: the home's store buffer
 *
 * Processes:
 *   Home     cache_free(h) through H (opool__mt_claim_home): read gen (!= G:
 *            stale); store claim = G; read remote: BIASED -> store gen =
 *            G + 1 (plain); else the CAS (drains its buffer first). With
 *            -DREUSE, after winning it allocates the slot again through H
 *            (stores claim = 0, gen = G + 2) and frees G + 2 the same way.
 *   X1, X2   opool_mt_free(h) (opool__mt_claim with opool__mt_home_first):
 *            read gen (!= handle: stale); if remote != REVOKED: mark it
 *            REVOKING if BIASED, membarrier, store REVOKED; then claim ==
 *            handle -> stale (the home came first); else CAS gen. Both free
 *            G; with -DREUSE X2 frees G + 2 (the next generation's handle,
 *            which it may try before that generation exists: then stale).
 *   Drain    drains the home's buffer, one store per step, at any time.
 *   M        once the three are done and the buffer drained: exactly one
 *            free of G succeeded, and of G + 2 one if the home allocated it
 *            (none if not); the generation is the last success's.
 *
 * Broken variants, each of which must fail with two_frees (two frees of one
 * generation succeeded) or none_freed:
 *   -DNO_BARRIER          a revoker runs no membarrier
 *   -DNO_CLAIM_CHECK      a revoker does not read the claim after its barrier
 *   -DHOME_NO_CLAIM       the home does not store its claim
 *   -DREVOKING_NO_BARRIER a revoker that finds H already marked by another
 *                         skips its own barrier (and stores REVOKED)
 *   -DREVOKED_EARLY       one mark only: a revoker stores REVOKED before its
 *                         barrier, and the next one skips it
 *
 * Bounds: one slot, two generations at most, three freers; gen is a byte.
 */

#define G 1
#define BIASED 0
#define REVOKING 1
#define REVOKED 2
#define V_CLAIM 1
#define V_GEN 2
#define BUFMAX 6

byte gen = G;
byte claim = 0;
byte remote = BIASED;
byte bvar[BUFMAX];
byte bval[BUFMAX];
byte bn = 0;
byte j; /* drain1's index: drains are atomic, so one is enough */

byte ok_g = 0;    /* successful frees of G */
byte ok_g2 = 0;   /* of G + 2 */
bool reused = false;
byte done = 0;

bool two_frees = false;
bool none_freed = false;

/* one buffered store of the home, the oldest, to memory */
inline drain1() {
    if
    :: bvar[0] == V_CLAIM -> claim = bval[0]
    :: else -> gen = bval[0]
    fi;
    j = 1;
    do
    :: j < bn -> bvar[j - 1] = bvar[j]; bval[j - 1] = bval[j]; j++
    :: else -> break
    od;
    bn--
}

inline drain_all() {
    do
    :: bn > 0 -> drain1()
    :: else -> break
    od
}

inline hstore(v, x) {
    atomic { assert(bn < BUFMAX); bvar[bn] = v; bval[bn] = x; bn++ }
}

/* the home's load of gen: its latest buffered store, else memory */
inline hload_gen(r) {
    atomic {
        r = gen;
        k = 0;
        do
        :: k < bn -> if :: bvar[k] == V_GEN -> r = bval[k] :: else fi; k++
        :: else -> break
        od
    }
}

/* the home's free of generation hg; won: true if it succeeded */
inline home_free(hg, won) {
    hload_gen(r);
    if
    :: r != hg -> won = false
    :: else ->
#ifndef HOME_NO_CLAIM
        hstore(V_CLAIM, hg);
#endif
        r = remote; /* may pass the buffered claim */
        if
        :: r == BIASED -> hstore(V_GEN, hg + 1); won = true
        :: else ->
            atomic {
                drain_all(); /* a locked instruction drains the buffer */
                if
                :: gen == hg -> gen = hg + 1; won = true
                :: else -> won = false
                fi
            }
        fi
    fi
}

/* the membarrier: a full barrier in every thread, here the home's */
inline membarrier() {
    atomic { drain_all() }
}

inline revoker_free(hg, won) {
    if
    :: gen != hg -> won = false
    :: else ->
        if
        :: remote != REVOKED ->
            mine = false;
            atomic {
                if
                :: remote == BIASED ->
                    mine = true;
#ifdef REVOKED_EARLY
                    remote = REVOKED
#else
                    remote = REVOKING
#endif
                :: else
                fi
            }
#ifndef NO_BARRIER
#ifdef REVOKING_NO_BARRIER
            if
            :: mine -> membarrier()
            :: else
            fi;
#else
            membarrier();
#endif
#endif
            remote = REVOKED
        :: else
        fi;
#ifndef NO_CLAIM_CHECK
        if
        :: claim == hg -> won = false
        :: else ->
#endif
            atomic {
                if
                :: gen == hg -> gen = hg + 1; won = true
                :: else -> won = false
                fi
            }
#ifndef NO_CLAIM_CHECK
        fi
#endif
    fi
}

inline count(hg, won) {
    if
    :: won && hg == G -> ok_g++
    :: won && hg != G -> ok_g2++
    :: else
    fi
}

active proctype Home() {
    byte r, k;
    bool won;
    home_free(G, won);
    count(G, won);
#ifdef REUSE
    if
    :: won ->
        /* cache_alloc through H: the slot's home word (no claim), then the
         * generation (release: the buffer keeps the order) */
        hstore(V_CLAIM, 0);
        hstore(V_GEN, G + 2);
        reused = true;
        home_free(G + 2, won);
        count(G + 2, won)
    :: else
    fi;
#endif
    done++
}

proctype X(byte hg) {
    bool won, mine;
    revoker_free(hg, won);
    count(hg, won);
    done++
}

active proctype Drain() {
end:
    do
    :: atomic { bn > 0 -> drain1() }
    od
}

active proctype M() {
    done == 3;
    atomic {
        drain_all();
        two_frees = ok_g > 1 || ok_g2 > 1;
        assert(!two_frees);
        none_freed = ok_g == 0 || (reused && ok_g2 == 0);
        assert(!none_freed);
        assert(reused || ok_g2 == 0);
        assert(gen == (reused -> G + 3 : G + 1))
    }
}

init {
    atomic {
        run X(G);
#ifdef REUSE
        run X(G + 2)
#else
        run X(G)
#endif
    }
}
