'use strict'
// Hidden check for pretty-bytes 5.6.0 (new `minimumFractionDigits` and `maximumFractionDigits` options),
// written from the published behaviour change and readme examples; pretty-bytes' tarball ships no tests.
const assert = require('node:assert')
const prettyBytes = require('..')

assert.strictEqual(prettyBytes(1900, { minimumFractionDigits: 3, locale: 'en' }), '1.900 kB')
assert.strictEqual(prettyBytes(1920, { maximumFractionDigits: 1, locale: 'en' }), '1.9 kB')
assert.strictEqual(prettyBytes(1234567, { maximumFractionDigits: 4, locale: 'en' }), '1.2346 MB')
assert.strictEqual(prettyBytes(1900, { minimumFractionDigits: 1, maximumFractionDigits: 3, locale: 'de' }), '1,9 kB')
assert.strictEqual(prettyBytes(1900, { minimumFractionDigits: 3, locale: 'de' }), '1,900 kB')
assert.strictEqual(prettyBytes(0.5, { minimumFractionDigits: 2, locale: 'en' }), '0.50 B')
// What already worked keeps working.
assert.strictEqual(prettyBytes(1900), '1.9 kB')
assert.strictEqual(prettyBytes(1920), '1.92 kB')
assert.strictEqual(prettyBytes(1920, { locale: 'de' }), '1,92 kB')
assert.strictEqual(prettyBytes(1024, { binary: true }), '1 kiB')
console.log('ok')
