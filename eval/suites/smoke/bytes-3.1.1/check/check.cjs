'use strict'
// Hidden check for bytes 3.1.1 ("Fix thousandsSeparator incorrectly formatting fractional part"),
// written from the published behaviour change; bytes' tarball ships no tests.
const assert = require('node:assert')
const bytes = require('..')

assert.strictEqual(bytes.format(1000.1234, { thousandsSeparator: ',', decimalPlaces: 4 }), '1,000.1234B')
assert.strictEqual(bytes.format(1005.1234 * 1024, { thousandsSeparator: ' ', decimalPlaces: 4 }), '1 005.1234KB')
assert.strictEqual(bytes.format(1234567.25, { thousandsSeparator: '.', unit: 'B', decimalPlaces: 2 }), '1.234.567.25B')
// What already worked keeps working.
assert.strictEqual(bytes.format(1000, { thousandsSeparator: ',' }), '1,000B')
assert.strictEqual(bytes.format(1024 * 1024 * 1024 * 1000, { thousandsSeparator: ',', unit: 'MB' }), '1,024,000MB')
assert.strictEqual(bytes.format(1536), '1.5KB')
console.log('ok')
