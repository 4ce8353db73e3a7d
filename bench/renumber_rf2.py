"""Renumber the concepts of an RF2 snapshot so that SCTID order is the
depth-first order of its is-a hierarchy.

The experiment that came before format 7 (BENCHMARKS.md, "Format 7.0"):
txmap numbered concepts by SCTID, so a release whose SCTIDs follow the
hierarchy gave it depth-first ordinals with no change to the code, and the
cold pass could be measured before the importer was changed. The synthetic
release's own concepts (11-digit SCTIDs) swap SCTIDs among themselves, so
every SCTID stays valid (check digit and partition) and the metadata
concepts keep theirs; every field of every file equal to one of those
SCTIDs is rewritten. Children are taken in SCTID order; concepts no walk
from the root reaches keep their SCTID order, after the others. The old
and new SCTID of each concept are written to DST.map.

    python3 bench/renumber_rf2.py bench/out/synth-535000-1 /tmp/synth-dfs
"""

import collections
import os
import sys

ROOT = 138875005
IS_A = "116680003"


def files(root, prefix):
    for d, _, fs in os.walk(root):
        for f in fs:
            if f.startswith(prefix):
                yield os.path.join(d, f)


def rows(path):
    with open(path) as fh:
        next(fh)
        for line in fh:
            yield line.rstrip("\r\n").split("\t")


def main(src, dst):
    ids = [int(r[0]) for p in files(src, "sct2_Concept_") for r in rows(p)]
    children = collections.defaultdict(list)
    for p in files(src, "sct2_Relationship_Snapshot"):
        for r in rows(p):
            if r[2] == "1" and r[7] == IS_A:
                children[int(r[5])].append(int(r[4]))
    order, seen, stack = [], set(), [ROOT]
    while stack:
        c = stack.pop()
        if c in seen:
            continue
        seen.add(c)
        order.append(c)
        stack.extend(sorted(children.get(c, ()), reverse=True))
    own = sorted(i for i in ids if 10**10 <= i < 10**11)
    owned = set(own)
    walked = [c for c in order if c in owned]
    rest = sorted(owned - set(walked))
    mapping = {str(o): str(n) for o, n in zip(walked + rest, own)}
    for d, _, fs in os.walk(src):
        for f in fs:
            source = os.path.join(d, f)
            target = os.path.join(dst, os.path.relpath(source, src))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(source) as fi, open(target, "w") as fo:
                fo.write(next(fi))
                for line in fi:
                    fields = line.rstrip("\r\n").split("\t")
                    fo.write("\t".join(mapping.get(x, x) for x in fields) + "\r\n")
    with open(dst + ".map", "w") as fh:
        fh.writelines(f"{o}\t{n}\n" for o, n in mapping.items())
    print(f"{len(walked)} concepts reached from the root, {len(rest)} not", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
