// What the Node.js scripts of tests/tools share (seqid's tests of issue 28, run by
// tests/it/support/tools.rs for other_tools.rs and shared_counters.rs, with
// seqid_harness::Tool::command, which puts the pinned mongoose on NODE_PATH).
//
// Every script: MONGODB_URI=... node SCRIPT DATABASE N [WRITER]
// - saves N documents per sequence with the tool's own auto-increment, in DATABASE;
// - prints one line per document, `<sequence> <id>`, as soon as it is saved;
// - each document's `title` is `<WRITER>-<i>`, unique per process (WRITER defaults to `w`);
// - with SEQID_WAIT_FOR_GO=1, once connected (and the indexes built) it prints `ready`
//   and waits for a line on standard input before saving, so that several processes
//   can be made to save at the same time;
// - exits non-zero on any error.
'use strict';

function args() {
  const uri = process.env.MONGODB_URI;
  const [database, n, writer = 'w'] = process.argv.slice(2);
  if (!uri || !database || !/^\d+$/.test(n || '')) {
    throw new Error(`usage: MONGODB_URI=... node ${process.argv[1]} DATABASE N [WRITER]`);
  }
  return { uri, database, n: Number(n), writer };
}

/// With SEQID_WAIT_FOR_GO=1: prints `ready`, then waits for a line on stdin.
async function waitForGo() {
  if (process.env.SEQID_WAIT_FOR_GO !== '1') return;
  console.log('ready');
  await new Promise((resolve, reject) => {
    process.stdin.once('data', () => {
      process.stdin.destroy();
      resolve();
    });
    process.stdin.once('end', () => reject(new Error('standard input closed before "go"')));
  });
}

/// Runs `body`, exiting with 1 (and the error on stderr) if it fails.
function main(body) {
  body().then(
    () => process.exit(0),
    (e) => {
      console.error(e);
      process.exit(1);
    },
  );
}

module.exports = { args, waitForGo, main };
