"""opool_lldb.py -- lldb summaries and children for opool (docs/DEBUGGING.md, "Debuggers").

What opool_gdb.py shows, in lldb's terms: a handle's summary is its index, its
generation and what the generation alone says; a pool's summary is its name and
counts, its children its live objects, read the way opool_abi.h's inline
accessors read them. Nothing is written. lldb loads no script from a program:
    command script import /usr/local/share/opool/opool_lldb.py
(in ~/.lldbinit for every session).
"""
import re

import lldb

SANE_SLOTS = 1 << 31  # no pool has more: a larger count is a corrupt pool


def handle_text(bits):
    if bits == 0:
        return "{null}"
    i, g = bits & 0xFFFFFFFF, bits >> 32
    state = "issued" if g & 1 else "never valid: even generation"
    return "{index %u, generation 0x%08x, %s}" % (i, g, state)


def handle_summary(valobj, _dict):
    v = valobj.GetNonSyntheticValue()
    for path in ("bits", "h_.bits", "raw.bits"):
        bits = v.GetValueForExpressionPath("." + path)
        if bits.IsValid() and bits.GetError().Success():
            return handle_text(bits.GetValueAsUnsigned())
    return None  # some other struct named *_handle


def complete_type(target, name):
    """name's definition: lldb may find a declaration first."""
    for t in target.FindTypes(name):
        t = t.GetCanonicalType()
        if t.GetByteSize() > 0 and (t.GetNumberOfFields() > 0 or not t.IsAggregateType()):
            return t
    raise LookupError("no debug information for " + name)


