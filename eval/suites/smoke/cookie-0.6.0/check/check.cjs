'use strict'
// Hidden check for cookie 0.6.0 ("Add `partitioned` option"), written from the published behaviour
// change and README; cookie's tarball ships no tests.
const assert = require('node:assert')
const cookie = require('..')

assert.strictEqual(cookie.serialize('foo', 'bar', { partitioned: true }), 'foo=bar; Partitioned')
assert.strictEqual(cookie.serialize('foo', 'bar', { partitioned: false }), 'foo=bar')
const secure = cookie.serialize('foo', 'bar', { partitioned: true, secure: true, sameSite: 'none' })
assert.ok(secure.startsWith('foo=bar; '), secure)
assert.deepStrictEqual(secure.split('; ').slice(1).sort(), ['Partitioned', 'SameSite=None', 'Secure'])
// What already worked keeps working.
assert.strictEqual(cookie.serialize('foo', 'bar'), 'foo=bar')
assert.strictEqual(cookie.serialize('foo', 'bar', { priority: 'high' }), 'foo=bar; Priority=High')
assert.deepStrictEqual(cookie.parse('foo=bar; Partitioned'), { foo: 'bar' })
console.log('ok')
