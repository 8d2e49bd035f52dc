'use strict'
// Hidden check for bytes 3.1.0 ("Add petabyte (`pb`) support"), written from the published behaviour
// change; bytes' tarball ships no tests.
const assert = require('node:assert')
const bytes = require('..')

const PB = Math.pow(1024, 5)
assert.strictEqual(bytes.parse('1PB'), PB)
assert.strictEqual(bytes.parse('1.5pb'), 1.5 * PB)
assert.strictEqual(bytes('2PB'), 2 * PB)
assert.strictEqual(bytes.format(PB), '1PB')
assert.strictEqual(bytes.format(4.5 * PB), '4.5PB')
assert.strictEqual(bytes.format(PB, { unit: 'TB' }), '1024TB')
assert.strictEqual(bytes.format(PB / 4, { unit: 'pb' }), '0.25pb')
// What already worked keeps working.
assert.strictEqual(bytes.format(Math.pow(1024, 4)), '1TB')
assert.strictEqual(bytes.parse('1TB'), Math.pow(1024, 4))
console.log('ok')
