#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Compares what test-python-client's clients wrote in WORK_DIR.

ref: `ringtap stream --json` (DECODED, libringtap's parsing); decoded, raw,
fixed: the Python client in each encoding; raw-one: RAW subscribed to
ringtap_test:* beside them; raw-alone: the same with no other
subscriber. Records of a CPU must come in the same order with the same values; loss counts must agree; every stream must end with a Bye.
"""
import json
import re
import sys

work = sys.argv[1]


def records(name):
    with open("%s/%s" % (work, name)) as f:
        return [json.loads(line) for line in f if line.strip()]


def summary(name, pattern):
    text = open("%s/%s.err" % (work, name)).read()
    match = re.search(pattern, text)
    if not match:
        sys.exit("FAIL: %s: no summary in %r" % (name, text))
    return match


def by_cpu(recs):
    out = {}
    for rec in recs:
        out.setdefault(rec["cpu"], []).append(rec)
    return out


failures = 0


def check(what, got, want):
    global failures
    if got == want:
        print("ok: %s" % what)
        return
    failures += 1
    print("FAIL: %s" % what)
    if isinstance(got, dict):
        for cpu in sorted(set(got) | set(want)):
            g, w = got.get(cpu, []), want.get(cpu, [])
            if len(g) != len(w):
                print("  cpu %s: %d records, want %d" % (cpu, len(g), len(w)))
            for a, b in zip(g, w):
                if a != b:
                    print("  cpu %s: first difference\n    got  %s\n    want %s" % (cpu, a, b))
                    break
    else:
        print("  got %r, want %r" % (got, want))


ref = records("ref")
ref_lost = int(summary("ref", r"ringtap: (\d+) records, (\d+) lost").group(2))
if not summary("ref", r"ringtapd ended the stream"):
    sys.exit("FAIL: the reference stream was cut")
if not ref:
    sys.exit("FAIL: the reference stream is empty")
for enc in ("decoded", "raw", "fixed"):
    got = records(enc)
    s = summary(enc, r"ringtap_client: (\d+) records, (\d+) lost, (\d+) without a format, (.*)")
    check("%s: %d records and loss reports equal to ringtap stream's, per CPU in order"
          % (enc, len(ref)),
          by_cpu(got), by_cpu(ref))
    check("%s: lost %d" % (enc, ref_lost), int(s.group(2)), ref_lost)
    check("%s: every record had its format" % enc, int(s.group(3)), 0)
    check("%s: ended by the daemon's Bye" % enc, s.group(4), "ended by the daemon")

one = records("raw-one")
s = summary("raw-one", r"ringtap_client: (\d+) records, (\d+) lost, (\d+) without a format")
want = [r for r in ref if "lost" in r or r["event"].startswith("ringtap_test:")]
check("raw, ringtap_test:* only: its %d records out of pages with every event" % len(want),
      by_cpu(one), by_cpu(want))
check("raw, ringtap_test:* only: a format for every record in its pages", int(s.group(3)), 0)

# Alone, nobody else's subscription enabled the tree's other events: their
# Schemas must come all the same, as the pages hold them.
alone = records("raw-alone")
s = summary("raw-alone", r"ringtap_client: (\d+) records, (\d+) lost, (\d+) without a format")
check("raw, ringtap_test:* alone: its %d records" % len(want), by_cpu(alone), by_cpu(want))
check("raw, ringtap_test:* alone: a format for every record in its pages", int(s.group(3)), 0)
sys.exit(1 if failures else 0)
