/*
 * moves.pml: alloc_wait against the calls that move free slots in several
 * steps (docs/CONCURRENCY.md, section 6, "Slots in motion"): a cache's
 * refill, a spill or flush, a passing thief's steal with extras, and a bulk
 * alloc. waitwake.pml treats each of those as one step; here every step that
 * another thread can observe is its own statement, so a waiter can scan while
 * the slots are in the mover's hands.
 *
 * As in waitwake.pml, Promela is sequentially consistent (every statement one
 * atomic step in one global order): the park handshake's light barrier and
 * the waiter's membarrier (or the seq_cst fences) are what make the C code
 * behave so. The shared list is a counter (freelist.pml checks the list).
 *
 * Shared state:
 *   avail    slots in the shared list
 *   parked   slots parked in one cache X (a count: the deque is Chase-Lev's,
 *            not this model's business; any thread takes one per step)
 *   waiters, epoch, asleep[]: the futex handshake, exactly as in waitwake.pml
 *
 * Processes:
 *   W1, W2   (W3 with -DNW=3) alloc_wait: register (waiters++), then loop
 *            { e = epoch; pop one from the list; else steal one from X; got
 *            one: unregister, keep it; else futex_wait(e) }. Waiters keep
 *            their slot: with fewer free slots than waiters one sleeps for
 *            ever, legitimately (the sleep carries an end label; the monitor
 *            decides).
 *   Mover, one of (the slots start where its call takes them from):
 *   -DREFILL  cache_alloc on empty X; the list holds NSLOTS: pop min(H,
 *            avail) in one CAS; hand one out (kept); publish the rest
 *            (parked += k - 1, the release store of bottom); then read
 *            waiters and, if one waits, spill: take every parked slot (one
 *            CAS on top), push them, and wake (freed: read waiters, bump
 *            epoch, wake as many as pushed).
 *   -DSPILL   flush of X holding NSLOTS: take them all (one CAS on top), push
 *            them, then freed.
 *   -DSTEAL   a passing thief (opool_mt_alloc) with the list empty and X
 *            holding NSLOTS: pop fails; steal one per step up to 1 + EXTRA;
 *            keep one; push the extras, then freed.
 *   -DBULK    alloc_bulk(2) with 1 slot in the list and NSLOTS - 1 in X: pop
 *            what the list has (one CAS), then steal what it lacks, one per
 *            step; what it does not take stays where it was.
 *   -DBORROW  opool_mt_alloc by a thread whose stripe of the list (avail1)
 *            is empty, the NSLOTS slots on stripe 0 (avail): pop half of
 *            what stripe 0 holds (at least one) in one CAS; keep one; push
 *            the rest onto its own stripe, then freed (run with NSLOTS 4:
 *            it takes 2 and pushes 1). Here the waiters' pops
 *            look at both stripes, one CAS each, in the order of their
 *            own stripe: W1 stripe 0 first, W2 stripe 1 first.
 *   M        the monitor: when nothing else can move (Spin's timeout), no
 *            waiter is asleep while a slot is free (listed or parked):
 *            assert(!lost_wakeup); then nothing is lost and waiters counts
 *            the sleepers.
 *
 * Broken variants (each must fail with lost_wakeup):
 *   -DREFILL_NO_CHECK  (REFILL) the refill before issue 18: it publishes its
 *                      parked slots and never reads waiters
 *   -DREFILL_LOAD_FIRST (REFILL) the refill reads waiters before its
 *                      publication is visible (the store->load reordering
 *                      that the light barrier + the waiter's membarrier, or
 *                      the fences, forbid: as OWNER_LOAD_FIRST of waitwake.pml)
 *   -DSTEAL_NO_WAKE    (STEAL) the thief pushes its extras without freed's
 *                      read of waiters
 *   -DSPILL_LOAD_FIRST (SPILL) freed reads waiters before the push is
 *                      visible (what the seq_cst push CAS and load forbid)
 *   -DBORROW_NO_WAKE   (BORROW) the borrower pushes the rest onto its stripe
 *                      without freed's read of waiters
 *   -DSCAN_OWN_ONLY    (BORROW) a waiter's pop looks only at its own stripe,
 *                      not at every stripe
 *
 * Bounds: NSLOTS <= 4 slots, NW <= 3 waiters, one mover; epoch is bumped at
 * most twice (a byte: no wrap).
 */

