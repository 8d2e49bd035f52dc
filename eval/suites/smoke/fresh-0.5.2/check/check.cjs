'use strict'
// Hidden check for fresh 0.5.2 ("Fix regression matching multiple ETags in `If-None-Match`"), written
// from the published behaviour change; fresh's tarball ships no tests.
const assert = require('node:assert')
const fresh = require('..')

assert.strictEqual(fresh({ 'if-none-match': '"foo", "bar"' }, { etag: '"bar"' }), true)
assert.strictEqual(fresh({ 'if-none-match': '"foo","bar"' }, { etag: '"foo"' }), true)
assert.strictEqual(fresh({ 'if-none-match': '"a" , "b",  "c"' }, { etag: '"c"' }), true)
assert.strictEqual(fresh({ 'if-none-match': 'W/"foo", "bar"' }, { etag: '"foo"' }), true)
// What already worked keeps working.
assert.strictEqual(fresh({ 'if-none-match': '"foo", "bar"' }, { etag: '"baz"' }), false)
assert.strictEqual(fresh({ 'if-none-match': '"foo"' }, { etag: '"foo"' }), true)
assert.strictEqual(fresh({ 'if-none-match': '"foo"' }, {}), false)
assert.strictEqual(fresh({ 'if-none-match': '*' }, { etag: '"foo"' }), true)
console.log('ok')
