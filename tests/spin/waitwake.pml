/*
 * waitwake.pml: the wait/wake handshake of opool_mt (docs/CONCURRENCY.md, section 6).
 *
 * Promela is sequentially consistent: every statement below is one atomic step
 * and all processes see one global order of them, which is what the seq_cst
 * accesses (and, for the cache, membarrier or the seq_cst fences) of the C code
 * are there to provide. The reorderings that the fences forbid are modelled by
 * the broken variants, which move a load before the store that precedes it.
 *
 * Each call here moves its slot in one step; moves.pml splits the calls that
 * move slots in several (refill, spill, steal with extras, bulk alloc) into
 * the steps another thread can observe.
 *
 * A pool of NSLOTS = 1 slot (or 2 with -DNSLOTS=2). Shared state:
 *   avail    slots in the shared free list (a counter is enough: section 3's
 *            list is checked by freelist.pml; here only "is there one" matters)
 *   ent      one cache entry of the owner's cache: FULL (a slot parked) or EMPTY
 *   waiters  threads inside alloc_wait
 *   epoch    bumped by a free that sees a waiter; the futex word
 *   asleep[] the kernel's sleep queue for the futex on epoch
 *
 *   futex_wait(e): atomically { if epoch != e return; else sleep until woken }
 *   futex_wake(1): wakes one sleeping process, any one (non-deterministic)
 *
 * Processes:
 *   W1, W2   (W3 with -DNW=3) alloc_wait: register (waiters++), then loop
 *            { e = epoch; pop, then steal; got one: unregister, done;
 *            futex_wait(e) }. Then, by default, free the slot again through
 *            the shared list (push, then wake if waiters != 0), passing it on,
 *            so that every waiter must be served; with -DKEEP they keep it,
 *            and with NW > NSLOTS a waiter legitimately sleeps for ever.
 *   F        (without -DCACHE) holds the slot and frees it to the shared list.
 *   O        (-DCACHE) owns the cache and holds the slot: cache_free (park,
 *            then read waiters; with a waiter: take the entry back by exchange
 *            and free it to the shared list with the wake), then cache_alloc
 *            (exchange on its entry, else pop; if both fail a waiter has the
 *            slot and O stops), then cache_free again. Waiters steal from the
 *            entry with the same exchange.
 *   F        (-DNSLOTS=2) one more thread holding a second slot, freeing it to
 *            the shared list.
 *   M        the monitor: when nothing else can move (Spin's timeout), no
 *            waiter is asleep while a slot is free (in the list or parked):
 *            assert(!lost_wakeup). Then every waiter is served (or, with KEEP,
 *            served or asleep; with TIMEOUT, or gave up), waiters counts the
 *            sleepers only, and no slot is lost.
 * No timeouts by default: a waiter waits for ever, so a lost wake-up is a
 * process blocked for ever. Without KEEP there is no "end" label, so such a
 * waiter is also an invalid end state; with KEEP the sleep carries an end
 * label and the monitor alone decides.
 *
 *   -DTIMEOUT  the waiter has a deadline (reached at most once): futex_wait
 *            returns ETIMEDOUT while it sleeps once nothing else can happen
 *            (the lost wake-up case: the waiter would sleep until its
 *            deadline), or the deadline passes just after a wake-up, before
 *            the woken waiter runs. Past its deadline a waiter retries once
 *            more and gives up if that fails. (Not modelled: a deadline
 *            reached while other threads still run, without a wake-up.)
 * Without KEEP and TIMEOUT, the LTL property all_served (<> every waiter
 * served) is also checked, with pan -a.
 *
 * Broken variants (each must fail with lost_wakeup):
 *   -DLATE_EPOCH     the waiter reads epoch after its failed try instead of
 *                    before (the classic "check, then read the futex word")
 *   -DNO_RECHECK     the waiter tries once before it registers and, once
 *                    registered, sleeps without trying again
 *   -DFREER_LOAD_FIRST  a shared-list free reads waiters before its push is
 *                    visible (what the seq_cst push CAS and load forbid)
 *   -DOWNER_LOAD_FIRST  (CACHE) the owner reads waiters before its park store
 *                    is visible (the store->load reordering that membarrier /
 *                    the fence forbids on the owner's side)
 *   -DWAITER_SCAN_FIRST (CACHE) the waiter's first scan (pop, steal) happens
 *                    before its registration is visible (the same reordering
 *                    on the waiter's side)
 *   -DTIMEOUT_NO_RETRY (with TIMEOUT) a waiter whose futex_wait returns past
 *                    its deadline gives up without a last retry: when it was
 *                    woken, the wake is wasted and another sleeper stays asleep
 *
 * Bounds: epoch is a byte and is bumped at most once per free: at most 2
 * (owner) + 1 (second slot) + 3 (waiters) frees: it cannot wrap (in C a 32-bit
 * futex word wraps only after 2^32 wake-ups between a waiter's read and its
 * futex_wait, the futex ABA that this model, like the doc, ignores).
 */

