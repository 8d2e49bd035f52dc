'use strict'
// Hidden check for ms 2.1.2, written from the published behaviour change (index.js accepts only finite
// numbers, and only a leading minus sign); ms's tarball ships no tests and no changelog.
const assert = require('node:assert')
const ms = require('..')

assert.throws(() => ms(Infinity), Error)
assert.throws(() => ms(-Infinity), Error)
assert.strictEqual(ms('1-2h'), undefined)
// What already worked keeps working.
assert.throws(() => ms(NaN), Error)
assert.strictEqual(ms(60000), '1m')
assert.strictEqual(ms(-3 * 60 * 60 * 1000, { long: true }), '-3 hours')
assert.strictEqual(ms('-1.5h'), -5400000)
assert.strictEqual(ms('.5s'), 500)
assert.strictEqual(ms('2 days'), 172800000)
console.log('ok')
