// mongoose-sequence 6.0.1 with mongoose 8 (seqid-harness's Tool::MongooseSequence), for
// seqid's tests of issue 28: two sequences of its own.
// - `ticket_seq`: unscoped, on `_id` (model Ticket, collection `tickets`), printed as
//   `ticket <id>`; skipped with MONGOOSE_SEQUENCE_TICKETS=0 (for a run that writes the
//   scoped sequence alone);
// - `issue_seq`: on the field `number`, scoped by `project` (reference_fields
//   ['project']; model Issue, collection `issues`), N documents in project `apollo`
//   then N in `gemini`, printed as `issue/<project> <number>`; skipped with
//   MONGOOSE_SEQUENCE_SCOPED=0 (for a server that cannot match the scoped counters'
//   `reference_value`, see tests/it/other_tools.rs).
// - SEQID_STEP, if set: both sequences' `inc_amount` (the step between ids; 1 otherwise),
//   from 1 as by default: 1, 1 + step, 1 + 2 × step, ...
// Usage and output: see common.js.
'use strict';
const mongoose = require('mongoose');
const AutoIncrement = require('mongoose-sequence')(mongoose);
const { args, waitForGo, main } = require('./common');

const step = Number(process.env.SEQID_STEP || 1);

const TicketSchema = new mongoose.Schema({ _id: Number, title: String }, { _id: false });
TicketSchema.plugin(AutoIncrement, { id: 'ticket_seq', inc_amount: step });
const Ticket = mongoose.model('Ticket', TicketSchema);

const IssueSchema = new mongoose.Schema({ project: String, number: Number, title: String });
IssueSchema.plugin(AutoIncrement, {
  id: 'issue_seq',
  inc_field: 'number',
  reference_fields: ['project'],
  inc_amount: step,
});
const Issue = mongoose.model('Issue', IssueSchema);

main(async () => {
  const { uri, database, n, writer } = args();
  await mongoose.connect(uri, { dbName: database });
  // Every model's indexes, the counters' unique one among them, before any save.
  await Promise.all(mongoose.modelNames().map((name) => mongoose.model(name).init()));
  await waitForGo();
  const tickets = process.env.MONGOOSE_SEQUENCE_TICKETS === '0' ? 0 : n;
  for (let i = 0; i < tickets; i++) {
    const ticket = await new Ticket({ title: `${writer}-${i}` }).save();
    console.log(`ticket ${ticket._id}`);
  }
  const projects = process.env.MONGOOSE_SEQUENCE_SCOPED === '0' ? [] : ['apollo', 'gemini'];
  for (const project of projects) {
    for (let i = 0; i < n; i++) {
      const issue = await new Issue({ project, title: `${writer}-${i}` }).save();
      console.log(`issue/${project} ${issue.number}`);
    }
  }
  await mongoose.disconnect();
});