#ifndef NW
#define NW 2
#endif
#ifndef NSLOTS
#define NSLOTS 3
#endif
#ifndef H
#define H 4                 /* a refill's batch: half the cache size */
#endif
#ifndef EXTRA
#define EXTRA 15            /* OPOOL__MT_STEAL_EXTRA */
#endif
#ifndef BORROW_N
#define BORROW_N 16         /* OPOOL__MT_BORROW */
#endif
#define NPROC 7             /* _pid: init 0, waiters 1..NW, mover, monitor */

byte avail;                 /* slots in the shared list (BORROW: its stripe 0) */
byte avail1;                /* BORROW: slots on the mover's stripe of the list */
byte parked;                /* slots parked in cache X */
byte waiters;
byte epoch;
bool asleep[NPROC];
byte served;                /* waiters that got a slot */
byte kept;                  /* slots the mover keeps for its caller */
bool lost_wakeup;           /* ghost: true only where the assertion fails */

#define ANY_ASLEEP (asleep[1] || asleep[2] || asleep[3])
#define SLOT_FREE  (avail > 0 || avail1 > 0 || parked > 0)

inline futex_wait(e) {
	atomic {
		if
		:: epoch == e -> asleep[_pid] = true;
end_asleep:	/* legitimate for ever only if no slot is free: the monitor checks that */
			!asleep[_pid]
		:: else                                  /* EAGAIN */
		fi
	}
}

/* futex_wake(n): wakes up to n sleepers, any of them */
inline futex_wake(n) {
	atomic {
		i = n;
		do
		:: i > 0 && asleep[1] -> asleep[1] = false; i--
		:: i > 0 && asleep[2] -> asleep[2] = false; i--
		:: i > 0 && asleep[3] -> asleep[3] = false; i--
		:: else -> break
		od
	}
}

/* freed(n) after a push: load(waiters, seq_cst); if any, bump epoch and wake n */
inline freed(n) {
	if
	:: waiters != 0 ->
		epoch++;                             /* fetch_add(epoch, 1, release) */
		futex_wake(n)
	:: else
	fi
}

proctype Waiter() {
	byte e;
	bool got;
	waiters++;                               /* fetch_add(waiters, 1, seq_cst); heavy barrier */
	do
	:: e = epoch;                            /* load(epoch, acquire), before the try */
		got = false;
#if defined(BORROW)
		if                                   /* pop: its own stripe first, one CAS each */
		:: _pid % 2 == 0 ->
			atomic { if :: avail1 > 0 -> avail1--; got = true :: else fi }
		:: else
		fi;
#endif
		atomic {                             /* pop: one CAS */
			if
			:: !got && avail > 0 -> avail--; got = true
			:: else
			fi
		}
#if defined(BORROW) && !defined(SCAN_OWN_ONLY)
		if
		:: _pid % 2 == 1 ->
			atomic { if :: !got && avail1 > 0 -> avail1--; got = true :: else fi }
		:: else
		fi;
#endif
		if
		:: !got ->
			atomic {                         /* steal one: a CAS on X's top */
				if
				:: parked > 0 -> parked--; got = true
				:: else
				fi
			}
		:: else
		fi;
		if
		:: got -> break
		:: else -> futex_wait(e)
		fi
	od;
	waiters--;
	served++
}

