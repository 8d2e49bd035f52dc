'use strict'
// Hidden check for range-parser 1.2.0 ("Add `combine` option to combine overlapping ranges"), written
// from the published behaviour change and README; range-parser's tarball ships no tests.
const assert = require('node:assert')
const parse = require('..')

const plain = (ranges) => ({ type: ranges.type, ranges: ranges.map((r) => ({ start: r.start, end: r.end })) })

// Overlapping and adjacent ranges are merged.
assert.deepStrictEqual(plain(parse(150, 'bytes=0-4,90-99,5-75,100-199,101-102', { combine: true })), {
  type: 'bytes',
  ranges: [{ start: 0, end: 75 }, { start: 90, end: 149 }]
})
// The merged ranges keep the order in which they were requested.
assert.deepStrictEqual(plain(parse(150, 'bytes=-1,20-100,0-1,101-120', { combine: true })), {
  type: 'bytes',
  ranges: [{ start: 149, end: 149 }, { start: 20, end: 120 }, { start: 0, end: 1 }]
})
// What already worked keeps working.
assert.deepStrictEqual(plain(parse(150, 'bytes=0-4,5-75')), { type: 'bytes', ranges: [{ start: 0, end: 4 }, { start: 5, end: 75 }] })
assert.deepStrictEqual(plain(parse(150, 'bytes=0-4,5-75', { combine: false })), { type: 'bytes', ranges: [{ start: 0, end: 4 }, { start: 5, end: 75 }] })
assert.strictEqual(parse(150, 'bytes=200-300', { combine: true }), -1)
assert.strictEqual(parse(150, 'malformed', { combine: true }), -2)
console.log('ok')
