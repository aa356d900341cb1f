"""opool_gdb.py -- gdb pretty-printers for opool (docs/DEBUGGING.md, "Debuggers").

A handle prints as its index, its generation and what the generation alone says
(a handle does not know its pool); a pool as its name and counts, with its live
objects as children. The pools are read the way opool_abi.h's inline accessors
read them (opool_live_object: the roster's first count entries, each a slot
index; the object of slot i in the chunk of i's top bit); nothing is written.
The library and dist/opool.h carry this file in their .debug_gdb_scripts
section (src/opool_gdb_script.h), so gdb loads it by itself from any directory
of its auto-load safe-path; or: source opool_gdb.py.
"""
import re
import sys

import gdb
import gdb.printing

SANE_SLOTS = 1 << 31  # no pool has more: a larger count is a corrupt pool
BATCH = 4096  # words read from the inferior at once


def handle_text(bits):
    if bits == 0:
        return "{null}"
    i, g = bits & 0xFFFFFFFF, bits >> 32
    state = "issued" if g & 1 else "never valid: even generation"
    return "{index %u, generation 0x%08x, %s}" % (i, g, state)


def words(addr, n, size):
    """n unsigned words of size bytes at addr, read in batches."""
    inf = gdb.selected_inferior()
    for at in range(0, n, BATCH):
        k = min(BATCH, n - at)
        raw = bytes(inf.read_memory(addr + at * size, k * size))
        for j in range(k):
            yield int.from_bytes(raw[j * size:(j + 1) * size], sys.byteorder)


def cast(addr, type_name):
    return gdb.Value(addr).cast(gdb.lookup_type(type_name).pointer()).dereference()


def name_text(desc):
    name = int(desc["name"])
    return '"%s"' % desc["name"].string() if name else "(no name)"


def after(addr, type_name):
    """The address following a type_name at addr, aligned for a desc."""
    size, word = gdb.lookup_type(type_name).sizeof, gdb.lookup_type("void").pointer().sizeof
    return addr + (size + word - 1) // word * word


class HandlePrinter:
    def __init__(self, bits):
        self.bits = int(bits)

    def to_string(self):
        return handle_text(self.bits)


class Printer:
    """A pool: to_string and children never raise; what cannot be read says so."""

    kind = "opool"

    def __init__(self, addr, elem=None, kind=None):
        self.addr, self.elem, self.live = addr, elem, None
        self.kind = kind or self.kind

    def to_string(self):
        if self.addr == 0:
            return "%s NULL" % self.kind
        try:
            return "%s %s" % (self.kind, self.describe())
        except gdb.error as e:  # gdb.MemoryError too
            self.live = None
            return "%s at 0x%x: unreadable (%s)" % (self.kind, self.addr, e)

    def children(self):
        try:
            for name, addr in self.live or ():
                yield name, self.value(addr)
        except gdb.error:
            return

    def value(self, addr):
        if self.elem is None:
            return gdb.Value(addr).cast(gdb.lookup_type("void").pointer())
        return gdb.Value(addr).cast(self.elem.pointer()).dereference()


class PoolPrinter(Printer):
    def describe(self):
        c = cast(self.addr, "opool__hot")
        desc = cast(after(self.addr, "opool__hot"), "opool_desc")
        name = name_text(desc)
        count, limit, nslots = int(c["count"]), int(c["limit"]), int(c["nslots"])
        # a pool that never grows (shift 32) makes its slots as they are needed
        unmade = int(desc["capacity"]) - nslots if int(c["shift"]) == 32 else 0
        listed = int(c["roster"]) != 0
        text = "%s: %u live, capacity %u, %u slots" % (name, count, limit + unmade, nslots + unmade)
        if not count <= limit <= nslots < SANE_SLOTS or not 0 <= unmade < SANE_SLOTS:
            return text + ": corrupt"
        self.live = self.listed(c, count) if listed else self.scanned(c, count, nslots)
        return text if listed else text + ", no live list (objects by slot)"

    def listed(self, c, count):
        slot = int(c["slot"])
        for i in words(int(c["roster"]), count, 4):
            if i >= int(c["nslots"]):
                return
            g = next(words(slot + 8 * i, 1, 4))
            yield "[slot %u, gen 0x%08x]" % (i, g), self.object(c, i)

    def scanned(self, c, count, nslots):
        found, recs = 0, words(int(c["slot"]), 2 * nslots, 4)
        for i in range(nslots):
            g, _ = next(recs), next(recs)
            if found < count and g & 1:
                found += 1
                yield "[slot %u, gen 0x%08x]" % (i, g), self.object(c, i)

    @staticmethod
    def object(c, i):
        """opool__object: chunk 0, or the chunk of i's top bit."""
        stride = int(c["stride"])
        if i < int(c["first"]):
            return int(c["base"][0]) + i * stride
        t = i.bit_length() - 1
        return int(c["base"][t - int(c["shift"]) + 1]) + (i - (1 << t)) * stride