#define EMPTY 0
#define FULL  1
#ifndef NW
#define NW 2                /* waiters: 2 or 3 */
#endif
#ifndef NSLOTS
#define NSLOTS 1            /* 1, or 2: a second slot held by another plain freer */
#endif
#define NPROC 8             /* _pid: init 0, waiters 1..NW, then F/O (and F), M */

byte avail;                 /* slots in the shared list */
byte ent = EMPTY;           /* the cache entry */
byte waiters;
byte epoch;
bool asleep[NPROC];
byte served;                /* waiters that got the slot */
byte gaveup;                /* waiters that timed out (TIMEOUT) */
bool lost_wakeup;           /* ghost: true only where the assertion fails */

#define ANY_ASLEEP  (asleep[1] || asleep[2] || asleep[3])
#define SLOT_FREE   (avail > 0 || ent != EMPTY)

inline futex_wait(e) {
	atomic {
		if
		:: epoch == e -> asleep[_pid] = true;
#ifdef KEEP
end_asleep:	/* legitimate for ever only if no slot is free: the monitor checks that */
#endif
#ifdef TIMEOUT
			if
			:: !asleep[_pid] ->                               /* woken ... */
				if
				:: skip
				:: expired = true                             /* ... and the deadline passes too */
				fi
			:: timeout -> asleep[_pid] = false; expired = true  /* ETIMEDOUT */
			fi
#else
			!asleep[_pid]                                       /* blocks until woken */
#endif
		:: else                                               /* EAGAIN */
		fi
	}
}

inline futex_wake1() {
	atomic {
		if
		:: asleep[1] -> asleep[1] = false
		:: asleep[2] -> asleep[2] = false
		:: asleep[3] -> asleep[3] = false
		:: else
		fi
	}
}

/* pop from the shared list: one CAS (its correctness is freelist.pml's business) */
inline pop(got) {
	atomic {
		if
		:: avail > 0 -> avail--; got = true
		:: else -> got = false
		fi
	}
}

/* steal: exchange(ent, EMPTY); whoever gets FULL owns the slot */
inline steal(got) {
	atomic {
		if
		:: ent != EMPTY -> ent = EMPTY; got = true
		:: else -> got = false
		fi
	}
}

inline try_get(got) {
	pop(got);
#ifdef CACHE
	if
	:: !got -> steal(got)
	:: else
	fi
#endif
}

/* free to the shared list: push (seq_cst CAS), load(waiters, seq_cst), bump, wake */
inline shared_free() {
#ifdef FREER_LOAD_FIRST
	w = (waiters != 0);           /* BROKEN: load(waiters) before the push is visible */
	avail++;
#else
	avail++;
	w = (waiters != 0);
#endif
	if
	:: w ->
		epoch++;                  /* fetch_add(epoch, 1, release) */
		futex_wake1()
	:: else
	fi
}

