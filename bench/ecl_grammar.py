#!/usr/bin/env python3
"""An ECL corpus generated from the grammar (issue 34), not written by hand.

    python3 bench/ecl_grammar.py RF2_DIR OUT [SEED]

Every form of the ECL 2.2 grammar the evaluator answers — the ten
constraint operators, compound AND/OR/MINUS, refinements (attribute
operators, `!=`, reverse, cardinality, groups, disjunction, wildcards),
dotted attributes, concrete values with each comparison, memberOf with
fields, member filters, concept filters, description filters, history
supplements — is a template, and each template is crossed with operands
drawn at random (seeded) from the release in RF2_DIR: concepts from five
size classes (huge, big, medium, small, leaf, by the number of concepts
under them), attribute types with values that occur with them, refsets
of each kind, modules, dates and words of the release's terms. The
operands are the release's, so the corpus asks about what the edition
holds; they are drawn, so the corpus is not tuned to what is fast.

Each template is a category of its own, `form/size`, so that
bench/ecl_peer.py gives a median per form and size.
"""

import collections
import csv
import os
import random
import sys

ISA = "116680003"
ROOT = "138875005"
SIZES = [("huge", 20000, 10**9), ("big", 2000, 20000), ("medium", 200, 2000),
         ("small", 5, 200), ("leaf", 0, 1)]


def rows(path):
    with open(path, encoding="utf-8", newline="") as f:
        r = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        next(r)
        yield from r


def find(root, prefix):
    for d, _, fs in os.walk(root):
        for f in sorted(fs):
            if f.startswith(prefix):
                return os.path.join(d, f)
    return None


def load(rf2):
    concepts, modules = [], collections.Counter()
    times = set()
    for r in rows(find(rf2, "sct2_Concept_Snapshot")):
        if r[2] == "1":
            concepts.append(r[0])
        modules[r[3]] += 1
        times.add(r[1])
    children = collections.defaultdict(list)
    by_type = collections.defaultdict(list)
    for r in rows(find(rf2, "sct2_Relationship_Snapshot")):
        if r[2] != "1":
            continue
        if r[7] == ISA:
            children[r[5]].append(r[4])
        else:
            by_type[r[7]].append((r[4], r[5]))
    # Concepts under each (a tree count: shared descendants count once
    # per path, which is enough to sort concepts into size classes).
    under = {}
    for c in concepts:
        if c in under:
            continue
        stack = [(c, False)]
        while stack:
            x, done = stack.pop()
            if done:
                under[x] = sum(1 + under.get(k, 0) for k in children.get(x, ()))
                continue
            if x in under:
                continue
            stack.append((x, True))
            stack.extend((k, False) for k in children.get(x, ()) if k not in under)
    concrete = collections.defaultdict(list)
    path = find(rf2, "sct2_RelationshipConcreteValues_Snapshot")
    if path:
        for r in rows(path):
            if r[2] == "1" and r[5].startswith("#"):
                concrete[r[7]].append((r[4], r[5]))
    refsets = collections.defaultdict(set)
    for d, _, fs in os.walk(rf2):
        for f in fs:
            if f.startswith("der2_") and "Snapshot" in f and "Language" not in f \
                    and "ModuleDependency" not in f:
                kind = f.split("_")[1]
                for r in rows(os.path.join(d, f)):
                    refsets[kind].add(r[4])
    words = collections.Counter()
    for r in rows(find(rf2, "sct2_Description_Snapshot")):
        if r[2] == "1" and r[6] == "900000000000013009":
            for w in r[7].split():
                if w.isalpha() and len(w) >= 5:
                    words[w.lower()] += 1
    return concepts, under, by_type, concrete, refsets, modules, sorted(times), words


