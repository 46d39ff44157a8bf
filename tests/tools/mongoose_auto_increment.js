// mongoose-auto-increment 5.0.1 with mongoose 6 (seqid-harness's
// Tool::MongooseAutoIncrement), for seqid's tests of issue 28: model Book (collection
// `books`) with the plugin's defaults on `_id` ({model: 'Book', field: '_id'}, startAt 0,
// incrementBy 1), printed as `book <id>`. Usage and output: see common.js.
'use strict';
const mongoose = require('mongoose');
const autoIncrement = require('mongoose-auto-increment');
const { args, waitForGo, main } = require('./common');

main(async () => {
  const { uri, database, n, writer } = args();
  const conn = mongoose.createConnection(uri, { dbName: database });
  autoIncrement.initialize(conn);
  const BookSchema = new mongoose.Schema({ title: String });
  // The plugin looks its counter up (and creates it if missing) right here.
  BookSchema.plugin(autoIncrement.plugin, { model: 'Book', field: '_id' });
  const Book = conn.model('Book', BookSchema);
  await conn.asPromise();
  await Promise.all(conn.modelNames().map((name) => conn.model(name).init()));
  await waitForGo();
  for (let i = 0; i < n; i++) {
    const book = await new Book({ title: `${writer}-${i}` }).save();
    console.log(`book ${book._id}`);
  }
  await conn.close();
});
