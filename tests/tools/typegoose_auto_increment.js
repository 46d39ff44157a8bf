// @typegoose/auto-increment 5.0.1's AutoIncrementID with mongoose 9 (seqid-harness's
// Tool::TypegooseAutoIncrement; typegoose itself is not needed), for seqid's tests of
// issue 28: model Order (collection `orders`) with the plugin's defaults (field `_id`,
// startAt 0, incrementBy 1, tracker collection `identitycounters`), printed as
// `order <id>`. SEQID_STEP, if set, is its `incrementBy` (the step between ids): 0, step,
// 2 × step, ... Usage and output: see common.js.
'use strict';
const mongoose = require('mongoose');
const { AutoIncrementID } = require('@typegoose/auto-increment');
const { args, waitForGo, main } = require('./common');

const OrderSchema = new mongoose.Schema({ _id: Number, title: String });
OrderSchema.plugin(AutoIncrementID, { incrementBy: Number(process.env.SEQID_STEP || 1) });
const Order = mongoose.model('Order', OrderSchema);

main(async () => {
  const { uri, database, n, writer } = args();
  await mongoose.connect(uri, { dbName: database });
  await Promise.all(mongoose.modelNames().map((name) => mongoose.model(name).init()));
  await waitForGo();
  for (let i = 0; i < n; i++) {
    const order = await new Order({ title: `${writer}-${i}` }).save();
    console.log(`order ${order._id}`);
  }
  await mongoose.disconnect();
});