proctype Mover() {
	byte inhand, i, n;
	bool w;
#if defined(REFILL)
	/* cache_alloc, X empty: opool__mt_refill */
	atomic { n = (avail < H -> avail : H); avail = avail - n; inhand = n }   /* pop: one CAS */
	if
	:: inhand > 0 ->
		inhand--; kept++;                    /* the slot it hands out */
#ifdef REFILL_LOAD_FIRST
		w = (waiters != 0);                  /* BROKEN: read before the publication is visible */
#endif
		parked = parked + inhand; inhand = 0;  /* publish: release store of bottom */
#ifndef REFILL_LOAD_FIRST
		w = (waiters != 0);                  /* light barrier, then the read of waiters */
#endif
#ifndef REFILL_NO_CHECK
		if
		:: w ->
			atomic { inhand = parked; parked = 0 };   /* spill: one CAS on top */
			avail = avail + inhand;          /* push: seq_cst CAS */
			freed(inhand);
			inhand = 0
		:: else
		fi
#endif
	:: else
	fi
#elif defined(SPILL)
	atomic { inhand = parked; parked = 0 };  /* take_oldest: one CAS on top */
#ifdef SPILL_LOAD_FIRST
	n = inhand;
	if
	:: waiters != 0 ->                       /* BROKEN: read before the push is visible */
		avail = avail + inhand;
		epoch++;
		futex_wake(n)
	:: else ->
		avail = avail + inhand
	fi;
#else
	avail = avail + inhand;                  /* push */
	freed(inhand);
#endif
	inhand = 0
#elif defined(STEAL)
	/* opool_mt_alloc: the pop fails (list empty), then a passing thief */
	atomic { if :: avail > 0 -> avail--; kept++; goto done :: else fi }
	do
	:: inhand < 1 + EXTRA ->
		atomic {                             /* one CAS on X's top per slot */
			if
			:: parked > 0 -> parked--; inhand++
			:: else -> break
			fi
		}
	:: else -> break
	od;
	if
	:: inhand > 0 ->
		inhand--; kept++;                    /* keeps the first stolen */
		n = inhand;
		avail = avail + inhand;              /* push the extras */
#ifndef STEAL_NO_WAKE
		freed(n);
#endif
		inhand = 0
	:: else
	fi;
done:
#elif defined(BULK)
	/* alloc_bulk(2): pop what the list has, steal the rest, no extras */
	atomic { n = (avail < 2 -> avail : 2); avail = avail - n; inhand = n }
	do
	:: inhand < 2 ->
		atomic {
			if
			:: parked > 0 -> parked--; inhand++
			:: else -> break
			fi
		}
	:: else -> break
	od;
	kept = kept + inhand; inhand = 0
#elif defined(BORROW)
	/* opool_mt_alloc, its own stripe empty: opool__mt_pop_other takes half
	 * of what it sees (at most BORROW_N), at least the one it needs */
	atomic { n = avail / 2; n = (n > BORROW_N -> BORROW_N : n); n = (n < 1 && avail > 0 -> 1 : n);
	         avail = avail - n; inhand = n }
	if
	:: inhand > 0 ->
		inhand--; kept++;                    /* the slot it hands out */
		n = inhand;
		avail1 = avail1 + inhand;            /* push onto its own stripe */
#ifndef BORROW_NO_WAKE
		freed(n);
#endif
		inhand = 0
	:: else
	fi
#endif
	skip
}

proctype Monitor() {
	byte nasleep;
	timeout ->                               /* nothing else can move */
	d_step {
		lost_wakeup = (ANY_ASLEEP && SLOT_FREE);
		assert(!lost_wakeup);
		nasleep = asleep[1] + asleep[2] + asleep[3];
		assert(served + nasleep == NW && waiters == nasleep &&
		       served + kept + avail + avail1 + parked == NSLOTS)
	}
}

init {
	atomic {
#if defined(REFILL) || defined(BORROW)
		avail = NSLOTS;
#elif defined(BULK)
		avail = 1; parked = NSLOTS - 1;
#else
		parked = NSLOTS;
#endif
		run Waiter();                        /* _pid 1 */
		run Waiter();                        /* _pid 2 */
#if NW == 3
		run Waiter();                        /* _pid 3 */
#endif
		run Mover();
		run Monitor()
	}
}
