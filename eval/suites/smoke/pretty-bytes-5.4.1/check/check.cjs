'use strict'
// Hidden check for pretty-bytes 5.4.1 (binary units for `binary: true`), written from the published
// behaviour change; pretty-bytes' tarball ships no tests or changelog.
const assert = require('node:assert')
const prettyBytes = require('..')

assert.strictEqual(prettyBytes(1024, { binary: true }), '1 kiB')
assert.strictEqual(prettyBytes(1536, { binary: true }), '1.5 kiB')
assert.strictEqual(prettyBytes(Math.pow(1024, 3) * 4, { binary: true }), '4 GiB')
assert.strictEqual(prettyBytes(1024, { bits: true, binary: true }), '1 kibit')
assert.strictEqual(prettyBytes(0, { binary: true, signed: true }), ' 0 B')
// What already worked keeps working.
assert.strictEqual(prettyBytes(1000), '1 kB')
assert.strictEqual(prettyBytes(1000, { bits: true }), '1 kbit')
assert.strictEqual(prettyBytes(1337), '1.34 kB')
assert.strictEqual(prettyBytes(-1000, { binary: false }), '-1 kB')
assert.strictEqual(prettyBytes(0.5, { binary: true }), '0.5 B')
console.log('ok')
