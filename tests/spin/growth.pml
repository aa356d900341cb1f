/*
 * growth.pml: the growth of an opool_mt made with OPOOL_FULL_GROW
 * (docs/CONCURRENCY.md, section 9; src/opool_mt.c, opool__mt_grow).
 *
 * An alloc that finds no free slot anywhere calls the growth and, unless it
 * says the pool is at its limit, looks again. The growth:
 *   s = growing (acquire)
 *   s odd: another thread grows; futex_wait(growing, s) until it changes;
 *          return "look again"
 *   CAS growing s -> s + 1, or return "look again"
 *   from = capacity (read after the CAS)
 *   from == max: nothing; a slot already listed: nothing, "look again";
 *   else the new slots [from, to) are made free (storage, generation, link),
 *        capacity = to (release), then the chain is pushed (one CAS)
 *   growing = s + 2 and futex_wake(all)
 *
 * Promela is sequentially consistent: each statement is one atomic step in
 * one global order. The shared list is a counter stack of slot indexes, each
 * push and pop one step (freelist.pml checks the list itself).
 *
 * Processes: NT threads, each allocating OPS slots (holding them), then
 * freeing them. A pool of MAXS = 4 slots at most, 1 at first; a growth
 * doubles it. Checks:
 *   bad_handle          an alloc got a slot the pool does not have yet (its
 *                       index past the capacity: every check of its handle
 *                       would reject it) or whose state the growth has not
 *                       made yet
 *   double_growth       two growths made the same slot
 *   failed_below_limit  an alloc failed while the pool could still grow
 *   and, through Spin's invalid end states, no thread waits for ever for a
 *   growth that has ended (a lost wake-up).
 *
 * Broken variants (each must fail, with the named assertion or a deadlock):
 *   -DPUSH_FIRST        the new slots are pushed before the capacity is
 *                       published: bad_handle
 *   -DTEST_THEN_SET     the growth is taken by a test, then a set a step
 *                       later (no CAS): double_growth
 *   -DCAPACITY_FIRST    the capacity is read before growing is (before the
 *                       CAS): a growth that ended in between is made again:
 *                       double_growth
 *   -DWAKE_FIRST        the grower wakes the waiters before it changes the
 *                       word they wait on: a thread that read the odd word
 *                       sleeps for ever (invalid end state)
 *
 * Bounds: NT = 3 threads, OPS = 2, MAXS = 4: at most 2 growths, 1 -> 2 -> 4,
 * and 6 allocs for 4 slots, so that some fail at the limit.
 */

#define MAXS 4
#define CAP0 1
#ifndef NT
#define NT 3
#endif
#define OPS 2
#define NONE 255

byte cap = CAP0;            /* the capacity: slots with storage */
byte growing;               /* odd while a thread grows the pool */
bool made[MAXS];            /* ghost: the slot's state was made (by create or a growth) */
byte stack[MAXS];           /* the shared list: stack[n - 1] on top */
byte n;
bool asleep[NT];            /* the kernel's queue of the futex on growing */


bool bad_handle, double_growth, failed_below_limit; /* ghosts: true only where an assertion fails */

inline push(i) { stack[n] = i; n++ }

/* futex_wait(growing, e): sleeps only if the word is still e, in one step
 * with the check; futex_wake(all) wakes every sleeper */
inline futex_wait(e) {
	atomic {
		if
		:: growing == e -> asleep[me] = true
		:: else
		fi
	}
	(!asleep[me])
}
inline futex_wake_all() {
	d_step {
		k = 0;
		do
		:: k < NT -> asleep[k] = false; k++
		:: else -> break
		od;
		k = 0
	}
}

/* the growth: more = "look again" */
inline grow() {
	more = false;
#ifdef CAPACITY_FIRST
	from = cap;                             /* BROKEN: before the word */
#endif
	s = growing;
	if
	:: (s & 1) ->
		futex_wait(s);
		more = true
	:: else ->
#ifdef TEST_THEN_SET
		if
		:: growing == s -> skip              /* BROKEN: the test ... */
		:: else -> more = true; goto grown
		fi;
		growing = s + 1;                     /* ... and the set, a step later */
#else
		atomic {
			if
			:: growing == s -> growing = s + 1
			:: else -> more = true
			fi
		}
		if
		:: more -> goto grown
		:: else
		fi;
#endif
#ifndef CAPACITY_FIRST
		from = cap;
#endif
		if
		:: from >= MAXS -> skip               /* the limit */
		:: from < MAXS && n > 0 -> more = true /* a free made room meanwhile */
		:: from < MAXS && n == 0 ->
			to = (2 * from < MAXS -> 2 * from : MAXS);
			d_step {                           /* the grower's own slots: nobody sees them */
				j = from;
				do
				:: j < to ->
					double_growth = made[j];
					assert(!double_growth);
					made[j] = true;
					j++
				:: else -> break
				od
			};
#ifdef PUSH_FIRST
			d_step { j = to; do :: j > from -> j--; push(j) :: else -> break od; j = 0 };
			cap = to;                        /* BROKEN: published after the push */
#else
			cap = to;                        /* release */
			d_step { j = to; do :: j > from -> j--; push(j) :: else -> break od; j = 0 };
#endif
			more = true
		fi;
#ifdef WAKE_FIRST
		futex_wake_all();                    /* BROKEN: the wake before the word */
		growing = s + 2;
#else
		atomic { growing = s + 2; futex_wake_all() }
#endif
	fi;
grown:
	skip;
	d_step { s = 0; from = 0; to = 0 }          /* dead from here: fewer states */
}

proctype Thread(byte me) {
	byte held[OPS], got, i, k, j, s, from, to;
	bool more;
	got = 0;
	do
	:: got < OPS ->
again:
		atomic {
			if
			:: n > 0 -> n--; i = stack[n]
			:: else -> i = NONE
			fi
		}
		if
		:: i != NONE ->
			atomic {                          /* the handle's check: index < capacity */
				bad_handle = i >= cap || !made[i];
				assert(!bad_handle)
			}
			d_step { held[got] = i; got++; i = 0 }
		:: else ->
			grow();
			if
			:: more -> goto again
			:: else ->
				failed_below_limit = cap < MAXS;
				assert(!failed_below_limit);
				break                         /* the alloc fails: the limit */
			fi
		fi
	:: else -> break
	od;
	do
	:: got > 0 -> d_step { got--; push(held[got]); held[got] = 0 }
	:: else -> break
	od

}

init {
	byte t;
	atomic {
		made[0] = true;                       /* the create's slot, listed */
		push(0);
		t = 0;
		do
		:: t < NT -> run Thread(t); t++
		:: else -> break
		od
	}
}
