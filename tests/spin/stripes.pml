/*
 * stripes.pml: threads holding a stripe of opool_mt's shared list alone
 * (docs/CONCURRENCY.md, section 3, "Which stripe"). A thread, when it first
 * uses opool_mt, takes a stripe that no running thread holds: a bit of one
 * process-wide word, set with a CAS (opool__mt_stripe_first); the bit is
 * cleared when the thread ends (opool__mt_stripe_release). While it holds a
 * stripe it is the only writer of that stripe's `owned` counter, which it
 * updates with a load and a store, no read-modify-write; a thread that finds
 * every stripe held shares one and counts in `live` with an atomic add.
 * What is checked: no count is lost, which holds only if no two threads
 * ever hold one stripe at once, and every bit is given back.
 *
 * Promela is sequentially consistent: the C code's acquire CAS and release
 * clear are what make a holder's first load see the last holder's store
 * (Relacy's business). Here a holder's load and store are two steps, so any
 * overlap of two holders of one stripe can lose a count.
 *
 * Processes: NT threads started together, more than there are stripes, so
 * that some share and some take a stripe another one gave back. Each takes
 * a stripe (the first free bit of the word it read, from its start stripe;
 * CAS; on failure read again; none free: share its start stripe), counts
 * OPS allocs, then ends (clears a held bit). M, the monitor: when every
 * thread has ended, the counts add up and no bit is set.
 *
 * Broken variants (each must fail with lost_count):
 *   -DTEST_THEN_SET  the claim reads the bit free and sets it a step later
 *                    (no CAS): two threads can take one stripe
 *   -DRELEASE_FIRST  the stripe is given back before the thread's counts
 *                    (a thread still counting as its holder after its
 *                    end-of-thread hook ran: why the hook resets the
 *                    thread's stripe word)
 *
 * Bounds: NSTRIPES = 2 stripes, NT = 4 threads, OPS = 2 counts each.
 */

#define NSTRIPES 2
#ifndef NT
#define NT 4
#endif
#define OPS 2

byte held;                  /* opool__mt_stripes_held: bit s set while stripe s is held */
byte owned[NSTRIPES];       /* each stripe's counter of its holder */
byte live[NSTRIPES];        /* each stripe's counter of the threads that share it */
byte ended;                 /* threads that have ended */
bool lost_count;            /* ghost: true only where the assertion fails */

proctype Thread(byte start) {
	byte h, s, sbit, v, k;
	bool mine = false;
	h = held;                                /* relaxed load */
take:
	if
	:: (h & (1 << start)) == 0 -> s = start
	:: else ->
		if
		:: (h & (1 << (1 - start))) == 0 -> s = 1 - start
		:: else -> s = start; goto count     /* every stripe held: share */
		fi
	fi;
	sbit = 1 << s;
#ifdef TEST_THEN_SET
	if
	:: (held & sbit) == 0 -> skip             /* BROKEN: the test ... */
	:: else -> h = held; goto take
	fi;
	held = held | sbit;                       /* ... and the set, a step later */
	mine = true;
#else
	atomic {                                 /* CAS(held, h -> h | sbit), acquire */
		if
		:: held == h -> held = h | sbit; mine = true
		:: else -> h = held
		fi
	}
	if
	:: !mine -> goto take
	:: else
	fi;
#endif
#ifdef RELEASE_FIRST
	atomic { held = held & ~sbit };           /* BROKEN: given back before the counts */
#endif
count:
	k = 0;
	do
	:: k < OPS ->
		if
		:: mine ->
			v = owned[s];                    /* the holder's load ... */
			owned[s] = v + 1                 /* ... and store: no read-modify-write */
		:: else ->
			atomic { live[s] = live[s] + 1 } /* a sharer's atomic add */
		fi;
		k++
	:: else -> break
	od;
#ifndef RELEASE_FIRST
	if
	:: mine -> atomic { held = held & ~sbit } /* the thread ends: release clear */
	:: else
	fi;
#endif
	ended++
}

proctype Monitor() {
	(ended == NT) ->
	d_step {
		lost_count = owned[0] + owned[1] + live[0] + live[1] != NT * OPS;
		assert(!lost_count);
		assert(held == 0)
	}
}

init {
	byte i;
	atomic {
		run Monitor();
		i = 0;
		do
		:: i < NT -> run Thread(i % NSTRIPES); i++
		:: else -> break
		od
	}
}