class Pool:
    """The synthetic children and summary of every kind of pool."""

    def __init__(self, valobj, _dict):
        self.valobj, self.live, self.text = valobj, [], ""

    # ---- lldb's interface ----
    def num_children(self):
        return len(self.live)

    def get_child_index(self, name):
        return next((k for k, (n, _) in enumerate(self.live) if n == name), -1)

    def get_child_at_index(self, k):
        name, addr = self.live[k]
        return self.child(name, addr)

    def has_children(self):
        return True

    def update(self):
        self.live, v = [], self.valobj.GetNonSyntheticValue()
        self.target = v.GetTarget()
        self.process = v.GetProcess()
        kind, self.elem, addr = self.what(v)
        if addr == 0:
            self.text = "%s NULL" % kind
            return False
        describe = {"opool_mt": self.describe_mt, "opool_heap": self.describe_heap}
        try:
            self.text = "%s %s" % (kind, describe.get(kind, self.describe)(addr))
        except (LookupError, MemoryError) as e:
            self.live = []
            self.text = "%s at 0x%x: unreadable (%s)" % (kind, addr, e)
        return False

    # ---- reading ----
    def what(self, v):
        """(kind, element type or None, pool address)."""
        t = v.GetType()
        base = (t.GetPointeeType() if t.IsPointerType() else t).GetCanonicalType()
        addr = v.GetValueAsUnsigned() if t.IsPointerType() else v.GetLoadAddress()
        tag = base.GetName()
        tag = re.sub(r"^struct ", "", tag)
        if tag.startswith("opl::pool<"):
            elem = base.GetTemplateArgumentType(0)
            return tag, elem, v.GetChildMemberWithName("p_").GetValueAsUnsigned()
        m = re.match(r"(\w+)__opool$", tag)
        if m:
            try:
                return m.group(1), complete_type(self.target, m.group(1) + "_type"), addr
            except LookupError:
                return m.group(1), None, addr
        return tag, None, addr

    def at(self, addr, type_name):
        """The type_name at addr, as its fields (not as this file shows it)."""
        return self.target.CreateValueFromAddress(
            type_name, lldb.SBAddress(addr, self.target),
            complete_type(self.target, type_name)).GetNonSyntheticValue()

    def u(self, v, path):
        f = v.GetValueForExpressionPath("." + path)
        if not f.IsValid() or not f.GetError().Success():
            raise LookupError("no field " + path)
        x = f.GetValueAsUnsigned(0)
        if not f.GetError().Success():
            raise MemoryError(f.GetError().GetCString())
        return x

    def words(self, addr, n, size):
        err = lldb.SBError()
        raw = self.process.ReadMemory(addr, n * size, err) if n else b""
        if not err.Success():
            raise MemoryError(err.GetCString())
        order = "little" if self.process.GetByteOrder() == lldb.eByteOrderLittle else "big"
        return [int.from_bytes(raw[j * size:(j + 1) * size], order) for j in range(n)]

    def name(self, addr, type_name):
        p = self.words(addr + complete_type(self.target, type_name)
                       .GetFieldAtIndex(self.field_index(type_name, "name")).GetOffsetInBytes(),
                       1, self.target.GetAddressByteSize())[0]
        if p == 0:
            return "(no name)"
        err = lldb.SBError()
        s = self.process.ReadCStringFromMemory(p, 256, err)
        if not err.Success():
            raise MemoryError(err.GetCString())
        return '"%s"' % s

    def field_index(self, type_name, field):
        t = complete_type(self.target, type_name)
        return next(k for k in range(t.GetNumberOfFields()) if t.GetFieldAtIndex(k).GetName() == field)

    def after(self, addr, type_name):
        size, word = complete_type(self.target, type_name).GetByteSize(), self.target.GetAddressByteSize()
        return addr + (size + word - 1) // word * word

    def describe(self, addr):
        c = self.at(addr, "opool__hot")
        desc = self.after(addr, "opool__hot")
        name = self.name(desc, "opool_desc")
        count, limit, nslots = self.u(c, "count"), self.u(c, "limit"), self.u(c, "nslots")
        # a pool that never grows (shift 32) makes its slots as they are needed
        unmade = self.u(self.at(desc, "opool_desc"), "capacity") - nslots \
            if self.u(c, "shift") == 32 else 0
        listed = self.u(c, "roster") != 0
        text = "%s: %u live, capacity %u, %u slots" % (name, count, limit + unmade, nslots + unmade)
        if not count <= limit <= nslots < SANE_SLOTS or not 0 <= unmade < SANE_SLOTS:
            return text + ": corrupt"
        gens = self.words(self.u(c, "slot"), 2 * nslots, 4)[0::2]
        slots = self.words(self.u(c, "roster"), count, 4) if listed else \
            [i for i, g in enumerate(gens) if g & 1][:count]
        self.live = [("[slot %u, gen 0x%08x]" % (i, gens[i]), self.object(c, i))
                     for i in slots if i < nslots]
        return text if listed else text + ", no live list (objects by slot)"

    def object(self, c, i):
        """opool__object: chunk 0, or the chunk of i's top bit."""
        stride = self.u(c, "stride")
        if i < self.u(c, "first"):
            return self.u(c, "base[0]") + i * stride
        t = i.bit_length() - 1
        return self.u(c, "base[%u]" % (t - self.u(c, "shift") + 1)) + (i - (1 << t)) * stride

    def describe_mt(self, addr):
        p = self.at(addr, "opool_mt")
        name = self.name(addr, "opool_desc")
        cap = self.u(p, "capacity")
        if cap >= SANE_SLOTS:
            return name + ": corrupt"
        objects, stride = self.u(p, "objects"), self.u(p, "stride")
        self.live = [("[slot %u, gen 0x%08x]" % (i, g), objects + i * stride)
                     for i, g in enumerate(self.words(self.u(p, "gen"), cap, 4)) if g & 1]
        return "%s: %u live, capacity %u (max %u)" % (
            name, len(self.live), cap, self.u(p, "max_capacity"))

    def describe_heap(self, addr):
        name = self.name(self.after(addr, "opool__heap_hot"), "opool_heap_desc")
        h = self.at(addr, "opool_heap")
        n, large = self.u(h, "nclasses"), self.u(h, "large.n")
        if n > 256:
            return name + ": corrupt"
        size = complete_type(self.target, "opool__hclass").GetByteSize()
        cls = h.GetChildMemberWithName("cls").GetLoadAddress()  # a flexible array
        live = [(self.u(self.at(cls + k * size, "opool__hclass"), "size"),
                 self.u(h, "hot.cls[%u].high_water" % k) - self.u(h, "hot.cls[%u].room" % k))
                for k in range(n)]
        self.elem = "count"  # a heap's blocks have no type: its children are counts
        self.live = [("[%u-byte blocks]" % s, k) for s, k in live if k]
        return "%s: %u live blocks in classes, %u large" % (name, sum(k for _, k in live), large)

    def child(self, name, addr):
        if self.elem == "count":
            return self.target.CreateValueFromExpression(name, "(unsigned)%d" % addr)
        if self.elem is not None:
            return self.target.CreateValueFromAddress(name, lldb.SBAddress(addr, self.target), self.elem)
        void_p = self.target.FindFirstType("void").GetPointerType()
        data = lldb.SBData.CreateDataFromUInt64Array(
            self.process.GetByteOrder(), self.target.GetAddressByteSize(), [addr])
        return self.target.CreateValueFromData(name, data, void_p)


def pool_summary(valobj, _dict):
    provider = Pool(valobj, _dict)
    provider.update()
    return provider.text


def __lldb_init_module(debugger, _dict):
    run = debugger.HandleCommand
    for pattern in ("^opool_handle$", "^opl::handle<.+>$", "_handle$"):
        run('type summary add -w opool -F opool_lldb.handle_summary -x "%s"' % pattern)
    for pattern in ("^opool$", "^opool_mt$", "^opool_heap$", "__opool$", "^opl::pool<.+>$"):
        run('type summary add -w opool -F opool_lldb.pool_summary -x "%s"' % pattern)
        run('type synthetic add -w opool -l opool_lldb.Pool -x "%s"' % pattern)
    run("type category enable opool")
