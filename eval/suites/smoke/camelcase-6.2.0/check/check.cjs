'use strict'
// Hidden check for camelcase 6.2.0 (new `preserveConsecutiveUppercase` option), written from the
// published behaviour change and readme examples; camelcase's tarball ships no tests.
const assert = require('node:assert')
const camelCase = require('..')

const keep = { preserveConsecutiveUppercase: true }
assert.strictEqual(camelCase('foo-BAR', keep), 'fooBAR')
assert.strictEqual(camelCase('Foo-BAR', keep), 'fooBAR')
assert.strictEqual(camelCase('fooBAR', { ...keep, pascalCase: true }), 'FooBAR')
assert.strictEqual(camelCase(['foo', 'BAR'], { ...keep, pascalCase: true }), 'FooBAR')
assert.strictEqual(camelCase('XMLHttpRequest', keep), 'XMLHttpRequest')
// What already worked keeps working.
assert.strictEqual(camelCase('foo-BAR'), 'fooBar')
assert.strictEqual(camelCase('XMLHttpRequest'), 'xmlHttpRequest')
assert.strictEqual(camelCase('foo_bar', { pascalCase: true }), 'FooBar')
console.log('ok')
