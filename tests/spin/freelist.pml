/*
 * freelist.pml: the shared free list of opool_mt (docs/CONCURRENCY.md, section 3).
 *
 * A Treiber stack of slot indices. The head is one word (top, tag) that a single
 * CAS replaces as a whole; the links next[] live apart from the objects, so a
 * pop may read next[] of a slot that another thread has already taken (the value
 * it reads is then stale, and only the CAS on the head decides).
 *
 *   -DTAGGED   the head is (top, tag) and every successful CAS adds 1 to the tag
 *              (the real design). Must verify: no slot ever has two owners, and
 *              at the end every slot is back in the list exactly once.
 *   (default)  the head is the top index alone. Must fail: the classic ABA lets
 *              a delayed pop install a slot that is in use as the new top.
 *   -DBULK     one process does a bulk pop of 2 (walk two links, one CAS) instead
 *              of two single pops.
 *   -DOWNERS_ONLY  leave out the final check of the list, so that the only
 *              assertion left is "no slot has two owners" (untagged: shows that
 *              the ABA hands one slot to two processes, not just loses slots).
 *
 * Encoding as in the C code: top and next[] hold index + 1, 0 meaning "none".
 *
 * Bounds: NSLOTS = 3 slots, 3 processes: P1 pop, pop, push, push; P2 the same
 * (or, with BULK, one bulk pop of 2 then push, push); P3 pop, push. At most
 * 2 + 2 + 1 pops and as many pushes succeed, so the tag counts at most 10
 * successful CASes: a byte (wrapping at 256) cannot wrap within the model. The
 * real tag has at least 32 bits; that it does not wrap during one thread's delay
 * is the argument of section 3 ("Tag wrap"), which no finite model shows.
 */

#ifndef NSLOTS
#define NSLOTS 3
#endif
#define NONE 255            /* owner[] of a slot nobody holds; "no slot" in locals */

byte top;                   /* index + 1 of the top slot; 0: empty */
byte tag;                   /* stays 0 without TAGGED */
byte next[NSLOTS];          /* index + 1 of the slot below; 0 at the bottom */
byte owner[NSLOTS];         /* ghost: _pid of the process holding the slot, or NONE */

/* ghosts, true only in the state where the assertion fails (no extra states) */
bool slot_has_two_owners;
bool list_corrupt;
bool slot_lost;

#ifdef TAGGED
#define HEAD_EQ(ht, hg)  (top == ht && tag == hg)
#define BUMP_TAG         tag++
#else
#define HEAD_EQ(ht, hg)  (top == ht)
#define BUMP_TAG         skip
#endif

/* h = load(head): one word, so top and tag are read together */
inline load_head() {
	d_step { ht = top; hg = tag }
}

/* CAS(head, (hg, ht) -> (hg + 1, nt)); on failure (ht, hg) get the current head */
inline cas_head(nt) {
	atomic {
		if
		:: HEAD_EQ(ht, hg) -> top = nt; BUMP_TAG; ok = true
		:: else -> ht = top; hg = tag; ok = false
		fi
	}
}

/* the popping process becomes the slot's only owner */
inline take(s) {
	d_step {
		slot_has_two_owners = (owner[s] != NONE);
		assert(!slot_has_two_owners);
		owner[s] = _pid
	}
}

/* the owner gives the slot up before it pushes it (after that the list owns it) */
inline give(s) {
	d_step {
		slot_has_two_owners = (owner[s] != _pid);
		assert(!slot_has_two_owners);
		owner[s] = NONE
	}
}

inline pop(s) {
	s = NONE;
	load_head();
	do
	:: ht == 0 -> break                       /* empty: fail */
	:: else ->
		nx = next[ht - 1];                    /* relaxed load of the link */
		cas_head(nx);
		if
		:: ok -> s = ht - 1; break
		:: else                               /* retry with the fresh head */
		fi
	od;
	if
	:: s != NONE -> take(s)
	:: else
	fi
}

/* bulk pop of up to 2: walk two links from the top, move the head past them in one CAS */
inline pop2(s1, s2) {
	s1 = NONE; s2 = NONE;
	load_head();
	do
	:: ht == 0 -> break
	:: else ->
		nx = next[ht - 1];
		if
		:: nx == 0 -> nx2 = 0                 /* only one slot in the list */
		:: else -> nx2 = next[nx - 1]
		fi;
		cas_head(nx2);
		if
		:: ok ->
			s1 = ht - 1;
			if
			:: nx != 0 -> s2 = nx - 1
			:: else
			fi;
			break
		:: else
		fi
	od;
	if
	:: s1 != NONE -> take(s1)
	:: else
	fi;
	if
	:: s2 != NONE -> take(s2)
	:: else
	fi
}

inline push(s) {
	give(s);
	load_head();
	do
	:: next[s] = ht;                          /* link privately (relaxed store) */
		cas_head(s + 1);
		if
		:: ok -> break
		:: else
		fi
	od
}

inline push_held(s) {
	if
	:: s != NONE -> push(s)
	:: else
	fi
}

proctype PopPopPushPush() {
	byte ht, hg, nx; bool ok; byte a, b;
	pop(a); pop(b);
	push_held(a); push_held(b)      /* a first: a pop holding b sees a back on top (ABA) */
}

proctype Pop2PushPush() {
	byte ht, hg, nx, nx2; bool ok; byte a, b;
	pop2(a, b);
	push_held(a); push_held(b)
}

proctype PopPush() {
	byte ht, hg, nx; bool ok; byte a;
	pop(a);
	push_held(a)
}

init {
	byte i, cur, cnt;
	bool seen[NSLOTS];
	d_step {
		/* fresh pool: 0, 1, ..., NSLOTS-1 with 0 on top */
		top = 1;
		i = 0;
		do
		:: i < NSLOTS - 1 -> next[i] = i + 2; owner[i] = NONE; i++
		:: else -> break
		od;
		next[NSLOTS - 1] = 0; owner[NSLOTS - 1] = NONE;
		i = 0
	}
	atomic {
		run PopPopPushPush();
#ifdef BULK
		run Pop2PushPush();
#else
		run PopPopPushPush();
#endif
		run PopPush()
	}
	(_nr_pr == 1);                      /* every process is done */
#ifndef OWNERS_ONLY
	/* no slot lost: the list holds every slot exactly once, nobody owns one
	   (atomic, not d_step: spin -t replays a failing assertion inside a
	   d_step loop wrongly, looping for ever) */
	atomic {
		cur = top;
		do
		:: cur == 0 -> break
		:: else ->
			list_corrupt = (cur > NSLOTS || seen[cur - 1]);   /* a cycle, or garbage */
			assert(!list_corrupt);
			seen[cur - 1] = true;
			cnt++;
			cur = next[cur - 1]
		od;
		i = 0;
		do
		:: i < NSLOTS -> slot_lost = (owner[i] != NONE); assert(!slot_lost); i++
		:: else -> break
		od;
		slot_lost = (cnt != NSLOTS);
		assert(!slot_lost)
	}
#endif
}