class MtPrinter(Printer):
    kind = "opool_mt"

    def describe(self):
        p = cast(self.addr, "struct opool_mt")
        try:
            cap, gen = int(p["capacity"]), int(p["gen"])
        except gdb.error:
            self.live = None
            return "at 0x%x: no debug information for struct opool_mt" % self.addr
        if cap >= SANE_SLOTS:
            return "%s: corrupt" % name_text(p["desc"])
        gens = list(words(gen, cap, 4))
        objects, stride = int(p["objects"]), int(p["stride"])
        self.live = [("[slot %u, gen 0x%08x]" % (i, g), objects + i * stride)
                     for i, g in enumerate(gens) if g & 1]
        return "%s: %u live, capacity %u (max %u)" % (
            name_text(p["desc"]), len(self.live), cap, int(p["max_capacity"]))


class HeapPrinter(Printer):
    """A heap's blocks are bytes of no type: its children are its classes' live counts."""

    kind = "opool_heap"

    def describe(self):
        name = name_text(cast(after(self.addr, "opool__heap_hot"), "opool_heap_desc"))
        h = cast(self.addr, "struct opool_heap")
        try:
            n, large = int(h["nclasses"]), int(h["large"]["n"])
        except gdb.error:
            return "%s at 0x%x: no debug information for struct opool_heap" % (name, self.addr)
        if n > 256:
            return "%s: corrupt" % name
        live = [(int(h["cls"][k]["size"]), int(h["hot"]["cls"][k]["high_water"])
                 - int(h["hot"]["cls"][k]["room"])) for k in range(n)]
        self.live = [("[%u-byte blocks]" % size, k) for size, k in live if k]
        return "%s: %u live blocks in classes, %u large" % (
            name, sum(k for _, k in live), large)

    def value(self, count):
        return gdb.Value(count)


def lookup(val):
    """The printer of val, or None: handles, and pools and pointers to them."""
    t = val.type.strip_typedefs()
    if t.code == gdb.TYPE_CODE_STRUCT:
        tag = t.tag or ""
        if tag == "opool_handle":
            return HandlePrinter(val["bits"])
        if re.match(r"opl::handle<", tag):
            return HandlePrinter(val["h_"]["bits"])
        fields = t.fields()
        if (len(fields) == 1 and fields[0].name == "raw"
                and str(fields[0].type.strip_typedefs()) in ("opool_handle", "struct opool_handle")):
            return HandlePrinter(val["raw"]["bits"])
        if re.match(r"opl::pool<", tag):
            # the flags argument as written: gcc names it 0, clang 0u
            label = re.sub(r"\b(\d+)u\b", r"\1", tag)
            return PoolPrinter(int(val["p_"]), t.template_argument(0), label)
        return None
    if t.code != gdb.TYPE_CODE_PTR:
        return None
    target = t.target().strip_typedefs()
    tag = target.tag or ""
    addr = int(val) if target.code == gdb.TYPE_CODE_STRUCT else None
    if addr is None:
        return None
    if re.match(r"opl::pool<", tag):
        return lookup(val.dereference()) if addr else PoolPrinter(0, None, tag)
    if tag == "opool":
        return PoolPrinter(addr)
    if tag == "opool_mt":
        return MtPrinter(addr)
    if tag == "opool_heap":
        return HeapPrinter(addr)
    m = re.match(r"(\w+)__opool$", tag)
    if m:
        try:
            elem = gdb.lookup_type(m.group(1) + "_type")
        except gdb.error:
            elem = None  # no call of name_alloc in the debug information: addresses
        return PoolPrinter(addr, elem, m.group(1))
    return None


class OpoolPrinters(gdb.printing.PrettyPrinter):
    def __init__(self):
        super().__init__("opool")

    def __call__(self, val):
        return lookup(val)


gdb.printing.register_pretty_printer(None, OpoolPrinters(), replace=True)
