# bench/traces/python.py -- the workload of the python trace (bench/traces/README.md): an
# interpreter building strings, dicts, lists and sets, a JSON round trip, sorting and a
# word count -- the allocation pattern of a scripting language. Deterministic (no clock,
# no hash-dependent output). Run as: PYTHONMALLOC=malloc PYTHONHASHSEED=0 python3 python.py
import json

def words(n):
    out = []
    x = 12345
    for i in range(n):
        x = (x * 1103515245 + 12345) % 2147483648
        out.append("w%x" % (x % 5000) + "abcdefghij"[: x % 10])
    return out

text = words(150000)
counts = {}
for w in text:
    counts[w] = counts.get(w, 0) + 1
top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
print("distinct words:", len(counts), "top:", top)

records = []
for i in range(30000):
    records.append({
        "id": i,
        "name": "item-%06d" % i,
        "tags": [text[(i * 7 + k) % len(text)] for k in range(i % 6)],
        "price": (i * 7919 % 10007) / 100.0,
        "note": ("n" * (i % 50)) + str(i * i),
    })
blob = json.dumps(records)
back = json.loads(blob)
print("json bytes:", len(blob), "records:", len(back))

by_tag = {}
for r in back:
    for t in r["tags"]:
        by_tag.setdefault(t, []).append(r["id"])
print("tags:", len(by_tag), "longest:", max(len(v) for v in by_tag.values()))

lines = []
for r in back[:20000]:
    lines.append(" | ".join([str(r["id"]), r["name"].upper(), r["note"][::-1], ",".join(r["tags"])]))
doc = "\n".join(lines)
print("doc chars:", len(doc), "pipes:", doc.count("|"))

s = set()
for i in range(100000):
    s.add((i * 2654435761) % 1000003)
    if i % 3 == 0:
        s.discard((i * 40503) % 1000003)
print("set size:", len(s))

acc = []
for i in range(2000):
    acc.append(str(i) * (i % 97))
    if len(acc) > 100:
        acc = [a[::-1] for a in acc[50:]]
print("acc:", len(acc), sum(len(a) for a in acc))
