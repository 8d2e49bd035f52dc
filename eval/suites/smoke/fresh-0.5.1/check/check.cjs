'use strict'
// Hidden check for fresh 0.5.1 ("Fix handling of modified headers with invalid dates"), written from
// the published behaviour change; fresh's tarball ships no tests.
const assert = require('node:assert')
const fresh = require('..')

const JAN_1 = 'Sat, 01 Jan 2000 00:00:00 GMT'
const JAN_1_ONE_AM = 'Sat, 01 Jan 2000 01:00:00 GMT'
// A date that cannot be parsed proves nothing: the response is stale.
assert.strictEqual(fresh({ 'if-modified-since': 'foo' }, { 'last-modified': JAN_1 }), false)
assert.strictEqual(fresh({ 'if-modified-since': JAN_1 }, { 'last-modified': 'foo' }), false)
assert.strictEqual(fresh({ 'if-modified-since': 'foo' }, { 'last-modified': 'bar' }), false)
// What already worked keeps working.
assert.strictEqual(fresh({ 'if-modified-since': JAN_1_ONE_AM }, { 'last-modified': JAN_1 }), true)
assert.strictEqual(fresh({ 'if-modified-since': JAN_1 }, { 'last-modified': JAN_1_ONE_AM }), false)
assert.strictEqual(fresh({ 'if-modified-since': JAN_1 }, {}), false)
assert.strictEqual(fresh({ 'if-none-match': '"foo"' }, { etag: '"foo"' }), true)
assert.strictEqual(fresh({ 'if-none-match': '"foo"' }, { etag: '"bar"' }), false)
console.log('ok')
