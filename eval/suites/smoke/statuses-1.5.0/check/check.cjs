'use strict'
// Hidden check for statuses 1.5.0 ("Add `103 Early Hints`"), written from the published
// behaviour change; statuses' tarball ships no tests.
const assert = require('node:assert')
const status = require('..')

assert.strictEqual(status(103), 103)
assert.strictEqual(status('Early Hints'), 103)
assert.strictEqual(status('early hints'), 103)
assert.strictEqual(status[103], 'Early Hints')
assert.strictEqual(status['early hints'], 103)
assert.ok(status.codes.includes(103))
// What already worked keeps working.
assert.strictEqual(status[102], 'Processing')
assert.strictEqual(status('OK'), 200)
assert.throws(() => status(104), /invalid status code/)
console.log('ok')