def main():
    rf2, out = sys.argv[1], sys.argv[2]
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    rng = random.Random(seed)
    concepts, under, by_type, concrete, refsets, modules, times, words = load(rf2)

    classes = {}
    for name, lo, hi in SIZES:
        pool = [c for c in concepts if lo <= under.get(c, 0) < hi]
        classes[name] = pool
    types = sorted(by_type, key=lambda t: -len(by_type[t]))[:12]
    ctypes = sorted(concrete, key=lambda t: -len(concrete[t]))[:4]
    simple = sorted(refsets.get("Refset", ()))
    assoc = sorted(refsets.get("cRefset", ()))
    maps = sorted(refsets.get("sRefset", ()) | refsets.get("iisssccRefset", ()))
    all_refsets = sorted(set().union(*refsets.values()))
    mods = [m for m, _ in modules.most_common()]
    common = [w for w, _ in words.most_common(400)]
    rare = [w for w, n in words.items() if n <= 3]
    rare.sort()

    def concept(size):
        return rng.choice(classes[size])

    def attr():
        """A type, a source of it and a value of it (a target)."""
        t = rng.choice(types)
        s, v = rng.choice(by_type[t])
        return t, s, v

    def cnum():
        t = rng.choice(ctypes)
        _, value = rng.choice(concrete[t])
        return t, value

    def date():
        return rng.choice(times)

    # (form, sizes it is crossed with, generator of one expression)
    templates = [
        ("self", lambda c: f"{c}"),
        ("descendantOf", lambda c: f"< {c}"),
        ("descendantOrSelfOf", lambda c: f"<< {c}"),
        ("childOf", lambda c: f"<! {c}"),
        ("childOrSelfOf", lambda c: f"<<! {c}"),
        ("ancestorOf", lambda c: f"> {c}"),
        ("ancestorOrSelfOf", lambda c: f">> {c}"),
        ("parentOf", lambda c: f">! {c}"),
        ("parentOrSelfOf", lambda c: f">>! {c}"),
        ("top", lambda c: f"!!> (<< {c})"),
        ("bottom", lambda c: f"!!< (<< {c})"),
        ("ancestorsOfSet", lambda c: f"> (<< {c})"),
        ("and", lambda c: f"<< {c} AND << {concept(rng.choice(['big', 'medium']))}"),
        ("or", lambda c: f"<< {c} OR << {concept(rng.choice(['medium', 'small']))}"),
        ("minus", lambda c: f"<< {c} MINUS << {concept(rng.choice(['medium', 'small']))}"),
        ("nested", lambda c: f"(<< {c} MINUS < {c}) OR (<! {c})"),
        ("refine-eq", lambda c: "{} : {} = {}".format(f"<< {c}", *attr()[::2])),
        ("refine-desc", lambda c: "<< {} : {} = << {}".format(c, *attr()[::2])),
        ("refine-any-value", lambda c: f"<< {c} : {attr()[0]} = *"),
        ("refine-any-type", lambda c: f"<< {c} : * = << {attr()[2]}"),
        ("refine-ne", lambda c: "<< {} : {} != << {}".format(c, *attr()[::2])),
        ("refine-type-desc", lambda c: "<< {} : << {} = << {}".format(c, *attr()[::2])),
        ("refine-and", lambda c: "<< {} : {} = << {}, {} = *".format(c, *attr()[::2], attr()[0])),
        ("refine-or", lambda c: "<< {} : {} = << {} OR {} = << {}".format(
            c, *attr()[::2], *attr()[::2])),
        ("cardinality-none", lambda c: f"<< {c} : [0..0] {attr()[0]} = *"),
        ("cardinality-one", lambda c: f"<< {c} : [1..1] {attr()[0]} = *"),
        ("cardinality-many", lambda c: f"<< {c} : [2..*] {attr()[0]} = *"),
        ("group", lambda c: "<< {} : {{ {} = *, {} = * }}".format(c, attr()[0], attr()[0])),
        ("group-card", lambda c: f"<< {c} : [1..1] {{ {attr()[0]} = * }}"),
        ("reverse", lambda c: "<< {} : R {} = << {}".format(c, *attr()[:2])),
        ("reverse-any", lambda c: f"<< {c} : R {attr()[0]} = *"),
        ("dotted", lambda c: f"<< {c} . {attr()[0]}"),
        ("dotted-2", lambda c: f"<< {c} . {attr()[0]} . {attr()[0]}"),
        ("dotted-filter", lambda c: f"(<< {c} . {attr()[0]}) {{{{ C active = 1 }}}}"),
        ("concrete-eq", lambda c: "<< {} : {} = {}".format(c, *cnum())),
        ("concrete-gt", lambda c: "<< {} : {} > {}".format(c, *cnum())),
        ("concrete-le", lambda c: "<< {} : {} <= {}".format(c, *cnum())),
        ("concept-active", lambda c: f"<< {c} {{{{ C active = {rng.choice([0, 1])} }}}}"),
        ("concept-module", lambda c: f"<< {c} {{{{ C moduleId = {rng.choice(mods)} }}}}"),
        ("concept-defstatus", lambda c: "<< {} {{{{ C definitionStatus = {} }}}}".format(
            c, rng.choice(["primitive", "defined"]))),
        ("concept-time", lambda c: f'<< {c} {{{{ C effectiveTime >= "{date()}" }}}}'),
        ("term-match", lambda c: f'<< {c} {{{{ term = "{rng.choice(common)}" }}}}'),
        ("term-rare", lambda c: f'<< {c} {{{{ term = "{rng.choice(rare)}" }}}}'),
        ("term-wild", lambda c: f'<< {c} {{{{ term = wild:"{rng.choice(common)[:4]}*" }}}}'),
        ("desc-type", lambda c: f"<< {c} {{{{ type = {rng.choice(['syn', 'fsn', 'def'])} }}}}"),
        ("desc-dialect", lambda c: f"<< {c} {{{{ dialect = {rng.choice(['en-us', 'en-gb'])} }}}}"),
        ("history-min", lambda c: f"<< {c} {{{{ + HISTORY-MIN }}}}"),
        ("history-max", lambda c: f"<< {c} {{{{ + HISTORY-MAX }}}}"),
        ("memberOf-and", lambda c: f"<< {c} AND ^ {rng.choice(all_refsets)}"),
        ("refsets-containing", lambda c: f"^R (<< {c})"),
    ]
    # Forms whose operand is no concept: refsets, the whole edition.
    fixed = [
        ("memberOf", [f"^ {r}" for r in all_refsets]),
        ("memberOf-field", [f"^ [targetComponentId] {r}" for r in assoc]
         + [f"^ [referencedComponentId] {r}" for r in simple]),
        ("member-filter", [f"^ {r} {{{{ M active = 1 }}}}" for r in all_refsets]
         + [f'^ {r} {{{{ M mapTarget = wild:"{chr(65 + i)}*" }}}}' for i, r in enumerate(maps)]),
        ("any-filter", ["* {{ C active = 0 }}", "* {{ C active = 1 }}",
                        "* {{ C definitionStatus = defined }}",
                        "* {{ C definitionStatus = primitive }}"]
         + [f"* {{{{ C moduleId = {m} }}}}" for m in mods[:4]]
         + [f'* {{{{ C effectiveTime >= "{d}" }}}}' for d in times[-4:]]),
        ("any", ["*", "* MINUS << 404684003", "^R *", "* : R 363698007 = *"]),
    ]

    lines = [
        "# ECL corpus generated from the grammar by bench/ecl_grammar.py (issue 34):",
        f"# {len(templates)} forms crossed with {len(SIZES)} operand size classes, "
        f"seed {seed}, over {os.path.basename(os.path.normpath(rf2))}.",
        "# Do not edit: run the generator again.",
        "",
    ]
    per = 4
    count = 0
    for form, make in templates:
        for size, _, _ in SIZES:
            if not classes[size]:
                continue
            lines.append(f"# category: {form}/{size}")
            seen = set()
            for _ in range(per * 3):
                if len(seen) == per:
                    break
                e = make(concept(size))
                if e not in seen:
                    seen.add(e)
                    lines.append(e)
            count += len(seen)
    for form, exprs in fixed:
        lines.append(f"# category: {form}")
        lines.extend(exprs)
        count += len(exprs)
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print(f"{count} expressions in {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
