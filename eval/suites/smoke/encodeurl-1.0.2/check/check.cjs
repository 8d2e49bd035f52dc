'use strict'
// Hidden check for encodeurl 1.0.2 ("Fix encoding `%` as last character"), written from the
// published behaviour change; encodeurl's tarball ships no tests.
const assert = require('node:assert')
const encodeUrl = require('..')

assert.strictEqual(encodeUrl('http://localhost/%'), 'http://localhost/%25')
assert.strictEqual(encodeUrl('/foo%'), '/foo%25')
assert.strictEqual(encodeUrl('/%%'), '/%25%25')
// What already worked keeps working.
assert.strictEqual(encodeUrl('/foo%20bar'), '/foo%20bar')
assert.strictEqual(encodeUrl('/foo%zzbar'), '/foo%25zzbar')
assert.strictEqual(encodeUrl('/foo bar'), '/foo%20bar')
console.log('ok')
