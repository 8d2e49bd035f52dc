'use strict'
// Hidden check for cookie 0.4.1 ("Fix `maxAge` option to reject invalid values"), written from the
// published behaviour change; cookie's tarball ships no tests.
const assert = require('node:assert')
const cookie = require('..')

assert.throws(() => cookie.serialize('foo', 'bar', { maxAge: Infinity }), TypeError)
assert.throws(() => cookie.serialize('foo', 'bar', { maxAge: -Infinity }), TypeError)
assert.throws(() => cookie.serialize('foo', 'bar', { maxAge: 'buffalo' }), TypeError)
// What already worked keeps working.
assert.strictEqual(cookie.serialize('foo', 'bar', { maxAge: 1000 }), 'foo=bar; Max-Age=1000')
assert.strictEqual(cookie.serialize('foo', 'bar', { maxAge: '1000' }), 'foo=bar; Max-Age=1000')
assert.strictEqual(cookie.serialize('foo', 'bar', { maxAge: 0 }), 'foo=bar; Max-Age=0')
assert.strictEqual(cookie.serialize('foo', 'bar', { maxAge: 3.14 }), 'foo=bar; Max-Age=3')
assert.strictEqual(cookie.serialize('foo', 'bar', { maxAge: null }), 'foo=bar')
console.log('ok')
