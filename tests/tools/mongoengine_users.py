"""MongoEngine 0.29.3's SequenceField (seqid-harness's Tool::MongoEngine), for seqid's
tests of issue 28 (tests/it/other_tools.rs, tests/it/shared_counters.rs).

Usage: MONGODB_URI=... python3 mongoengine_users.py DATABASE N [WRITER]
(run through seqid_harness::Tool::command, which puts the pinned MongoEngine on sys.path)

Saves N documents of `User` (collection `users`), whose `id` is
`SequenceField(primary_key=True)`, and prints `user <id>` for each as soon as it is
saved. Each document's `name` is `<WRITER>-<i>` (WRITER defaults to `w`).
- MONGOENGINE_COUNTERS, if set: the counters collection (`collection_name=`);
  otherwise MongoEngine's default, `mongoengine.counters`.
- MONGOENGINE_MODEL=customer: saves `Customer` instead, with every name MongoEngine's
  default (collection `customer`, the class name in snake_case; counter `customer.id`),
  and prints `customer <id>`: the names people guess wrong.
- SEQID_WAIT_FOR_GO=1: once connected, prints `ready` and waits for a line on
  standard input before saving, so that several processes save at the same time.
Exits non-zero on any error.
"""

import os
import sys

from mongoengine import Document, SequenceField, StringField, connect, get_db

COUNTERS = os.environ.get("MONGOENGINE_COUNTERS")


class User(Document):
    id = SequenceField(primary_key=True, **({"collection_name": COUNTERS} if COUNTERS else {}))
    name = StringField()
    meta = {"collection": "users"}


class Customer(Document):
    id = SequenceField(primary_key=True, **({"collection_name": COUNTERS} if COUNTERS else {}))
    name = StringField()


MODELS = {"user": User, "customer": Customer}


def main():
    uri = os.environ.get("MONGODB_URI")
    if not uri or len(sys.argv) not in (3, 4) or not sys.argv[2].isdigit():
        sys.exit(f"usage: MONGODB_URI=... python3 {sys.argv[0]} DATABASE N [WRITER]")
    database, n = sys.argv[1], int(sys.argv[2])
    writer = sys.argv[3] if len(sys.argv) == 4 else "w"
    connect(db=database, host=uri)
    get_db().command("ping")
    if os.environ.get("SEQID_WAIT_FOR_GO") == "1":
        print("ready", flush=True)
        if not sys.stdin.readline():
            sys.exit('standard input closed before "go"')
    model = os.environ.get("MONGOENGINE_MODEL", "user")
    for i in range(n):
        saved = MODELS[model](name=f"{writer}-{i}").save()
        print(f"{model} {saved.id}", flush=True)


if __name__ == "__main__":
    main()