proctype Waiter() {
	byte e;
	bool got, w;
	bool expired;                 /* TIMEOUT: the deadline has passed */
#ifdef NO_RECHECK
	try_get(got);
	if
	:: got -> goto use
	:: else
	fi;
	waiters++;
	do
	:: e = epoch;
		futex_wait(e);
		try_get(got);
		if
		:: got -> break
		:: else
		fi
	od;
#else
#ifdef WAITER_SCAN_FIRST
	bool first = true;
#else
	waiters++;                    /* fetch_add(waiters, 1, seq_cst); heavy barrier */
#endif
	do
	:: 
#ifndef LATE_EPOCH
		e = epoch;                /* load(epoch, acquire), before the try */
#endif
		try_get(got);
#ifdef WAITER_SCAN_FIRST
		if
		:: first -> waiters++; first = false  /* BROKEN: registration seen after the scan */
		:: else
		fi;
#endif
		if
		:: got -> break
		:: else
		fi;
#ifdef LATE_EPOCH
		e = epoch;                /* BROKEN: read after the failed try */
#endif
#ifdef TIMEOUT
		if
		:: expired -> goto give_up    /* failed the retry that followed the deadline */
		:: else
		fi;
#endif
		futex_wait(e)
#ifdef TIMEOUT_NO_RETRY
		;
		if
		:: expired -> goto give_up    /* BROKEN: gives up without a last retry */
		:: else
		fi
#endif
	od;
#endif
	waiters--;                    /* fetch_sub(waiters, 1) */
use:
	served++;
#ifndef KEEP
	shared_free();                /* pass the slot on */
#endif
#ifdef TIMEOUT
	goto out;
give_up:
	waiters--;
	gaveup++;
out:
#endif
	skip
}

/* a thread holding the slot frees it (opool_mt_free) */
proctype Freer() {
	bool w;
	shared_free()
}

/* cache_free of the owner: park, then read waiters; a waiter: take it back, free it */
inline cache_free() {
#ifdef OWNER_LOAD_FIRST
	w = (waiters != 0);           /* BROKEN: load before the park is visible */
	ent = FULL;
#else
	ent = FULL;                   /* park: release store */
	w = (waiters != 0);           /* compiler barrier only; membarrier on the waiter's side */
#endif
	if
	:: w ->
		steal(took);              /* exchange(ent, EMPTY): a waiter may have it already */
		if
		:: took -> shared_free()
		:: else
		fi
	:: else
	fi
}

proctype Owner() {
	bool w, took, got;
	cache_free();
	/* cache_alloc: newest parked entry (exchange), else pop the shared list */
	steal(got);
	if
	:: !got -> pop(got)
	:: else
	fi;
	if
	:: got -> cache_free()
	:: else                       /* a waiter has the slot: cache_alloc fails, O stops */
	fi
}

proctype Monitor() {
	byte nasleep;
	timeout ->                    /* nothing else can move */
	d_step {
		lost_wakeup = (ANY_ASLEEP && SLOT_FREE);
		assert(!lost_wakeup);
		nasleep = asleep[1] + asleep[2] + asleep[3];
#ifdef KEEP
		/* every waiter has a slot or sleeps (registered); no slot lost */
		assert(served + gaveup + nasleep == NW && waiters == nasleep && served + avail + ent == NSLOTS)
#else
		/* every waiter was served and passed the slot on; it is free again */
		assert(served + gaveup == NW && nasleep == 0 && waiters == 0 && avail + ent == NSLOTS)
#endif
	}
}

init {
	atomic {
		run Waiter();             /* _pid 1 */
		run Waiter();             /* _pid 2 */
#if NW == 3
		run Waiter();             /* _pid 3 */
#endif
#ifdef CACHE
		run Owner();
#else
		run Freer();
#endif
#if NSLOTS == 2
		run Freer();
#endif
		run Monitor()
	}
}

#if !defined(KEEP) && !defined(TIMEOUT)
/* liveness: every run (there are no infinite ones: epoch only grows) ends with
   every waiter served; checked with pan -a (acceptance cycles, the claim's
   stutter at a final state included), compiled without -DSAFETY */
ltl all_served { <> (served == NW) }
#endif
