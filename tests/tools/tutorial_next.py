"""The MongoDB tutorial's getNextSequence, with pymongo (from seqid-harness's
Tool::MongoEngine, which pins it), for seqid's test of numbers on their own (issue 49,
tests/it/next.rs).

Usage: MONGODB_URI=... python3 tutorial_next.py DATABASE N [WRITER]
(run through seqid_harness::Tool::command, which puts the pinned pymongo on sys.path)

Takes N numbers from the counter `{ _id: TUTORIAL_SEQUENCE, seq }` in `counters` (the
sequence `userid` unless set), exactly as the tutorial's getNextSequence does
(findAndModify, `$inc: { seq: 1 }`, upsert, the new document), and prints
`<sequence> <seq>` for each.
- SEQID_WAIT_FOR_GO=1: once connected, prints `ready` and waits for a line on
  standard input before taking numbers, so that several processes take them at once.
Exits non-zero on any error.
"""

import os
import sys

from pymongo import MongoClient, ReturnDocument


def get_next_sequence(db, name):
    # SecantusDB 0.7.0b3 may answer an upsert of a counter's concurrent first use with no
    # document though it applied the `$inc`: the number is lost (a gap, never a
    # duplicate), and asked for again; bounded, so that a server that keeps answering so
    # fails the test.
    for _ in range(10):
        ret = db.counters.find_one_and_update(
            {"_id": name},
            {"$inc": {"seq": 1}},
            upsert=True,
            return_document=ReturnDocument.AFTER,
        )
        if ret is not None:
            return int(ret["seq"])
    sys.exit(f"the {name} upsert answered null ten times in a row")


def main():
    uri = os.environ.get("MONGODB_URI")
    if not uri or len(sys.argv) not in (3, 4) or not sys.argv[2].isdigit():
        sys.exit(f"usage: MONGODB_URI=... python3 {sys.argv[0]} DATABASE N [WRITER]")
    database, n = sys.argv[1], int(sys.argv[2])
    db = MongoClient(uri)[database]
    db.command("ping")
    if os.environ.get("SEQID_WAIT_FOR_GO") == "1":
        print("ready", flush=True)
        if not sys.stdin.readline():
            sys.exit('standard input closed before "go"')
    name = os.environ.get("TUTORIAL_SEQUENCE", "userid")
    for _ in range(n):
        print(f"{name} {get_next_sequence(db, name)}", flush=True)


if __name__ == "__main__":
    main()
